/**
 * The buffering every Merkle–Damgård-style hash needs: input arrives in chunks of any size, the
 * compression function wants whole blocks. Full blocks are compressed straight from the caller's
 * array (no copy); only a trailing partial block is kept.
 */
import type { Hasher } from '../types.js'

export abstract class BlockHasher implements Hasher {
  protected readonly blockBytes: number
  /** The partial block carried between `update` calls. */
  protected readonly pending: Uint8Array
  protected pendingBytes = 0
  /** Bytes seen so far; a double counts exactly up to 2^53, far beyond any upload. */
  protected totalBytes = 0
  #finished = false

  constructor(blockBytes: number) {
    this.blockBytes = blockBytes
    this.pending = new Uint8Array(blockBytes)
  }

  /** Compresses the block at `data[offset .. offset + blockBytes)`. */
  protected abstract compress(data: Uint8Array, offset: number): void
  /** Pads and finishes; `pending[0 .. pendingBytes)` holds the unprocessed tail. */
  protected abstract finish(): Uint8Array

  update(data: Uint8Array): void {
    if (this.#finished) throw new Error('hasher already finished')
    const block = this.blockBytes
    let position = 0
    this.totalBytes += data.length
    if (this.pendingBytes > 0) {
      const take = Math.min(block - this.pendingBytes, data.length)
      this.pending.set(data.subarray(0, take), this.pendingBytes)
      this.pendingBytes += take
      position = take
      if (this.pendingBytes < block) return
      this.compress(this.pending, 0)
      this.pendingBytes = 0
    }
    for (; data.length - position >= block; position += block) this.compress(data, position)
    if (position < data.length) {
      this.pending.set(data.subarray(position), 0)
      this.pendingBytes = data.length - position
    }
  }

  digest(): Uint8Array {
    if (this.#finished) throw new Error('hasher already finished')
    this.#finished = true
    return this.finish()
  }
}

/** Reads a little-endian 32-bit word. */
export function readU32LE(data: Uint8Array, offset: number): number {
  return ((data[offset] as number) | ((data[offset + 1] as number) << 8) | ((data[offset + 2] as number) << 16) | ((data[offset + 3] as number) << 24)) >>> 0
}

export function writeU32LE(out: Uint8Array, offset: number, value: number): void {
  out[offset] = value & 0xff
  out[offset + 1] = (value >>> 8) & 0xff
  out[offset + 2] = (value >>> 16) & 0xff
  out[offset + 3] = (value >>> 24) & 0xff
}

/** Bytes from hex, for constants written as the specifications print them. */
export function hexBytes(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, '')
  const out = new Uint8Array(clean.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.slice(2 * i, 2 * i + 2), 16)
  return out
}
