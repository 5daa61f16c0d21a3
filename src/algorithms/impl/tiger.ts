/**
 * Tiger/192 (Anderson and Biham, "Tiger: A Fast New Hash Function", FSE 1996) and Tiger2, which
 * differs only in padding with 0x80 (as MD4/SHA do) where Tiger pads with 0x01.
 *
 * Output is the three state words in little-endian byte order, as the reference implementation's
 * byte output, RHash (`--tiger`), PHP's tiger192,3 and the TTH/ed2k tools write it.
 *
 * 64-bit words are kept as (hi, lo) pairs of unsigned 32-bit numbers in one Uint32Array, so no
 * BigInt and no allocation per block. The S-boxes are not transcribed: they are generated at load
 * time by the paper's own procedure (section "The S boxes"), which runs the compression function
 * over the string "Tiger - A Fast New Hash Function, by Ross Anderson and Eli Biham".
 */
import { BlockHasher, readU32LE, writeU32LE } from './block.js'

/** Four S-boxes of 256 64-bit entries: T[2i] is the high half of entry i, T[2i + 1] the low. */
const T = new Uint32Array(2 * 1024)

// Register file: a, b, c, their saved copies, and the eight message words x0..x7.
const A = 0, B = 2, C = 4, AA = 6, BB = 8, CC = 10, X = 12
const r = new Uint32Array(12 + 16)

function round(a: number, b: number, c: number, x: number, mul: number): void {
  // c ^= x
  const chi = (r[c] = (r[c] as number) ^ (r[x] as number)) >>> 0
  const clo = (r[c + 1] = (r[c + 1] as number) ^ (r[x + 1] as number)) >>> 0
  // a -= t1[c0] ^ t2[c2] ^ t3[c4] ^ t4[c6]
  const i1 = 2 * (clo & 0xff), i2 = 2 * (256 + ((clo >>> 16) & 0xff)), i3 = 2 * (512 + (chi & 0xff)), i4 = 2 * (768 + ((chi >>> 16) & 0xff))
  let hi = (T[i1] as number) ^ (T[i2] as number) ^ (T[i3] as number) ^ (T[i4] as number)
  let lo = ((T[i1 + 1] as number) ^ (T[i2 + 1] as number) ^ (T[i3 + 1] as number) ^ (T[i4 + 1] as number)) >>> 0
  let alo = (r[a + 1] as number) - lo
  r[a] = (r[a] as number) - hi - (alo < 0 ? 1 : 0)
  r[a + 1] = alo
  // b += t4[c1] ^ t3[c3] ^ t2[c5] ^ t1[c7]
  const j1 = 2 * (768 + ((clo >>> 8) & 0xff)), j2 = 2 * (512 + (clo >>> 24)), j3 = 2 * (256 + ((chi >>> 8) & 0xff)), j4 = 2 * (chi >>> 24)
  hi = (T[j1] as number) ^ (T[j2] as number) ^ (T[j3] as number) ^ (T[j4] as number)
  lo = ((T[j1 + 1] as number) ^ (T[j2 + 1] as number) ^ (T[j3 + 1] as number) ^ (T[j4 + 1] as number)) >>> 0
  alo = (r[b + 1] as number) + lo
  let bhi = (r[b] as number) + hi + (alo > 0xffffffff ? 1 : 0)
  let blo = alo >>> 0
  // b *= mul (5, 7 or 9): exact in doubles, since 9 · 2^32 < 2^53
  const product = blo * mul
  blo = product >>> 0
  bhi = bhi * mul + Math.floor(product / 0x100000000)
  r[b] = bhi
  r[b + 1] = blo
}

function pass(a: number, b: number, c: number, mul: number): void {
  round(a, b, c, X, mul)
  round(b, c, a, X + 2, mul)
  round(c, a, b, X + 4, mul)
  round(a, b, c, X + 6, mul)
  round(b, c, a, X + 8, mul)
  round(c, a, b, X + 10, mul)
  round(a, b, c, X + 12, mul)
  round(b, c, a, X + 14, mul)
}

function sub(target: number, hi: number, lo: number): void {
  const l = (r[target + 1] as number) - (lo >>> 0)
  r[target] = (r[target] as number) - hi - (l < 0 ? 1 : 0)
  r[target + 1] = l
}
function add(target: number, hi: number, lo: number): void {
  const l = (r[target + 1] as number) + (lo >>> 0)
  r[target] = (r[target] as number) + hi + (l > 0xffffffff ? 1 : 0)
  r[target + 1] = l
}
function xor(target: number, source: number): void {
  r[target] = (r[target] as number) ^ (r[source] as number)
  r[target + 1] = (r[target + 1] as number) ^ (r[source + 1] as number)
}

