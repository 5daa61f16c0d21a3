/**
 * Rows generated from the algorithm registry: every digest, XOF (at its default length) and
 * checksum hashd computes, in the text forms people paste besides hex:
 *
 * - base64 (RFC 4648 §4) and base64url (§5), each padded or not: `Content-MD5`, `/api/hash`
 *   with `encoding: base64`, JOSE-style unpadded base64url;
 * - colon-separated hex pairs, either case: X.509 fingerprints (`openssl x509 -fingerprint`),
 *   legacy OpenSSH MD5 fingerprints.
 *
 * One row per algorithm and form, named by the registry name, so /api/verify reads it. Each
 * form's prior is the algorithm's own hex prior (how common the digest is, from the hex rows of
 * formats.ts) times the share of that form: so at any output length md5, sha1, sha256 and sha512
 * come first, in the same order as their hex forms. Adding a digest to the registry adds its rows.
 */
import { digestAlgorithms } from '../algorithms/digests.js'
import type { FormatParser, FormatSpec } from './types.js'

/**
 * How often a digest is met in base64 rather than hex: far less (tools print hex), but not rare
 * (HTTP `Content-MD5`/`Digest`, SRI bodies, S3 `x-amz-checksum-*`, LDAP payloads).
 */
const BASE64_SHARE = 0.04
/** Colon-separated hex pairs: certificate and key fingerprints, rarely anything else. */
const COLON_HEX_SHARE = 0.02
/** A digest hashd computes but the hex rows do not rank (gost94-cryptopro, tiger2, ed2k…). */
const UNRANKED_HEX_PRIOR = 1

const ALL_HEX = /^[0-9a-fA-F]+$/
const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/**
 * Only the canonical base64 of some bytes is accepted: the unused low bits of the last character
 * are zero in every encoder's output (RFC 4648 §3.5), so a random string of the right length
 * passes one time in 4 (two bytes left over) or 16 (one byte). That is the clue that tells a
 * base64 digest from a crypt-alphabet string of the same length.
 */
export function canonicalBase64(bytes: number): FormatParser {
  const leftover = bytes % 3
  const mask = leftover === 1 ? 0b1111 : leftover === 2 ? 0b11 : 0
  const dataLength = Math.ceil(bytes * 4 / 3)
  return (hash) => {
    // Hex digits only, of even length: /api/verify reads such a string as hex (decodeDigestText),
    // and so does identify.
    if (hash.length % 2 === 0 && ALL_HEX.test(hash)) return null
    const url = /[-_]/.test(hash)
    if (mask !== 0) {
      const last = hash[dataLength - 1] ?? ''
      const value = (url ? URL_SAFE : STANDARD).indexOf(last)
      if (value < 0 || (value & mask) !== 0) return null
    }
    const padded = hash.length > dataLength
    return { encoding: `${url ? 'base64url' : 'base64'}${padded || mask === 0 ? '' : ', unpadded'}` }
  }
}

/** The regex source of `bytes` bytes in base64 or base64url, padding optional. */
export function base64Pattern(bytes: number): string {
  const dataLength = Math.ceil(bytes * 4 / 3)
  const padding = (4 - (dataLength % 4)) % 4
  const pad = padding === 0 ? '' : `(?:={${padding}})?`
  return `[A-Za-z0-9+/]{${dataLength}}${pad}|[A-Za-z0-9_-]{${dataLength}}${pad}`
}

/** `AB:CD:…`, `bytes` pairs of hex digits in either case. */
export function colonHexPattern(bytes: number): string {
  return `[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){${bytes - 1}}`
}

/** The prior of the algorithm's bare hex row: the table's own word on how common the digest is. */
function hexPrior(table: readonly FormatSpec[], name: string, bytes: number): number {
  const hexRow = new RegExp(`^\\[0-9a-f(?:A-F)?\\]\\{${bytes * 2}\\}$`)
  return table.find((row) => row.name === name && hexRow.test(row.pattern))?.prior ?? UNRANKED_HEX_PRIOR
}

/** The base64 and colon-hex rows of every registry digest, ranked by the hex rows in `table`. */
export function encodedDigestRows(table: readonly FormatSpec[]): FormatSpec[] {
  const rows: FormatSpec[] = []
  for (const digest of digestAlgorithms) {
    // A digest with a text form of its own (mysql41's `*HEX`) has no bare base64 reading.
    if (digest.format !== undefined) continue
    const bytes = digest.outputBytes
    const prior = hexPrior(table, digest.name, bytes)
    const category = digest.kind === 'checksum' ? 'Checksum' : 'Encoded digest'
    rows.push({
      name: digest.name,
      displayName: `${digest.displayName} (base64)`,
      category,
      hashcat: null,
      john: null,
      pattern: base64Pattern(bytes),
      prior: prior * BASE64_SHARE,
      description: `${digest.displayName} digest (${bytes} bytes) in base64 or base64url, padded or not (RFC 4648 §4, §5)`,
      parse: canonicalBase64(bytes),
      format: 'base64',
    })
    if (digest.kind === 'checksum') continue
    rows.push({
      name: digest.name,
      displayName: `${digest.displayName} (colon-separated hex)`,
      category: 'Encoded digest',
      hashcat: null,
      john: null,
      pattern: colonHexPattern(bytes),
      prior: prior * COLON_HEX_SHARE,
      signature: true,
      description: `${digest.displayName} digest as colon-separated hex pairs, as certificate and key fingerprints print it (openssl x509 -fingerprint, ssh-keygen -E md5)`,
      format: 'colon-hex',
    })
  }
  return rows
}
