/**
 * LDAP userPassword schemes (RFC 2307 §5.3; OpenLDAP slappasswd and contrib/slapd-modules/passwd/sha2):
 * `{MD5}`/`{SHA}` = base64(H(password)), and the salted `{SMD5}`, `{SSHA}`, `{SSHA256}`, `{SSHA512}` =
 * base64(H(password ‖ salt) ‖ salt). Scheme names are case-insensitive, as OpenLDAP compares them.
 * `{CRYPT}` wraps any crypt(3) hash; it is delegated to the scheme that reads that hash.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { problems } from '../../problem.js'
import { bcrypt } from './bcrypt.js'
import { bsdiCrypt, desCrypt, gostYescrypt, md5Crypt, ntCrypt, sha256Crypt, sha512Crypt, yescrypt } from './crypt.js'
import { legacyReason } from './common.js'
import { scrypt } from './scrypt.js'
import type { ParsedPasswordHash, PasswordScheme } from '../types.js'

type Digest = 'md5' | 'sha1' | 'sha256' | 'sha512'
const DIGEST_BYTES: Record<Digest, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 }
/** Canonical padded standard base64 (RFC 4648 §4), as LDAP servers write it. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
/**
 * Salt bounds: OpenLDAP's checkers (passwd.c chk_ssha1 and friends) accept any salt of at least one
 * byte, and hashcat's examples use two, so that is what is read (up to 64 bytes); new hashes get at
 * least passlib's minimum of 4 (OpenLDAP writes 4).
 */
const MIN_SALT_READ = 1
const MAX_SALT = 64
const MIN_SALT_WRITTEN = 4

interface LdapSpec {
  name: string
  tag: string
  digest: Digest
  salted: boolean
}

function ldapScheme({ name, tag, digest, salted }: LdapSpec): PasswordScheme {
  const prefix = `{${tag}}`
  const bytes = DIGEST_BYTES[digest]
  const decode = (hash: string): { digest: Buffer, salt: Buffer } | null => {
    if (hash.slice(0, prefix.length).toUpperCase() !== prefix) return null
    const text = hash.slice(prefix.length)
    if (!BASE64.test(text)) return null
    const raw = Buffer.from(text, 'base64')
    if (salted ? raw.length < bytes + MIN_SALT_READ || raw.length > bytes + MAX_SALT : raw.length !== bytes) return null
    return { digest: raw.subarray(0, bytes), salt: raw.subarray(bytes) }
  }
  const compute = (input: Uint8Array, salt: Uint8Array): Buffer => createHash(digest).update(input).update(salt).digest()
  return {
    kind: 'password',
    name,
    displayName: `LDAP ${prefix}`,
    family: 'ldap',
    aliases: [`ldap-${tag.toLowerCase()}`, prefix],
    reference: salted ? 'RFC 2307 §5.3; OpenLDAP slappasswd (salted digests)' : 'RFC 2307 §5.3; OpenLDAP slappasswd',
    implementation: 'OpenSSL (node:crypto)',
    reads: [prefix],
    writes: prefix,
    options: salted ? { saltLength: { default: 8, min: MIN_SALT_WRITTEN, max: 16, description: 'salt length in bytes (passlib reads 4–16)' } } : {},
    claims: (hash) => hash.slice(0, prefix.length).toUpperCase() === prefix,
    parse(hash): ParsedPasswordHash {
      if (!decode(hash)) {
        throw problems.malformedHash(name, salted
          ? `expected ${prefix} and padded base64 of a ${bytes}-byte digest followed by ${MIN_SALT_READ}–${MAX_SALT} bytes of salt`
          : `expected ${prefix} and padded base64 of a ${bytes}-byte digest`)
      }
      return { scheme: name, params: {}, format: prefix }
    },
    checkCaps: () => {},
    rehashReason: () => salted ? legacyReason(`${prefix} (one salted ${digest.toUpperCase()})`) : legacyReason(`${prefix} (unsalted ${digest.toUpperCase()})`),
    hash(input, options) {
      const salt = salted ? randomBytes(options.saltLength ?? 8) : Buffer.alloc(0)
      return prefix + Buffer.concat([compute(input, salt), salt]).toString('base64')
    },
    verify(input, hash) {
      const decoded = decode(hash) as { digest: Buffer, salt: Buffer }
      return timingSafeEqual(compute(input, decoded.salt), decoded.digest)
    },
  }
}

