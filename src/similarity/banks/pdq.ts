/**
 * PDQ bank search: every entry within a Hamming distance of the query (Meta's
 * pdq/cpp/common/pdqhashtypes.cpp), found by multi-index hashing (Norouzi, Punjani and Fleet,
 * "Fast exact search in Hamming space with multi-index hashing", 2014) with exact recall.
 *
 * The 256 bits are cut into m disjoint slices of b bits (m·b ≤ 256; bits past m·b are in no
 * slice). Two hashes within distance r differ in at most r bits of the slices, so with
 * r = m·q + a (0 ≤ a < m) one of the first a + 1 slices differs in at most q bits, or one of the
 * other m − a − 1 slices in at most q − 1 (else the slices alone would differ in r + 1 bits). So a
 * search probes, in each slice's table, every value within that radius of the query's slice, and
 * checks the whole distance of each entry found there. Each table is the entries' numbers grouped
 * by their slice value (an offsets array of 2^b + 1 and an id array of the bank's count).
 *
 * The slicing is chosen from the bank's size when it is opened (chooseSlicing): the cheapest
 * probing at the default threshold whose tables fit in INDEX_BYTES_PER_HASH; a small bank has no
 * tables. A search whose threshold would make probing dearer than reading every hash scans them all
 * (pdqLinearScan, also the tests' reference).
 */
import { groupByKey, groupScratch, runAtOnce, runYielding, type GroupTable } from './group.js'
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

/** The distance of entry `entry` to the query's words, or a value above `limit` once the first half passes it. */
function distanceTo(words: Uint32Array, entry: number, q: Uint32Array, limit: number): number {
  const at = entry * 8
  const half = popcount32(words[at]! ^ q[0]!) + popcount32(words[at + 1]! ^ q[1]!) + popcount32(words[at + 2]! ^ q[2]!) + popcount32(words[at + 3]! ^ q[3]!)
  if (half > limit) return half
  return half + popcount32(words[at + 4]! ^ q[4]!) + popcount32(words[at + 5]! ^ q[5]!) + popcount32(words[at + 6]! ^ q[6]!) + popcount32(words[at + 7]! ^ q[7]!)
}

/**
 * Every entry's distance to the query (the least over several): the oracle the index is tested
 * against, and its fallback. Each entry is added to the sink once.
 */
export function pdqLinearScan(words: Uint32Array, count: number, queries: readonly Uint32Array[], threshold: number, sink: MatchSink): void {
  if (queries.length !== 1) {
    for (let entry = 0; entry < count; entry++) {
      let best = threshold + 1
      let bestVariant = 0
      for (let variant = 0; variant < queries.length; variant++) {
        const distance = distanceTo(words, entry, queries[variant]!, 256)
        if (distance < best) { best = distance; bestVariant = variant }
      }
      if (best <= threshold) sink.add(entry, best, bestVariant)
    }
    return
  }
  const q = queries[0]!
  const q0 = q[0]!, q1 = q[1]!, q2 = q[2]!, q3 = q[3]!, q4 = q[4]!, q5 = q[5]!, q6 = q[6]!, q7 = q[7]!
  for (let entry = 0, at = 0; entry < count; entry++, at += 8) {
    const distance = popcount32(words[at]! ^ q0) + popcount32(words[at + 1]! ^ q1) + popcount32(words[at + 2]! ^ q2) + popcount32(words[at + 3]! ^ q3)
      + popcount32(words[at + 4]! ^ q4) + popcount32(words[at + 5]! ^ q5) + popcount32(words[at + 6]! ^ q6) + popcount32(words[at + 7]! ^ q7)
    if (distance <= threshold) sink.add(entry, distance, 0)
  }
}

/** The tables may take this many bytes per hash (the hash itself is 32 more): 128 in all at most. */
export const INDEX_BYTES_PER_HASH = 88
/** The threshold the slicing is chosen for (Meta's). */
const DESIGN_THRESHOLD = 31
/**
 * Relative costs, in units of one hash of a linear scan, measured on this machine's bench
 * (bench/banks.ts): a probe is a random read of the offsets; a candidate a random read of its hash.
 */
const PROBE_COST = 4
const CANDIDATE_COST = 3

const binomial = (n: number, k: number): number => {
  let value = 1
  for (let i = 0; i < k; i++) value = (value * (n - i)) / (i + 1)
  return Math.round(value)
}

/** Values within Hamming distance `radius` of a b-bit value: the probes of one slice. */
const probesWithin = (bits: number, radius: number): number => {
  let total = 0
  for (let i = 0; i <= Math.min(radius, bits); i++) total += binomial(bits, i)
  return total
}

