/**
 * Where a bank search puts what it finds: entry numbers (positions in the bank file's sorted
 * order) with their distance or score and the query variant that gave it. With several query
 * hashes an entry is kept once, at its best value (from the lowest variant among equals). With
 * one, only the best `limit` are kept (a wide threshold on a large bank would otherwise hold every
 * entry), and `size` counts them all.
 */
export class MatchSink {
  readonly measure: 'distance' | 'score'
  entries: number[] = []
  values: number[] = []
  variants: number[] = []
  readonly #limit: number
  #total = 0
  /** Entry → its position in the arrays, once several variants are searched. */
  #seen: Map<number, number> | null

  /** `limit`: the most the caller will take (best first); Infinity keeps every match. */
  constructor(measure: 'distance' | 'score', variants: number, limit = Infinity) {
    this.measure = measure
    this.#seen = variants > 1 ? new Map() : null
    this.#limit = limit
  }

  add(entry: number, value: number, variant: number): void {
    const seen = this.#seen
    if (seen === null) {
      this.#total++
      this.entries.push(entry)
      this.values.push(value)
      this.variants.push(variant)
      if (this.entries.length >= 2 * this.#limit + 1024) this.#keepBest()
      return
    }
    const at = seen.get(entry)
    if (at === undefined) {
      seen.set(entry, this.entries.length)
      this.entries.push(entry)
      this.values.push(value)
      this.variants.push(variant)
    } else if (this.#better(value, variant, at)) {
      this.values[at] = value
      this.variants[at] = variant
    }
  }

  /**
   * Whether (value, variant) beats what the entry has: a better value, or the same value from a
   * lower variant, so that the kept variant does not depend on the order the searches ran in.
   */
  #better(value: number, variant: number, at: number): boolean {
    const had = this.values[at]!
    if (value === had) return variant < this.variants[at]!
    return this.measure === 'distance' ? value < had : value > had
  }

  /** How many entries matched (kept or not). */
  get size(): number { return this.#seen === null ? this.#total : this.entries.length }

  /** Drops all but the best `limit` (single-query mode only). */
  #keepBest(): void {
    const keep = this.best(this.#limit)
    this.entries = keep.map((at) => this.entries[at]!)
    this.values = keep.map((at) => this.values[at]!)
    this.variants = keep.map((at) => this.variants[at]!)
  }

  /** Positions of the best `limit` in order: distance ascending (score descending), then entry. */
  best(limit: number): number[] {
    const positions = Array.from({ length: this.entries.length }, (_, at) => at)
    const sign = this.measure === 'distance' ? 1 : -1
    positions.sort((a, b) => sign * (this.values[a]! - this.values[b]!) || this.entries[a]! - this.entries[b]!)
    return positions.length > limit ? positions.slice(0, limit) : positions
  }
}

/** A searcher over one bank's records: puts every entry within the threshold of any query into the sink. */
export interface BankSearcher {
  search(queries: readonly Buffer[], threshold: number, lengthTerm: boolean, sink: MatchSink): void
  /** Several searches at once, `groups[g]`'s matches into `sinks[g]`, when the index gains by it (pdq.ts). */
  searchMany?(groups: readonly (readonly Buffer[])[], threshold: number, lengthTerm: boolean, sinks: readonly MatchSink[]): void
  /** Bytes the searcher holds beyond the records (its index), for the memory figure. */
  readonly indexBytes: number
  /** What the search does, for the bench and health (`linear scan`, `multi-index hashing, …`). */
  readonly indexName: string
}
