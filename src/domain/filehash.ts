/**
 * /api/filehash: one pass over an upload feeds every requested hasher, chunk by chunk as it
 * arrives, so a file is never held whole and never touches disk (cf. RHash's single-pass design).
 */
import type { DigestAlgorithm, Hasher } from '../algorithms/types.js'
import { findContentHash, type ContentHash } from '../content-hashes/index.js'
import { problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { encodeOutput, type OutputEncoding } from './encoding.js'

export const MAX_FILE_ALGORITHMS = 16

/** The image hash /api/filehash takes beside the digests and content hashes (any case). */
export const PDQ = 'pdq'

/**
 * What `algorithms=sha256,md5,s3-etag,SHA-256` asks for: digests (the algorithm registry) and
 * content hashes (the content-hash registry), canonical names, duplicates collapsed, each kept in
 * the order first asked. The names of the two registries do not overlap, and a content hash is
 * looked up first by its canonical name, case-insensitively.
 */
export interface FileAlgorithms {
  digests: DigestAlgorithm[]
  contentHashes: ContentHash[]
  /** PDQ (similarity/pdq): an image hash of the whole upload, computed once it has arrived. */
  pdq: boolean
  /** Every canonical name in request order: the order of the response's `hashes`. */
  order: string[]
}

/**
 * At most MAX_FILE_ALGORITHMS digests; content hashes are not counted against it, so that every
 * one can be asked at once (each is one entry at most, and each holds a bounded state).
 */
export function parseFileAlgorithms(list: string | undefined, pointer = '/body/algorithms'): FileAlgorithms {
  const names = (list ?? 'sha256').split(',').map((name) => name.trim()).filter((name) => name.length > 0)
  if (names.length === 0) throw problems.validation('algorithms must name at least one algorithm', [{ pointer, message: 'empty' }])
  const digests = new Map<string, DigestAlgorithm>()
  const content = new Map<string, ContentHash>()
  const order = new Set<string>()
  let pdq = false
  for (const name of names) {
    if (name.toLowerCase() === PDQ) {
      pdq = true
      order.add(PDQ)
      continue
    }
    const entry = findContentHash(name)
    if (entry !== undefined) {
      content.set(entry.name, entry)
      order.add(entry.name)
      continue
    }
    const algorithm = algorithmFor(name, 'filehash', pointer) as DigestAlgorithm
    digests.set(algorithm.name, algorithm)
    order.add(algorithm.name)
    if (digests.size > MAX_FILE_ALGORITHMS) {
      throw problems.validation(`at most ${MAX_FILE_ALGORITHMS} digest algorithms per request`, [{ pointer, message: `more than ${MAX_FILE_ALGORITHMS}` }])
    }
  }
  return { digests: [...digests.values()], contentHashes: [...content.values()], pdq, order: [...order] }
}

export interface FileDigests {
  update(chunk: Uint8Array): void
  /** Total bytes seen so far. */
  readonly size: number
  finish(encoding: OutputEncoding): Record<string, string>
}

export async function startFileDigests(algorithms: DigestAlgorithm[]): Promise<FileDigests> {
  const hashers: Array<[DigestAlgorithm, Hasher]> = await Promise.all(
    algorithms.map(async (algorithm): Promise<[DigestAlgorithm, Hasher]> => [algorithm, await algorithm.create(algorithm.outputBytes)]))
  let size = 0
  return {
    get size() { return size },
    update(chunk) {
      size += chunk.length
      for (const [, hasher] of hashers) hasher.update(chunk)
    },
    finish(encoding) {
      const hashes: Record<string, string> = {}
      for (const [algorithm, hasher] of hashers) {
        const digest = hasher.digest()
        hashes[algorithm.name] = algorithm.format ? algorithm.format(digest) : encodeOutput(digest, encoding)
      }
      return hashes
    },
  }
}
