/**
 * A set of list entries in one sorted buffer: the built-in common passwords (49,000 of them) and an
 * organization's blocklist. One Buffer of the UTF-8 keys end to end and their offsets, searched by
 * bisection: about 1 byte of overhead per entry beside the text, where a Set of strings costs some
 * 50 bytes per entry of heap, which the server's memory budget at rest cannot spare.
 */
import { comparisonKey } from './normalize.js'

export class WordList {
  readonly #text: Buffer
  readonly #offsets: Uint32Array

  private constructor(text: Buffer, offsets: Uint32Array) {
    this.#text = text
    this.#offsets = offsets
  }

  /** The entries, each as its comparison key (NFKC, lowercase); empty ones and repeats dropped. */
  static from(entries: Iterable<string>): WordList {
    const keys = new Set<string>()
    for (const entry of entries) {
      const key = comparisonKey(entry)
      if (key !== '') keys.add(key)
    }
    const encoded = [...keys].map((key) => Buffer.from(key, 'utf8')).sort(Buffer.compare)
    const offsets = new Uint32Array(encoded.length + 1)
    let total = 0
    encoded.forEach((bytes, index) => { offsets[index] = total; total += bytes.length })
    offsets[encoded.length] = total
    return new WordList(Buffer.concat(encoded, total), offsets)
  }

  get size(): number { return this.#offsets.length - 1 }

  /** Whether `key` (already a comparison key) is an entry. */
  has(key: string): boolean {
    if (key === '') return false
    const target = Buffer.from(key, 'utf8')
    let low = 0
    let high = this.size - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const order = this.#text.compare(target, 0, target.length, this.#offsets[middle], this.#offsets[middle + 1])
      if (order === 0) return true
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return false
  }
}
