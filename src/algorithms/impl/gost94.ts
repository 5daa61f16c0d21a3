/**
 * GOST R 34.11-94 (RFC 5831), the hash built on the GOST 28147-89 block cipher (RFC 5830), with
 * either of the two S-box sets in use: the "test" parameters printed in the standard's appendix
 * (RHash `--gost94`) and the CryptoPro parameters id-GostR3411-94-CryptoProParamSet (RFC 4357
 * §11.2; RHash `--gost94-cryptopro`).
 *
 * Numbers are little-endian byte strings throughout, and the digest is printed as those bytes,
 * as RHash and gostsum do.
 */
import { BlockHasher, hexBytes, readU32LE, writeU32LE } from './block.js'

export type Gost94Parameters = 'test' | 'cryptopro'

/** Eight S-boxes K1..K8; K1 substitutes the least significant nibble. */
const SBOXES: Record<Gost94Parameters, number[][]> = {
  // GOST R 34.11-94 Appendix A / RFC 5831 §7.3.1 (the test parameter set).
  test: [
    [4, 10, 9, 2, 13, 8, 0, 14, 6, 11, 1, 12, 7, 15, 5, 3],
    [14, 11, 4, 12, 6, 13, 15, 10, 2, 3, 8, 1, 0, 7, 5, 9],
    [5, 8, 1, 13, 10, 3, 4, 2, 14, 15, 12, 7, 6, 0, 9, 11],
    [7, 13, 10, 1, 0, 8, 9, 15, 14, 4, 6, 12, 11, 2, 5, 3],
    [6, 12, 7, 1, 5, 15, 13, 8, 4, 10, 9, 14, 0, 3, 11, 2],
    [4, 11, 10, 0, 7, 2, 1, 13, 3, 6, 8, 5, 9, 12, 15, 14],
    [13, 11, 4, 1, 3, 15, 5, 9, 0, 10, 14, 7, 6, 8, 2, 12],
    [1, 15, 13, 0, 5, 7, 10, 4, 9, 2, 3, 14, 6, 11, 8, 12],
  ],
  // RFC 4357 §11.2, id-GostR3411-94-CryptoProParamSet.
  cryptopro: [
    [10, 4, 5, 6, 8, 1, 3, 7, 13, 12, 14, 0, 9, 2, 11, 15],
    [5, 15, 4, 0, 2, 13, 11, 9, 1, 7, 6, 3, 12, 14, 10, 8],
    [7, 15, 12, 14, 9, 4, 1, 0, 3, 11, 5, 2, 6, 10, 8, 13],
    [4, 10, 7, 12, 0, 15, 2, 8, 14, 1, 6, 5, 13, 11, 9, 3],
    [7, 6, 4, 11, 9, 12, 2, 10, 1, 8, 0, 14, 15, 13, 3, 5],
    [7, 6, 2, 4, 13, 9, 15, 0, 10, 1, 5, 11, 8, 14, 12, 3],
    [13, 14, 4, 1, 7, 0, 5, 10, 3, 12, 8, 15, 6, 2, 9, 11],
    [1, 3, 10, 9, 5, 11, 4, 15, 8, 6, 7, 14, 13, 0, 2, 12],
  ],
}

/**
 * The cipher's round function f(x) = (S(x)) <<< 11 as four byte tables: table k maps byte k of x
 * through K(2k+1) and K(2k+2), already shifted into place and rotated.
 */
function roundTables(sboxes: number[][]): Uint32Array {
  const tables = new Uint32Array(4 * 256)
  for (let k = 0; k < 4; k++) {
    const low = sboxes[2 * k] as number[], high = sboxes[2 * k + 1] as number[]
    for (let byte = 0; byte < 256; byte++) {
      const value = (((high[byte >>> 4] as number) << 4) | (low[byte & 15] as number)) << (8 * k)
      tables[256 * k + byte] = (value << 11) | (value >>> 21)
    }
  }
  return tables
}

const ROUND_TABLES: Record<Gost94Parameters, Uint32Array> = {
  test: roundTables(SBOXES.test),
  cryptopro: roundTables(SBOXES.cryptopro),
}

/** RFC 5831 §6.1: C3 (C2 = C4 = 0), as little-endian bytes. */
const C3 = hexBytes('ff00ffff000000ffff0000ff00ffff0000ff00ff00ff00ffff00ff00ff00ff00').reverse()

export class Gost94 extends BlockHasher {
  readonly #f: Uint32Array
  /** RFC 5831 §7: the running hash H, the control sum Σ and the length L, little-endian. */
  readonly #h = new Uint8Array(32)
  readonly #sigma = new Uint8Array(32)
  // Working storage, reused for every block.
  readonly #u = new Uint8Array(32)
  readonly #v = new Uint8Array(32)
  readonly #w = new Uint8Array(32)
  readonly #keys = new Uint32Array(32)
  readonly #s = new Uint8Array(32)
  readonly #lfsr = new Uint16Array(16 + 61)

  constructor(parameters: Gost94Parameters) {
    super(32)
    this.#f = ROUND_TABLES[parameters]
  }

