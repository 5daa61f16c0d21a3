/**
 * bcrypt (Provos & Mazières, 1999) in OpenBSD's modular crypt format:
 * `$2b$` + two-digit cost + 22 characters of salt + 31 of hash, bcrypt's own base64 alphabet.
 * `$2b$` and `$2y$` are the same algorithm (crypt_blowfish's `$2y$` marks its fixed sign-extension
 * bug). `$2a$` is too, except that crypt_blowfish (PHP, libxcrypt) computes `$2a$` hashes of some
 * 8-bit passwords with a safety measure that makes them differ from OpenBSD's; so a `$2a$` hash of
 * an input with bytes ≥ 0x80 that does not verify the OpenBSD way is also tried the crypt_blowfish
 * way (libxcrypt). `$2x$`, crypt_blowfish's marker for hashes made by the old buggy code, is
 * verified by libxcrypt only, and always recommended for rehashing.
 */
import { hashSync, verifySync } from '@node-rs/bcrypt'
import { problems } from '../../problem.js'
import { requireAtMost } from './common.js'
import { cryptVerify } from './libxcrypt.js'
import type { PasswordScheme } from '../types.js'

/** Only the first 72 bytes of the key reach Blowfish's key schedule. */
export const BCRYPT_MAX_BYTES = 72
const BCRYPT_FORMAT = /^\$(2[abxy])\$(\d\d)\$[./A-Za-z0-9]{53}$/
/** OWASP Password Storage Cheat Sheet: bcrypt work factor of 10 or more. */
const OWASP_MIN_COST = 10

export const bcrypt: PasswordScheme = {
  kind: 'password',
  name: 'bcrypt',
  displayName: 'bcrypt',
  family: 'bcrypt',
  aliases: ['bcrypt-2b', 'blowfish-crypt', '2b'],
  reference: 'Provos & Mazières, "A Future-Adaptable Password Scheme" (USENIX 1999); OpenBSD bcrypt(3)',
  implementation: '@node-rs/bcrypt (native)',
  reads: ['$2a$', '$2b$', '$2y$', '$2x$ (crypt_blowfish, via libxcrypt)'],
  writes: '$2b$',
  maxInputBytes: BCRYPT_MAX_BYTES,
  options: {
    cost: { default: 12, min: 4, max: 31, description: 'log2 of the number of rounds', cap: (caps) => caps.bcryptCost },
  },
  claims: (hash) => /^\$2[abxy]\$/.test(hash),
  parse(hash) {
    const match = BCRYPT_FORMAT.exec(hash)
    if (!match) throw problems.malformedHash('bcrypt', 'expected $2a$, $2b$, $2y$ or $2x$, a two-digit cost and 53 characters of ./A-Za-z0-9')
    const cost = Number(match[2])
    if (cost < 4 || cost > 31) throw problems.malformedHash('bcrypt', 'cost must be between 04 and 31')
    return { scheme: 'bcrypt', params: { cost }, format: `$${match[1]}$` }
  },
  checkCaps(params, caps) {
    requireAtMost('bcrypt', 'cost', params.cost ?? 0, caps.bcryptCost)
  },
  rehashReason(parsed) {
    const cost = parsed.params.cost ?? 0
    if (parsed.format === '$2x$') return 'a $2x$ hash was made by crypt_blowfish\'s sign-extension bug; rehash with argon2id'
    return cost < OWASP_MIN_COST ? `bcrypt cost ${cost} is below the OWASP minimum of ${OWASP_MIN_COST}` : null
  },
  verifyWarnings(input) {
    return input.length > BCRYPT_MAX_BYTES
      ? [`bcrypt uses only the first ${BCRYPT_MAX_BYTES} bytes of the input; the remaining ${input.length - BCRYPT_MAX_BYTES} bytes did not affect the result`]
      : []
  },
  hash(input, options) {
    // @node-rs/bcrypt 1.x writes crypt_blowfish's `$2y$` with a fresh 16-byte salt (inputs over 72
    // bytes were refused before). `$2y$` and OpenBSD's `$2b$` name the same corrected algorithm and
    // give identical hashes for every input (crypt_blowfish 1.3 and OpenBSD bcrypt(3)), so only the
    // label changes: `$2b$` is what OpenBSD, passlib and python-bcrypt write.
    const hash = hashSync(input, options.cost ?? 12)
    return hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash
  },
  verify(input, hash) {
    // The standard: only the first 72 bytes count, so hashes made elsewhere keep verifying.
    const key = input.subarray(0, BCRYPT_MAX_BYTES)
    if (hash.startsWith('$2x$')) return cryptVerify('bcrypt $2x$', key, hash)
    if (verifySync(key, hash)) return true
    // crypt_blowfish's $2a$ safety measure (see above); a C string cannot hold NUL, so such keys stop here.
    return hash.startsWith('$2a$') && key.some((byte) => byte >= 0x80) && !key.includes(0) && cryptVerify('bcrypt $2a$', key, hash)
  },
}
