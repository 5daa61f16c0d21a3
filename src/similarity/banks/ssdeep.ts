/**
 * ssdeep bank search: libfuzzy's score (../ssdeep.ts ssdeepCompare) of the query against each
 * entry, over the bank's 134-byte records (block size, the two lengths, the two strings padded).
 */
import { ssdeepCompare, type ParsedSsdeep } from '../ssdeep.js'
import { SSDEEP_RECORD_BYTES } from './types.js'
import type { BankSearcher, MatchSink } from './sink.js'

export function ssdeepOfRecord(records: Buffer, at: number): ParsedSsdeep {
  return {
    blockSize: records.readUInt32LE(at),
    hash1: records.toString('latin1', at + 6, at + 6 + records[at + 4]!),
    hash2: records.toString('latin1', at + 70, at + 70 + records[at + 5]!),
  }
}

const BASE64 = new Uint8Array(256)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') BASE64[c.charCodeAt(0)] = 1

/** Whether a record is one the importer writes: a block size ≥ 1, lengths ≤ 64, base64 characters, zero padding. */
export function ssdeepRecordIsValid(records: Buffer, at: number): boolean {
  if (records.readUInt32LE(at) === 0) return false
  for (const [lengthAt, from] of [[4, 6], [5, 70]] as const) {
    const length = records[at + lengthAt]!
    if (length > 64) return false
    for (let i = 0; i < 64; i++) {
      const c = records[at + from + i]!
      if (i < length ? BASE64[c] !== 1 : c !== 0) return false
    }
  }
  return true
}

export function ssdeepLinearScan(records: Buffer, count: number, queries: readonly Buffer[], threshold: number, sink: MatchSink): void {
  for (let variant = 0; variant < queries.length; variant++) {
    const query = ssdeepOfRecord(queries[variant]!, 0)
    for (let entry = 0, at = 0; entry < count; entry++, at += SSDEEP_RECORD_BYTES) {
      const score = ssdeepCompare(query, ssdeepOfRecord(records, at))
      if (score >= threshold) sink.add(entry, score, variant)
    }
  }
}

export class SsdeepSearcher implements BankSearcher {
  readonly #records: Buffer
  readonly #count: number
  readonly indexBytes = 0

  constructor(records: Buffer, count: number) {
    this.#records = records
    this.#count = count
  }

  search(queries: readonly Buffer[], threshold: number, _lengthTerm: boolean, sink: MatchSink): void {
    ssdeepLinearScan(this.#records, this.#count, queries, Math.max(1, threshold), sink)
  }
}
