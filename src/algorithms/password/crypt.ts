/**
 * The crypt(3) family as Linux's /etc/shadow knows it, computed by libxcrypt (see libxcrypt.ts):
 * SHA-crypt `$5$`/`$6$` (Drepper, "Unix crypt using SHA-256 and SHA-512"), md5-crypt `$1$`
 * (Kamp, FreeBSD), yescrypt `$y$` and gost-yescrypt `$gy$` (Openwall / ALT Linux), and the
 * verify-only legacy formats: traditional DES, BSDi extended DES `_` and FreeBSD's NT `$3$$`.
 *
 * Each hash is parsed here, on the event loop, so its cost is checked against the caps before any
 * work; libxcrypt itself runs only in worker threads. Verification recomputes crypt(phrase, hash)
 * and compares the whole string in constant time.
 */
import type { CostCaps } from '../../config.js'
import { problems } from '../../problem.js'
import { decodeBsdiRounds, decodeYescryptParams } from './crypt-params.js'
import { legacyReason, requireAtMost } from './common.js'
import { cryptHash, cryptVerify, gensalt } from './libxcrypt.js'
import { checkScryptCaps, scryptMemoryBytes } from './scrypt.js'
import type { CostParams, OptionSpec, ParsedPasswordHash, PasswordScheme } from '../types.js'

const B64 = '[./0-9A-Za-z]'
/** Salt characters crypt(3) salts may hold: printable ASCII without `$` and `:` (the shadow separator). */
const SALT_CHAR = '[!-#%-9;-~]'

interface CryptSchemeSpec {
  name: string
  displayName: string
  aliases: string[]
  reference: string
  reads: string[]
  writes: string | null
  options: Record<string, OptionSpec>
  claims(hash: string): boolean
  /** The cost parameters and format name, or a reason the hash is malformed. */
  parse(hash: string): { params: CostParams, format: string } | string
  checkCaps(params: CostParams, caps: CostCaps): void
  rehashReason(params: CostParams): string | null
  /** The libxcrypt setting prefix and count for a new hash; absent for verify-only schemes. */
  setting?(options: CostParams): { prefix: string, count: number }
  /** Text to compare with: NT hashes are hex, which people may paste in upper case. */
  canonical?(hash: string): string
}

function cryptScheme(spec: CryptSchemeSpec): PasswordScheme {
  return {
    kind: 'password',
    name: spec.name,
    displayName: spec.displayName,
    family: 'crypt',
    aliases: spec.aliases,
    reference: spec.reference,
    implementation: 'libxcrypt crypt_rn / crypt_gensalt_rn (via koffi)',
    reads: spec.reads,
    writes: spec.writes,
    options: spec.options,
    claims: spec.claims,
    parse(hash): ParsedPasswordHash {
      const parsed = spec.parse(hash)
      if (typeof parsed === 'string') throw problems.malformedHash(spec.name, parsed)
      return { scheme: spec.name, params: parsed.params, format: parsed.format }
    },
    checkCaps: spec.checkCaps,
    rehashReason: (parsed) => spec.rehashReason(parsed.params),
    hash(input, options) {
      if (!spec.setting) throw problems.wrongOperation(spec.name, 'hash', 'it is a legacy format hashd verifies but does not generate')
      const { prefix, count } = spec.setting(options)
      const setting = gensalt(spec.name, prefix, count)
      const result = cryptHash(spec.name, input, setting)
      if (result === null) throw new Error(`libxcrypt refused its own ${spec.name} setting`)
      return result
    },
    verify(input, hash) {
      return cryptVerify(spec.name, input, spec.canonical ? spec.canonical(hash) : hash)
    },
  }
}

// --- SHA-crypt -------------------------------------------------------------------------------

/** Drepper's spec: rounds default 5000 when absent, clamped to 1000 … 999,999,999. */
const SHA_CRYPT_DEFAULT_ROUNDS = 5000
const SHA_CRYPT_MIN_ROUNDS = 1000
const SHA_CRYPT_MAX_ROUNDS = 999_999_999

