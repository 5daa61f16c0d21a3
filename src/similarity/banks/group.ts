/**
 * Grouping entries by an integer key, for the bank indexes (pdq.ts, tlsh.ts, ssdeep.ts): a stable
 * MSD radix sort. One counting pass scatters the entries to the groups of the key's top 12 bits
 * (4,096 places, so the scattered writes stay in the cache, where scattering straight into 2^23
 * groups misses it at every entry); then each group, a few thousand entries that fit the cache, is
 * sorted by the rest of its key straight into the table, whose offsets come from the same counts.
 */

/** The bits the scatter pass sorts by: 2^12 places to write to. */
const RADIX = 12

/** Arrays the sort works in, of at least the keys' length; reusable from one table to the next. */
export interface GroupScratch {
  lowKeys: Uint32Array
  ids: Uint32Array
}

export function groupScratch(count: number): GroupScratch {
  return { lowKeys: new Uint32Array(count), ids: new Uint32Array(count) }
}

/**
 * Values grouped by key: `ids[offsets[k]]` to `ids[offsets[k + 1] − 1]` are the values with key k
 * (keys below 2^bits), in their input order. `values` null: the values are 0 to keys.length − 1.
 */
export function groupByKey(keys: Uint32Array, values: Uint32Array | null, bits: number, scratch: GroupScratch): { ids: Uint32Array, offsets: Uint32Array } {
  const count = keys.length
  const ids = new Uint32Array(count)
  const offsets = new Uint32Array(2 ** bits + 1)
  const highBits = Math.min(RADIX, bits)
  const lowBits = bits - highBits
  const lowMask = 2 ** lowBits - 1
  // Where each high group starts: a count of each, then their running sum.
  const starts = new Uint32Array((1 << highBits) + 1)
  for (let i = 0; i < count; i++) starts[(keys[i]! >>> lowBits) + 1]!++
  for (let group = 1; group < starts.length; group++) starts[group]! += starts[group - 1]!
  if (lowBits === 0) {
    // The high digits are the whole key: one counting sort, and its starts are the offsets.
    offsets.set(starts)
    for (let i = 0; i < count; i++) ids[starts[keys[i]!]!++] = values === null ? i : values[i]!
    return { ids, offsets }
  }
  // The entries in high-group order (the rest of each key beside them), stable.
  const lowKeys = scratch.lowKeys
  const grouped = scratch.ids
  const cursor = starts.slice(0, -1)
  for (let i = 0; i < count; i++) {
    const key = keys[i]!
    const to = cursor[key >>> lowBits]!++
    lowKeys[to] = key & lowMask
    grouped[to] = values === null ? i : values[i]!
  }
  // Each high group by the rest of its key, in the cache: a count, the offsets, the places.
  const counts = new Uint32Array(lowMask + 1)
  for (let group = 0; group < starts.length - 1; group++) {
    const from = starts[group]!
    const until = starts[group + 1]!
    counts.fill(0)
    for (let i = from; i < until; i++) counts[lowKeys[i]!]!++
    const base = group * (lowMask + 1)
    let sum = from
    for (let low = 0; low <= lowMask; low++) {
      const c = counts[low]!
      offsets[base + low] = sum
      counts[low] = sum
      sum += c
    }
    for (let i = from; i < until; i++) ids[counts[lowKeys[i]!]!++] = grouped[i]!
  }
  offsets[offsets.length - 1] = count
  return { ids, offsets }
}

/** One table of an index: `ids[offsets[k]]` to `ids[offsets[k + 1] − 1]` have key k. */
export interface GroupTable { ids: Uint32Array, offsets: Uint32Array }

/**
 * An index is built a table at a time by a generator that yields between tables: run at once (the
 * searchers' constructors, for tests and tools) or with a turn of the event loop between tables
 * (openBank, so that a server reloading a 10 M-entry bank keeps answering while it indexes).
 */
export function runAtOnce<T>(steps: Generator<void, T>): T {
  let step = steps.next()
  while (!step.done) step = steps.next()
  return step.value
}

export async function runYielding<T>(steps: Generator<void, T>): Promise<T> {
  let step = steps.next()
  while (!step.done) {
    await new Promise((resolve) => setImmediate(resolve))
    step = steps.next()
  }
  return step.value
}