export const ldapMd5 = ldapScheme({ name: 'ldap-md5', tag: 'MD5', digest: 'md5', salted: false })
export const ldapSmd5 = ldapScheme({ name: 'ldap-smd5', tag: 'SMD5', digest: 'md5', salted: true })
export const ldapSha = ldapScheme({ name: 'ldap-sha', tag: 'SHA', digest: 'sha1', salted: false })
export const ldapSsha = ldapScheme({ name: 'ldap-ssha', tag: 'SSHA', digest: 'sha1', salted: true })
export const ldapSsha256 = ldapScheme({ name: 'ldap-ssha256', tag: 'SSHA256', digest: 'sha256', salted: true })
export const ldapSsha512 = ldapScheme({ name: 'ldap-ssha512', tag: 'SSHA512', digest: 'sha512', salted: true })

// --- {CRYPT} ----------------------------------------------------------------------------------

const CRYPT_PREFIX = '{CRYPT}'
/**
 * The crypt(3) formats `{CRYPT}` may wrap, in detection order. A parsed hash records which one in
 * `params.inner` (an index here), because cap checks see only the parameters.
 */
const CRYPT_SCHEMES: readonly PasswordScheme[] = [bcrypt, yescrypt, gostYescrypt, sha512Crypt, sha256Crypt, md5Crypt, scrypt, ntCrypt, bsdiCrypt, desCrypt]

function unwrap(hash: string): { inner: string, scheme: PasswordScheme, index: number } | null {
  if (hash.slice(0, CRYPT_PREFIX.length).toUpperCase() !== CRYPT_PREFIX) return null
  const inner = hash.slice(CRYPT_PREFIX.length)
  // passlib's $scrypt$ is not a crypt(3) format; scrypt is wrapped only as libxcrypt's $7$.
  const index = CRYPT_SCHEMES.findIndex((scheme) => scheme.claims(inner) && (scheme !== scrypt || inner.startsWith('$7$')))
  return index < 0 ? null : { inner, scheme: CRYPT_SCHEMES[index] as PasswordScheme, index }
}

function innerOf(params: Record<string, number>): PasswordScheme {
  const scheme = CRYPT_SCHEMES[params.inner ?? -1]
  if (!scheme) throw new Error('ldap-crypt parameters lost their inner scheme')
  return scheme
}

function innerParams(params: Record<string, number>): Record<string, number> {
  const { inner: _inner, ...rest } = params
  return rest
}

export const ldapCrypt: PasswordScheme = {
  kind: 'password',
  name: 'ldap-crypt',
  displayName: 'LDAP {CRYPT}',
  family: 'ldap',
  aliases: ['{CRYPT}'],
  reference: 'RFC 2307 §5.3; OpenLDAP {CRYPT} (the system crypt(3))',
  implementation: 'the scheme of the wrapped crypt(3) hash',
  reads: ['{CRYPT} + any crypt(3) hash hashd reads'],
  writes: null,
  options: {},
  claims: (hash) => hash.slice(0, CRYPT_PREFIX.length).toUpperCase() === CRYPT_PREFIX,
  parse(hash) {
    const unwrapped = unwrap(hash)
    if (!unwrapped) throw problems.malformedHash('ldap-crypt', 'expected {CRYPT} followed by a crypt(3) hash ($y$, $6$, $5$, $2b$, $1$, DES, …)')
    const parsed = unwrapped.scheme.parse(unwrapped.inner)
    return { scheme: 'ldap-crypt', params: { ...parsed.params, inner: unwrapped.index }, format: `{CRYPT}${parsed.format}` }
  },
  checkCaps(params, caps) {
    innerOf(params).checkCaps(innerParams(params), caps)
  },
  rehashReason(parsed) {
    const scheme = innerOf(parsed.params)
    return scheme.rehashReason({ scheme: scheme.name, params: innerParams(parsed.params), format: parsed.format.slice(CRYPT_PREFIX.length) })
  },
  verifyWarnings(input, parsed) {
    const scheme = innerOf(parsed.params)
    return scheme.verifyWarnings?.(input, { scheme: scheme.name, params: innerParams(parsed.params), format: parsed.format }) ?? []
  },
  hash() {
    throw problems.wrongOperation('ldap-crypt', 'hash', 'name the crypt(3) scheme to generate instead (yescrypt, sha512-crypt, …)')
  },
  verify(input, hash) {
    const unwrapped = unwrap(hash)
    return unwrapped ? unwrapped.scheme.verify(input, unwrapped.inner) : false
  },
}
