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

/**
 * `<digest>  <name>` or `<digest> *<name>` (GNU coreutils, `md5sum --help`: " " text mode, "*"
 * binary mode); the digest is hex, or base64 as `cksum --base64` and `rhash --base64` write it. A
 * leading `\` says the name is escaped (coreutils' `\\`, `\n`, `\r`).
 */
const GNU_LINE = /^(\\?)([0-9A-Za-z+/=_-]+) ([ *])(.*)$/s
/**
 * `SHA256 (<name>) = <digest>`: BSD / `--tag` output (coreutils, b2sum, xxhsum), RHash's `--bsd`
 * (which pads the tag with spaces to align the columns) and `openssl dgst` (`SHA2-256(<name>)= <hex>`).
 */
const BSD_LINE = /^(\\?)([A-Za-z0-9_/-]+) *\((.*)\) ?= ?([0-9A-Za-z+/=_-]+)$/s

/** One line of a checksum file, split but not interpreted: the digest text is neither decoded nor checked. */
export interface ChecksumLine {
  format: 'gnu' | 'bsd'
  /** The BSD tag as written (`SHA256`, `BLAKE2b-256`, `XXH3`); absent on GNU lines. */
  tag?: string
  /** The file name, unescaped. */
  name: string
  digest: string
  /** GNU's `*`: the file was read in binary mode (no difference on POSIX systems). */
  binary?: boolean
}

/**
 * Undoes coreutils' escaping of a name on a line that starts with `\` (coreutils' `digest.c`,
 * `filename_unescape`): `\\` is a backslash, `\n` a newline, `\r` a carriage return; anything
 * else after a backslash makes the line invalid (null).
 */
export function unescapeChecksumName(name: string): string | null {
  let out = ''
  for (let i = 0; i < name.length; i++) {
    const char = name[i]
    if (char !== '\\') {
      out += char
      continue
    }
    const next = name[++i]
    if (next === '\\') out += '\\'
    else if (next === 'n') out += '\n'
    else if (next === 'r') out += '\r'
    else return null
  }
  return out
}

/**
 * Splits one checksum-file line (without its line end) into tag, name and digest, or null when it
 * is neither form. Both forms match some lines (`MD4   (f) = …` is also `<digest>  <name>` with
 * digest "MD4"), so `isTag` decides: a BSD line is taken when its tag names an algorithm, and
 * otherwise only when the line is not a plausible GNU line (the caller then reports the unknown tag).
 */
export function splitChecksumLine(line: string, isTag: (tag: string) => boolean = () => true): ChecksumLine | null {
  const bsd = BSD_LINE.exec(line)
  const gnu = GNU_LINE.exec(line)
  // A GNU digest is at least 8 characters (XXH32's hex): `TTH   (f) = …` is RHash's tag for an
  // algorithm hashd lacks, not a 3-character digest.
  if (bsd && (isTag(bsd[2] ?? '') || !gnu || (gnu[2] ?? '').length < 8)) {
    const name = bsd[1] ? unescapeChecksumName(bsd[3] ?? '') : bsd[3] ?? ''
    return name === null ? null : { format: 'bsd', tag: bsd[2] ?? '', name, digest: bsd[4] ?? '' }
  }
  if (gnu) {
    const name = gnu[1] ? unescapeChecksumName(gnu[4] ?? '') : gnu[4] ?? ''
    return name === null || name.length === 0 ? null : { format: 'gnu', name, digest: gnu[2] ?? '', binary: gnu[3] === '*' }
  }
  return null
}

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
  const digestText = splitChecksumLine(trimmed)?.digest ?? trimmed
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
