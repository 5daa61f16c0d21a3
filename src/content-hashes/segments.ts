/**
 * Content hashes that are a function of independent segments of the file: a Tiger tree's 1 MiB
 * subtrees, AICH's 180 KiB blocks, a torrent's pieces, S3's parts, Dropbox's 4 MiB blocks,
 * quickXorHash's runs. Such a hash splits by data, as RHash cannot (it reads on one core): `shares`
 * hash threads see every byte, each hashes the segments whose index ≡ its share (mod shares) and
 * hands back their digests, and the main thread puts them in order and finishes the hash
 * (`combineShares`). The result is the same text the streaming hasher gives; tests compare both
 * with the reference tools around segment boundaries.
 */
import { createHash, type Hash } from 'node:crypto'
import { base64 } from './encoding.js'
import type { ContentHasher, DataSplit } from './types.js'

export type { DataSplit } from './types.js'

/** One segment's digest, restarted for each segment the share hashes. */
export interface SegmentDigest {
  /** Starts segment `index`, which begins at byte `start` of the file. */
  begin(index: number, start: number): void
  update(bytes: Uint8Array): void
  end(): Uint8Array
}

export interface SegmentedHash {
  /** Where segment `index` begins; 0 for segment 0, increasing. */
  segmentStart(index: number): number
  /** A digest for the segments of one share (made once per share, in its thread). */
  segmentDigest(): SegmentDigest | Promise<SegmentDigest>
  /** An empty file is one empty segment (a Tiger tree's one empty leaf, S3's one empty part), rather than none. */
  emptyIsOneSegment: boolean
  /** Called as each segment begins: throws the request's problem when there are too many (S3's 10,000 parts). */
  checkSegment?(index: number): void
  /** The result from every segment's digest, in order, and the file's length. */
  combine(digests: Uint8Array[], length: number): string | Promise<string>
}

/** Fixed-size segments: `segmentStart` for them. */
export const fixedSegments = (bytes: number) => (index: number): number => index * bytes

/** An OpenSSL digest per segment (a piece, a block, a part). */
export function opensslSegmentDigest(algorithm: 'md5' | 'sha1' | 'sha256'): SegmentDigest {
  let hash: Hash = createHash(algorithm)
  return { begin: () => { hash = createHash(algorithm) }, update: (bytes) => { hash.update(bytes) }, end: () => hash.digest() }
}

/**
 * What a share hands back: the file's length and its segments' digests, in its own order, one after
 * another in base64 (every digest of a hash has the same width).
 */
interface ShareResult { length: number, width: number, digests: string }

/**
 * The part of a segmented hash one thread computes: every byte passes by, the segments of this
 * share are hashed. Its text (JSON) is read only by `combineShares`.
 */
export class SegmentShare implements ContentHasher {
  readonly #hash: SegmentedHash
  readonly #digest: SegmentDigest
  readonly #share: number
  readonly #shares: number
  /** Kept as bytes until the end: 20–24 bytes a segment (a 1 MiB subtree, a 180 KiB AICH block), some 120 KiB per GiB at most. */
  readonly #digests: Uint8Array[] = []
  #position = 0
  /** The segment the next byte belongs to, where it begins and where the next begins. */
  #segment = -1
  #segmentEnd = 0
  /** Whether this share hashes the current segment, and whether the segment has begun. */
  #mine = false
  #open = false

  constructor(hash: SegmentedHash, digest: SegmentDigest, share: number, shares: number) {
    this.#hash = hash
    this.#digest = digest
    this.#share = share
    this.#shares = shares
  }

  update(chunk: Uint8Array): void {
    let offset = 0
    while (offset < chunk.length) {
      if (this.#position === this.#segmentEnd) this.#next()
      const take = Math.min(chunk.length - offset, this.#segmentEnd - this.#position)
      if (this.#mine) this.#digest.update(chunk.subarray(offset, offset + take))
      offset += take
      this.#position += take
    }
  }

  /** Closes the segment that just ended (if this share's) and starts the next. */
  #next(): void {
    this.#close()
    const index = ++this.#segment
    this.#hash.checkSegment?.(index)
    const start = this.#hash.segmentStart(index)
    this.#segmentEnd = this.#hash.segmentStart(index + 1)
    this.#mine = index % this.#shares === this.#share
    if (this.#mine) {
      this.#digest.begin(index, start)
      this.#open = true
    }
  }

  #close(): void {
    if (!this.#open) return
    this.#digests.push(this.#digest.end())
    this.#open = false
  }

  finish(): string {
    this.#close()
    if (this.#position === 0 && this.#hash.emptyIsOneSegment && this.#share === 0) {
      this.#digest.begin(0, 0)
      this.#digests.push(this.#digest.end())
    }
    const width = this.#digests[0]?.length ?? 0
    return JSON.stringify({ length: this.#position, width, digests: base64(Buffer.concat(this.#digests)) } satisfies ShareResult)
  }
}


/** A segmented hash as a `DataSplit`. */
export function splitSegments(hash: SegmentedHash): DataSplit {
  return {
    share: async (index, count) => new SegmentShare(hash, await hash.segmentDigest(), index, count),
    combine: (texts) => combineShares(hash, texts),
  }
}

/** Several split hashes over the same bytes giving one text (a magnet link's TTH, btih, ed2k and AICH): `join` gets their results and the length. */
export function splitTogether(parts: readonly DataSplit[], join: (results: string[], length: number) => string): DataSplit {
  return {
    async share(index, count) {
      const hashers = await Promise.all(parts.map((part) => part.share(index, count)))
      let length = 0
      return {
        update(chunk) {
          length += chunk.length
          for (const hasher of hashers) hasher.update(chunk)
        },
        finish: () => JSON.stringify({ length, texts: hashers.map((hasher) => hasher.finish()) }),
      }
    },
    async combine(texts) {
      const shares = texts.map((text) => JSON.parse(text) as { length: number, texts: string[] })
      const results: string[] = []
      for (const [index, part] of parts.entries()) results.push(await part.combine(shares.map((share) => share.texts[index] as string)))
      return join(results, shares[0]?.length ?? 0)
    },
  }
}

/** Puts the shares' segment digests back in file order and finishes the hash. */
export async function combineShares(hash: SegmentedHash, texts: readonly string[]): Promise<string> {
  const shares = texts.map((text) => {
    const { length, width, digests } = JSON.parse(text) as ShareResult
    const bytes = Buffer.from(digests, 'base64')
    return { length, digests: Array.from({ length: width === 0 ? 0 : bytes.length / width }, (_, index) => bytes.subarray(index * width, index * width + width)) }
  })
  const total = shares.reduce((sum, share) => sum + share.digests.length, 0)
  const digests: Uint8Array[] = []
  for (let index = 0; index < total; index++) {
    const digest = shares[index % shares.length]?.digests[Math.floor(index / shares.length)]
    if (digest === undefined) throw new Error('segment shares out of step')
    digests.push(digest)
  }
  return hash.combine(digests, shares[0]?.length ?? 0)
}
