/**
 * TLSH bank search: the reference's distance (tlsh.ts tlshDistance) over the bank's 35-byte records
 * (checksum, lValue, q1 | q2 << 4, the 32 code bytes in the reference's internal order).
 */
import { TLSH_BYTE_DISTANCE } from '../tlsh.js'
import { TLSH_RECORD_BYTES } from './types.js'
import type { BankSearcher, MatchSink } from './sink.js'

const circular = (x: number, y: number, range: number): number => {
  const direct = Math.abs(x - y)
  return Math.min(direct, range - direct)
}

/** The header terms of the distance (length, ratios, checksum), as the reference adds them. */
export function tlshHeaderDistance(a: Uint8Array, at: number, b: Uint8Array, bt: number, lengthTerm: boolean): number {
  let distance = 0
  if (lengthTerm) {
    const lDiff = circular(a[at + 1]!, b[bt + 1]!, 256)
    distance += lDiff <= 1 ? lDiff : lDiff * 12
  }
  const qa = a[at + 2]!
  const qb = b[bt + 2]!
  const q1Diff = circular(qa & 0x0f, qb & 0x0f, 16)
  distance += q1Diff <= 1 ? q1Diff : (q1Diff - 1) * 12
  const q2Diff = circular(qa >> 4, qb >> 4, 16)
  distance += q2Diff <= 1 ? q2Diff : (q2Diff - 1) * 12
  if (a[at]! !== b[bt]!) distance++
  return distance
}

/** The whole distance of two records, or a value above `limit` as soon as it passes it. */
export function tlshRecordDistance(a: Uint8Array, at: number, b: Uint8Array, bt: number, lengthTerm: boolean, limit: number): number {
  let distance = tlshHeaderDistance(a, at, b, bt, lengthTerm)
  if (distance > limit) return distance
  for (let i = 3; i < TLSH_RECORD_BYTES; i++) {
    distance += TLSH_BYTE_DISTANCE[a[at + i]! * 256 + b[bt + i]!]!
    if (distance > limit) return distance
  }
  return distance
}

export function tlshLinearScan(records: Buffer, count: number, queries: readonly Buffer[], threshold: number, lengthTerm: boolean, sink: MatchSink): void {
  for (let variant = 0; variant < queries.length; variant++) {
    const query = queries[variant]!
    for (let entry = 0, at = 0; entry < count; entry++, at += TLSH_RECORD_BYTES) {
      const distance = tlshRecordDistance(records, at, query, 0, lengthTerm, threshold)
      if (distance <= threshold) sink.add(entry, distance, variant)
    }
  }
}

export class TlshSearcher implements BankSearcher {
  readonly #records: Buffer
  readonly #count: number
  readonly indexBytes = 0

  constructor(records: Buffer, count: number) {
    this.#records = records
    this.#count = count
  }

  search(queries: readonly Buffer[], threshold: number, lengthTerm: boolean, sink: MatchSink): void {
    tlshLinearScan(this.#records, this.#count, queries, threshold, lengthTerm, sink)
  }
}
