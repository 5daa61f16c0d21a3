/**
 * Reading one value of a store's metadata: a field at a dotted path of its JSON, and a hash in the
 * encoding the store writes it in, normalized to the form the registry prints. A value that is
 * not what the store writes is a 422 naming the field. The patterns here are anchored character
 * classes with a fixed or simple bound, linear on any input (the ReDoS gate, test/redos.test.ts,
 * reads them from this file).
 */
import { base32 } from '../encoding.js'
import { invalidMetadata } from './problems.js'

const HEX = /^[0-9a-fA-F]*$/
/** Standard and URL-safe base64 (rclone prints the latter), with its padding. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/
const BASE32 = /^[A-Za-z2-7]*$/
const DIGITS = /^[0-9]{1,16}$/

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The value at `a.b.c`, own properties only (never `__proto__` or `constructor` from the prototype). */
export function at(json: unknown, path: string): unknown {
  let value: unknown = json
  for (const name of path.split('.')) {
    if (!isObject(value) || !Object.hasOwn(value, name)) return undefined
    value = value[name]
  }
  return value
}

export const hasPath = (json: unknown, path: string): boolean => at(json, path) !== undefined

export { isObject }

/** A field that must be text: the text, or undefined for absent and null (stores print null for a hash they do not have). */
export function optionalText(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw invalidMetadata(field, 'is not text')
  return value
}

/** Hex of `bytes` bytes, in either case (OneDrive prints upper case): lower case, as the registry prints it. */
export function hexOf(field: string, value: string, bytes: number): string {
  if (value.length !== bytes * 2 || !HEX.test(value)) throw invalidMetadata(field, `is not ${bytes} bytes in hex`)
  return value.toLowerCase()
}

/** Without the trailing `=`s (a loop, where `/=+$/` would backtrack on a run of `=`s). */
function unpadded(text: string): string {
  let end = text.length
  while (end > 0 && text[end - 1] === '=') end--
  return text.slice(0, end)
}

/** Base64 of `bytes` bytes, standard or URL-safe: the standard form with its padding, as the registry prints it. */
export function base64Of(field: string, value: string, bytes: number): string {
  if (value.length > 4 * Math.ceil(bytes / 3) || !BASE64.test(value)) throw invalidMetadata(field, `is not ${bytes} bytes in base64`)
  const standard = value.replaceAll('-', '+').replaceAll('_', '/')
  const decoded = Buffer.from(standard, 'base64')
  const normalized = decoded.toString('base64')
  // Node's decoder skips what it cannot read; encoding back and comparing refuses that, and stray bits.
  if (decoded.length !== bytes || unpadded(normalized) !== unpadded(standard)) {
    throw invalidMetadata(field, `is not ${bytes} bytes in base64`)
  }
  return normalized
}

/** RFC 4648 base32 of `bytes` bytes, in either case (RHash's magnet links are lower case), without padding: its bytes. */
export function base32Bytes(field: string, value: string, bytes: number): Uint8Array {
  if (value.length !== Math.ceil(bytes * 8 / 5) || !BASE32.test(value)) throw invalidMetadata(field, `is not ${bytes} bytes in base32`)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  const out = new Uint8Array(bytes)
  let buffer = 0
  let bits = 0
  let index = 0
  for (const character of value.toUpperCase()) {
    buffer = ((buffer << 5) | alphabet.indexOf(character)) & 0xffff
    bits += 5
    if (bits >= 8) {
      bits -= 8
      if (index < bytes) out[index++] = (buffer >>> bits) & 0xff
    }
  }
  // The leftover bits must be zero, or two texts would stand for the same bytes.
  if ((buffer & ((1 << bits) - 1)) !== 0) throw invalidMetadata(field, `is not ${bytes} bytes in base32`)
  return out
}

/** Base32 of `bytes` bytes, in upper case without padding, as the registry prints TTH and AICH. */
export const base32Of = (field: string, value: string, bytes: number): string => base32(base32Bytes(field, value, bytes))

/** A size in bytes, as a JSON number or as decimal text (the Cloud Storage JSON API writes int64 as a string). */
export function sizeOf(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined
  const size = typeof value === 'number' ? value : typeof value === 'string' && DIGITS.test(value) ? Number(value) : Number.NaN
  if (!Number.isSafeInteger(size) || size < 0) throw invalidMetadata(field, 'is not a size in bytes')
  return size
}
