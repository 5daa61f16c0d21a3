/**
 * HAS-160 (TTAS.KO-12.0011/R2, the Korean hash standard used with KCDSA). SHA-1's shape with its own
 * message expansion: each round of 20 steps reads the 16 block words in a fixed order plus four
 * extra words, each the XOR of four block words; the step's rotation of A varies per step and the
 * rotation of B per round. Words and length are little-endian.
 */
import { BlockHasher, readU32LE, writeU32LE } from './block.js'

/** Which of the 32 words (16 block words, then 16 extra ones) each step of each round reads. */
const WORD_ORDER = [
  [18, 0, 1, 2, 3, 19, 4, 5, 6, 7, 16, 8, 9, 10, 11, 17, 12, 13, 14, 15],
  [22, 3, 6, 9, 12, 23, 15, 2, 5, 8, 20, 11, 14, 1, 4, 21, 7, 10, 13, 0],
  [26, 12, 5, 14, 7, 27, 0, 9, 2, 11, 24, 4, 13, 6, 15, 25, 8, 1, 10, 3],
  [30, 7, 2, 13, 8, 31, 3, 14, 9, 4, 28, 15, 10, 5, 0, 29, 11, 6, 1, 12],
].flat()

/** Extra words 16..31: each the XOR of these four block words. */
const EXTRA_WORDS = [
  [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15],
  [3, 6, 9, 12], [2, 5, 8, 15], [1, 4, 11, 14], [0, 7, 10, 13],
  [5, 7, 12, 14], [0, 2, 9, 11], [4, 6, 13, 15], [1, 3, 8, 10],
  [2, 7, 8, 13], [3, 4, 9, 14], [0, 5, 10, 15], [1, 6, 11, 12],
]

/** Rotation of A in step s of every round. */
const ROTATE_A = [5, 11, 7, 15, 6, 13, 8, 14, 7, 12, 9, 11, 8, 15, 6, 12, 9, 14, 5, 13]
/** Rotation of B, and the additive constant, per round. */
const ROTATE_B = [10, 17, 25, 30]
const CONSTANTS = [0, 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc]

const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n))

export class HAS160 extends BlockHasher {
  readonly #h = Uint32Array.of(0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0)
  readonly #x = new Uint32Array(32)

  constructor() { super(64) }

  protected compress(data: Uint8Array, offset: number): void {
    const x = this.#x
    for (let i = 0; i < 16; i++) x[i] = readU32LE(data, offset + 4 * i)
    for (let i = 0; i < 16; i++) {
      const [p, q, r, s] = EXTRA_WORDS[i] as [number, number, number, number]
      x[16 + i] = (x[p] as number) ^ (x[q] as number) ^ (x[r] as number) ^ (x[s] as number)
    }
    const h = this.#h
    let a = h[0] as number, b = h[1] as number, c = h[2] as number, d = h[3] as number, e = h[4] as number
    for (let round = 0; round < 4; round++) {
      const k = CONSTANTS[round] as number, rb = ROTATE_B[round] as number
      for (let step = 0; step < 20; step++) {
        // F1 = (b ∧ c) ∨ (¬b ∧ d); F2 = F4 = b ⊕ c ⊕ d; F3 = c ⊕ (b ∨ ¬d).
        const f = round === 0 ? d ^ (b & (c ^ d)) : round === 2 ? c ^ (b | ~d) : b ^ c ^ d
        const t = (rotl(a, ROTATE_A[step] as number) + f + e + (x[WORD_ORDER[20 * round + step] as number] as number) + k) | 0
        e = d
        d = c
        c = rotl(b, rb)
        b = a
        a = t
      }
    }
    h[0] = (h[0] as number) + a
    h[1] = (h[1] as number) + b
    h[2] = (h[2] as number) + c
    h[3] = (h[3] as number) + d
    h[4] = (h[4] as number) + e
  }

  protected finish(): Uint8Array {
    // MD-style padding: 0x80, zeros, then the length in bits as 64-bit little-endian.
    const block = this.pending
    block[this.pendingBytes] = 0x80
    block.fill(0, this.pendingBytes + 1)
    if (this.pendingBytes + 1 > 56) {
      this.compress(block, 0)
      block.fill(0)
    }
    const bits = this.totalBytes * 8
    writeU32LE(block, 56, bits >>> 0)
    writeU32LE(block, 60, Math.floor(bits / 0x100000000) >>> 0)
    this.compress(block, 0)
    const out = new Uint8Array(20)
    for (let i = 0; i < 5; i++) writeU32LE(out, 4 * i, this.#h[i] as number)
    return out
  }
}
