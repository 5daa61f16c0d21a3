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
import { groupByKey, groupScratch, runAtOnce, type GroupScratch, type GroupTable } from './group.js'
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

/**
 * Slice `slice`'s table: the entries grouped by their value in that slice. `keys` and `scratch`
 * are working arrays of the bank's count, reused from one table to the next.
 */
export function pdqTable(words: Uint32Array, count: number, slicing: Slicing, slice: number, keys: Uint32Array, scratch: GroupScratch): GroupTable {
  const place = slicePlaces(slicing)[slice]!
  for (let entry = 0; entry < count; entry++) keys[entry] = sliceValue(words, entry * 8, place)
  return groupByKey(keys, null, slicing.bits, scratch)
}

/** The slice tables, one a step (the constructor, for tests and tools). */
function* pdqTables(words: Uint32Array, count: number, slicing: Slicing): Generator<void, GroupTable[]> {
  const keys = new Uint32Array(count)
  const scratch = groupScratch(count)
  const tables: GroupTable[] = []
  for (let slice = 0; slice < slicing.slices; slice++) {
    tables.push(pdqTable(words, count, slicing, slice, keys, scratch))
    yield
  }
  return tables
}

/**
 * A batch's chunk: about this many probes plus expected candidates at once (1,000 lookups at 10 M
 * entries and distance 31). Its scratch arrays hold a few times as many 32-bit numbers (~100 MB at
 * most), freed when the batch ends.
 */
