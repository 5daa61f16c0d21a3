/**
 * scrypt (RFC 7914) in passlib's format: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<hash>`, salt and
 * hash in unpadded standard base64. passlib verifies what hashd writes and hashd what passlib writes.
 * Also read: libxcrypt's `$7$` encoding of the same function (Colin Percival's format:
 * `$7$` + log2 N + r + p in crypt base-64 + the salt text + `$` + 43 characters), verified by
 * libxcrypt itself.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto'
import { problems } from '../../problem.js'
import type { CostCaps } from '../../config.js'
import { decodeScrypt7Params } from './crypt-params.js'
import { cryptVerify } from './libxcrypt.js'
import { decodeB64Unpadded, encodeB64Unpadded, parseParamList, requireAtMost } from './common.js'
import type { CostParams, PasswordScheme } from '../types.js'

/** OWASP Password Storage Cheat Sheet: N=2^17, r=8, p=1 (128 MiB). */
const OWASP = { N: 2 ** 17, r: 8, p: 1 }
/** `$7$`: 11 characters of parameters, a salt of printable ASCII without `$`, 43 of hash. */
const SCRYPT7 = /^\$7\$([./0-9A-Za-z]{11})([!-#%-~]{0,64})\$([./0-9A-Za-z]{43})$/
const FORMAT = /^\$scrypt\$([a-z=0-9,]{1,40})\$([A-Za-z0-9+/]{0,88})\$([A-Za-z0-9+/]{11,1366})$/

/** RFC 7914 §6: the memory scrypt needs is about 128·N·r bytes. */
export function scryptMemoryBytes(N: number, r: number): number {
  return 128 * N * r
}

/** Shared by every scrypt encoding (passlib, `$7$`, yescrypt): the memory and p caps. */
export function checkScryptCaps(scheme: string, params: CostParams, caps: CostCaps): void {
  const { N = 0, r = 0, p = 0 } = params
  requireAtMost(scheme, 'memory (128·N·r bytes)', scryptMemoryBytes(N, r), caps.scryptMemoryBytes)
  requireAtMost(scheme, 'p', p, caps.scryptParallelism)
}

/**
 * RFC 7914 §2: N must be less than 2^(128·r/8); OpenSSL refuses more, which would otherwise be a 500.
 * Exponents compare exactly, where 2^(16·r) itself overflows a double from r = 64 on.
 */
function belowLimit(N: number, r: number): boolean {
  return Math.log2(N) < 16 * r
}

function derive(input: Uint8Array, salt: Uint8Array, N: number, r: number, p: number, keyLength: number): Buffer {
  // Node refuses work above maxmem; the caps were checked before, so allow what they allow.
  return scryptSync(input, salt, keyLength, { N, r, p, maxmem: scryptMemoryBytes(N, r) * 2 + 64 * 1024 * 1024 })
}

export const scrypt: PasswordScheme = {
  kind: 'password',
  name: 'scrypt',
  displayName: 'scrypt',
  family: 'scrypt',
  aliases: [],
  reference: 'RFC 7914; passlib.hash.scrypt format',
  implementation: 'OpenSSL (node:crypto scrypt)',
  reads: ['$scrypt$ (passlib)', '$7$ (libxcrypt)'],
  writes: '$scrypt$ln=…,r=…,p=…$salt$hash (passlib)',
  options: {
    N: { default: OWASP.N, min: 2, max: 2 ** 30, description: 'CPU/memory cost, a power of two' },
    r: { default: OWASP.r, min: 1, max: 1024, description: 'block size' },
    p: { default: OWASP.p, min: 1, max: 1024, description: 'parallelization', cap: (caps) => caps.scryptParallelism },
    keyLength: { default: 32, min: 16, max: 1024, description: 'derived key length in bytes' },
    saltLength: { default: 16, min: 8, max: 64, description: 'salt length in bytes' },
  },
  claims: (hash) => hash.startsWith('$scrypt$') || hash.startsWith('$7$'),
  parse(hash) {
    if (hash.startsWith('$7$')) {
      const match7 = SCRYPT7.exec(hash)
      const params7 = match7 ? decodeScrypt7Params(match7[1] as string) : null
      if (!params7) throw problems.malformedHash('scrypt', 'expected $7$, 11 characters of N, r and p, the salt, $ and 43 characters of ./0-9A-Za-z')
      if (!belowLimit(params7.N, params7.r)) throw problems.malformedHash('scrypt', `N=${params7.N} is not below 2^(16·r) for r=${params7.r} (RFC 7914 §2)`)
      return { scheme: 'scrypt', params: params7, format: '$7$ (libxcrypt)' }
    }
    const match = FORMAT.exec(hash)
    if (!match) throw problems.malformedHash('scrypt', 'expected $scrypt$ln=…,r=…,p=…$salt$hash')
    const params = parseParamList('scrypt', match[1] as string, ['ln', 'r', 'p'])
    const { ln, r, p } = params
    if (ln === undefined || r === undefined || p === undefined) throw problems.malformedHash('scrypt', 'ln, r and p are all required')
    if (ln < 1 || ln > 63 || r < 1 || p < 1) throw problems.malformedHash('scrypt', 'parameters out of range')
    if (!belowLimit(2 ** ln, r)) throw problems.malformedHash('scrypt', `N=2^${ln} is not below 2^(16·r) for r=${r} (RFC 7914 §2)`)
    if (!decodeB64Unpadded(match[2] as string) || !decodeB64Unpadded(match[3] as string)) throw problems.malformedHash('scrypt', 'salt or hash is not base64')
    return { scheme: 'scrypt', params: { N: 2 ** ln, r, p }, format: '$scrypt$ (passlib)' }
  },
  checkCaps(params, caps) {
    const N = params.N ?? 0
    if (!Number.isInteger(Math.log2(N))) throw problems.invalidOption('N', 'scrypt N must be a power of two')
    const r = params.r ?? OWASP.r
    if (!belowLimit(N, r)) throw problems.invalidOption('N', `scrypt N must be below 2^(16·r) (RFC 7914 §2): below 2^${16 * r} for r=${r}`)
    checkScryptCaps('scrypt', params, caps)
  },
  rehashReason(parsed) {
    const { N = 0, r = 0, p = 0 } = parsed.params
    return N * r < OWASP.N * OWASP.r ? `scrypt N=${N}, r=${r}, p=${p} is below the OWASP minimum (N=2^17, r=8, p=1)` : null
  },
  hash(input, options) {
    const { N = OWASP.N, r = OWASP.r, p = OWASP.p, keyLength = 32, saltLength = 16 } = options
    const salt = randomBytes(saltLength)
    const key = derive(input, salt, N, r, p, keyLength)
    return `$scrypt$ln=${Math.log2(N)},r=${r},p=${p}$${encodeB64Unpadded(salt)}$${encodeB64Unpadded(key)}`
  },
  verify(input, hash) {
    if (hash.startsWith('$7$')) return cryptVerify('scrypt $7$', input, hash)
    const [, , paramText, salt, expected] = hash.split('$') as [string, string, string, string, string]
    const params = parseParamList('scrypt', paramText, ['ln', 'r', 'p'])
    const expectedKey = decodeB64Unpadded(expected) as Buffer
    // passlib stores the salt as bytes of its base64 decoding.
    const key = derive(input, decodeB64Unpadded(salt) as Buffer, 2 ** (params.ln ?? 1), params.r ?? 1, params.p ?? 1, expectedKey.length)
    return timingSafeEqual(key, expectedKey)
  },
}
