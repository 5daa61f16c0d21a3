/**
 * Grouping entries by an integer key, for the bank indexes (pdq.ts, tlsh.ts, ssdeep.ts): a stable
 * LSD radix sort, 12 bits a pass, so that each pass reads in order and writes to at most 4,096
 * places (a 10 M-entry table builds in about a second, where scattering straight into 2^23 groups
 * misses the cache at every entry), then the offsets of each key's group.
 */

/** Arrays the sort works in, of at least the keys' length; reusable from one table to the next. */
export interface GroupScratch {
  keys: Uint32Array
  ids: [Uint32Array, Uint32Array]
}

export function groupScratch(count: number): GroupScratch {
  return { keys: new Uint32Array(count), ids: [new Uint32Array(count), new Uint32Array(count)] }
}

/**
 * Values grouped by key: `ids[offsets[k]]` to `ids[offsets[k + 1] − 1]` are the values with key k
 * (keys below 2^bits), in their input order. `values` null: the values are 0 to keys.length − 1.
 * `keys` is overwritten.
 */
export function groupByKey(keys: Uint32Array, values: Uint32Array | null, bits: number, scratch: GroupScratch): { ids: Uint32Array, offsets: Uint32Array } {
  const count = keys.length
  const RADIX = 12
  const counts = new Uint32Array(1 << RADIX)
  let fromKeys = keys
  let toKeys = scratch.keys
  let fromIds: Uint32Array | null = values
  let pass = 0
  for (let shift = 0; shift < bits; shift += RADIX, pass++) {
    const [even, odd] = scratch.ids
    let toIds = (pass & 1) === 0 ? even : odd
    if (toIds === fromIds) toIds = toIds === even ? odd : even
    counts.fill(0)
    const mask = (1 << Math.min(RADIX, bits - shift)) - 1
    for (let i = 0; i < count; i++) counts[(fromKeys[i]! >>> shift) & mask]!++
    let sum = 0
    for (let digit = 0; digit <= mask; digit++) {
      const c = counts[digit]!
      counts[digit] = sum
      sum += c
    }
    for (let i = 0; i < count; i++) {
      const key = fromKeys[i]!
      const to = counts[(key >>> shift) & mask]!++
      toKeys[to] = key
      toIds[to] = fromIds === null ? i : fromIds[i]!
    }
    const used = fromKeys
    fromKeys = toKeys
    toKeys = used
    fromIds = toIds
  }
  const offsets = new Uint32Array(2 ** bits + 1)
  let key = 0
  for (let i = 0; i < count; i++) {
    const k = fromKeys[i]!
    while (key <= k) offsets[key++] = i
  }
  while (key < offsets.length) offsets[key++] = count
  // The sorted values sit in a scratch array the next table reuses: the table keeps a copy.
  const ids = fromIds === null ? new Uint32Array(0) : fromIds.slice(0, count)
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