const BATCH_WORK = 8_000_000
/** Scratch arrays beyond this length are not doubled (they grow to what a chunk needs). */
const BATCH_KEEP = 1 << 24
/** The bits a batch groups its probes and candidates by: 2^12 counters, and as many places the writes scatter to. */
const RADIX_BITS = 12
/** A batch's scratch arrays by name, grown as needed (doubling up to BATCH_KEEP), dropped when it ends. */
const batchScratch = new Map<string, Uint32Array>()

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
   * aligned). The tables are built here unless given (openPdqSearcher builds them on threads).
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

  /**
   * Many searches at once (a batch of match items): `groups[g]` are one search's query hashes
   * (several for an image's dihedral variants), its matches go to `sinks[g]`. Each entry within the
   * threshold of a group's hashes reaches its sink exactly as search() would put it there.
   *
   * One search at a time reads the tables at random: ~2,800 bucket bounds and ~3,300 hashes, each a
   * cache and TLB miss, at 10 M entries and distance 31. Together, the probes of a chunk of searches
   * are grouped by their table block before the tables are read, and the candidates by the block of
   * their place in the hashes before those are read, so both reads sweep memory a block at a time
   * and the cache and TLB serve them (the batched query of Norouzi et al.'s §5, and of join-style
   * similarity search). Searches that scan (small banks, wide thresholds) scan one by one.
   */
  searchMany(groups: readonly (readonly Buffer[])[], threshold: number, lengthTerm: boolean, sinks: readonly MatchSink[], chunkWork = BATCH_WORK): void {
    if (groups.length <= 1 || !this.probes(threshold)) {
      groups.forEach((queries, group) => this.search(queries, threshold, lengthTerm, sinks[group]!))
      return
    }
    const slicing = this.slicing!
    const radii = sliceRadii(slicing.slices, threshold)
    let probesPerHash = 0
    for (const radius of radii) if (radius >= 0) probesPerHash += this.#masks[radius]!.length
    // Chunks of hashes whose probes and expected candidates fit the scratch arrays' budget.
    const perHash = probesPerHash * (1 + this.#count / 2 ** slicing.bits)
    const chunkHashes = Math.max(1, Math.floor(chunkWork / perHash))
    let group = 0
    while (group < groups.length) {
      const chunk: number[] = []
      let hashes = 0
      while (group < groups.length && (chunk.length === 0 || hashes + groups[group]!.length <= chunkHashes)) {
        hashes += groups[group]!.length
        chunk.push(group++)
      }
      this.#searchChunk(chunk.map((at) => groups[at]!), threshold, radii, chunk.map((at) => sinks[at]!))
    }
    batchScratch.clear()
  }

  #searchChunk(groups: readonly (readonly Buffer[])[], threshold: number, radii: readonly number[], sinks: readonly MatchSink[]): void {
    const slicing = this.slicing!
    // Each query hash once: its words, and the search (group) and variant it belongs to.
    let hashCount = 0
    for (const queries of groups) hashCount += queries.length
    const queryWords = new Uint32Array(hashCount * 8)
    const ownerGroup = new Uint32Array(hashCount)
    const ownerVariant = new Uint32Array(hashCount)
    let hash = 0
    groups.forEach((queries, group) => queries.forEach((query, variant) => {
      queryWords.set(pdqWords(query), hash * 8)
      ownerGroup[hash] = group
      ownerVariant[hash] = variant
      hash++
    }))
    let candidateCount = 0
    let candidateEntries = this.#batchArray('entries', 1 << 16)
    let candidateHashes = this.#batchArray('hashes', 1 << 16)
    for (let slice = 0; slice < this.#places.length; slice++) {
      const radius = radii[slice]!
      if (radius < 0) continue
      const masks = this.#masks[radius]!
      const place = this.#places[slice]!
      const probeCount = hashCount * masks.length
      const probeKeys = this.#batchArray('probeKeys', probeCount)
      const probeHashes = this.#batchArray('probeHashes', probeCount)
      for (let h = 0, at = 0; h < hashCount; h++) {
        const value = sliceValue(queryWords, h * 8, place)
        for (let m = 0; m < masks.length; m++, at++) {
          probeKeys[at] = value ^ masks[m]!
          probeHashes[at] = h
        }
      }
      const [groupedKeys, groupedHashes] = this.#groupPairs(probeKeys, probeHashes, probeCount, slicing.bits)
      // The buckets in the table's order: the bounds and the ids read forward through memory.
      const offsets = this.#offsets[slice]!
      const ids = this.#ids[slice]!
      for (let p = 0; p < probeCount; p++) {
        const key = groupedKeys[p]!
        const start = offsets[key]!
        const end = offsets[key + 1]!
        if (end === start) continue
        if (candidateCount + end - start > candidateEntries.length) {
          candidateEntries = this.#batchArray('entries', (candidateCount + end - start) * 2, candidateCount)
          candidateHashes = this.#batchArray('hashes', (candidateCount + end - start) * 2, candidateCount)
        }
        const h = groupedHashes[p]!
        for (let k = start; k < end; k++) {
          candidateEntries[candidateCount] = ids[k]!
          candidateHashes[candidateCount++] = h
        }
      }
    }
    // The candidates in the hash records' order, then their distances, read forward through memory.
    const [byEntry, byEntryHash] = this.#groupPairs(candidateEntries, candidateHashes, candidateCount, 32 - Math.clz32(Math.max(1, this.#count - 1)))
    const words = this.#words
    // An entry near a query hash may sit within the radius of several slices: report it once per hash.
    let found: Set<number> | null = null
    for (let c = 0; c < candidateCount; c++) {
      const entry = byEntry[c]!
      const h = byEntryHash[c]!
      const at = entry * 8
      const q = h * 8
      let distance = popcount32(words[at]! ^ queryWords[q]!) + popcount32(words[at + 1]! ^ queryWords[q + 1]!)
        + popcount32(words[at + 2]! ^ queryWords[q + 2]!) + popcount32(words[at + 3]! ^ queryWords[q + 3]!)
      if (distance > threshold) continue
      distance += popcount32(words[at + 4]! ^ queryWords[q + 4]!) + popcount32(words[at + 5]! ^ queryWords[q + 5]!)
        + popcount32(words[at + 6]! ^ queryWords[q + 6]!) + popcount32(words[at + 7]! ^ queryWords[q + 7]!)
      if (distance > threshold) continue
      const key = entry * hashCount + h
      found ??= new Set()
      if (found.has(key)) continue
      found.add(key)
      sinks[ownerGroup[h]!]!.add(entry, distance, ownerVariant[h]!)
    }
  }

  /**
   * `keys` with their `values` (the first `count`), grouped by the top RADIX_BITS bits of the key
   * (keys below 2^bits) in one counting pass: the reads that follow then go through memory in
   * order of those bits, each group's within a block of the table small enough to stay in the
   * cache (2^11 slots of a 23-bit table, 8 KB; 4,096 hash records of a 10 M bank, 128 KB), which is
   * all that a full sort would give the reads, at half its cost. Returns scratch arrays.
   */
  #groupPairs(keys: Uint32Array, values: Uint32Array, count: number, bits: number): [Uint32Array, Uint32Array] {
    const shift = Math.max(0, bits - RADIX_BITS)
    const toKeys = this.#batchArray('sortKeys', count)
    const toValues = this.#batchArray('sortValues', count)
    const digits = new Uint32Array((1 << Math.min(RADIX_BITS, bits)) + 1)
    for (let i = 0; i < count; i++) digits[(keys[i]! >>> shift) + 1]!++
    for (let digit = 1; digit < digits.length; digit++) digits[digit]! += digits[digit - 1]!
    for (let i = 0; i < count; i++) {
      const key = keys[i]!
      const to = digits[key >>> shift]!++
      toKeys[to] = key
      toValues[to] = values[i]!
    }
    return [toKeys, toValues]
  }

  /** A scratch array of the batch (kept from chunk to chunk, dropped when searchMany ends). */
  #batchArray(name: string, size: number, keep = 0): Uint32Array {
    const had = batchScratch.get(name)
    if (had !== undefined && had.length >= size) return had
    const grown = new Uint32Array(Math.max(size, Math.min(had?.length ?? 0, BATCH_KEEP) * 2))
    if (had !== undefined && keep > 0) grown.set(had.subarray(0, keep))
    batchScratch.set(name, grown)
    return grown
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
