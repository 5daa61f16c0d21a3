/**
 * MD2 (RFC 1319). Obsolete and slow by design (18 rounds over a 48-byte state per 16-byte block);
 * here for legacy checksums only. Includes the RFC 1319 erratum: the checksum step is
 * `C[j] ^= S[c ^ L]`, not `C[j] = S[c ^ L]` as first printed (RFC Editor errata ID 555).
 */
import { BlockHasher } from './block.js'

/** RFC 1319 §3.2: the permutation of 0..255 built from the digits of pi. */
const S = Uint8Array.from([
  41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6, 19,
  98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188, 76, 130, 202,
  30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24, 138, 23, 229, 18,
  190, 78, 196, 214, 218, 158, 222, 73, 160, 251, 245, 142, 187, 47, 238, 122,
  169, 104, 121, 145, 21, 178, 7, 63, 148, 194, 16, 137, 11, 34, 95, 33,
  128, 127, 93, 154, 90, 144, 50, 39, 53, 62, 204, 231, 191, 247, 151, 3,
  255, 25, 48, 179, 72, 165, 181, 209, 215, 94, 146, 42, 172, 86, 170, 198,
  79, 184, 56, 210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241,
  69, 157, 112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2,
  27, 96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
  85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197, 234, 38,
  44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65, 129, 77, 82,
  106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123, 8, 12, 189, 177, 74,
  120, 136, 149, 139, 227, 99, 232, 109, 233, 203, 213, 254, 59, 0, 29, 57,
  242, 239, 183, 14, 102, 88, 208, 228, 166, 119, 114, 248, 235, 117, 75, 10,
  49, 68, 80, 180, 143, 237, 31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
])

export class MD2 extends BlockHasher {
  /** RFC 1319 §3.4: the 48-byte buffer X. */
  readonly #state = new Uint8Array(48)
  /** RFC 1319 §3.2: the running 16-byte checksum C and its last byte L. */
  readonly #checksum = new Uint8Array(16)

  constructor() { super(16) }

  protected compress(data: Uint8Array, offset: number): void {
    const x = this.#state
    const c = this.#checksum
    let last = c[15] as number
    for (let j = 0; j < 16; j++) {
      const byte = data[offset + j] as number
      x[16 + j] = byte
      x[32 + j] = byte ^ (x[j] as number)
      last = (c[j] = (c[j] as number) ^ (S[byte ^ last] as number))
    }
    let t = 0
    for (let round = 0; round < 18; round++) {
      for (let k = 0; k < 48; k++) t = (x[k] = (x[k] as number) ^ (S[t] as number))
      t = (t + round) & 0xff
    }
  }

  protected finish(): Uint8Array {
    // §3.1: always pad, with i bytes of value i (1 ≤ i ≤ 16); §3.2: then append the checksum.
    const padBytes = 16 - this.pendingBytes
    this.pending.fill(padBytes, this.pendingBytes)
    this.compress(this.pending, 0)
    this.compress(this.#checksum.slice(), 0)
    return this.#state.slice(0, 16)
  }
}
