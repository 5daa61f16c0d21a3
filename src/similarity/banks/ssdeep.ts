/**
 * ssdeep bank search: libfuzzy's score (../ssdeep.ts ssdeepCompare) of the query against each
 * entry, over the bank's 134-byte records (block size, the two lengths, the two strings padded).
 *
 * The index: libfuzzy scores two hashes 0 unless their block sizes are equal or a factor of two
 * apart and the two strings it compares (each string stands for a block size: the first for the
 * hash's own, the second for twice it) share a 7-character substring after runs of more than three
 * of one character are cut to three. The one exception is two hashes that are the same after that
 * cut, scored 100 whatever their length. So each entry is filed under every 7-character piece of its
 * two cut strings, keyed with the block size the string stands for, and under its whole cut form
 * when both strings are shorter than 7. A search looks up the query's pieces the same way, scores
 * each entry found once, and so finds every entry with a score above 0: exact recall.
 */
import { ssdeepCompare, type ParsedSsdeep } from '../ssdeep.js'
import { SSDEEP_RECORD_BYTES } from './types.js'
import { groupByKey, groupScratch, runAtOnce, runYielding, type GroupTable } from './group.js'
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

/** Every entry's score against the query (the best over several), each entry added once: the index's oracle and fallback. */
export function ssdeepLinearScan(records: Buffer, count: number, queries: readonly Buffer[], threshold: number, sink: MatchSink): void {
  const parsed = queries.map((query) => ssdeepOfRecord(query, 0))
  for (let entry = 0, at = 0; entry < count; entry++, at += SSDEEP_RECORD_BYTES) {
    const candidate = ssdeepOfRecord(records, at)
    let best = threshold - 1
    let bestVariant = 0
    for (let variant = 0; variant < parsed.length; variant++) {
      const score = ssdeepCompare(parsed[variant]!, candidate)
      if (score > best) { best = score; bestVariant = variant }
    }
    if (best >= threshold) sink.add(entry, best, bestVariant)
  }
}

const WINDOW = 7

/** A string's bytes with runs of one character cut to three (libfuzzy's copy_eliminate_sequences). */
function cutRuns(records: Uint8Array, from: number, length: number): number[] {
  const out: number[] = []
  for (let i = 0; i < length; i++) {
    const c = records[from + i]!
    if (out.length >= 3 && out[out.length - 1] === c && out[out.length - 2] === c && out[out.length - 3] === c) continue
    out.push(c)
  }
  return out
}

/** A 32-bit hash of a block size and the 7 characters at `at` (FNV-1a, then a final mix). */
function pieceHash(blockSize: number, text: readonly number[], at: number): number {
  let h = Math.imul(0x811c_9dc5 ^ blockSize, 0x0100_0193)
  for (let i = 0; i < WINDOW; i++) h = Math.imul(h ^ text[at + i]!, 0x0100_0193)
  h ^= h >>> 15
  h = Math.imul(h, 0x2c1b_3c6d)
  return (h ^ (h >>> 12)) >>> 0
}

/** The keys an entry is filed under (or a query looks up): its pieces, or its whole cut form when short. */
function keysOf(records: Uint8Array, at: number, add: (key: number) => void): void {
  const blockSize = records[at]! | (records[at + 1]! << 8) | (records[at + 2]! << 16) | (records[at + 3]! * 0x100_0000)
  const first = cutRuns(records, at + 6, records[at + 4]!)
  const second = cutRuns(records, at + 70, records[at + 5]!)
  for (let i = 0; i + WINDOW <= first.length; i++) add(pieceHash(blockSize, first, i))
  // The second string stands for twice the block size (a block size near 2^32 wraps, harmlessly: a key only finds candidates).
  for (let i = 0; i + WINDOW <= second.length; i++) add(pieceHash((blockSize * 2) >>> 0, second, i))
  if (first.length < WINDOW && second.length < WINDOW) {
    // Scored 100 only against the same cut form: one key for the whole of it.
    let h = Math.imul(0x9e37_79b9 ^ blockSize, 0x0100_0193)
    for (const c of [...first, 0x3a, ...second]) h = Math.imul(h ^ c, 0x0100_0193)
    add((h ^ (h >>> 16)) >>> 0)
  }
}