  /** GOST 28147-89 encryption of one 64-bit block in ECB mode (RFC 5830 §6) with key `k`. */
  #encrypt(k: number, source: Uint8Array, offset: number, out: Uint8Array): void {
    const f = this.#f
    const keys = this.#keys
    let n1 = readU32LE(source, offset), n2 = readU32LE(source, offset + 4)
    for (let round = 0; round < 32; round++) {
      // K1..K8 three times, then K8..K1.
      const subkey = keys[k + (round < 24 ? round & 7 : 7 - (round & 7))] as number
      const x = (n1 + subkey) >>> 0
      const t = n2 ^ (f[x & 0xff] as number) ^ (f[256 + ((x >>> 8) & 0xff)] as number) ^ (f[512 + ((x >>> 16) & 0xff)] as number) ^ (f[768 + (x >>> 24)] as number)
      n2 = n1
      n1 = t >>> 0
    }
    // The last round does not swap: the output is (N1, N2) = (n2, n1) here.
    writeU32LE(out, offset, n2)
    writeU32LE(out, offset + 4, n1)
  }

  /** Applies ψ `times` times to `value` in place; ψ is a shift register over 16-bit words. */
  #psi(value: Uint8Array, times: number): void {
    const z = this.#lfsr
    for (let i = 0; i < 16; i++) z[i] = (value[2 * i] as number) | ((value[2 * i + 1] as number) << 8)
    // ψ(y16..y1) = (y1 ⊕ y2 ⊕ y3 ⊕ y4 ⊕ y13 ⊕ y16) || y16 .. y2: each application shifts in one word.
    for (let t = 0; t < times; t++) z[16 + t] = (z[t] as number) ^ (z[t + 1] as number) ^ (z[t + 2] as number) ^ (z[t + 3] as number) ^ (z[t + 12] as number) ^ (z[t + 15] as number)
    for (let i = 0; i < 16; i++) {
      const word = z[times + i] as number
      value[2 * i] = word & 0xff
      value[2 * i + 1] = word >>> 8
    }
  }

  /** The step function h = f(h, m) of RFC 5831 §6. */
  #step(m: Uint8Array, offset: number): void {
    const h = this.#h, u = this.#u, v = this.#v, w = this.#w, keys = this.#keys
    u.set(h)
    v.set(m.subarray(offset, offset + 32))
    for (let j = 0; j < 4; j++) {
      if (j > 0) {
        // U = A(U) ⊕ C_j; V = A(A(V)). A(y4||y3||y2||y1) = (y1 ⊕ y2)||y4||y3||y2.
        transformA(u)
        if (j === 2) for (let i = 0; i < 32; i++) u[i] = (u[i] as number) ^ (C3[i] as number)
        transformA(v)
        transformA(v)
      }
      for (let i = 0; i < 32; i++) w[i] = (u[i] as number) ^ (v[i] as number)
      // K_j = P(W): byte i + 4k of the key is byte 8i + k of W (φ, §6.1).
      for (let i = 0; i < 4; i++) {
        for (let k = 0; k < 8; k++) {
          const at = i + 4 * k
          keys[8 * j + (at >>> 2)] = ((keys[8 * j + (at >>> 2)] as number) & ~(0xff << (8 * (at & 3)))) | ((w[8 * i + k] as number) << (8 * (at & 3)))
        }
      }
    }
    // Encryption transformation: s_i = E_{K_i}(h_i), S = s4||s3||s2||s1.
    const s = this.#s
    for (let i = 0; i < 4; i++) this.#encrypt(8 * i, h, 8 * i, s)
    // Shuffle transformation: H = ψ^61(H ⊕ ψ(M ⊕ ψ^12(S))).
    this.#psi(s, 12)
    for (let i = 0; i < 32; i++) s[i] = (s[i] as number) ^ (m[offset + i] as number)
    this.#psi(s, 1)
    for (let i = 0; i < 32; i++) s[i] = (s[i] as number) ^ (h[i] as number)
    this.#psi(s, 61)
    h.set(s)
  }

  protected compress(data: Uint8Array, offset: number): void {
    addInto(this.#sigma, data, offset)
    this.#step(data, offset)
  }

  protected finish(): Uint8Array {
    // §7 stage 3: a partial last block is zero-padded; then L (bits) and Σ are hashed in.
    if (this.pendingBytes > 0) {
      this.pending.fill(0, this.pendingBytes)
      this.compress(this.pending, 0)
    }
    const length = new Uint8Array(32)
    const bits = this.totalBytes * 8
    new DataView(length.buffer).setUint32(0, bits >>> 0, true)
    new DataView(length.buffer).setUint32(4, Math.floor(bits / 0x100000000), true)
    this.#step(length, 0)
    this.#step(this.#sigma.slice(), 0)
    return this.#h.slice()
  }
}

function transformA(y: Uint8Array): void {
  for (let i = 0; i < 8; i++) {
    const y1 = y[i] as number, y2 = y[8 + i] as number
    y[i] = y2
    y[8 + i] = y[16 + i] as number
    y[16 + i] = y[24 + i] as number
    y[24 + i] = y1 ^ y2
  }
}

/** sum = (sum + block) mod 2^256, little-endian. */
function addInto(sum: Uint8Array, block: Uint8Array, offset: number): void {
  let carry = 0
  for (let i = 0; i < 32; i++) {
    const total = (sum[i] as number) + (block[offset + i] as number) + carry
    sum[i] = total & 0xff
    carry = total >>> 8
  }
}
