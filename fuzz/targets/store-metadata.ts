/**
 * The verify form's text metadata readers (src/content-hashes/metadata/: the shape detector, S3,
 * Cloud Storage, Azure, Dropbox, OneDrive, magnet links, `git ls-tree`), fed inputs built from the
 * fuzzer's bytes in each shape, so that the readers' own checks are reached: random bytes seldom
 * make JSON with an `ETag`, a magnet link, or a line with a mode, a type and an object id.
 *
 * Input: a mode byte (its value modulo 3), then fields split by FIELD_SEPARATOR.
 * - 0, JSON: each field is a key byte (which of the stores' keys and paths: `ETag`,
 *   `Checksum.ChecksumCRC32C`, `file.hashes.quickXorHash`, `properties.contentSettings.contentMd5`…),
 *   a type byte (string, number, a large or negative or fractional number, true, false, null, an
 *   object, an array) and the value's bytes; the object is written with JSON.stringify.
 * - 1, a magnet link: each field is one `key=value` pair, the key byte choosing `xt` (with one of the
 *   URN prefixes hashd reads, or none), `xt.N`, `xl`, `dn` or the bytes as they are; the value
 *   percent-encoded or not.
 * - 2, `git ls-tree` lines: each field is a line of mode, type, object id, size and path, each taken
 *   from the field's bytes (a valid one, or the bytes themselves), joined by spaces and a tab, the
 *   lines ended by newline, CRLF or NUL (the mode byte over 3, modulo 3).
 *
 * Invariants: those of metadata-checks.ts for every reading; a JSON reading has one of the JSON
 * shapes, a magnet reading is `magnet`, and a git reading is `git-ls-tree` with one field a line.
 * Expected refusals: Problem 413, and 422 `invalid-metadata` or `unknown-metadata`.
 */
import { checkReader } from '../metadata-checks.js'
import { FIELD_SEPARATOR, invariant } from '../support.js'

/** The keys and dotted paths the JSON readers look at, and a few near them. */
export const JSON_KEYS = [
  'ETag', 'ChecksumCRC64NVME', 'ChecksumCRC32', 'ChecksumCRC32C', 'ChecksumSHA1', 'ChecksumSHA256', 'ChecksumType', 'PartsCount',
  'ContentLength', 'ObjectSize', 'ServerSideEncryption', 'SSECustomerAlgorithm', 'Checksum.ChecksumCRC32C', 'Checksum.ChecksumSHA256',
  'Checksum.ChecksumType', 'ObjectParts.TotalPartsCount', 'ObjectParts.Parts', 'ObjectParts.PartsCount',
  'kind', 'crc32c', 'md5Hash', 'crc32c_hash', 'md5_hash', 'size', 'name', 'etag',
  'contentSettings.contentMd5', 'properties.contentSettings.contentMd5', 'properties.contentLength', 'properties.blobType',
  'content_hash', '.tag', 'rev', 'file.hashes.quickXorHash', 'file.hashes.sha1Hash', 'file.hashes.sha256Hash', 'file.hashes', 'file',
  '@odata.context',
] as const

export const MAGNET_KEYS = ['xt', 'xt.1', 'xt.2', 'xl', 'dn', 'tr', 'xt.99999'] as const
export const URN_PREFIXES = ['urn:btih:', 'urn:tree:tiger:', 'urn:aich:', 'urn:ed2k:', 'urn:btmh:1220', 'urn:sha1:', 'urn:', ''] as const

export const MODES = ['100644', '100755', '120000', '040000', '160000', '644'] as const
export const TYPES = ['blob', 'tree', 'commit', 'tag'] as const
const LINE_ENDS = ['\n', '\r\n', '\0'] as const

/** Every field of the input, split at each separator (as support.ts `fields`, without a count). */
function allFields(bytes: Buffer): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  for (let end = bytes.indexOf(FIELD_SEPARATOR, at); end !== -1; end = bytes.indexOf(FIELD_SEPARATOR, at)) {
    out.push(bytes.subarray(at, end))
    at = end + FIELD_SEPARATOR.length
  }
  out.push(bytes.subarray(at))
  return out
}

const pick = <T>(list: readonly T[], byte: number | undefined): T => list[(byte ?? 0) % list.length] as T
const text = (bytes: Buffer): string => bytes.toString('utf8')
/** A word of a line, without the characters that end one (so that each field stays one line). */
const word = (bytes: Buffer): string => text(bytes).replace(/[\r\n\0]/g, '')