/** Below this many entries a bank is scanned. */
const INDEX_FROM = 2048

interface PieceTable extends GroupTable { bits: number }

/** Entries a step of the index build. */
const STEP_ENTRIES = 65_536

/** The piece table: every entry under each of its keys (keysOf), the keys cut to `bits` bits. */
function* pieceTable(records: Buffer, count: number): Generator<void, PieceTable> {
  let pieces = 0
  for (let entry = 0; entry < count; entry++) {
    keysOf(records, entry * SSDEEP_RECORD_BYTES, () => { pieces++ })
    if (entry % STEP_ENTRIES === STEP_ENTRIES - 1) yield
  }
  // About two pieces per slot: an entry found by chance costs a score, and the slots cost 4 bytes each.
  const bits = Math.min(26, Math.max(10, Math.ceil(Math.log2(Math.max(pieces, 1))) - 1))
  const keys = new Uint32Array(pieces)
  const values = new Uint32Array(pieces)
  let at = 0
  const shift = 32 - bits
  for (let entry = 0; entry < count; entry++) {
    keysOf(records, entry * SSDEEP_RECORD_BYTES, (key) => {
      keys[at] = key >>> shift
      values[at++] = entry
    })
    if (entry % STEP_ENTRIES === STEP_ENTRIES - 1) yield
  }
  return { ...groupByKey(keys, values, bits, groupScratch(pieces)), bits }
}

export class SsdeepSearcher implements BankSearcher {
  readonly #records: Buffer
  readonly #count: number
  readonly #bits: number
  readonly #offsets: Uint32Array
  readonly #ids: Uint32Array
  readonly #seen: Uint32Array
  #stamp = 0
  readonly indexBytes: number
  readonly indexName: string

  /** The index is built here unless given (SsdeepSearcher.create builds it yielding). */
  constructor(records: Buffer, count: number, indexed = count >= INDEX_FROM, table?: PieceTable) {
    this.#records = records
    this.#count = count
    if (!indexed) {
      this.#bits = 0
      this.#offsets = new Uint32Array(0)
      this.#ids = new Uint32Array(0)
      this.#seen = new Uint32Array(0)
      this.indexBytes = 0
      this.indexName = 'linear scan'
      return
    }
    const { ids, offsets, bits } = table ?? runAtOnce(pieceTable(records, count))
    this.#bits = bits
    this.#offsets = offsets
    this.#ids = ids
    this.#seen = new Uint32Array(count)
    this.indexBytes = offsets.byteLength + ids.byteLength + this.#seen.byteLength
    this.indexName = `7-character piece index, 2^${this.#bits} slots`
  }

  /** The searcher with its index built with turns of the event loop between runs of 65,536 entries. */
  static async create(records: Buffer, count: number): Promise<SsdeepSearcher> {
    if (count < INDEX_FROM) return new SsdeepSearcher(records, count, false)
    return new SsdeepSearcher(records, count, true, await runYielding(pieceTable(records, count)))
  }

  search(queries: readonly Buffer[], threshold: number, _lengthTerm: boolean, sink: MatchSink): void {
    const minimum = Math.max(1, threshold)
    if (this.#bits === 0) {
      ssdeepLinearScan(this.#records, this.#count, queries, minimum, sink)
      return
    }
    const shift = 32 - this.#bits
    const seen = this.#seen
    for (let variant = 0; variant < queries.length; variant++) {
      const record = queries[variant]!
      const query = ssdeepOfRecord(record, 0)
      if (++this.#stamp === 0xffff_ffff) {
        seen.fill(0)
        this.#stamp = 1
      }
      const stamp = this.#stamp
      keysOf(record, 0, (key) => {
        const slot = key >>> shift
        for (let k = this.#offsets[slot]!, end = this.#offsets[slot + 1]!; k < end; k++) {
          const entry = this.#ids[k]!
          if (seen[entry] === stamp) continue
          seen[entry] = stamp
          const score = ssdeepCompare(query, ssdeepOfRecord(this.#records, entry * SSDEEP_RECORD_BYTES))
          if (score >= minimum) sink.add(entry, score, variant)
        }
      })
    }
  }
}
