/**
 * The pepper: a secret key, held by the server and never stored with the hashes (OWASP Password
 * Storage Cheat Sheet, "Peppering"), applied as a wrapper around every password scheme's finished
 * hash, not as a branch inside each scheme.
 *
 * Construction: the finished hash string is encrypted with AES-256-GCM (NIST SP 800-38D) under a key
 * derived from the pepper secret with HKDF-SHA-256 (RFC 5869). The alternative, an HMAC-SHA-256
 * pre-hash of the password with the pepper, was weighed and not chosen:
 * - Rotation without passwords: an encrypted hash can be decrypted with the old key and encrypted
 *   with the new one by the server alone; a pre-hashed one can move to a new key only when its user
 *   next logs in, so an old pepper would have to be kept until every user had.
 * - Every scheme: the scheme hashes the password exactly as it would unpeppered, so all of them,
 *   including the crypt(3) ones that take C strings, behave as documented. A pre-hash changes what
 *   the scheme sees (32 binary bytes that may hold NUL, or their base64), which is a new scheme per
 *   inner algorithm that no other tool can verify even with the key.
 * - bcrypt's 72 bytes and NUL bytes: a pre-hash would lift bcrypt's 72-byte limit, but hashd already
 *   has bcrypt-sha256 for that, and the same limit applies peppered or not, so nothing is hidden.
 * - With the key, the inner hash is a standard string that passlib, argon2-cffi or libxcrypt verify;
 *   without it, an attacker holding the database has ciphertext, not hashes to crack.
 *
 * The stored string, version 1:
 *
 *     $pepper$v=1,k=<key id>,s=<inner scheme>$<nonce>$<ciphertext and tag>
 *
 * `<key id>` is the id from PEPPER_KEYS_FILE, `<inner scheme>` hashd's registry name of the scheme
 * of the encrypted hash, `<nonce>` the 12 random bytes of the GCM IV and the last field the
 * ciphertext followed by the 16-byte tag, both unpadded standard base64 (as in PHC strings). With
 * random 96-bit nonces one key may seal up to 2^32 hashes (SP 800-38D §8.3); rotations come first. The
 * header `$pepper$v=1,k=…,s=…$` is the GCM additional authenticated data, so a changed key id or
 * scheme name fails authentication. No scheme's verifier claims the `$pepper$` prefix, and the hash
 * inside is not visible without the key, so no plain verifier can ever accept it for the password.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { problems } from '../../problem.js'
import { decodeB64Unpadded, encodeB64Unpadded } from './common.js'

export const PEPPER_PREFIX = '$pepper$'
export const PEPPER_VERSION = 1
/** Key ids appear in hashes, logs and responses: a plain, bounded alphabet without `$`, `,` or `=`. */
export const PEPPER_KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** OWASP: the pepper should be at least 32 bytes of CSPRNG output. */
export const PEPPER_MIN_SECRET_BYTES = 32
const NONCE_BYTES = 12
const TAG_BYTES = 16
const HKDF_INFO = 'hashd pepper v1 AES-256-GCM'
const PEPPERED = /^\$pepper\$v=(\d{1,3}),k=([A-Za-z0-9][A-Za-z0-9._-]{0,63}),s=([a-z0-9-]{1,32})\$([A-Za-z0-9+/]{16})\$([A-Za-z0-9+/]{22,8192})$/

/**
 * One pepper key version, wherever its secret is: in memory (SecretPepperKey, below) or in a
 * PKCS#11 token (keys/pkcs11/pepper.ts: the same format, AES-256-GCM done by the token). Both
 * write and read the string above, so a hash moves from one to the other with a rewrap.
 */
export interface PepperKey {
  readonly id: string
  /** Encrypts a finished hash string of `scheme` under this key. */
  seal(scheme: string, inner: string): string | Promise<string>
  /** The inner hash string, or null when the tag does not verify (another key, or a changed string). */
  open(peppered: PepperedHash): string | null | Promise<string | null>
}

