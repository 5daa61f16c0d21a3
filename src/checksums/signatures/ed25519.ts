/**
 * What minisign and signify share: the `untrusted comment:` text files around base64 blobs, their
 * public key (`Ed` ‖ 8-byte key number ‖ 32-byte Ed25519 key), and Ed25519 itself (RFC 8032),
 * verified with node:crypto.
 */
import { createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto'
import { signatureProblems } from './types.js'

/** "Ed": the algorithm id both tools write in keys and signatures (minisign.c, signify.c PKALG). */
export const ED = Buffer.from('Ed')

export interface Ed25519PublicKey {
  keyNumber: Buffer
  key: KeyObject
}

/** The text of a signature or key file: lines without their ends (LF or CRLF), BOM dropped. */
export function textLines(bytes: Uint8Array): string[] {
  return Buffer.from(bytes).toString('utf8').replace(/^\uFEFF/, '').split('\n').map((line) => line.replace(/\r$/, ''))
}

/** Strict base64: what both tools write (a clean decode that re-encodes to the same text). */
export function strictBase64(text: string): Buffer | null {
  const trimmed = text.trim()
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || trimmed.length % 4 !== 0) return null
  const bytes = Buffer.from(trimmed, 'base64')
  return bytes.toString('base64') === trimmed ? bytes : null
}

/**
 * A public key as minisign or signify writes it: a key file (`untrusted comment: …` then the
 * base64 line) or the base64 line alone (minisign's `-P RW…`).
 */
export function readEd25519PublicKey(bytes: Uint8Array): Ed25519PublicKey {
  const lines = textLines(bytes).map((line) => line.trim()).filter((line) => line !== '')
  const blob = lines[0]?.startsWith('untrusted comment:') ? lines[1] : lines[0]
  const decoded = blob === undefined ? null : strictBase64(blob)
  if (!decoded || decoded.length !== 42 || !decoded.subarray(0, 2).equals(ED)) {
    throw signatureProblems.malformed('publicKey', 'The public key is not a minisign or signify Ed25519 key (an RW… line, or its key file)')
  }
  const keyNumber = Buffer.from(decoded.subarray(2, 10))
  const raw = decoded.subarray(10, 42)
  try {
    return { keyNumber, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' }) }
  } catch {
    throw signatureProblems.malformed('publicKey', 'The public key is not a valid Ed25519 key')
  }
}

/** RFC 8032 §5.1.7 verification; a signature OpenSSL cannot even parse is a failed one, not an error. */
export function ed25519Verify(message: Uint8Array, signature: Uint8Array, key: KeyObject): boolean {
  try {
    return cryptoVerify(null, message, key, signature)
  } catch {
    return false
  }
}
