/**
 * The headers a receiver forwards, looked up case-insensitively (RFC 9110 §5.1: field names are
 * case-insensitive), as Node gives them (`request.headers`: strings, and arrays for repeated fields)
 * or as any other framework writes them. Only the names a profile reads are kept; one of them
 * given twice (under two spellings, or as an array of several values) is kept as `null`, which the
 * profile refuses as malformed rather than picking one.
 */
import type { HeaderValues } from './types.js'

export type ForwardedHeaders = Readonly<Record<string, string | readonly string[]>>

export function headerValues(headers: ForwardedHeaders, names: readonly string[]): HeaderValues {
  const values = new Map<string, string | null>()
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (!names.includes(lower)) continue
    const single = typeof value === 'string' ? value : value.length === 1 ? value[0] as string : null
    values.set(lower, values.has(lower) ? null : single)
  }
  return values
}

/** A header's value with surrounding white space dropped (RFC 9110 §5.5), or why it cannot be read. */
export function headerText(values: HeaderValues, name: string): { ok: true, text: string } | { ok: false, reason: 'missing-header' | 'malformed-header', detail: string } {
  const value = values.get(name)
  if (value === null) return { ok: false, reason: 'malformed-header', detail: `${name} is given more than once` }
  const text = value?.trim() ?? ''
  if (text === '') return { ok: false, reason: 'missing-header', detail: `${name} is missing` }
  return { ok: true, text }
}

/** Whole Unix seconds as written in a header: digits without a leading zero, so the text is the number's own. */
export function unixSeconds(text: string): number | null {
  if (text.length > 12) return null
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x30 || code > 0x39) return null
  }
  const value = Number(text)
  return String(value) === text ? value : null
}

/** Strict base64 (RFC 4648 §4): only the text that re-encodes to itself; padding optional when `lenientPadding`. */
export function strictBase64(text: string, lenientPadding = false): Buffer | null {
  const bytes = Buffer.from(text, 'base64')
  const canonical = bytes.toString('base64')
  if (canonical === text) return bytes
  if (!lenientPadding) return null
  let end = canonical.length
  while (end > 0 && canonical.charCodeAt(end - 1) === 0x3d) end--
  return canonical.slice(0, end) === text ? bytes : null
}

/** Hex of exactly `bytes` bytes, either case. */
export function strictHex(text: string, bytes: number): Buffer | null {
  if (text.length !== bytes * 2) return null
  const decoded = Buffer.from(text, 'hex')
  return decoded.length === bytes ? decoded : null
}
