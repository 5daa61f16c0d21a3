/**
 * A stream cut into blocks of a fixed size (the last may be shorter), each block hashed on its own:
 * the shape of Dropbox's 4 MiB blocks, BitTorrent v1's pieces and v2's 16 KiB blocks. Each block's
 * digest goes to `onBlock` as soon as the block ends, so nothing of the block is kept.
 */
import { createHash, type Hash } from 'node:crypto'

export class BlockDigests {
  readonly #algorithm: string
  readonly #blockBytes: number
  readonly #onBlock: (digest: Buffer) => void
  #block: Hash
  #fill = 0

  constructor(algorithm: 'sha1' | 'sha256', blockBytes: number, onBlock: (digest: Buffer) => void) {
    this.#algorithm = algorithm
    this.#blockBytes = blockBytes
    this.#onBlock = onBlock
    this.#block = createHash(algorithm)
  }

  update(chunk: Uint8Array): void {
    let position = 0
    while (position < chunk.length) {
      const take = Math.min(this.#blockBytes - this.#fill, chunk.length - position)
      this.#block.update(chunk.subarray(position, position + take))
      this.#fill += take
      position += take
      if (this.#fill === this.#blockBytes) this.#endBlock()
    }
  }

  /** Ends the last, shorter block, if the stream stopped inside one. */
  flush(): void {
    if (this.#fill > 0) this.#endBlock()
  }

  #endBlock(): void {
    const digest = this.#block.digest()
    this.#block = createHash(this.#algorithm)
    this.#fill = 0
    this.#onBlock(digest)
  }
}
