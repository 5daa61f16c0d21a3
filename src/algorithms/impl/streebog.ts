/**
 * Streebog, GOST R 34.11-2012 (RFC 6986), 512- and 256-bit.
 *
 * RFC 6986 writes vectors as big-endian numbers; the hash itself reads the message as a byte
 * string whose first byte is the least significant, and tools (gost12sum, RHash `--gost12-*`,
 * OpenSSL's gost engine, CyberChef) print the digest bytes in that natural order. So the 512-bit
 * state is kept as eight little-endian 64-bit lanes (hi/lo halves), and the output is its bytes.
 *
 * S (the substitution π), P (the byte transposition) and L (multiplication by the matrix A) are
 * fused into eight lookup tables of 256 64-bit entries, computed here from π and A at load time.
 */
import { BlockHasher, hexBytes, readU32LE } from './block.js'

/** RFC 6986 §5.1: the substitution π. */
const PI = Uint8Array.from([
  252, 238, 221, 17, 207, 110, 49, 22, 251, 196, 250, 218, 35, 197, 4, 77,
  233, 119, 240, 219, 147, 46, 153, 186, 23, 54, 241, 187, 20, 205, 95, 193,
  249, 24, 101, 90, 226, 92, 239, 33, 129, 28, 60, 66, 139, 1, 142, 79,
  5, 132, 2, 174, 227, 106, 143, 160, 6, 11, 237, 152, 127, 212, 211, 31,
  235, 52, 44, 81, 234, 200, 72, 171, 242, 42, 104, 162, 253, 58, 206, 204,
  181, 112, 14, 86, 8, 12, 118, 18, 191, 114, 19, 71, 156, 183, 93, 135,
  21, 161, 150, 41, 16, 123, 154, 199, 243, 145, 120, 111, 157, 158, 178, 177,
  50, 117, 25, 61, 255, 53, 138, 126, 109, 84, 198, 128, 195, 189, 13, 87,
  223, 245, 36, 169, 62, 168, 67, 201, 215, 121, 214, 246, 124, 34, 185, 3,
  224, 15, 236, 222, 122, 148, 176, 188, 220, 232, 40, 80, 78, 51, 10, 74,
  167, 151, 96, 115, 30, 0, 98, 68, 26, 184, 56, 130, 100, 159, 38, 65,
  173, 69, 70, 146, 39, 94, 85, 47, 140, 163, 165, 125, 105, 213, 149, 59,
  7, 88, 179, 64, 134, 172, 29, 247, 48, 55, 107, 228, 136, 217, 231, 137,
  225, 27, 131, 73, 76, 63, 248, 254, 141, 83, 170, 144, 202, 216, 133, 97,
  32, 113, 103, 164, 45, 43, 9, 91, 203, 155, 37, 208, 190, 229, 108, 82,
  89, 166, 116, 210, 230, 244, 180, 192, 209, 102, 175, 194, 57, 75, 99, 182,
])

/** RFC 6986 §5.3: the rows of A; A[0] belongs to the most significant bit of a 64-bit lane. */
const A_ROWS = `
  8e20faa72ba0b470 47107ddd9b505a38 ad08b0e0c3282d1c d8045870ef14980e 6c022c38f90a4c07 3601161cf205268d 1b8e0b0e798c13c8 83478b07b2468764
  a011d380818e8f40 5086e740ce47c920 2843fd2067adea10 14aff010bdd87508 0ad97808d06cb404 05e23c0468365a02 8c711e02341b2d01 46b60f011a83988e
  90dab52a387ae76f 486dd4151c3dfdb9 24b86a840e90f0d2 125c354207487869 092e94218d243cba 8a174a9ec8121e5d 4585254f64090fa0 accc9ca9328a8950
  9d4df05d5f661451 c0a878a0a1330aa6 60543c50de970553 302a1e286fc58ca7 18150f14b9ec46dd 0c84890ad27623e0 0642ca05693b9f70 0321658cba93c138
  86275df09ce8aaa8 439da0784e745554 afc0503c273aa42a d960281e9d1d5215 e230140fc0802984 71180a8960409a42 b60c05ca30204d21 5b068c651810a89e
  456c34887a3805b9 ac361a443d1c8cd2 561b0d22900e4669 2b838811480723ba 9bcf4486248d9f5d c3e9224312c8c1a0 effa11af0964ee50 f97d86d98a327728
  e4fa2054a80b329c 727d102a548b194e 39b008152acb8227 9258048415eb419d 492c024284fbaec0 aa16012142f35760 550b8e9e21f7a530 a48b474f9ef5dc18
  70a6a56e2440598e 3853dc371220a247 1ca76e95091051ad 0edd37c48a08a6d8 07e095624504536c 8d70c431ac02a736 c83862965601dd1b 641c314b2b8ee083
`.trim().split(/\s+/)

