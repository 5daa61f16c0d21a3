/**
 * Parsers for the structured formats: each validates what a regex cannot (numeric ranges, decoded
 * lengths, JSON headers) and extracts the parameters reported as `params`. They return null when
 * the string only looks like the format, which drops the candidate.
 */
import { parsePeppered, PEPPER_VERSION } from '../algorithms/password/pepper.js'
import type { FormatParser, Params } from './types.js'

const CRYPT64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Bytes in a standard or URL-safe base64 string (padding optional), or -1 when malformed. */
export function base64Bytes(text: string): number {
  const body = text.replace(/={1,2}$/, '')
  if (body.length % 4 === 1) return -1
  if (text.length !== body.length && text.length % 4 !== 0) return -1
  return Math.floor(body.length * 3 / 4)
}

/** bcrypt: `$2a$`/`$2b$`/`$2y$`/`$2x$`, cost 04–31, 22 salt + 31 hash characters (OpenBSD bcrypt.c). */
export const parseBcrypt: FormatParser = (_hash, groups) => {
  const cost = Number(groups.cost)
  if (!(cost >= 4 && cost <= 31)) return null
  // The 22nd salt character only carries 4 bits: it must be one of .Oeu (OpenBSD encodes 128 bits).
  const salt = groups.salt ?? ''
  if (salt.length === 22 && !'.Oeu'.includes(salt[21]!)) return null
  return { variant: `$${groups.variant}$`, cost, rounds: 2 ** cost, salt }
}

/** Argon2 PHC string (draft-irtf-cfrg-argon2 / RFC 9106; the reference encoding.c). */
export const parseArgon2: FormatParser = (_hash, groups) => {
  const version = groups.version === undefined ? 16 : Number(groups.version)
  const memory = Number(groups.m)
  const time = Number(groups.t)
  const parallelism = Number(groups.p)
  if (version !== 16 && version !== 19) return null
  if (!(parallelism >= 1 && parallelism <= 0xffffff && time >= 1 && memory >= 8 * parallelism && memory <= 2 ** 32 - 1)) return null
  const saltBytes = base64Bytes(groups.salt ?? '')
  const hashBytes = base64Bytes(groups.digest ?? '')
  if (saltBytes < 8 || hashBytes < 4) return null
  return { variant: groups.variant ?? 'argon2', version, memory, time, parallelism, saltBytes, hashBytes }
}

/** passlib's `$scrypt$ln=…,r=…,p=…$salt$hash`. */
export const parsePasslibScrypt: FormatParser = (_hash, groups) => {
  const logN = Number(groups.ln)
  const r = Number(groups.r)
  const p = Number(groups.p)
  if (!(logN >= 1 && logN <= 63 && r >= 1 && p >= 1)) return null
  return { N: 2 ** logN, r, p, salt: groups.salt ?? '' }
}

const crypt64Value = (char: string): number => CRYPT64.indexOf(char)

/** Little-endian crypt-base64 number, as yescrypt and `$7$` encode their parameters. */
function crypt64Number(text: string): number {
  let value = 0
  for (let index = text.length - 1; index >= 0; index -= 1) value = value * 64 + crypt64Value(text[index]!)
  return value
}

/** Colin Percival's `$7$` (libxcrypt crypt-scrypt.c): N as log2 in one char, r and p in 5 chars each. */
export const parseScrypt7: FormatParser = (_hash, groups) => {
  const params = groups.params ?? ''
  const logN = crypt64Value(params[0] ?? '')
  const r = crypt64Number(params.slice(1, 6))
  const p = crypt64Number(params.slice(6, 11))
  if (logN < 1 || r < 1 || p < 1) return null
  return { N: 2 ** logN, r, p, salt: groups.salt ?? '' }
}

/**
 * yescrypt `$y$` / gost-yescrypt `$gy$` (libxcrypt crypt-yescrypt.c): the parameter field starts
 * with the flags character and N as log2, then optional r and p.
 */
