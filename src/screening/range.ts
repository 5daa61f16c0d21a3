/**
 * The text of HIBP's range API (`GET /range/{prefix}`, https://haveibeenpwned.com/API/v3#SearchingPwnedPasswordsByRange)
 * from one prefix's records: one `SUFFIX:COUNT` line per hash, the suffix in uppercase hex (35
 * digits for SHA-1, 27 for NTLM), lines separated by CRLF with none after the last, in suffix
 * order, as the public API answers.
 *
 * With padding (the API's `Add-Padding: true`), lines of random suffixes with the count 0 are
 * mixed in until the answer has a random number of lines between 800 and 1,000 (a prefix with
 * more real lines than that gets none), so that the answer's size says little about the prefix.
 * The padding is drawn anew for every answer.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { EXTRA_BYTES, readCount, type PrefixRecords } from './store.js'

const UPPER_HEX = Buffer.from('0123456789ABCDEF', 'latin1')
const COLON = 0x3a
/** The API's padded size: between these many lines, inclusive. */
export const PADDING_MIN_LINES = 800
export const PADDING_MAX_LINES = 1000

/**
 * Writes a count's decimal digits at `at`; returns the position after them. By a loop, not
 * String(count) and Buffer#write: that was a string and a call into C++ for each line.
 */
function writeCount(out: Buffer, at: number, count: number): number {
  let end = at + 1
  for (let rest = count; rest >= 10; rest = Math.floor(rest / 10)) end++
  for (let digit = end - 1, rest = count; digit >= at; digit--, rest = Math.floor(rest / 10)) out[digit] = 0x30 + (rest % 10)
  return end
}

/** Writes one record's line (without the line end) at `at`; returns the position after it. */
function writeLine(out: Buffer, at: number, bytes: Uint8Array, record: number, suffixBytes: number, count: number): number {
  for (let index = 0; index < suffixBytes; index++) {
    const byte = bytes[record + index] as number
    out[at++] = UPPER_HEX[byte >>> 4] as number
    out[at++] = UPPER_HEX[byte & 0x0f] as number
  }
  out[at++] = UPPER_HEX[(bytes[record + suffixBytes] as number) >>> 4] as number
  out[at++] = COLON
  return writeCount(out, at, count)
}

/** The range answer for these records, without padding. */
export function rangeText({ bytes, spec }: PrefixRecords): Buffer {
  const { suffixBytes, suffixDigits } = spec
  const maxRecords = Math.floor(bytes.length / (suffixBytes + 1))
  const out = Buffer.allocUnsafe(maxRecords * (suffixDigits + 1 + 15 + 2))
  let at = 0
  for (let record = 0; record < bytes.length;) {
    const tag = (bytes[record + suffixBytes] as number) & 0x0f
    if (at > 0) { out[at++] = 0x0d; out[at++] = 0x0a }
    at = writeLine(out, at, bytes, record, suffixBytes, readCount(bytes, record + suffixBytes + 1, tag))
    record += suffixBytes + 1 + (EXTRA_BYTES[tag] as number)
  }
  return out.subarray(0, at)
}

/** The range answer with padding: real lines and count-0 lines in one suffix order. */
export function paddedRangeText({ bytes, spec }: PrefixRecords): Buffer {
  const { suffixBytes, suffixDigits } = spec
  const keyBytes = suffixBytes + 1
  const lines: Array<{ key: Buffer, count: number }> = []
  const seen = new Set<string>()
  for (let record = 0; record < bytes.length;) {
    const tagByte = bytes[record + suffixBytes] as number
    const key = Buffer.from(bytes.subarray(record, record + keyBytes))
    key[suffixBytes] = tagByte & 0xf0
    lines.push({ key, count: readCount(bytes, record + keyBytes, tagByte & 0x0f) })
    seen.add(key.toString('latin1'))
    record += keyBytes + (EXTRA_BYTES[tagByte & 0x0f] as number)
  }
  const target = randomInt(PADDING_MIN_LINES, PADDING_MAX_LINES + 1)
  const wanted = Math.max(0, target - lines.length)
  const random = randomBytes(wanted * keyBytes)
  for (let index = 0; index < wanted; index++) {
    const key = random.subarray(index * keyBytes, (index + 1) * keyBytes)
    key[suffixBytes] = (key[suffixBytes] as number) & 0xf0
    const name = key.toString('latin1')
    // A random suffix equal to a real one (or another filler) would show as a repeated line.
    if (seen.has(name)) continue
    seen.add(name)
    lines.push({ key, count: 0 })
  }
  lines.sort((a, b) => Buffer.compare(a.key, b.key))
  const out = Buffer.allocUnsafe(lines.length * (suffixDigits + 1 + 15 + 2))
  let at = 0
  for (const { key, count } of lines) {
    if (at > 0) { out[at++] = 0x0d; out[at++] = 0x0a }
    at = writeLine(out, at, key, 0, suffixBytes, count)
  }
  return out.subarray(0, at)
}