/** RFC 6986 §6: the iteration constants C1..C12, as the RFC prints them (big-endian). */
const ITERATION_CONSTANTS = [
  'b1085bda1ecadae9ebcb2f81c0657c1f2f6a76432e45d016714eb88d7585c4fc4b7ce09192676901a2422a08a460d31505767436cc744d23dd806559f2a64507',
  '6fa3b58aa99d2f1a4fe39d460f70b5d7f3feea720a232b9861d55e0f16b501319ab5176b12d699585cb561c2db0aa7ca55dda21bd7cbcd56e679047021b19bb7',
  'f574dcac2bce2fc70a39fc286a3d843506f15e5f529c1f8bf2ea7514b1297b7bd3e20fe490359eb1c1c93a376062db09c2b6f443867adb31991e96f50aba0ab2',
  'ef1fdfb3e81566d2f948e1a05d71e4dd488e857e335c3c7d9d721cad685e353fa9d72c82ed03d675d8b71333935203be3453eaa193e837f1220cbebc84e3d12e',
  '4bea6bacad4747999a3f410c6ca923637f151c1f1686104a359e35d7800fffbdbfcd1747253af5a3dfff00b723271a167a56a27ea9ea63f5601758fd7c6cfe57',
  'ae4faeae1d3ad3d96fa4c33b7a3039c02d66c4f95142a46c187f9ab49af08ec6cffaa6b71c9ab7b40af21f66c2bec6b6bf71c57236904f35fa68407a46647d6e',
  'f4c70e16eeaac5ec51ac86febf240954399ec6c7e6bf87c9d3473e33197a93c90992abc52d822c3706476983284a05043517454ca23c4af38886564d3a14d493',
  '9b1f5b424d93c9a703e7aa020c6e41414eb7f8719c36de1e89b4443b4ddbc49af4892bcb929b069069d18d2bd1a5c42f36acc2355951a8d9a47f0dd4bf02e71e',
  '378f5a541631229b944c9ad8ec165fde3a7d3a1b258942243cd955b7e00d0984800a440bdbb2ceb17b2b8a9aa6079c540e38dc92cb1f2a607261445183235adb',
  'abbedea680056f52382ae548b2e4f3f38941e71cff8a78db1fffe18a1b3361039fe76702af69334b7a1e6c303b7652f43698fad1153bb6c374b4c7fb98459ced',
  '7bcd9ed0efc889fb3002c6cd635afe94d8fa6bbbebab076120018021148466798a1d71efea48b9caefbacd1d7d476e98dea2594ac06fd85d6bcaa4cd81f32d1b',
  '378ee767f11631bad21380b00449b17acda43c32bcdf1d77f82012d430219f9b5d80ef9d1891cc86e71da4aa88e12852faf417d5d9b21b9948bc924af11bd720',
]

/** A 512-bit value as 16 words: lane i is (w[2i] high, w[2i + 1] low), lane 0 least significant. */
type Vector = Uint32Array

function vectorFromLittleEndian(bytes: Uint8Array, offset = 0, out: Vector = new Uint32Array(16)): Vector {
  for (let lane = 0; lane < 8; lane++) {
    out[2 * lane + 1] = readU32LE(bytes, offset + 8 * lane)
    out[2 * lane] = readU32LE(bytes, offset + 8 * lane + 4)
  }
  return out
}

const C: Vector[] = ITERATION_CONSTANTS.map((hex) => vectorFromLittleEndian(hexBytes(hex).reverse()))

/**
 * LPS[position][byte]: what byte value `byte`, found at byte `position` of some lane j, contributes
 * to lane j's partner after S, P and L. P moves byte i of lane j to byte j of lane i; L then maps
 * bit k of that lane (k = 8j + bit) to row A[63 - k].
 */
const LPS = new Uint32Array(2 * 8 * 256) // entry k: LPS[2k] high half, LPS[2k + 1] low half
{
  const rowHi = A_ROWS.map((row) => parseInt(row.slice(0, 8), 16))
  const rowLo = A_ROWS.map((row) => parseInt(row.slice(8), 16))
  for (let position = 0; position < 8; position++) {
    for (let byte = 0; byte < 256; byte++) {
      let hi = 0, lo = 0
      const substituted = PI[byte] as number
      for (let bit = 0; bit < 8; bit++) {
        if ((substituted >>> bit) & 1) {
          const row = 63 - (8 * position + bit)
          hi ^= rowHi[row] as number
          lo ^= rowLo[row] as number
        }
      }
      LPS[2 * (256 * position + byte)] = hi
      LPS[2 * (256 * position + byte) + 1] = lo
    }
  }
}

const scratch = new Uint32Array(16)