export const parseYescrypt: FormatParser = (_hash, groups) => {
  const params = groups.params ?? ''
  const flags = crypt64Value(params[0] ?? '')
  const logN = crypt64Value(params[1] ?? '')
  if (flags < 0 || logN < 1) return null
  const result: Params = { N: 2 ** logN, salt: groups.salt ?? '' }
  // r follows as a variable-length crypt64 number: in practice one character (j9T → r=32).
  if (params.length >= 3) result.r = crypt64Value(params[2]!) + 1
  return result
}

/** sha256-crypt / sha512-crypt (Drepper's spec): rounds 1000–999,999,999, default 5000. */
export const parseShaCrypt: FormatParser = (_hash, groups) => {
  const rounds = groups.rounds === undefined ? 5000 : Number(groups.rounds)
  if (groups.rounds !== undefined && (rounds < 1000 || rounds > 999_999_999)) return null
  return { rounds, salt: groups.salt ?? '' }
}

/** phpass / Drupal 7: the cost character gives log2 of the iteration count (7–30). */
export const parsePortableCost: FormatParser = (_hash, groups) => {
  const log2 = crypt64Value(groups.cost ?? '')
  if (log2 < 7 || log2 > 30) return null
  return { rounds: 2 ** log2, salt: groups.salt ?? '' }
}

/** BSDi extended DES: `_` then 4 characters of rounds and 4 of salt (little-endian crypt64). */
export const parseBsdiCrypt: FormatParser = (_hash, groups) => {
  const rounds = crypt64Number(groups.rounds ?? '')
  if (rounds < 1) return null
  return { rounds, salt: groups.salt ?? '' }
}

/** Iteration counts and salts of the PBKDF2 families (passlib, Django, Werkzeug, hashcat forms). */
export const parseIterated: FormatParser = (_hash, groups) => {
  const rounds = Number(groups.rounds)
  if (!(rounds >= 1)) return null
  const params: Params = { rounds }
  if (groups.salt !== undefined) params.salt = groups.salt
  return params
}

/** A base64 field that must decode to exactly `digestBytes` (+ a salt of saltRange bytes). */
export function decodedLength(field: string, digestBytes: number, saltRange: [number, number] = [0, 0]): FormatParser {
  return (_hash, groups) => {
    const bytes = base64Bytes(groups[field] ?? '')
    const saltBytes = bytes - digestBytes
    if (bytes < 0 || saltBytes < saltRange[0] || saltBytes > saltRange[1]) return null
    const params: Params = {}
    if (saltRange[1] > 0) params.saltBytes = saltBytes
    return params
  }
}

function base64UrlJson(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
}

/** JWT (RFC 7519): a JSON header with `alg`; hashcat 16500 cracks the HS256/384/512 secrets. */
export const parseJwt: FormatParser = (_hash, groups) => {
  const header = base64UrlJson(groups.header ?? '')
  if (typeof header !== 'object' || header === null || typeof (header as { alg?: unknown }).alg !== 'string') return null
  const alg = (header as { alg: string }).alg
  return { alg, ...(typeof (header as { typ?: unknown }).typ === 'string' ? { typ: (header as { typ: string }).typ } : {}) }
}

/** Collects numeric named groups (rounds, cost, iterations) and the salt as params. */
export const groupParams: FormatParser = (_hash, groups) => {
  const params: Params = {}
  for (const [key, value] of Object.entries(groups)) {
    if (value === undefined) continue
    params[key] = /^\d{1,15}$/.test(value) ? Number(value) : value
  }
  return params
}

/**
 * hashd's `$pepper$v=1,k=<key id>,s=<scheme>$<nonce>$<sealed>` (algorithms/password/pepper.ts): the
 * same reading as /api/verify's, so a string it would call malformed is no match here. The key id
 * and the scheme inside are in the clear; what they seal is not.
 */
export const parsePepperSeal: FormatParser = (hash) => {
  try {
    const sealed = parsePeppered(hash)
    return { version: PEPPER_VERSION, key: sealed.keyId, scheme: sealed.scheme }
  } catch {
    return null
  }
}