function shaCrypt(bits: 256 | 512): PasswordScheme {
  const id = bits === 256 ? '5' : '6'
  const name = `sha${bits}-crypt`
  const checksumChars = bits === 256 ? 43 : 86
  // passlib's defaults for new hashes (sha256_crypt 535000, sha512_crypt 656000): libxcrypt's 5000 is
  // a 2007 figure, and OWASP gives none for SHA-crypt.
  const defaultRounds = bits === 256 ? 535_000 : 656_000
  const pattern = new RegExp(`^\\$${id}\\$(?:rounds=(\\d{1,10})\\$)?(${SALT_CHAR}{0,16})\\$(${B64}{${checksumChars}})$`)
  return cryptScheme({
    name,
    displayName: `SHA-${bits}-crypt`,
    aliases: [`sha${bits}crypt`, `sha${bits}_crypt`, `$${id}$`],
    reference: 'Drepper, "Unix crypt using SHA-256 and SHA-512" (akkadia.org/drepper/SHA-crypt.txt)',
    reads: [`$${id}$`, `$${id}$rounds=N$`],
    writes: `$${id}$rounds=N$`,
    options: {
      rounds: { default: defaultRounds, min: SHA_CRYPT_MIN_ROUNDS, max: SHA_CRYPT_MAX_ROUNDS, description: `rounds (passlib's default ${defaultRounds})`, cap: (caps) => caps.shaCryptRounds },
    },
    claims: (hash) => hash.startsWith(`$${id}$`),
    parse(hash) {
      const match = pattern.exec(hash)
      if (!match) return `expected $${id}$[rounds=N$]salt$ and ${checksumChars} characters of ./0-9A-Za-z`
      const roundsText = match[1]
      if (roundsText !== undefined && roundsText.startsWith('0')) return 'rounds has a leading zero'
      const rounds = roundsText === undefined ? SHA_CRYPT_DEFAULT_ROUNDS : Number(roundsText)
      // crypt(3) writes clamped values, so a hash never holds rounds outside the spec's range.
      if (rounds < SHA_CRYPT_MIN_ROUNDS || rounds > SHA_CRYPT_MAX_ROUNDS) return `rounds must be from ${SHA_CRYPT_MIN_ROUNDS} to ${SHA_CRYPT_MAX_ROUNDS}`
      return { params: { rounds }, format: roundsText === undefined ? `$${id}$` : `$${id}$rounds=` }
    },
    checkCaps(params, caps) {
      requireAtMost(name, 'rounds', params.rounds ?? 0, caps.shaCryptRounds)
    },
    rehashReason({ rounds = 0 }) {
      return rounds < SHA_CRYPT_DEFAULT_ROUNDS ? `${name} with ${rounds} rounds is below the default of ${SHA_CRYPT_DEFAULT_ROUNDS}; rehash with argon2id` : null
    },
    setting: ({ rounds = defaultRounds }) => ({ prefix: `$${id}$`, count: rounds }),
  })
}

export const sha256Crypt = shaCrypt(256)
export const sha512Crypt = shaCrypt(512)

// --- md5-crypt ---------------------------------------------------------------------------------

const MD5_CRYPT = new RegExp(`^\\$1\\$(${SALT_CHAR}{0,8})\\$(${B64}{22})$`)

export const md5Crypt = cryptScheme({
  name: 'md5-crypt',
  displayName: 'MD5-crypt',
  aliases: ['md5crypt', 'md5_crypt', '$1$'],
  reference: 'Poul-Henning Kamp, FreeBSD crypt-md5.c (1994)',
  reads: ['$1$'],
  writes: '$1$',
  options: {},
  claims: (hash) => hash.startsWith('$1$'),
  parse: (hash) => MD5_CRYPT.test(hash) ? { params: {}, format: '$1$' } : 'expected $1$, up to 8 salt characters, $ and 22 characters of ./0-9A-Za-z',
  checkCaps: () => {},
  rehashReason: () => legacyReason('md5-crypt'),
  setting: () => ({ prefix: '$1$', count: 0 }),
})

// --- yescrypt and gost-yescrypt ----------------------------------------------------------------------

/** libxcrypt's default yescrypt cost (crypt_gensalt with count 0): N=4096, r=32, 16 MiB. */
const YESCRYPT_DEFAULT_COST = 5
/** yescrypt's time factor t multiplies the work; libxcrypt never writes one, so only small values are read. */
const YESCRYPT_MAX_T = 8

/** N and r that crypt_gensalt_rn("$y$", cost) chooses (libxcrypt lib/crypt-yescrypt.c). */
export function yescryptCostParams(cost: number): { N: number, r: number } {
  return cost <= 2 ? { N: 2 ** (cost + 9), r: 8 } : { N: 2 ** (cost + 7), r: 32 }
}