/** The key schedule between passes, on x0..x7 in place. */
function keySchedule(): void {
  const x = (i: number) => X + 2 * i
  sub(x(0), (r[x(7)] as number) ^ 0xa5a5a5a5, (r[x(7) + 1] as number) ^ 0xa5a5a5a5)
  xor(x(1), x(0))
  add(x(2), r[x(1)] as number, r[x(1) + 1] as number)
  {
    // x3 -= x2 ^ ((~x1) << 19)
    const nh = ~(r[x(1)] as number), nl = ~(r[x(1) + 1] as number)
    sub(x(3), (r[x(2)] as number) ^ ((nh << 19) | (nl >>> 13)), (r[x(2) + 1] as number) ^ (nl << 19))
  }
  xor(x(4), x(3))
  add(x(5), r[x(4)] as number, r[x(4) + 1] as number)
  {
    // x6 -= x5 ^ ((~x4) >> 23)
    const nh = ~(r[x(4)] as number), nl = ~(r[x(4) + 1] as number)
    sub(x(6), (r[x(5)] as number) ^ (nh >>> 23), (r[x(5) + 1] as number) ^ ((nl >>> 23) | (nh << 9)))
  }
  xor(x(7), x(6))
  add(x(0), r[x(7)] as number, r[x(7) + 1] as number)
  {
    // x1 -= x0 ^ ((~x7) << 19)
    const nh = ~(r[x(7)] as number), nl = ~(r[x(7) + 1] as number)
    sub(x(1), (r[x(0)] as number) ^ ((nh << 19) | (nl >>> 13)), (r[x(0) + 1] as number) ^ (nl << 19))
  }
  xor(x(2), x(1))
  add(x(3), r[x(2)] as number, r[x(2) + 1] as number)
  {
    // x4 -= x3 ^ ((~x2) >> 23)
    const nh = ~(r[x(2)] as number), nl = ~(r[x(2) + 1] as number)
    sub(x(4), (r[x(3)] as number) ^ (nh >>> 23), (r[x(3) + 1] as number) ^ ((nl >>> 23) | (nh << 9)))
  }
  xor(x(5), x(4))
  add(x(6), r[x(5)] as number, r[x(5) + 1] as number)
  sub(x(7), (r[x(6)] as number) ^ 0x01234567, (r[x(6) + 1] as number) ^ 0x89abcdef)
}

/** The compression function on `state` (six words: a, b, c as hi/lo) and one 64-byte block. */
function compress(state: Uint32Array, data: Uint8Array, offset: number): void {
  for (let i = 0; i < 8; i++) {
    r[X + 2 * i + 1] = readU32LE(data, offset + 8 * i)
    r[X + 2 * i] = readU32LE(data, offset + 8 * i + 4)
  }
  for (let i = 0; i < 6; i++) r[A + i] = r[AA + i] = state[i] as number
  pass(A, B, C, 5)
  keySchedule()
  pass(C, A, B, 7)
  keySchedule()
  pass(B, C, A, 9)
  // Feed-forward: a ^= aa, b -= bb, c += cc.
  xor(A, AA)
  sub(B, r[BB] as number, r[BB + 1] as number)
  add(C, r[CC] as number, r[CC + 1] as number)
  for (let i = 0; i < 6; i++) state[i] = r[A + i] as number
}

/** The initial value: 0x0123456789ABCDEF, 0xFEDCBA9876543210, 0xF096A5B4C3B2E187. */
const INITIAL = Uint32Array.of(0x01234567, 0x89abcdef, 0xfedcba98, 0x76543210, 0xf096a5b4, 0xc3b2e187)

/** The paper's S-box generation: five passes of byte swaps driven by the compression function. */
function generateSBoxes(): void {
  const bytes = new Uint8Array(1024 * 8)
  for (let i = 0; i < 1024; i++) bytes.fill(i & 0xff, 8 * i, 8 * i + 8)
  const sync = (entry: number) => {
    T[2 * entry] = readU32LE(bytes, 8 * entry + 4)
    T[2 * entry + 1] = readU32LE(bytes, 8 * entry)
  }
  for (let i = 0; i < 1024; i++) sync(i)
  const seed = new TextEncoder().encode('Tiger - A Fast New Hash Function, by Ross Anderson and Eli Biham')
  const state = INITIAL.slice()
  const stateByte = (word: number, column: number) =>
    column < 4 ? ((state[2 * word + 1] as number) >>> (8 * column)) & 0xff : ((state[2 * word] as number) >>> (8 * (column - 4))) & 0xff
  let abc = 2
  for (let generation = 0; generation < 5; generation++) {
    for (let i = 0; i < 256; i++) {
      for (let box = 0; box < 1024; box += 256) {
        if (++abc === 3) { abc = 0; compress(state, seed, 0) }
        for (let column = 0; column < 8; column++) {
          const other = box + stateByte(abc, column)
          const here = 8 * (box + i) + column, there = 8 * other + column
          const swap = bytes[here] as number
          bytes[here] = bytes[there] as number
          bytes[there] = swap
          sync(box + i)
          sync(other)
        }
      }
    }
  }
}
generateSBoxes()

export class Tiger extends BlockHasher {
  readonly #state = INITIAL.slice()
  readonly #padByte: number

  /** `version` 1 is the original Tiger (pads 0x01); 2 is Tiger2 (pads 0x80). */
  constructor(version: 1 | 2 = 1) {
    super(64)
    this.#padByte = version === 1 ? 0x01 : 0x80
  }

  protected compress(data: Uint8Array, offset: number): void {
    compress(this.#state, data, offset)
  }

  protected finish(): Uint8Array {
    const block = this.pending
    block[this.pendingBytes] = this.#padByte
    block.fill(0, this.pendingBytes + 1)
    if (this.pendingBytes + 1 > 56) {
      compress(this.#state, block, 0)
      block.fill(0)
    }
    // Message length in bits, 64-bit little-endian.
    const bits = this.totalBytes * 8
    writeU32LE(block, 56, bits >>> 0)
    writeU32LE(block, 60, Math.floor(bits / 0x100000000) >>> 0)
    compress(this.#state, block, 0)
    const out = new Uint8Array(24)
    for (let word = 0; word < 3; word++) {
      writeU32LE(out, 8 * word, this.#state[2 * word + 1] as number)
      writeU32LE(out, 8 * word + 4, this.#state[2 * word] as number)
    }
    return out
  }
}
