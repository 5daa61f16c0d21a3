/**
 * /api/filehash: one pass over an upload feeds every requested hasher, chunk by chunk as it
 * arrives, so a file is never held whole and never touches disk (cf. RHash's single-pass design).
 */
import type { DigestAlgorithm, Hasher } from '../algorithms/types.js'
import { problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { encodeOutput, type OutputEncoding } from './encoding.js'

export const MAX_FILE_ALGORITHMS = 16

/** Parses `algorithms=sha256,md5,SHA-256`: canonical names, duplicates collapsed, order kept. */
export function parseAlgorithmList(list: string | undefined, pointer = '/body/algorithms'): DigestAlgorithm[] {
  const names = (list ?? 'sha256').split(',').map((name) => name.trim()).filter((name) => name.length > 0)
  if (names.length === 0) throw problems.validation('algorithms must name at least one algorithm', [{ pointer, message: 'empty' }])
  const chosen = new Map<string, DigestAlgorithm>()
  for (const name of names) {
    const algorithm = algorithmFor(name, 'filehash', pointer) as DigestAlgorithm
    chosen.set(algorithm.name, algorithm)
    if (chosen.size > MAX_FILE_ALGORITHMS) {
      throw problems.validation(`at most ${MAX_FILE_ALGORITHMS} algorithms per request`, [{ pointer, message: `more than ${MAX_FILE_ALGORITHMS}` }])
    }
  }
  return [...chosen.values()]
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
