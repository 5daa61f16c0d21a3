/**
 * Pieces every password scheme shares: cap checks, `k=v,k=v` parameter lists, and the base64
 * dialects that password formats use.
 */
import { timingSafeEqual } from 'node:crypto'
import { problems } from '../../problem.js'

/** Throws 422 when a cost read from a hash or asked for in options exceeds the server's cap. */
export function requireAtMost(scheme: string, what: string, value: number, cap: number): void {
  if (value > cap) {
    throw problems.costAboveCap(`${scheme} ${what} ${value} is above this server's cap of ${cap}`)
  }
}

/**
 * Parses a PHC-style parameter list (`m=19456,t=2,p=1`), in any order, each key at most once,
 * values plain decimal integers of at most 10 digits (PHC string format §"Parameters").
 */
export function parseParamList(scheme: string, text: string, allowed: readonly string[]): Record<string, number> {
  const params: Record<string, number> = Object.create(null)
  for (const part of text.split(',')) {
    const match = /^([a-z]+)=(\d{1,10})$/.exec(part)
    if (!match) throw problems.malformedHash(scheme, `bad parameter "${part.slice(0, 20)}"`)
    const [, key, value] = match as unknown as [string, string, string]
    if (!allowed.includes(key)) throw problems.malformedHash(scheme, `unknown parameter "${key}"`)
    if (key in params) throw problems.malformedHash(scheme, `parameter "${key}" appears twice`)
    if (value.length > 1 && value.startsWith('0')) throw problems.malformedHash(scheme, `parameter "${key}" has a leading zero`)
    params[key] = Number(value)
  }
  return params
}

const B64_STD = /^[A-Za-z0-9+/]*$/
const B64_AB64 = /^[A-Za-z0-9./]*$/

/** Unpadded standard base64 (PHC strings, passlib's scrypt): returns null when not valid. */
export function decodeB64Unpadded(text: string): Buffer | null {
  if (!B64_STD.test(text) || text.length % 4 === 1) return null
  return Buffer.from(text, 'base64')
}

export function encodeB64Unpadded(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64').replace(/={1,2}$/, '')
}

/** passlib's "adapted base64" (ab64): standard base64 with `.` for `+` and no padding. */
export function decodeAb64(text: string): Buffer | null {
  if (!B64_AB64.test(text) || text.length % 4 === 1) return null
  return Buffer.from(text.replaceAll('.', '+'), 'base64')
}

export function encodeAb64(bytes: Uint8Array): string {
  return encodeB64Unpadded(bytes).replaceAll('+', '.')
}

/** The one-sentence rehash reason every legacy scheme gives (passlib's needs_update, in words). */
export function legacyReason(scheme: string): string {
  return `${scheme} is a legacy scheme; rehash with argon2id`
}

/** Compares two strings of ASCII hash text in constant time (for a given length). */
export function equalHashText(computed: string, stored: string): boolean {
  const a = Buffer.from(computed)
  const b = Buffer.from(stored)
  return a.length === b.length && timingSafeEqual(a, b)
}
