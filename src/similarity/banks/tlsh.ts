/**
 * TLSH bank search: the reference's distance (tlsh.ts tlshDistance) over the bank's 35-byte records
 * (checksum, lValue, q1 | q2 << 4, the 32 code bytes in the reference's internal order).
 */
import { TLSH_BYTE_DISTANCE } from '../tlsh.js'
import { TLSH_RECORD_BYTES } from './types.js'
import { groupByKey, groupScratch, runAtOnce, runYielding, type GroupTable } from './group.js'
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

/** Every entry's distance to the query (the least over several), each entry added once: the index's oracle and fallback. */
export function tlshLinearScan(records: Buffer, count: number, queries: readonly Buffer[], threshold: number, lengthTerm: boolean, sink: MatchSink): void {
  for (let entry = 0, at = 0; entry < count; entry++, at += TLSH_RECORD_BYTES) {
    let best = threshold + 1
    let bestVariant = 0
    for (let variant = 0; variant < queries.length; variant++) {
      const distance = tlshRecordDistance(records, at, queries[variant]!, 0, lengthTerm, best - 1)
      if (distance < best) { best = distance; bestVariant = variant }
    }
    if (best <= threshold) sink.add(entry, best, bestVariant)
  }
}

/**
 * The index: the 128 buckets of the body (32 code bytes, four 2-bit buckets each) cut into 16
 * groups of 8 buckets (two code bytes, a 16-bit key). Every bucket that differs adds at least 1 to
 * the body's distance, and the header terms add nothing negative, so two hashes within distance r
 * differ in at most r buckets; with r = 16·q + a (0 ≤ a < 16) one of the first a + 1 groups differs
 * in at most q buckets, or one of the other groups in at most q − 1 (multi-index hashing's
 * pigeonhole, as in pdq.ts). A search probes each group's table at every key within that many
 * changed buckets of the query's, and computes the whole distance of each entry found. Beside the
 * ids each table keeps the entries' length and ratio bytes, so an entry whose length and ratio
 * terms alone pass the threshold is passed over in order, without reading its record (the length
 * term only when the search includes it: with `lengthTerm: false` it plays no part).
 */
const GROUPS = 16
const GROUP_BUCKETS = 8
/** The largest group radius the index probes (1,512 keys a group); beyond it a search scans. */
const MAX_RADIUS = 3
/** Relative costs in units of one record of a linear scan (a probe, a candidate); see bench/banks.ts. */
const PROBE_COST = 4
const CANDIDATE_COST = 3
/** Below this many entries a bank is scanned. */
const INDEX_FROM = 4096

/** XOR masks of a 16-bit key that change exactly `changes` of its eight 2-bit buckets, each to any other value. */
function bucketMasks(changes: number): number[] {
  const masks: number[] = []
  const place = (first: number, left: number, mask: number) => {
    if (left === 0) { masks.push(mask); return }
    for (let bucket = first; bucket < GROUP_BUCKETS; bucket++) {
      for (let delta = 1; delta <= 3; delta++) place(bucket + 1, left - 1, mask | (delta << (2 * bucket)))
    }
  }
  place(0, changes, 0)
  return masks
}

/** The masks of at most `radius` changed buckets, for radius 0 to MAX_RADIUS. */
const MASKS: Uint32Array[] = (() => {
  const byRadius: Uint32Array[] = []
  let within: number[] = []
  for (let radius = 0; radius <= MAX_RADIUS; radius++) {
    within = [...within, ...bucketMasks(radius)]
    byRadius.push(Uint32Array.from(within))
  }
  return byRadius
})()

function groupRadii(threshold: number): number[] {
  const q = Math.floor(threshold / GROUPS)
  const a = threshold - q * GROUPS
  return Array.from({ length: GROUPS }, (_, group) => (group <= a ? q : q - 1))
}

/** A record's key in group g: its code bytes 3 + 2g and 4 + 2g. */
const groupKey = (records: Uint8Array, at: number, group: number): number => records[at + 3 + 2 * group]! | (records[at + 4 + 2 * group]! << 8)

interface TlshTable extends GroupTable { heads: Uint16Array }

/** The group tables, one a step, each with the entries' length and ratio bytes beside the ids. */
function* tlshTables(records: Buffer, count: number): Generator<void, TlshTable[]> {
  const scratch = groupScratch(count)
  const keys = new Uint32Array(count)
  const tables: TlshTable[] = []
  for (let group = 0; group < GROUPS; group++) {
    for (let entry = 0; entry < count; entry++) keys[entry] = groupKey(records, entry * TLSH_RECORD_BYTES, group)
    const { ids, offsets } = groupByKey(keys, null, 16, scratch)
    const heads = new Uint16Array(count)
    for (let k = 0; k < count; k++) heads[k] = records[ids[k]! * TLSH_RECORD_BYTES + 1]! | (records[ids[k]! * TLSH_RECORD_BYTES + 2]! << 8)
    tables.push({ ids, offsets, heads })
    yield
  }
  return tables
}

