/**
 * Cutting a stream into the parts of an S3 multipart upload, and the digests a store keeps per
 * part. S3 allows parts of 5 MiB to 5 GiB, except that the last may be smaller, and at most 10,000
 * of them (Amazon S3 User Guide, "Amazon S3 multipart upload limits").
 */
import { createHash, type Hash } from 'node:crypto'
import type { IHasher } from 'hash-wasm/dist/lib/WASMInterface.js'
import { formatBytes, GiB, invalidParameter, MiB } from './parameters.js'

export const S3_MIN_PART_BYTES = 5 * MiB
export const S3_MAX_PART_BYTES = 5 * GiB
export const S3_MAX_PARTS = 10_000
/** A single PUT takes at most 5 GiB (S3 User Guide, "Uploading objects"). */
export const S3_MAX_PUT_BYTES = 5 * GiB

/** A digest that can start over, so one instance serves every part. */
export interface RestartableDigest {
  restart(): void
  update(data: Uint8Array): void
  digest(): Uint8Array
}

/** node:crypto (OpenSSL) under its name: a fresh Hash per start, which costs nothing to make. */
export function opensslDigest(name: 'md5' | 'sha1' | 'sha256'): RestartableDigest {
  let hash: Hash = createHash(name)
  return {
    restart: () => { hash = createHash(name) },
    update: (data) => { hash.update(data) },
    digest: () => hash.digest(),
  }
}

/** A hash-wasm hasher (the CRCs): its `init()` starts over in the same WASM memory. */
export function wasmDigest(hasher: IHasher): RestartableDigest {
  hasher.init()
  return {
    restart: () => { hasher.init() },
    update: (data) => { hasher.update(data) },
    digest: () => hasher.digest('binary'),
  }
}

/** The problem of an upload cut into more parts than S3 allows. */
export function tooManyParts(partSize: number, maxParts = S3_MAX_PARTS) {
  return invalidParameter('partSize', `partSize ${formatBytes(partSize)} makes more than ${maxParts.toLocaleString('en')} parts, the most S3 allows; choose a larger partSize`)
}

/**
 * Feeds each part's bytes to `part` and collects the part digests. A part ends when it holds
 * `partSize` bytes; the next begins only when a byte arrives, so an object of exactly N parts has
 * N, not N + 1 with an empty last one. An empty object still makes one (empty) part, as an empty
 * multipart upload does.
 */
export class PartDigests {
  readonly #partSize: number
  readonly #maxParts: number
  readonly #part: RestartableDigest
  readonly #digests: Uint8Array[] = []
  #fill = 0
  #open = false

  constructor(part: RestartableDigest, partSize: number, maxParts = S3_MAX_PARTS) {
    this.#part = part
    this.#partSize = partSize
    this.#maxParts = maxParts
  }

  update(data: Uint8Array): void {
    let position = 0
    while (position < data.length) {
      if (!this.#open) {
        if (this.#digests.length === this.#maxParts) throw tooManyParts(this.#partSize, this.#maxParts)
        this.#part.restart()
        this.#open = true
      }
      const take = Math.min(this.#partSize - this.#fill, data.length - position)
      this.#part.update(data.subarray(position, position + take))
      this.#fill += take
      position += take
      if (this.#fill === this.#partSize) this.#closePart()
    }
  }

  #closePart(): void {
    this.#digests.push(this.#part.digest())
    this.#fill = 0
    this.#open = false
  }

  /** The digests of every part, in order. */
  finish(): Uint8Array[] {
    if (this.#open) this.#closePart()
    if (this.#digests.length === 0) {
      this.#part.restart()
      this.#digests.push(this.#part.digest())
    }
    return this.#digests
  }
}

/** The parts' digests one after another, as S3 concatenates them for an ETag or a composite checksum. */
export function concatenated(digests: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(digests)
}