export const PEPPER_NONCE_BYTES = 12
export const PEPPER_TAG_BYTES = 16

/** `$pepper$v=1,k=<id>,s=<scheme>$`: the authenticated data of a seal. */
export function pepperHeader(id: string, scheme: string): string {
  return `${PEPPER_PREFIX}v=${PEPPER_VERSION},k=${id},s=${scheme}$`
}

/** The stored string: the header, the nonce and the ciphertext with its tag. */
export function formatPeppered(header: string, nonce: Uint8Array, sealed: Uint8Array): string {
  return `${header}${encodeB64Unpadded(Buffer.from(nonce))}$${encodeB64Unpadded(Buffer.from(sealed))}`
}

/**
 * A pepper key held in memory. The derived AES key lives in a private field and the object prints
 * as its id only, so neither a log line nor JSON.stringify can carry the secret.
 */
export class SecretPepperKey implements PepperKey {
  readonly id: string
  readonly #aesKey: Buffer

  constructor(id: string, secret: Uint8Array) {
    this.id = id
    this.#aesKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), HKDF_INFO, 32))
  }

  /** Encrypts a finished hash string of `scheme` (the scheme's own format) under this key. */
  seal(scheme: string, inner: string): string {
    const header = pepperHeader(this.id, scheme)
    const nonce = randomBytes(NONCE_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#aesKey, nonce, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(header))
    const sealed = Buffer.concat([cipher.update(inner, 'utf8'), cipher.final(), cipher.getAuthTag()])
    return formatPeppered(header, nonce, sealed)
  }

  /** The inner hash string, or null when the tag does not verify (another key, or a changed string). */
  open(peppered: PepperedHash): string | null {
    if (peppered.keyId !== this.id) return null
    const decipher = createDecipheriv('aes-256-gcm', this.#aesKey, peppered.nonce, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(peppered.header))
    decipher.setAuthTag(peppered.sealed.subarray(peppered.sealed.length - TAG_BYTES))
    try {
      const inner = Buffer.concat([decipher.update(peppered.sealed.subarray(0, peppered.sealed.length - TAG_BYTES)), decipher.final()])
      return inner.toString('utf8')
    } catch {
      return null
    }
  }

  toJSON(): string { return this.id }
  toString(): string { return this.id }
  [Symbol.for('nodejs.util.inspect.custom')](): string { return `PepperKey(${this.id})` }
}

export interface PepperedHash {
  keyId: string
  /** The registry name of the inner hash's scheme, as the header names it. */
  scheme: string
  /** `$pepper$v=1,k=…,s=…$`: the authenticated data. */
  header: string
  nonce: Buffer
  /** Ciphertext followed by the GCM tag. */
  sealed: Buffer
}

export function isPeppered(hash: string): boolean {
  return hash.startsWith(PEPPER_PREFIX)
}

/** Reads a `$pepper$` string's fields (no key needed); a damaged one is 422 malformed-hash. */
export function parsePeppered(hash: string): PepperedHash {
  const match = PEPPERED.exec(hash)
  if (!match) throw problems.malformedHash('peppered', 'expected $pepper$v=1,k=<key id>,s=<scheme>$<nonce>$<ciphertext>')
  const [, version, keyId, scheme, nonceText, sealedText] = match as unknown as [string, string, string, string, string, string]
  if (Number(version) !== PEPPER_VERSION) throw problems.malformedHash('peppered', `unknown version v=${version.slice(0, 3)}; hashd writes v=1`)
  const nonce = decodeB64Unpadded(nonceText)
  const sealed = decodeB64Unpadded(sealedText)
  if (!nonce || nonce.length !== NONCE_BYTES || !sealed || sealed.length <= TAG_BYTES) {
    throw problems.malformedHash('peppered', 'the nonce must be 12 bytes and the ciphertext longer than its 16-byte tag, in base64')
  }
  return { keyId, scheme, header: `${PEPPER_PREFIX}v=${version},k=${keyId},s=${scheme}$`, nonce, sealed }
}
