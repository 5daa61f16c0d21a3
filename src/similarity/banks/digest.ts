/**
 * Exact-digest bank search (md5, sha1, sha256): the records are sorted (format.ts), so a binary
 * search finds the first equal record and the entries with it follow.
 */
import type { BankSearcher, MatchSink } from './sink.js'

export class DigestSearcher implements BankSearcher {
  readonly #records: Buffer
  readonly #count: number
  readonly #width: number
  readonly indexBytes = 0
  readonly indexName = 'binary search'

  constructor(records: Buffer, count: number, width: number) {
    this.#records = records
    this.#count = count
    this.#width = width
  }

  /** Negative, 0 or positive as entry's record is below, equal to or above the query. */
  #compare(entry: number, query: Buffer): number {
    const at = entry * this.#width
    return this.#records.compare(query, 0, this.#width, at, at + this.#width)
  }

  search(queries: readonly Buffer[], _threshold: number, _lengthTerm: boolean, sink: MatchSink): void {
    for (let variant = 0; variant < queries.length; variant++) {
      const query = queries[variant]!
      let low = 0
      let high = this.#count
      while (low < high) {
        const middle = (low + high) >>> 1
        if (this.#compare(middle, query) < 0) low = middle + 1
        else high = middle
      }
      for (let entry = low; entry < this.#count && this.#compare(entry, query) === 0; entry++) sink.add(entry, 0, variant)
    }
  }
}
