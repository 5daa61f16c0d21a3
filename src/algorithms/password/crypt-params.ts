/**
 * Cost parameters read from the text of crypt(3)-family hashes, decoded exactly as their reference
 * implementations decode them, so caps are checked on the event loop before any work is queued.
 * All of these formats use crypt(3)'s base-64 alphabet `./0-9A-Za-z`.
 */

export const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The value of one crypt base-64 character, or -1. */
export function atoi64(char: string | undefined): number {
  return char === undefined || char.length !== 1 ? -1 : ITOA64.indexOf(char)
}

/**
 * yescrypt's variable-length integer (libxcrypt lib/alg-yescrypt-common.c, decode64_uint32):
 * the first character's position says how many characters follow, larger values taking more.
 * Returns the value and the characters used, or null.
 */
function decodeVarUint(text: string, at: number, min: number): { value: number, next: number } | null {
  let start = 0
  let end = 47
  let chars = 1
  let bits = 0
  const first = atoi64(text[at])
  if (first < 0) return null
  let value = min
  while (first > end) {
    value += (end + 1 - start) * 2 ** bits
    start = end + 1
    end = start + Math.floor((62 - end) / 2)
    chars++
    bits += 6
  }
  value += (first - start) * 2 ** bits
  let position = at + 1
  while (--chars > 0) {
    const next = atoi64(text[position++])
    if (next < 0) return null
    bits -= 6
    value += next * 2 ** bits
  }
  return { value, next: position }
}

export interface YescryptParams {
  /** libxcrypt's flavor: 0–1 classic scrypt/WORM, 2+ the yescrypt RW modes. */
  flavor: number
  N: number
  r: number
  p: number
  /** Extra time factor (0 when absent). */
  t: number
  /** Hash upgrades (0 when absent). */
  g: number
  /** Whether a ROM is asked for, which crypt(3) cannot supply. */
  rom: boolean
}

/** YESCRYPT_RW and YESCRYPT_RW_FLAVOR_MASK >> 2 in libxcrypt's alg-yescrypt.h. */
const YESCRYPT_RW = 2
const YESCRYPT_MAX_FLAVOR = YESCRYPT_RW + (0x3fc >> 2)

/**
 * The parameter field of a `$y$` or `$gy$` hash (`j9T` in `$y$j9T$salt$hash`), decoded as
 * libxcrypt's yescrypt_r does: flavor, log2 N, r, then an optional "have" bitmap announcing p
 * (bit 0), t (bit 1), g (bit 2) and a ROM size (bit 3). Returns null when it is not well-formed.
 */
export function decodeYescryptParams(field: string): YescryptParams | null {
  const flavor = decodeVarUint(field, 0, 0)
  if (!flavor || flavor.value > YESCRYPT_MAX_FLAVOR) return null
  const nLog2 = decodeVarUint(field, flavor.next, 1)
  if (!nLog2 || nLog2.value > 63) return null
  const r = decodeVarUint(field, nLog2.next, 1)
  if (!r) return null
  const params: YescryptParams = { flavor: flavor.value, N: 2 ** nLog2.value, r: r.value, p: 1, t: 0, g: 0, rom: false }
  let position = r.next
  if (position < field.length) {
    const have = decodeVarUint(field, position, 1)
    if (!have || have.value > 15) return null
    position = have.next
    const read = (min: number): number | null => {
      const decoded = decodeVarUint(field, position, min)
      if (!decoded) return null
      position = decoded.next
      return decoded.value
    }
    if (have.value & 1) { const p = read(2); if (p === null) return null; params.p = p }
    if (have.value & 2) { const t = read(1); if (t === null) return null; params.t = t }
    if (have.value & 4) { const g = read(1); if (g === null) return null; params.g = g }
    if (have.value & 8) { const rom = read(1); if (rom === null || rom > 63) return null; params.rom = true }
  }
  return position === field.length ? params : null
}

/** A fixed-width little-endian crypt base-64 integer (libxcrypt decode64_uint32_fixed). */
function decodeFixedUint(text: string, bits: number): number | null {
  let value = 0
  for (let shift = 0, i = 0; shift < bits; shift += 6, i++) {
    const digit = atoi64(text[i])
    if (digit < 0) return null
    value += digit * 2 ** shift
  }
  return value
}

/**
 * The `$7$` parameters (libxcrypt yescrypt_r, Colin Percival's scrypt "$7$" format): one character
 * of log2 N, then r and p as 30-bit little-endian integers of five characters each.
 */
export function decodeScrypt7Params(field: string): { N: number, r: number, p: number } | null {
  if (field.length !== 11) return null
  const nLog2 = atoi64(field[0])
  if (nLog2 < 1 || nLog2 > 63) return null
  const r = decodeFixedUint(field.slice(1, 6), 30)
  const p = decodeFixedUint(field.slice(6, 11), 30)
  if (r === null || p === null || r < 1 || p < 1) return null
  return { N: 2 ** nLog2, r, p }
}

/** BSDi extended DES's iteration count: four characters, 24 bits, little-endian (FreeBSD crypt-des.c). */
export function decodeBsdiRounds(field: string): number | null {
  return field.length === 4 ? decodeFixedUint(field, 24) : null
}