/** The radius of each slice for threshold r (see the module's comment). */
export function sliceRadii(slices: number, threshold: number): number[] {
  const q = Math.floor(threshold / slices)
  const a = threshold - q * slices
  return Array.from({ length: slices }, (_, slice) => (slice <= a ? q : q - 1))
}

export interface Slicing { slices: number, bits: number }

/** Probes and expected candidates of a search with this slicing, in linear-scan units. */
export function probingCost(count: number, slicing: Slicing, threshold: number): number {
  let probes = 0
  for (const radius of sliceRadii(slicing.slices, threshold)) if (radius >= 0) probes += probesWithin(slicing.bits, radius)
  return probes * PROBE_COST + probes * (count / 2 ** slicing.bits) * CANDIDATE_COST
}

/** The slicing with the cheapest search at the design threshold whose tables fit the memory budget; null: scan. */
export function chooseSlicing(count: number): Slicing | null {
  let best: Slicing | null = null
  let bestCost = count
  for (let bits = 8; bits <= 26; bits++) {
    const slices = Math.floor(256 / bits)
    const bytesPerHash = (slices * (2 ** bits + 1) * 4) / count + slices * 4
    if (bytesPerHash > INDEX_BYTES_PER_HASH) continue
    const cost = probingCost(count, { slices, bits }, DESIGN_THRESHOLD)
    if (cost < bestCost) {
      best = { slices, bits }
      bestCost = cost
    }
  }
  return best
}

/** Where slice `slice` of b bits lies in the eight words. */
interface SlicePlace { word: number, shift: number, spill: boolean, mask: number }

function slicePlaces(slicing: Slicing): SlicePlace[] {
  return Array.from({ length: slicing.slices }, (_, slice) => {
    const bit = slice * slicing.bits
    const shift = bit & 31
    return { word: bit >>> 5, shift, spill: shift + slicing.bits > 32, mask: slicing.bits === 32 ? 0xffff_ffff : (1 << slicing.bits) - 1 }
  })
}

function sliceValue(words: Uint32Array, at: number, place: SlicePlace): number {
  let value = words[at + place.word]! >>> place.shift
  if (place.spill) value |= words[at + place.word + 1]! << (32 - place.shift)
  return (value & place.mask) >>> 0
}

/** The b-bit masks of at most `radius` set bits, fewest bits first. */
function flipMasks(bits: number, radius: number): Uint32Array {
  const masks: number[] = [0]
  if (radius >= 1) for (let i = 0; i < bits; i++) masks.push(1 << i)
  if (radius >= 2) for (let i = 0; i < bits; i++) for (let j = i + 1; j < bits; j++) masks.push((1 << i) | (1 << j))
  if (radius >= 3) {
    for (let i = 0; i < bits; i++) for (let j = i + 1; j < bits; j++) for (let k = j + 1; k < bits; k++) masks.push((1 << i) | (1 << j) | (1 << k))
  }
  return Uint32Array.from(masks)
}

/** The slice tables, one a step. */
function* pdqTables(words: Uint32Array, count: number, slicing: Slicing): Generator<void, GroupTable[]> {
  const keys = new Uint32Array(count)
  const scratch = groupScratch(count)
  const tables: GroupTable[] = []
  for (const place of slicePlaces(slicing)) {
    for (let entry = 0; entry < count; entry++) keys[entry] = sliceValue(words, entry * 8, place)
    tables.push(groupByKey(keys, null, slicing.bits, scratch))
    yield
  }
  return tables
}

/** The largest slice radius the index probes; beyond it a search scans. */
const MAX_RADIUS = 3

export class PdqSearcher implements BankSearcher {
  readonly #words: Uint32Array
  readonly #count: number
  readonly slicing: Slicing | null
  readonly #places: SlicePlace[]
  readonly #offsets: Uint32Array[] = []
  readonly #ids: Uint32Array[] = []
  readonly #masks: Uint32Array[] = []
  readonly indexBytes: number
  readonly indexName: string

