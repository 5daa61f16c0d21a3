/**
 * bcrypt-sha256, passlib's answer to bcrypt's 72-byte limit (passlib.hash.bcrypt_sha256, passlib
 * handlers/bcrypt.py): the password is first reduced to 44 ASCII bytes, then bcrypt'd.
 *
 *     $bcrypt-sha256$v=2,t=2b,r=12$<22-char salt>$<31-char digest>
 *
 * v2 (passlib 1.7.3+): key = base64(HMAC-SHA256(key = the 22-character salt string as ASCII,
 * message = the password)), standard base64 with padding (44 bytes: no NUL, under 72); the digest
 * is bcrypt `$2b$` of that key with that salt and cost. v1 (`$bcrypt-sha256$2b,12$…`, before
 * 1.7.3) used base64(SHA256(password)); it is read and recommended for rehashing. passlib keys the
 * HMAC with the salt's text, not its bytes, and refuses salts whose last character has padding bits
 * set (it must be one of `.Oeu`), since bcrypt implementations disagree on those.
 *
 * Verification goes through the bcrypt scheme's own `verify` with the reconstructed `$2b$` hash.
 * A new hash needs bcrypt with a salt chosen first (the HMAC is keyed by it), which the scheme's
 * interface does not offer, so it is computed by libxcrypt's crypt_rn with a `$2b$` setting.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { problems } from '../../problem.js'
import { bcrypt } from './bcrypt.js'
import { requireAtMost } from './common.js'
import { cryptHash } from './libxcrypt.js'
import type { PasswordScheme } from '../types.js'

const V2 = /^\$bcrypt-sha256\$v=(\d+),t=(2b),r=(\d{1,2})\$([./A-Za-z0-9]{22})\$([./A-Za-z0-9]{31})$/
const V1 = /^\$bcrypt-sha256\$(2[ab]),(\d{1,2})\$([./A-Za-z0-9]{22})\$([./A-Za-z0-9]{31})$/
/** bcrypt's base64 alphabet (OpenBSD bcrypt.c), and the characters a 16-byte salt can end with. */
const BCRYPT64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const STD64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const FINAL_SALT_CHARS = '.Oeu'
const OWASP_MIN_COST = 10

interface Decoded { version: 1 | 2, ident: string, cost: number, costText: string, salt: string, digest: string }

function decode(hash: string): Decoded | null {
  const v2 = V2.exec(hash)
  if (v2) {
    const [, version, ident, rounds, salt, digest] = v2 as unknown as [string, string, string, string, string, string]
    if (version !== '2') return null
    return { version: 2, ident, cost: Number(rounds), costText: rounds, salt, digest }
  }
  const v1 = V1.exec(hash)
  if (v1) {
    const [, ident, rounds, salt, digest] = v1 as unknown as [string, string, string, string, string]
    return { version: 1, ident, cost: Number(rounds), costText: rounds, salt, digest }
  }
  return null
}

/** The 44-byte key bcrypt receives: base64 of HMAC-SHA256 keyed by the salt text (v2) or of SHA-256 (v1). */
function bcryptKey(version: 1 | 2, salt: string, password: Uint8Array): Buffer {
  const digest = version === 2 ? createHmac('sha256', salt).update(password).digest() : createHash('sha256').update(password).digest()
  return Buffer.from(digest.toString('base64'), 'ascii')
}

/** 16 random bytes in bcrypt's base64: 22 characters, the last with its 4 padding bits zero. */
function newSalt(): string {
  const standard = randomBytes(16).toString('base64').slice(0, 22)
  return [...standard].map((char) => BCRYPT64[STD64.indexOf(char)]).join('')
}

const twoDigits = (cost: number) => String(cost).padStart(2, '0')

export const bcryptSha256: PasswordScheme = {
  kind: 'password',
  name: 'bcrypt-sha256',
  displayName: 'bcrypt-SHA256 (passlib)',
  family: 'bcrypt',
  aliases: ['bcrypt_sha256'],
  reference: 'passlib.hash.bcrypt_sha256 (passlib handlers/bcrypt.py), v2 since passlib 1.7.3',
  implementation: 'node:crypto HMAC-SHA256, then bcrypt (libxcrypt to hash, the bcrypt scheme to verify)',
  reads: ['$bcrypt-sha256$v=2,t=2b (passlib ≥ 1.7.3)', '$bcrypt-sha256$2a/2b (v1)'],
  writes: '$bcrypt-sha256$v=2,t=2b,r=…$',
  options: {
    cost: { default: 12, min: 4, max: 31, description: 'log2 of the number of bcrypt rounds', cap: (caps) => caps.bcryptCost },
  },
  claims: (hash) => hash.startsWith('$bcrypt-sha256$'),
  parse(hash) {
    const decoded = decode(hash)
    if (!decoded) throw problems.malformedHash('bcrypt-sha256', 'expected $bcrypt-sha256$v=2,t=2b,r=<cost>$<22 salt characters>$<31 characters>')
    if (decoded.cost < 4 || decoded.cost > 31) throw problems.malformedHash('bcrypt-sha256', 'cost must be between 4 and 31')
    // passlib writes the cost without padding and refuses a zero-padded one (ZeroPaddedRoundsError).
    if (decoded.costText.length > 1 && decoded.costText.startsWith('0')) throw problems.malformedHash('bcrypt-sha256', 'the cost has a leading zero')
    if (!FINAL_SALT_CHARS.includes(decoded.salt.at(-1) as string)) throw problems.malformedHash('bcrypt-sha256', 'the salt\'s last character must be one of . O e u')
    return { scheme: 'bcrypt-sha256', params: { cost: decoded.cost, version: decoded.version }, format: decoded.version === 2 ? '$bcrypt-sha256$v=2' : `$bcrypt-sha256$${decoded.ident}` }
  },
  checkCaps(params, caps) {
    requireAtMost('bcrypt-sha256', 'cost', params.cost ?? 0, caps.bcryptCost)
  },
  rehashReason(parsed) {
    if (parsed.params.version === 1) return 'bcrypt-sha256 v1 (plain SHA-256) is superseded by v2 (HMAC-SHA256 keyed by the salt)'
    const cost = parsed.params.cost ?? 0
    return cost < OWASP_MIN_COST ? `bcrypt-sha256 cost ${cost} is below the OWASP minimum of ${OWASP_MIN_COST}` : null
  },
  hash(input, options) {
    const cost = options.cost ?? 12
    const salt = newSalt()
    const setting = `$2b$${twoDigits(cost)}$${salt}`
    const inner = cryptHash('bcrypt-sha256', bcryptKey(2, salt, input), setting)
    if (inner === null || !inner.startsWith(setting)) throw new Error('libxcrypt refused a $2b$ setting')
    return `$bcrypt-sha256$v=2,t=2b,r=${cost}$${salt}$${inner.slice(setting.length)}`
  },
  async verify(input, hash) {
    const decoded = decode(hash)
    if (!decoded) return false
    const inner = `$${decoded.ident}$${twoDigits(decoded.cost)}$${decoded.salt}${decoded.digest}`
    return bcrypt.verify(bcryptKey(decoded.version, decoded.salt, input), inner)
  },
}
