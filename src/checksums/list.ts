/**
 * Checksum lists as projects publish them (SHA256SUMS, B3SUMS, `*.sha256`): text in, entries out.
 * One line is split by src/domain/expected.ts (the grammar `/api/filehash`'s `expected` also
 * reads); this module decides each line's algorithm and decodes its digest.
 *
 * - BSD tagged lines name their algorithm; the tag is looked up in the registry, with the few
 *   spellings tools write that the registry's aliases do not cover (TAG_NAMES).
 * - GNU lines do not. Their algorithm is the `algorithm` the caller gives; else a hint from the
 *   list's own file name (`SHA512SUMS`, `B3SUMS`, `foo.iso.sha256`) when the digest has that
 *   algorithm's length; else the digest's length (GUESS_BY_BYTES). The last two are guesses, and
 *   each entry says so.
 * - Lines that cannot be used (unknown algorithm, bad digest, malformed) are skipped and reported
 *   with their line number, as `sha256sum -c` warns about improperly formatted lines.
 */
import { findAlgorithm, normalizeName, refusal } from '../algorithms/registry.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { splitChecksumLine } from '../domain/expected.js'
import { problems } from '../problem.js'

/** One usable line of the list. */
export interface ChecksumEntry {
  /** 1-based line number in the list. */
  line: number
  name: string
  algorithm: DigestAlgorithm
  /** How the algorithm was decided: the line's tag, the `algorithm` field, the list's name, or the digest's length. */
  algorithmFrom: 'tag' | 'field' | 'list-name' | 'length'
  /** The digest's bytes, decoded from hex or base64. */
  expected: Buffer
  /** How the list wrote it, so the answer can show the computed digest the same way. */
  encoding: 'hex' | 'base64'
}

export interface SkippedLine {
  line: number
  reason: string
  /** The unknown tag, for `unknown algorithm tag` (kept out of `reason`: problem details never quote the input). */
  tag?: string
}

export interface ChecksumList {
  entries: ChecksumEntry[]
  skipped: SkippedLine[]
  /** Physical lines read (blank and comment lines included). */
  lines: number
}

export interface ListOptions {
  /** The digest for untagged lines, when the caller names it. */
  algorithm?: DigestAlgorithm
  /** The list's file name (the multipart filename), for a hint on untagged lines. */
  listName?: string
  /** Most physical lines accepted (413 past it). */
  maxLines: number
}

/**
 * Longer lines are refused before any pattern runs on them: a name is at most PATH_MAX (4096)
 * bytes on Linux, and the longest digest hashd knows is 128 hex digits.
 */
export const MAX_LINE_LENGTH = 8192

/** Tags tools write that the registry's names and aliases do not already spell (normalized keys). */
const TAG_NAMES: ReadonlyMap<string, string> = new Map([
  // OpenSSL 3's `openssl dgst` names the SHA-2 family SHA2-*.
  ['sha2224', 'sha224'], ['sha2256', 'sha256'], ['sha2384', 'sha384'], ['sha2512', 'sha512'],
  ['sha2512224', 'sha512-224'], ['sha2512256', 'sha512-256'],
])

/**
 * An untagged digest's algorithm by its length. coreutils' tools for the sizes they make
 * (md5sum, sha1sum, sha224sum, sha256sum, sha384sum, sha512sum; b2sum's default is 64 bytes, the
 * same as SHA-512, so a bare B2SUMS needs its name or the `algorithm` field); 4 and 8 bytes are
 * what xxhsum writes untagged (XXH32, XXH64), and what `xxhsum -c` guesses for them too.
 */
const GUESS_BY_BYTES: Record<number, string> = {
  4: 'xxh32', 8: 'xxh64', 16: 'md5', 20: 'sha1', 28: 'sha224', 32: 'sha256', 48: 'sha384', 64: 'sha512',
}

/**
 * Short names in list file names that are not algorithm names (`B3SUMS`, `B2SUMS`). This table
 * and TAG_NAMES are Maps: they are looked up with text from the request (a tag, a file name), and
 * an object literal would answer `constructor` or `__proto__` with Object's own members.
 */
const LIST_NAME_HINTS: ReadonlyMap<string, string> = new Map([
  ['b3', 'blake3'], ['b2', 'blake2b-512'], ['blake2', 'blake2b-512'], ['blake2b', 'blake2b-512'], ['xxh', 'xxh64'], ['xxhash', 'xxh64'],
])

/** A digest hashd can check a file against (password hashes and text-form digests cannot be). */
function usable(algorithm: ReturnType<typeof findAlgorithm>): DigestAlgorithm | undefined {
  if (!algorithm || algorithm.kind === 'password' || refusal(algorithm, 'filehash') !== null) return undefined
  return algorithm.format ? undefined : algorithm
}

/** The algorithm a BSD tag names: `SHA256`, `BLAKE2b-256`, `XXH3`, `SHA2-256`, `GOST12-256`, … */
export function algorithmForTag(tag: string): DigestAlgorithm | undefined {
  if (tag.length > 64) return undefined
  return usable(findAlgorithm(TAG_NAMES.get(normalizeName(tag)) ?? tag))
}