export class TlshSearcher implements BankSearcher {
  readonly #records: Buffer
  readonly #count: number
  readonly #offsets: Uint32Array[] = []
  readonly #ids: Uint32Array[] = []
  /** Beside each table's ids, the entry's length and ratio bytes (lValue | q << 8), read in order with them. */
  readonly #heads: Uint16Array[] = []
  readonly indexBytes: number
  readonly indexName: string
  /** The search that last saw each entry (an entry is in up to 16 groups' answers). */
  readonly #seen: Uint32Array
  #stamp = 0

  /** The tables are built here unless given (TlshSearcher.create builds them yielding). */
  constructor(records: Buffer, count: number, indexed = count >= INDEX_FROM, tables?: TlshTable[]) {
    this.#records = records
    this.#count = count
    let indexBytes = 0
    if (indexed) {
      for (const { ids, offsets, heads } of tables ?? runAtOnce(tlshTables(records, count))) {
        this.#offsets.push(offsets)
        this.#ids.push(ids)
        this.#heads.push(heads)
        indexBytes += ids.byteLength + offsets.byteLength + heads.byteLength
      }
    }
    this.#seen = new Uint32Array(indexed ? count : 0)
    this.indexBytes = indexBytes + this.#seen.byteLength
    this.indexName = indexed ? `bucket-group index, ${GROUPS} groups of ${GROUP_BUCKETS} buckets` : 'linear scan'
  }

  /** The searcher with its tables built a group at a time, a turn of the event loop between groups. */
  static async create(records: Buffer, count: number): Promise<TlshSearcher> {
    if (count < INDEX_FROM) return new TlshSearcher(records, count, false)
    return new TlshSearcher(records, count, true, await runYielding(tlshTables(records, count)))
  }

  /** Whether a search at this threshold probes the index (else it scans every record). */
  probes(threshold: number): boolean {
    if (this.#offsets.length === 0) return false
    const radii = groupRadii(threshold)
    if (Math.max(...radii) > MAX_RADIUS) return false
    let probes = 0
    for (const radius of radii) if (radius >= 0) probes += MASKS[radius]!.length
    return probes * PROBE_COST + probes * (this.#count / 65536) * CANDIDATE_COST < this.#count
  }

  search(queries: readonly Buffer[], threshold: number, lengthTerm: boolean, sink: MatchSink): void {
    if (!this.probes(threshold)) {
      tlshLinearScan(this.#records, this.#count, queries, threshold, lengthTerm, sink)
      return
    }
    const radii = groupRadii(threshold)
    const records = this.#records
    const seen = this.#seen
    for (let variant = 0; variant < queries.length; variant++) {
      const query = queries[variant]!
      // The length and ratio terms of the distance, from the bytes kept beside the ids: an entry
      // whose header terms alone pass the threshold is passed over without reading its record.
      const queryL = query[1]!
      const queryQ1 = query[2]! & 0x0f
      const queryQ2 = query[2]! >> 4
      if (++this.#stamp === 0xffff_ffff) {
        seen.fill(0)
        this.#stamp = 1
      }
      const stamp = this.#stamp
      for (let group = 0; group < GROUPS; group++) {
        const radius = radii[group]!
        if (radius < 0) continue
        const key = groupKey(query, 0, group)
        const offsets = this.#offsets[group]!
        const ids = this.#ids[group]!
        const heads = this.#heads[group]!
        const masks = MASKS[radius]!
        for (let m = 0; m < masks.length; m++) {
          const probe = key ^ masks[m]!
          for (let k = offsets[probe]!, end = offsets[probe + 1]!; k < end; k++) {
            const head = heads[k]!
            let bound = 0
            if (lengthTerm) {
              const lDiff = circular(head & 0xff, queryL, 256)
              bound = lDiff <= 1 ? lDiff : lDiff * 12
            }
            const q1Diff = circular((head >> 8) & 0x0f, queryQ1, 16)
            bound += q1Diff <= 1 ? q1Diff : (q1Diff - 1) * 12
            const q2Diff = circular(head >> 12, queryQ2, 16)
            bound += q2Diff <= 1 ? q2Diff : (q2Diff - 1) * 12
            if (bound > threshold) continue
            const entry = ids[k]!
            if (seen[entry] === stamp) continue
            seen[entry] = stamp
            const distance = tlshRecordDistance(records, entry * TLSH_RECORD_BYTES, query, 0, lengthTerm, threshold)
            if (distance <= threshold) sink.add(entry, distance, variant)
          }
        }
      }
    }
  }
}
