/**
 * Text and binary encodings at the edge of the domain: what bytes an input stands for, and how a
 * digest is written out.
 */
import { timingSafeEqual } from 'node:crypto'
import { problems } from '../problem.js'

export const OUTPUT_ENCODINGS = ['hex', 'base64', 'base64url'] as const
export type OutputEncoding = typeof OUTPUT_ENCODINGS[number]
export const INPUT_ENCODINGS = ['utf8', 'hex', 'base64'] as const
export type InputEncoding = typeof INPUT_ENCODINGS[number]

const HEX = /^(?:[0-9a-fA-F]{2})*$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const BASE64URL = /^[A-Za-z0-9_-]*$/
/** base64url with its padding kept (RFC 4648 §5 allows either; Python's urlsafe_b64encode pads). */
const BASE64URL_PADDED = /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/

/**
 * The bytes a request field stands for. Text is UTF-8; a string that is not well-formed Unicode
 * (a lone surrogate, which JSON's `\ud800` escapes allow) is refused rather than hashed as U+FFFD.
 */
export function decodeInput(value: string, encoding: InputEncoding, field: string): Buffer {
  switch (encoding) {
    case 'utf8':
      if (!value.isWellFormed()) throw problems.invalidEncoding(field, 'Unicode (it contains a lone surrogate)')
      return Buffer.from(value, 'utf8')
    case 'hex':
      if (!HEX.test(value)) throw problems.invalidEncoding(field, 'hex (an even number of 0-9a-f digits)')
      return Buffer.from(value, 'hex')
    case 'base64': {
      // Node's decoder skips bad characters silently; accept only canonical padded or unpadded base64(url).
      const padded = value.length % 4 === 0 ? value : value + '='.repeat((4 - (value.length % 4)) % 4)
      if (value.length % 4 === 1 || !(BASE64.test(padded) || BASE64URL.test(value))) throw problems.invalidEncoding(field, 'base64')
      return Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
    }
  }
}

export function encodeOutput(bytes: Uint8Array, encoding: OutputEncoding): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  switch (encoding) {
    case 'hex': return buffer.toString('hex')
    case 'base64': return buffer.toString('base64')
    case 'base64url': return buffer.toString('base64url')
  }
}

/**
 * Reads a digest the way a user may paste it: hex in either case, padded or unpadded base64, or
 * base64url. Returns null when it is none of these. The hex reading wins when a string is both.
 */
export function decodeDigestText(text: string): Buffer | null {
  const trimmed = text.trim()
  if (trimmed.length > 0 && trimmed.length % 2 === 0 && HEX.test(trimmed)) return Buffer.from(trimmed, 'hex')
  if (trimmed.length === 0 || trimmed.length % 4 === 1) return null
  const unpadded = trimmed.replace(/={1,2}$/, '')
  if (/^[A-Za-z0-9+/]+$/.test(unpadded) || BASE64URL.test(unpadded)) {
    if (trimmed.includes('=') && !BASE64.test(trimmed) && !BASE64URL_PADDED.test(trimmed)) return null
    return Buffer.from(unpadded.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
  }
  return null
}

/**
 * Compares two byte strings in time that depends only on the longer length, never on where they
 * differ, and is constant whether or not the lengths match (the shorter is padded).
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length, 1)
  const left = Buffer.alloc(length)
  const right = Buffer.alloc(length)
  left.set(a)
  right.set(b)
  return timingSafeEqual(left, right) && a.length === b.length
}

/**
 * Copies `text` into `target` at `offset` by a loop in JavaScript and returns its length, or null
 * (the bytes written so far to be overwritten) when it is longer than `max` characters or not ASCII.
 * For the short pieces of hot paths (a batch item's message, its answer's punctuation and numbers),
 * where Buffer#write's call into C++ costs more than the copy; longer or non-ASCII text goes to
 * Buffer#write. The crossover was timed by hand in a scratch loop (a Buffer#write of 64 hex
 * characters about 0.1 µs, the loop about 3 ns a character), not by a command of the repository.
 */
export function asciiInto(text: string, target: Uint8Array, offset: number, max: number): number | null {
  const length = text.length
  if (length > max) return null
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index)
    if (code >= 0x80) return null
    target[offset + index] = code
  }
  return length
}