  /**
   * `hashes` is the bank's hash section, 32 bytes per entry, in a buffer of its own (4-byte
   * aligned). The tables are built here unless given (PdqSearcher.create builds them yielding).
   */
  constructor(hashes: Buffer, count: number, slicing: Slicing | null = chooseSlicing(count), tables?: GroupTable[]) {
    this.#words = new Uint32Array(hashes.buffer, hashes.byteOffset, count * 8)
    this.#count = count
    this.slicing = slicing
    this.#places = slicing === null ? [] : slicePlaces(slicing)
    let indexBytes = 0
    if (slicing !== null) {
      for (const { ids, offsets } of tables ?? runAtOnce(pdqTables(this.#words, count, slicing))) {
        this.#offsets.push(offsets)
        this.#ids.push(ids)
        indexBytes += offsets.byteLength + ids.byteLength
      }
      for (let radius = 0; radius <= MAX_RADIUS; radius++) this.#masks.push(flipMasks(slicing.bits, radius))
    }
    this.indexBytes = indexBytes
    this.indexName = slicing === null ? 'linear scan' : `multi-index hashing, ${slicing.slices} slices of ${slicing.bits} bits`
  }

  /** The searcher with its tables built a slice at a time, a turn of the event loop between slices. */
  static async create(hashes: Buffer, count: number): Promise<PdqSearcher> {
    const slicing = chooseSlicing(count)
    if (slicing === null) return new PdqSearcher(hashes, count, null)
    const words = new Uint32Array(hashes.buffer, hashes.byteOffset, count * 8)
    return new PdqSearcher(hashes, count, slicing, await runYielding(pdqTables(words, count, slicing)))
  }

  /** Whether a search at this threshold probes the index (else it scans every hash). */
  probes(threshold: number): boolean {
    const slicing = this.slicing
    if (slicing === null) return false
    const radii = sliceRadii(slicing.slices, threshold)
    return Math.max(...radii) <= MAX_RADIUS && probingCost(this.#count, slicing, threshold) < this.#count
  }

  search(queries: readonly Buffer[], threshold: number, _lengthTerm: boolean, sink: MatchSink): void {
    const queryWords = queries.map(pdqWords)
    if (!this.probes(threshold)) {
      pdqLinearScan(this.#words, this.#count, queryWords, threshold, sink)
      return
    }
    const radii = sliceRadii(this.slicing!.slices, threshold)
    const words = this.#words
    for (let variant = 0; variant < queryWords.length; variant++) {
      const q = queryWords[variant]!
      // In phases, each a loop of independent reads, so the processor has many in flight at once
      // (one loop with the bucket walk inside runs the random reads one after another): the
      // buckets' bounds, then the candidates' numbers, then their distances.
      let buckets = 0
      for (let slice = 0; slice < this.#places.length; slice++) {
        const radius = radii[slice]!
        if (radius < 0) continue
        const value = sliceValue(q, 0, this.#places[slice]!)
        const offsets = this.#offsets[slice]!
        const masks = this.#masks[radius]!
        const starts = this.#grow(buckets + masks.length)
        for (let m = 0; m < masks.length; m++) {
          const key = value ^ masks[m]!
          const start = offsets[key]!
          const end = offsets[key + 1]!
          if (end !== start) {
            starts[buckets * 3] = start
            starts[buckets * 3 + 1] = end
            starts[buckets * 3 + 2] = slice
            buckets++
          }
        }
      }
      const bounds = this.#bounds
      let candidates = 0
      for (let b = 0; b < buckets; b++) candidates += bounds[b * 3 + 1]! - bounds[b * 3]!
      const entries = this.#candidateArray(candidates)
      let at = 0
      for (let b = 0; b < buckets; b++) {
        const ids = this.#ids[bounds[b * 3 + 2]!]!
        for (let k = bounds[b * 3]!, end = bounds[b * 3 + 1]!; k < end; k++) entries[at++] = ids[k]!
      }
      // An entry near the query may sit within the radius of several slices: report it once.
      let found: Set<number> | null = null
      for (let c = 0; c < candidates; c++) {
        const entry = entries[c]!
        const distance = distanceTo(words, entry, q, threshold)
        if (distance <= threshold) {
          found ??= new Set()
          if (!found.has(entry)) {
            found.add(entry)
            sink.add(entry, distance, variant)
          }
        }
      }
    }
  }

  /** Room for `buckets` (start, end, slice) triples, kept between searches. */
  #bounds = new Uint32Array(3 * 4096)
  #grow(buckets: number): Uint32Array {
    if (this.#bounds.length < buckets * 3) {
      const grown = new Uint32Array(Math.max(buckets * 3, this.#bounds.length * 2))
      grown.set(this.#bounds)
      this.#bounds = grown
    }
    return this.#bounds
  }

  #candidates = new Uint32Array(16_384)
  #candidateArray(size: number): Uint32Array {
    if (this.#candidates.length < size) this.#candidates = new Uint32Array(Math.max(size, this.#candidates.length * 2))
    return this.#candidates
  }
}