function yescryptScheme(variant: 'yescrypt' | 'gost-yescrypt'): PasswordScheme {
  const id = variant === 'yescrypt' ? 'y' : 'gy'
  const pattern = new RegExp(`^\\$${id}\\$(${B64}{3,40})\\$(${B64}{0,86})\\$(${B64}{43})$`)
  const defaultMemory = (() => { const { N, r } = yescryptCostParams(YESCRYPT_DEFAULT_COST); return scryptMemoryBytes(N, r) })()
  return cryptScheme({
    name: variant,
    displayName: variant === 'yescrypt' ? 'yescrypt' : 'GOST yescrypt',
    aliases: variant === 'yescrypt' ? ['$y$'] : ['gostyescrypt', '$gy$'],
    reference: variant === 'yescrypt'
      ? 'Openwall yescrypt (openwall.com/yescrypt); libxcrypt crypt-yescrypt.c'
      : 'yescrypt with GOST R 34.11-2012 HMAC (libxcrypt crypt-gost-yescrypt.c)',
    reads: [`$${id}$`],
    writes: `$${id}$`,
    options: {
      cost: { default: YESCRYPT_DEFAULT_COST, min: 1, max: 11, description: 'libxcrypt cost: 1–2 use r=8, N=2^(cost+9); 3–11 use r=32, N=2^(cost+7) (5 is 16 MiB); capped by the scrypt memory cap' },
    },
    claims: (hash) => hash.startsWith(`$${id}$`),
    parse(hash) {
      const match = pattern.exec(hash)
      if (!match) return `expected $${id}$params$salt$ and 43 characters of ./0-9A-Za-z`
      const params = decodeYescryptParams(match[1] as string)
      if (!params) return 'the parameter field is not valid yescrypt encoding'
      if (params.rom) return 'hashes that need a yescrypt ROM cannot be computed by crypt(3)'
      return { params: { N: params.N, r: params.r, p: params.p, t: params.t }, format: `$${id}$` }
    },
    checkCaps(params, caps) {
      const resolved = params.cost !== undefined ? { ...yescryptCostParams(params.cost), p: 1, t: 0 } : params
      checkScryptCaps(variant, resolved, caps)
      requireAtMost(variant, 't', resolved.t ?? 0, YESCRYPT_MAX_T)
    },
    rehashReason({ N = 0, r = 0 }) {
      return scryptMemoryBytes(N, r) < defaultMemory ? `${variant} N=${N}, r=${r} is below libxcrypt's default cost (N=4096, r=32)` : null
    },
    setting: ({ cost = YESCRYPT_DEFAULT_COST }) => ({ prefix: `$${id}$`, count: cost }),
  })
}

export const yescrypt = yescryptScheme('yescrypt')
export const gostYescrypt = yescryptScheme('gost-yescrypt')

// --- Verify-only legacy formats ---------------------------------------------------------------------

const DES_CRYPT = new RegExp(`^${B64}{13}$`)

export const desCrypt = cryptScheme({
  name: 'des-crypt',
  displayName: 'DES crypt (traditional)',
  aliases: ['descrypt', 'des_crypt', 'traditional-des'],
  reference: 'Seventh Edition Unix crypt(3); libxcrypt crypt-des.c',
  reads: ['13 characters: 2 of salt, 11 of hash'],
  writes: null,
  options: {},
  claims: (hash) => DES_CRYPT.test(hash),
  parse: (hash) => DES_CRYPT.test(hash) ? { params: {}, format: 'DES (traditional)' } : 'expected 13 characters of ./0-9A-Za-z',
  checkCaps: () => {},
  rehashReason: () => legacyReason('des-crypt (which uses only the first 8 characters)'),
})

const BSDI_CRYPT = new RegExp(`^_(${B64}{4})${B64}{4}${B64}{11}$`)

export const bsdiCrypt = cryptScheme({
  name: 'bsdi-crypt',
  displayName: 'BSDi extended DES crypt',
  aliases: ['bsdicrypt', 'bsdi_crypt', 'extended-des'],
  reference: 'BSD/OS extended DES crypt; FreeBSD crypt-des.c; libxcrypt crypt-des.c',
  reads: ['_ + 4 characters of rounds, 4 of salt, 11 of hash'],
  writes: null,
  options: {},
  claims: (hash) => BSDI_CRYPT.test(hash),
  parse(hash) {
    const match = BSDI_CRYPT.exec(hash)
    const rounds = match ? decodeBsdiRounds(match[1] as string) : null
    if (rounds === null) return 'expected _ and 19 characters of ./0-9A-Za-z'
    if (rounds < 1) return 'rounds must be at least 1'
    return { params: { rounds }, format: '_ (BSDi)' }
  },
  checkCaps(params, caps) {
    requireAtMost('bsdi-crypt', 'rounds', params.rounds ?? 0, caps.shaCryptRounds)
  },
  rehashReason: () => legacyReason('bsdi-crypt'),
})

const NT_CRYPT = /^\$3\$\$([0-9a-fA-F]{32})$/

export const ntCrypt = cryptScheme({
  name: 'nt-crypt',
  displayName: 'FreeBSD NT-hash crypt',
  aliases: ['ntcrypt', 'bsd-nthash', '$3$'],
  reference: 'FreeBSD crypt-nthash.c: $3$$ + hex MD4 of the UTF-16LE password',
  reads: ['$3$$'],
  writes: null,
  options: {},
  claims: (hash) => hash.startsWith('$3$'),
  parse: (hash) => NT_CRYPT.test(hash) ? { params: {}, format: '$3$$ (FreeBSD NT)' } : 'expected $3$$ and 32 hex digits',
  checkCaps: () => {},
  rehashReason: () => legacyReason('nt-crypt (unsalted MD4)'),
  canonical: (hash) => hash.toLowerCase(),
})