/** What a list's file name suggests for its untagged lines: `SHA512SUMS` → sha512, `x.iso.sha256` → sha256, `B3SUMS` → blake3. */
export function algorithmHintFromListName(listName: string | undefined): DigestAlgorithm | undefined {
  if (!listName) return undefined
  const base = (listName.split(/[\\/]/).pop() ?? '').toLowerCase().replace(/\.(txt|asc|sig|minisig|gpg)$/, '')
  const candidates = [base.replace(/sums?$/, ''), base.slice(base.lastIndexOf('.') + 1).replace(/sums?$/, '')]
  for (const candidate of candidates) {
    if (candidate.length === 0) continue
    const found = usable(findAlgorithm(LIST_NAME_HINTS.get(candidate) ?? candidate))
    if (found) return found
  }
  return undefined
}

/** Hex when the text is hex of exactly `bytes` bytes, else base64 (padded or not) of `bytes` bytes, else null. */
function decodeDigest(text: string, bytes: number): { expected: Buffer, encoding: 'hex' | 'base64' } | null {
  if (text.length === bytes * 2 && /^[0-9A-Fa-f]+$/.test(text)) return { expected: Buffer.from(text, 'hex'), encoding: 'hex' }
  const unpadded = text.replace(/={1,2}$/, '')
  if (!/^[A-Za-z0-9+/_-]+$/.test(unpadded) || unpadded.length !== Math.ceil((bytes * 4) / 3)) return null
  const expected = Buffer.from(unpadded.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
  return expected.length === bytes ? { expected, encoding: 'base64' } : null
}

/** The byte length an untagged digest most plausibly has: hex first (what nearly every tool writes), then base64. */
function untaggedLength(text: string): number | undefined {
  if (/^[0-9A-Fa-f]+$/.test(text) && text.length % 2 === 0 && GUESS_BY_BYTES[text.length / 2]) return text.length / 2
  const unpadded = text.replace(/={1,2}$/, '')
  const bytes = Math.floor((unpadded.length * 3) / 4)
  return GUESS_BY_BYTES[bytes] && unpadded.length === Math.ceil((bytes * 4) / 3) ? bytes : undefined
}

type LineResult = { entry: Omit<ChecksumEntry, 'line'> } | { reason: string, tag?: string }

function readLine(text: string, options: ListOptions, hint: DigestAlgorithm | undefined): LineResult {
  if (text.length > MAX_LINE_LENGTH) return { reason: `longer than ${MAX_LINE_LENGTH} characters` }
  const split = splitChecksumLine(text, (tag) => algorithmForTag(tag) !== undefined)
  if (!split) return { reason: 'not a checksum line (`<digest>  <name>` or `TAG (<name>) = <digest>`)' }
  let algorithm: DigestAlgorithm | undefined
  let algorithmFrom: ChecksumEntry['algorithmFrom']
  if (split.tag !== undefined) {
    algorithm = algorithmForTag(split.tag)
    if (!algorithm) return { reason: 'unknown algorithm tag', tag: split.tag.slice(0, 64) }
    algorithmFrom = 'tag'
  } else if (options.algorithm) {
    algorithm = options.algorithm
    algorithmFrom = 'field'
  } else if (hint && decodeDigest(split.digest, hint.outputBytes)) {
    algorithm = hint
    algorithmFrom = 'list-name'
  } else {
    const bytes = untaggedLength(split.digest)
    const guess = bytes === undefined ? undefined : GUESS_BY_BYTES[bytes]
    if (guess === undefined) return { reason: `cannot tell the algorithm of a ${split.digest.length}-character digest; name it in the algorithm field` }
    algorithm = usable(findAlgorithm(guess))
    if (!algorithm) return { reason: `no algorithm ${guess}` }
    algorithmFrom = 'length'
  }
  const decoded = decodeDigest(split.digest, algorithm.outputBytes)
  if (!decoded) return { reason: `not a ${algorithm.name} digest (${algorithm.outputBytes} bytes in hex or base64)` }
  return { entry: { name: split.name, algorithm, algorithmFrom, ...decoded } }
}

/**
 * Reads a whole list. Throws 413 past `maxLines` lines, and 422 when no line is usable, naming the
 * first bad line; otherwise returns the entries in list order and the lines it skipped.
 */
export function parseChecksumList(text: string, options: ListOptions): ChecksumList {
  const lines = text.replace(/^\uFEFF/, '').split('\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  if (lines.length > options.maxLines) {
    throw problems.tooLarge(`The checksum list has ${lines.length} lines; at most ${options.maxLines} are read (MAX_CHECKSUM_LINES)`)
  }
  const hint = algorithmHintFromListName(options.listName)
  const entries: ChecksumEntry[] = []
  const skipped: SkippedLine[] = []
  lines.forEach((raw, index) => {
    // CRLF lists (made on Windows, or served so): the CR belongs to the line end, not the name.
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    const trimmed = line.trim()
    if (trimmed === '' || trimmed.startsWith('#')) return
    const result = readLine(line, options, hint)
    if ('entry' in result) entries.push({ line: index + 1, ...result.entry })
    else skipped.push({ line: index + 1, ...result })
  })
  if (entries.length === 0) {
    const first = skipped[0]
    throw problems.unprocessable('no-checksum-lines', 'No usable checksum line',
      first ? `The checksum list has no usable line; line ${first.line}: ${first.reason}` : 'The checksum list is empty (only blank or comment lines)',
      first ? { line: first.line, errors: [{ pointer: '/body/checksums', message: `line ${first.line}: ${first.reason}` }] } : { errors: [{ pointer: '/body/checksums', message: 'empty' }] })
  }
  return { entries, skipped, lines: lines.length }
}