/** Sets a dotted path, making objects on the way (and replacing what is not one). */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.').filter((part) => part !== '')
  // `.tag` is Dropbox's key, dot and all.
  if (path.startsWith('.')) { target[path] = value; return }
  let at = target
  for (const part of parts.slice(0, -1)) {
    const next = at[part]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) at[part] = {}
    at = at[part] as Record<string, unknown>
  }
  at[parts[parts.length - 1] as string] = value
}

function jsonValue(type: number, bytes: Buffer): unknown {
  switch (type % 9) {
    case 0: return text(bytes)
    // A quoted ETag, as S3 writes it.
    case 1: return `"${text(bytes)}"`
    case 2: return bytes.length === 0 ? 0 : bytes.readUIntBE(0, Math.min(6, bytes.length))
    case 3: return Number(text(bytes))
    case 4: return bytes.length % 2 === 0
    case 5: return null
    case 6: return { value: text(bytes) }
    case 7: return [text(bytes), bytes.length]
    default: return -bytes.length - 0.5
  }
}

function jsonInput(parts: Buffer[]): string {
  const object: Record<string, unknown> = {}
  for (const part of parts) setPath(object, pick(JSON_KEYS, part[0]), jsonValue(part[1] ?? 0, part.subarray(2)))
  return JSON.stringify(object)
}

function magnetInput(parts: Buffer[]): string {
  const pairs = parts.map((part) => {
    const key = pick(MAGNET_KEYS, part[0])
    const raw = text(part.subarray(2))
    const value = (part[1] ?? 0) % 2 === 0 ? raw : encodeURIComponent(raw)
    return `${key}=${key.startsWith('xt') ? pick(URN_PREFIXES, part[1] === undefined ? 0 : part[1] >> 1) : ''}${value}`
  })
  return `magnet:?${pairs.join('&')}`
}

/** A line's words: each taken valid (from the lists, or hex from the bytes) or as the bytes, by the control byte's bits. */
function lsTreeLine(part: Buffer): string {
  const control = part[0] ?? 0
  const body = part.subarray(1)
  const hex = Buffer.concat([body, Buffer.alloc(32)]).subarray(0, control & 0x08 ? 32 : 20).toString('hex')
  const mode = control & 0x01 ? word(body.subarray(0, 6)) : pick(MODES, body[0])
  const type = control & 0x02 ? word(body.subarray(0, 4)) : pick(TYPES, body[1])
  const size = control & 0x04 ? ` ${control & 0x10 ? '-' : String(body.length * 997)}` : ''
  const path = control & 0x20 ? '' : word(body.subarray(2)) || 'file.bin'
  return `${mode} ${type} ${hex}${size}\t${path}`
}

function gitInput(parts: Buffer[], end: string): string {
  return parts.map(lsTreeLine).join(end) + end
}

const JSON_SHAPES = new Set(['s3', 'gcs', 'azure', 'dropbox', 'onedrive'])

/** The metadata text the input stands for, and what it was built as (git: with how many lines). */
export function metadataInput(data: Buffer): { kind: 'json' | 'magnet' | 'git', text: string, lines: number } {
  const mode = data[0] ?? 0
  const parts = allFields(data.subarray(1))
  switch (mode % 3) {
    case 0: return { kind: 'json', text: jsonInput(parts), lines: 0 }
    case 1: return { kind: 'magnet', text: magnetInput(parts), lines: 0 }
    default: {
      const lines = parts.filter((part) => part.length > 0)
      return { kind: 'git', text: gitInput(lines, pick(LINE_ENDS, Math.floor(mode / 3))), lines: lines.length }
    }
  }
}

export function fuzz(data: Buffer): void {
  const { kind, text: input, lines } = metadataInput(data)
  const reading = checkReader(input)
  if (reading === undefined) return
  if (kind === 'json') invariant(JSON_SHAPES.has(reading.shape), `JSON read as ${reading.shape}`)
  else if (kind === 'magnet') invariant(reading.shape === 'magnet', `a magnet link read as ${reading.shape}`)
  else {
    invariant(reading.shape === 'git-ls-tree', `ls-tree lines read as ${reading.shape}`)
    invariant(reading.fields.length === lines, `${lines} lines read as ${reading.fields.length} fields`)
  }
}
