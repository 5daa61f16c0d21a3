/**
 * Git's blob object id, what `git hash-object` prints (Git's documentation, gitformat-object and
 * "Git Internals - Git Objects"): the hash of the header `blob <size>\0` followed by the bytes, in
 * SHA-1 for a classic repository and SHA-256 for one made with `git init --object-format=sha256`
 * (Git's hash-function-transition document). The header carries the size, so the size must be
 * known before the first byte: it is a parameter, and a stream of another length is refused.
 */
import { createHash, type Hash } from 'node:crypto'
import { hex } from './encoding.js'
import { invalidParameter } from './parameters.js'
import type { ContentHasher } from './types.js'

export class GitBlobId implements ContentHasher {
  readonly #hash: Hash
  readonly #size: number
  #seen = 0

  constructor(algorithm: 'sha1' | 'sha256', size: number) {
    this.#hash = createHash(algorithm).update(`blob ${size}\0`)
    this.#size = size
  }

  update(chunk: Uint8Array): void {
    this.#seen += chunk.length
    if (this.#seen > this.#size) throw this.#mismatch()
    this.#hash.update(chunk)
  }

  #mismatch() {
    return invalidParameter('size', `size is ${this.#size} bytes, and the content is ${this.#seen > this.#size ? 'longer' : `${this.#seen} bytes`}: a git blob id needs the content's exact size`)
  }

  finish(): string {
    if (this.#seen !== this.#size) throw this.#mismatch()
    return hex(this.#hash.digest())
  }
}
