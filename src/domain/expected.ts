/**
 * The `expected` checksum of /api/filehash: what a user pastes after downloading a file (an ISO's
 * published SHA-256, say), compared against every digest the upload produced.
 *
 * Accepted forms, decided here because the issue leaves them open:
 * - a bare digest: hex in any case, padded or unpadded base64, or base64url;
 * - a GNU coreutils checksum line, `<hex>  <name>` or `<hex> *<name>` (binary mode), as in a
 *   SHA256SUMS file; the name is not compared, because the upload may be named differently;
 * - a BSD tag line (`sha256sum --tag`, `openssl dgst`): `SHA256 (<name>) = <hex>`.
 *
 * Every comparison is on decoded bytes with crypto.timingSafeEqual (via constantTimeEqual, which
 * also hides whether the lengths differ), and every digest is compared against every reading of
 * the text, so neither the time nor the order of work depends on where the bytes differ.
 */
import { constantTimeEqual, decodeDigestText, type OutputEncoding } from './encoding.js'
import { problems } from '../problem.js'

/** Long enough for a checksum line with a long file name; a digest alone is at most ~170 characters. */
export const MAX_EXPECTED_LENGTH = 1024

/** `<hex>  <name>` or `<hex> *<name>` (GNU coreutils, `md5sum --help`: " " text mode, "*" binary mode). */
const GNU_LINE = /^\\?([0-9A-Fa-f]+) [ *].+$/s
/** `SHA256 (<name>) = <hex>` (BSD / `--tag` / `openssl dgst` output). */
const BSD_LINE = /^[A-Za-z0-9_/-]+ ?\(.*\) ?= ?([0-9A-Za-z+/=_-]+)$/s

/** The readings of one pasted checksum: the bytes it may stand for, and the text as given. */
export interface ExpectedDigest {
  readings: Buffer[]
  text: string
}

/**
 * Parses the `expected` field, or throws a 400 problem pointing at it. `pointer` says where the
 * field came from (`/body/expected` for the form field, `/querystring/expected` for the query).
 */
export function parseExpected(value: string, pointer = '/body/expected'): ExpectedDigest {
  const trimmed = value.trim()
  const invalid = () => problems.validation(
    'expected must be a digest in hex (any case), base64 or base64url, or one line of a checksum file such as SHA256SUMS',
    [{ pointer, message: 'not a digest or checksum line' }])
  if (trimmed.length === 0 || trimmed.length > MAX_EXPECTED_LENGTH || trimmed.includes('\n')) throw invalid()
  const digestText = GNU_LINE.exec(trimmed)?.[1] ?? BSD_LINE.exec(trimmed)?.[1] ?? trimmed
  const readings: Buffer[] = []
  const decoded = decodeDigestText(digestText)
  if (decoded) readings.push(decoded)
  // A string of hex digits is also valid base64 (e.g. 64 hex digits); keep that reading too, so a
  // base64 digest that happens to use only [0-9a-f] still matches.
  if (decoded && /^[0-9A-Fa-f]+$/.test(digestText) && digestText.length % 4 === 0) {
    readings.push(Buffer.from(digestText, 'base64'))
  }
  if (readings.length === 0) throw invalid()
  return { readings, text: digestText }
}

/** The bytes behind one computed digest string, or null when the algorithm writes a text form of its own. */
function digestBytes(digest: string, encoding: OutputEncoding): Buffer | null {
  const bytes = Buffer.from(digest, encoding)
  return bytes.toString(encoding) === digest ? bytes : null
}

/**
 * `{algorithm: true|false}` for every computed digest: true when some reading of the expected
 * text equals the digest's bytes. Algorithms with a text form of their own (MySQL's `*HEX`) are
 * compared as text, case-insensitively, also in constant time.
 */
export function matchExpected(expected: ExpectedDigest, hashes: Record<string, string>, encoding: OutputEncoding): Record<string, boolean> {
  const matches: Record<string, boolean> = {}
  for (const [algorithm, digest] of Object.entries(hashes)) {
    const bytes = digestBytes(digest, encoding)
    let match = false
    if (bytes) {
      for (const reading of expected.readings) match = constantTimeEqual(reading, bytes) || match
    } else {
      match = constantTimeEqual(Buffer.from(expected.text.toLowerCase()), Buffer.from(digest.toLowerCase()))
    }
    matches[algorithm] = match
  }
  return matches
}
