/**
 * PBKDF2 (RFC 8018 §5.2) with HMAC-SHA1/SHA-256/SHA-512.
 * Written in passlib's format, `$pbkdf2-sha256$<rounds>$<salt>$<hash>` in passlib's adapted base64,
 * so passlib verifies it. Also read: the PHC-style `i=<rounds>` spelling of the same format,
 * Django's `pbkdf2_sha256$<rounds>$<salt>$<b64 hash>` and Werkzeug's `pbkdf2:sha256:<rounds>$<salt>$<hex hash>`,
 * whose salts are text used as-is.
 */
import { pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto'
import { problems } from '../../problem.js'
import { decodeAb64, encodeAb64, requireAtMost } from './common.js'
import type { ParsedPasswordHash, PasswordScheme } from '../types.js'

type Digest = 'sha1' | 'sha256' | 'sha512'
const DIGEST_BYTES: Record<Digest, number> = { sha1: 20, sha256: 32, sha512: 64 }
/** OWASP Password Storage Cheat Sheet minimums for PBKDF2. */
const OWASP_ITERATIONS: Record<Digest, number> = { sha1: 1_300_000, sha256: 600_000, sha512: 210_000 }

interface Decoded { format: string, iterations: number, salt: Buffer, expected: Buffer }

/**
 * The spellings of one digest's hashes, built once per digest (at load, where the ReDoS gate,
 * test/redos.test.ts, sees every pattern the module can make).
 */
function spellings(digest: Digest): { passlib: RegExp, django: RegExp, werkzeug: RegExp, prefix: RegExp } {
  return {
    passlib: new RegExp(`^\\$pbkdf2(?:-${digest})${digest === 'sha1' ? '?' : ''}\\$(?:i=)?(\\d{1,10})\\$([A-Za-z0-9./]{0,172})\\$([A-Za-z0-9./]{16,1400})$`),
    django: new RegExp(`^pbkdf2_${digest}\\$(\\d{1,10})\\$([!-#%-~]{1,128})\\$([A-Za-z0-9+/]{16,1400}={0,2})$`),
    // werkzeug.security.generate_password_hash always writes the iteration count.
    werkzeug: new RegExp(`^pbkdf2:${digest}:(\\d{1,10})\\$([!-#%-~]{1,128})\\$([0-9a-f]{16,2048})$`),
    prefix: new RegExp(`^(\\$pbkdf2-${digest}\\$|pbkdf2_${digest}\\$|pbkdf2:${digest}:)`),
  }
}

/** Reads every PBKDF2 spelling hashd knows; null when `hash` is none of them for this digest. */
function decode(patterns: ReturnType<typeof spellings>, hash: string): Decoded | null {
  let m = patterns.passlib.exec(hash)
  if (m) {
    const salt = decodeAb64(m[2] as string)
    const expected = decodeAb64(m[3] as string)
    if (!salt || !expected) return null
    return { format: '$pbkdf2-…$ (passlib)', iterations: Number(m[1]), salt, expected }
  }
  m = patterns.django.exec(hash)
  if (m) {
    const expected = Buffer.from(m[3] as string, 'base64')
    return { format: 'Django', iterations: Number(m[1]), salt: Buffer.from(m[2] as string, 'utf8'), expected }
  }
  m = patterns.werkzeug.exec(hash)
  if (m && (m[3] as string).length % 2 === 0) {
    return { format: 'Werkzeug', iterations: Number(m[1]), salt: Buffer.from(m[2] as string, 'utf8'), expected: Buffer.from(m[3] as string, 'hex') }
  }
  return null
}

function pbkdf2Scheme(digest: Digest): PasswordScheme {
  const name = `pbkdf2-${digest}`
  const patterns = spellings(digest)
  return {
    kind: 'password',
    name,
    displayName: `PBKDF2-HMAC-${digest.toUpperCase().replace('SHA', 'SHA-')}`,
    family: 'pbkdf2',
    aliases: [`pbkdf2_${digest}`, ...(digest === 'sha1' ? ['pbkdf2'] : [])],
    reference: 'RFC 8018 §5.2; passlib.hash.pbkdf2_digest format',
    implementation: 'OpenSSL (node:crypto pbkdf2)',
    reads: [`$${name}$ (passlib, also i=)`, `pbkdf2_${digest}$ (Django)`, `pbkdf2:${digest} (Werkzeug)`],
    writes: `$${digest === 'sha1' ? 'pbkdf2' : name}$rounds$salt$hash (passlib)`,
    options: {
      iterations: { default: OWASP_ITERATIONS[digest], min: 1000, max: 100_000_000, description: 'PBKDF2 iteration count c', cap: (caps) => caps.pbkdf2Iterations },
      keyLength: { default: DIGEST_BYTES[digest], min: 16, max: 1024, description: 'derived key length in bytes' },
      saltLength: { default: 16, min: 8, max: 64, description: 'salt length in bytes' },
    },
    claims: (hash) => patterns.prefix.test(hash) || (digest === 'sha1' && hash.startsWith('$pbkdf2$')),
    parse(hash): ParsedPasswordHash {
      const decoded = decode(patterns, hash)
      if (!decoded) throw problems.malformedHash(name, `expected $${name}$rounds$salt$hash, pbkdf2_${digest}$rounds$salt$hash or pbkdf2:${digest}:rounds$salt$hex`)
      if (decoded.iterations < 1) throw problems.malformedHash(name, 'iterations must be at least 1')
      return { scheme: name, params: { iterations: decoded.iterations }, format: decoded.format }
    },
    checkCaps(params, caps) {
      requireAtMost(name, 'iterations', params.iterations ?? 0, caps.pbkdf2Iterations)
    },
    rehashReason(parsed) {
      const iterations = parsed.params.iterations ?? 0
      if (digest === 'sha1') return 'PBKDF2-HMAC-SHA1 is superseded; OWASP recommends argon2id, or PBKDF2-HMAC-SHA256 with 600,000 iterations'
      return iterations < OWASP_ITERATIONS[digest] ? `${name} with ${iterations} iterations is below the OWASP minimum of ${OWASP_ITERATIONS[digest]}` : null
    },
    hash(input, options) {
      const { iterations = OWASP_ITERATIONS[digest], keyLength = DIGEST_BYTES[digest], saltLength = 16 } = options
      const salt = randomBytes(saltLength)
      const key = pbkdf2Sync(input, salt, iterations, keyLength, digest)
      // passlib spells the SHA-1 variant `$pbkdf2$` (passlib.hash.pbkdf2_sha1.ident).
      return `$${digest === 'sha1' ? 'pbkdf2' : name}$${iterations}$${encodeAb64(salt)}$${encodeAb64(key)}`
    },
    verify(input, hash) {
      const decoded = decode(patterns, hash)
      if (!decoded) return false
      const key = pbkdf2Sync(input, decoded.salt, decoded.iterations, decoded.expected.length, digest)
      return timingSafeEqual(key, decoded.expected)
    },
  }
}

export const pbkdf2Sha1 = pbkdf2Scheme('sha1')
export const pbkdf2Sha256 = pbkdf2Scheme('sha256')
export const pbkdf2Sha512 = pbkdf2Scheme('sha512')