/** target = LPS(target ⊕ key), in place. */
function lpsx(target: Vector, key: Vector): void {
  for (let i = 0; i < 16; i++) scratch[i] = (target[i] as number) ^ (key[i] as number)
  const t = LPS, s = scratch
  for (let lane = 0; lane < 8; lane++) {
    // Output lane `lane` gathers byte `lane` of every input lane j, looked up at position j.
    const shift = 8 * (lane & 3)
    const half = lane < 4 ? 1 : 0
    const i0 = 2 * (((s[half] as number) >>> shift) & 0xff)
    const i1 = 2 * (256 + (((s[2 + half] as number) >>> shift) & 0xff))
    const i2 = 2 * (512 + (((s[4 + half] as number) >>> shift) & 0xff))
    const i3 = 2 * (768 + (((s[6 + half] as number) >>> shift) & 0xff))
    const i4 = 2 * (1024 + (((s[8 + half] as number) >>> shift) & 0xff))
    const i5 = 2 * (1280 + (((s[10 + half] as number) >>> shift) & 0xff))
    const i6 = 2 * (1536 + (((s[12 + half] as number) >>> shift) & 0xff))
    const i7 = 2 * (1792 + (((s[14 + half] as number) >>> shift) & 0xff))
    target[2 * lane] = (t[i0] as number) ^ (t[i1] as number) ^ (t[i2] as number) ^ (t[i3] as number) ^ (t[i4] as number) ^ (t[i5] as number) ^ (t[i6] as number) ^ (t[i7] as number)
    target[2 * lane + 1] = (t[i0 + 1] as number) ^ (t[i1 + 1] as number) ^ (t[i2 + 1] as number) ^ (t[i3 + 1] as number) ^ (t[i4 + 1] as number) ^ (t[i5 + 1] as number) ^ (t[i6 + 1] as number) ^ (t[i7 + 1] as number)
  }
}

const key = new Uint32Array(16)
const state = new Uint32Array(16)

/** RFC 6986 §7: g_N(h, m) = E(LPS(h ⊕ N), m) ⊕ h ⊕ m, with E's twelve rounds and key schedule. */
function g(h: Vector, n: Vector, m: Vector): void {
  key.set(h)
  lpsx(key, n)
  state.set(m)
  for (let i = 0; i < 12; i++) {
    lpsx(state, key)
    lpsx(key, C[i] as Vector)
  }
  for (let i = 0; i < 16; i++) h[i] = (h[i] as number) ^ (state[i] as number) ^ (key[i] as number) ^ (m[i] as number)
}

/** sum = (sum + addend) mod 2^512. */
function add512(sum: Vector, addend: Vector): void {
  let carry = 0
  for (let lane = 0; lane < 8; lane++) {
    const lo = (sum[2 * lane + 1] as number) + (addend[2 * lane + 1] as number) + carry
    const hi = (sum[2 * lane] as number) + (addend[2 * lane] as number) + (lo > 0xffffffff ? 1 : 0)
    sum[2 * lane + 1] = lo
    sum[2 * lane] = hi
    carry = hi > 0xffffffff ? 1 : 0
  }
}

const ZERO: Vector = new Uint32Array(16)

export class Streebog extends BlockHasher {
  readonly #outputBytes: 32 | 64
  /** RFC 6986 §8: the state h, the length N in bits and the checksum Σ. */
  readonly #h = new Uint32Array(16)
  readonly #n = new Uint32Array(16)
  readonly #sigma = new Uint32Array(16)
  readonly #block = new Uint32Array(16)
  readonly #blockBits = new Uint32Array(16)

  constructor(outputBytes: 32 | 64) {
    super(64)
    this.#outputBytes = outputBytes
    // §8.1: IV is 0^512 for the 512-bit hash and (00000001)^64 for the 256-bit one.
    if (outputBytes === 32) this.#h.fill(0x01010101)
    this.#blockBits[1] = 512
  }

  protected compress(data: Uint8Array, offset: number): void {
    // §8.2: h = g_N(h, m); N += 512; Σ += m.
    const m = vectorFromLittleEndian(data, offset, this.#block)
    g(this.#h, this.#n, m)
    add512(this.#n, this.#blockBits)
    add512(this.#sigma, m)
  }

  protected finish(): Uint8Array {
    // §8.3: pad to 0^(511-|M|) || 1 || M, i.e. the byte 0x01 just after the message bytes.
    const tail = this.pending
    tail[this.pendingBytes] = 0x01
    tail.fill(0, this.pendingBytes + 1)
    const m = vectorFromLittleEndian(tail, 0, this.#block)
    g(this.#h, this.#n, m)
    const bits = new Uint32Array(16)
    bits[1] = this.pendingBytes * 8
    add512(this.#n, bits)
    add512(this.#sigma, m)
    g(this.#h, ZERO, this.#n)
    g(this.#h, ZERO, this.#sigma)
    const out = new Uint8Array(64)
    const view = new DataView(out.buffer)
    for (let lane = 0; lane < 8; lane++) {
      view.setUint32(8 * lane, this.#h[2 * lane + 1] as number, true)
      view.setUint32(8 * lane + 4, this.#h[2 * lane] as number, true)
    }
    // The 256-bit hash is the most significant half of the state: its last 32 bytes.
    return this.#outputBytes === 64 ? out : out.slice(32)
  }
}
