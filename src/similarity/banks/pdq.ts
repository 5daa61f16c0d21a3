/**
 * PDQ bank search: the Hamming distance of 256-bit hashes (Meta's pdq/cpp/common/pdqhashtypes.cpp).
 * The hashes are held as 32-bit words, eight per hash.
 */
import type { BankSearcher, MatchSink } from './sink.js'

/** Set bits of a 32-bit word. */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x5555_5555
  x = (x & 0x3333_3333) + ((x >>> 2) & 0x3333_3333)
  return Math.imul((x + (x >>> 4)) & 0x0f0f_0f0f, 0x0101_0101) >>> 24
}

/** The words of a 32-byte hash record, in the same (little-endian) order as the bank's word view. */
export function pdqWords(record: Buffer): Uint32Array {
  const words = new Uint32Array(8)
  for (let i = 0; i < 8; i++) words[i] = record.readUInt32LE(i * 4)
  return words
}

/** Every entry's distance to each query: the oracle the index is tested against, and its fallback. */
export function pdqLinearScan(words: Uint32Array, count: number, queries: readonly Uint32Array[], threshold: number, sink: MatchSink): void {
  for (let variant = 0; variant < queries.length; variant++) {
    const q = queries[variant]!
    const q0 = q[0]!, q1 = q[1]!, q2 = q[2]!, q3 = q[3]!, q4 = q[4]!, q5 = q[5]!, q6 = q[6]!, q7 = q[7]!
    for (let entry = 0, at = 0; entry < count; entry++, at += 8) {
      const distance = popcount32(words[at]! ^ q0) + popcount32(words[at + 1]! ^ q1) + popcount32(words[at + 2]! ^ q2) + popcount32(words[at + 3]! ^ q3)
        + popcount32(words[at + 4]! ^ q4) + popcount32(words[at + 5]! ^ q5) + popcount32(words[at + 6]! ^ q6) + popcount32(words[at + 7]! ^ q7)
      if (distance <= threshold) sink.add(entry, distance, variant)
    }
  }
}

export class PdqSearcher implements BankSearcher {
  readonly #words: Uint32Array
  readonly #count: number
  readonly indexBytes = 0

  /** `hashes` is the bank's hash section, 32 bytes per entry, in a buffer of its own (4-byte aligned). */
  constructor(hashes: Buffer, count: number) {
    this.#words = new Uint32Array(hashes.buffer, hashes.byteOffset, count * 8)
    this.#count = count
  }

  search(queries: readonly Buffer[], threshold: number, _lengthTerm: boolean, sink: MatchSink): void {
    pdqLinearScan(this.#words, this.#count, queries.map(pdqWords), threshold, sink)
  }
}
