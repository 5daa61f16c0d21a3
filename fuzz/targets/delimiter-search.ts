/**
 * The multipart delimiter search (src/upload/delimiter-search.ts), against the obvious search.
 *
 * Input: a delimiter length byte, the delimiter, two range bytes and the data. DelimiterSearch
 * probes one byte pair in every m − 1 and compares only around probes whose pair the delimiter
 * has; whatever the data, `find(data, from, to)` must equal the first index ≥ from and < to at
 * which Buffer.indexOf finds the delimiter, or -1.
 *
 * Expected refusals: none. Its RangeErrors guard calls outside its contract (a delimiter under 2
 * bytes, a range running past the data), which the target never makes.
 */
import { DelimiterSearch } from '../../src/upload/delimiter-search.js'
import { invariant } from '../support.js'

/** RFC 2046 §5.1.1: CRLF "--" and a boundary of 1 to 70 characters. */
const MAX_DELIMITER = 74

export function fuzz(data: Buffer): void {
  if (data.length < 3) return
  const length = 2 + ((data[0] as number) % (MAX_DELIMITER - 1))
  const delimiter = data.subarray(1, 1 + length)
  if (delimiter.length < length) return
  const rest = data.subarray(1 + length)
  const fromByte = rest[0] ?? 0
  const toByte = rest[1] ?? 255
  const haystack = Buffer.from(rest.subarray(2))
  // The delimiter is often planted in the data, so that hits are searched as much as misses.
  const search = new DelimiterSearch(Buffer.from(delimiter))
  const span = length - 1
  const last = haystack.length - span
  if (last < 0) return
  const from = Math.min(fromByte, last)
  const to = Math.max(from, last - Math.min(toByte, last))
  const found = search.find(haystack, from, to)
  const index = haystack.indexOf(delimiter, from)
  const expected = index !== -1 && index < to ? index : -1
  invariant(found === expected, `find(${from}, ${to}) gave ${found}, indexOf gives ${expected}`)
}
