/**
 * /api/filehash/verify's domain: the fields a store's metadata gives (content-hashes/metadata/)
 * turned into the hashers one pass over the file needs, and their results into a verdict per field.
 *
 * - A content hash runs as a registry entry whose failure is its own (content-hashes/verification.ts):
 *   one field that cannot be computed must not stop the others.
 * - A multipart ETag or composite checksum without its part size runs once per candidate part
 *   size, side by side, each under its own key; at most MAX_PART_SIZE_CANDIDATES of them, the
 *   likeliest first (metadata/part-sizes.ts orders them).
 * - A v1 torrent's `pieces` runs the piece check (content-hashes/pieces.ts).
 * - A plain digest (OneDrive's sha1Hash, a magnet's urn:sha1) runs as a digest of src/algorithms.
 * - A hash whose first bytes need the size (git-blob-*, btih without a piece length) takes it from
 *   the metadata; without it the field cannot be checked: the file is streamed, never buffered.
 */
import { findAlgorithm } from '../algorithms/registry.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { findContentHash, resolveParameters } from '../content-hashes/index.js'
import type { ExpectedField, MetadataReading, MetadataShapeName } from '../content-hashes/metadata/index.js'
import { formatBytes } from '../content-hashes/parameters.js'
import type { PieceCheckResult } from '../content-hashes/pieces.js'
import { ENTRY_HASHER, PIECES_HASHER, type EntryResult, type PlainHasher } from '../content-hashes/verification.js'
import { Problem } from '../problem.js'

/**
 * Part sizes tried for one field whose part size the metadata does not give. Each is a full pass
 * of MD5s (or CRCs) beside the others; 12 covers the sizes the common tools use and those implied
 * by `-N` and the object's length.
 */
export const MAX_PART_SIZE_CANDIDATES = 12

/**
 * Content hashers in one request, every part-size candidate counted. Each reads the whole file, and
 * a megabyte of `git ls-tree` lines could name ten thousand; the fields past this are not computed.
 */
export const MAX_CONTENT_HASHERS = 64

export type Verdict = 'match' | 'mismatch' | 'cannot-check'

export interface FieldVerdict {
  field: string
  verdict: Verdict
  /** What the store reported. */
  expected: string
  /** What the file gives, in the same form, when it was computed. */
  actual?: string
  /** Why the field did not match, or cannot be checked. */
  reason?: string
  /** The part size that matched (or the one the metadata gave), for a multipart ETag or composite checksum. */
  partSize?: number
  /** The content hash of the registry, the digest, or `sha1` for a torrent's pieces; `size` for the size row. */
  algorithm: string
}

export interface VerifyAnswer {
  verdict: Verdict
  shape: MetadataShapeName
  size: number
  fields: FieldVerdict[]
}

/** A hasher keyed for this request, as the hash threads take it. */
export interface KeyedHasher extends PlainHasher { key: string }

export interface VerifyPlan {
  /** The digests to run (canonical algorithms), once each. */
  readonly digests: readonly DigestAlgorithm[]
  /** The content hashers, each under its own key. */
  readonly hashers: readonly KeyedHasher[]
  /** Every digest and content hash the file goes through, once each (several part sizes are one s3-etag), for the hashed-bytes metric. */
  readonly hashedWith: readonly string[]
  /** The verdicts, from the file's size, the digests' bytes and the hashers' texts by key. */
  verdicts(size: number, digests: ReadonlyMap<string, Uint8Array>, texts: ReadonlyMap<string, string>): VerifyAnswer
}

/** How one field is judged once the hashers are done. */
type Judge = (size: number, digests: ReadonlyMap<string, Uint8Array>, texts: ReadonlyMap<string, string>) => FieldVerdict

/** Where to find the size a hash needs up front, by the shape that lacked it. */
function sizeHint(shape: MetadataShapeName, contentHash: string): string {
  if (shape === 'git-ls-tree') return 'a git blob id starts with the size: paste `git ls-tree -l` lines, which give it'
  if (shape === 'magnet') return `${contentHash} needs the file's size up front: paste a magnet link with xl (rhash --magnet writes it)`
  return `${contentHash} needs the file's size up front, and the metadata does not give it`
}

/** The texts of the candidates tried for one field, and the verdict over them. */
function judgeTexts(field: ExpectedField, algorithm: string, tries: Array<{ key: string, partSize?: number }>): Judge {
  return (_size, _digests, texts) => {
    const base = { field: field.field, expected: field.expected, algorithm }
    const results = tries.map((attempt) => ({ ...attempt, result: JSON.parse(texts.get(attempt.key) ?? '{"error":"not computed"}') as EntryResult }))
    const matched = results.find((attempt) => 'text' in attempt.result && attempt.result.text === field.expected)
    if (matched !== undefined) return { ...base, verdict: 'match', actual: field.expected, ...(matched.partSize !== undefined ? { partSize: matched.partSize } : {}) }
    const computed = results.find((attempt) => 'text' in attempt.result)
    if (computed === undefined) {
      const first = results[0]?.result
      return { ...base, verdict: 'cannot-check', reason: first !== undefined && 'error' in first ? first.error : 'not computed' }
    }
    const actual = (computed.result as { text: string }).text
    if (tries.length > 1) {
      const sizes = tries.map((attempt) => formatBytes(attempt.partSize as number)).join(', ')
      return { ...base, verdict: 'mismatch', actual, reason: `no part size tried gives the expected value (tried ${sizes}; actual is for ${formatBytes(computed.partSize as number)})` }
    }
    return { ...base, verdict: 'mismatch', actual, ...(computed.partSize !== undefined ? { partSize: computed.partSize } : {}) }
  }
}

function judgePieces(field: ExpectedField, key: string, torrentLength: number): Judge {
  return (_size, _digests, texts) => {
    const base = { field: field.field, expected: field.expected, algorithm: 'sha1' }
    const text = texts.get(key)
    if (text === undefined) return { ...base, verdict: 'cannot-check', reason: 'not computed' }
    const result = JSON.parse(text) as PieceCheckResult
    const differ = result.pieces - result.matched
    const actual = differ === 0 ? `all ${result.pieces} pieces match` : `${differ} of ${result.pieces} pieces differ, the first is piece ${result.firstMismatch ?? 0}`
    if (result.length !== torrentLength) return { ...base, verdict: 'mismatch', actual, reason: 'size' }
    return differ === 0 ? { ...base, verdict: 'match', actual } : { ...base, verdict: 'mismatch', actual, reason: 'pieces differ' }
  }
}

/** What the request says about the file beside its bytes: the form part's filename. */
export interface FileFacts { fileName?: string | undefined }

/** The hashers and judges for the fields of one reading. */
export function planVerification(reading: MetadataReading, file: FileFacts = {}): VerifyPlan {
  const digests = new Map<string, DigestAlgorithm>()
  const hashers: KeyedHasher[] = []
  const judges: Judge[] = []
  const cannotCheck = (field: ExpectedField, algorithm: string, reason: string): Judge =>
    () => ({ field: field.field, verdict: 'cannot-check', expected: field.expected, reason, algorithm })

  // The file's own git ls-tree lines (by the file part's name) are planned first, so that they are
  // within MAX_CONTENT_HASHERS however long the paste; the judges keep the metadata's order.
  for (const index of planningOrder(reading, file.fileName)) {
    const field = reading.fields[index] as ExpectedField
    const algorithm = field.contentHash ?? field.digest ?? (field.pieces ? 'sha1' : 'unknown')
    if (field.cannotCheck !== undefined) {
      judges[index] = cannotCheck(field, algorithm, field.cannotCheck)
      continue
    }
    if (field.pieces !== undefined || field.contentHash !== null) {
      const needed = field.pieces !== undefined ? 1 : Math.min(field.partSizeCandidates?.length ?? 1, MAX_PART_SIZE_CANDIDATES)
      if (hashers.length + needed > MAX_CONTENT_HASHERS) {
        judges[index] = cannotCheck(field, algorithm, `more than ${MAX_CONTENT_HASHERS} values to compute in one request: send the metadata of this file alone (its own git ls-tree line, say)`)
        continue
      }
    }
    if (field.pieces !== undefined) {
      const key = `field${index}`
      hashers.push({ key, name: PIECES_HASHER, params: { pieceLength: field.pieces.pieceLength, hashes: Buffer.from(field.pieces.hashes).toString('base64') } })
      judges[index] = judgePieces(field, key, field.pieces.length)
      continue
    }
    if (field.contentHash === null) {
      const digest = field.digest === undefined ? undefined : findAlgorithm(field.digest)
      if (digest === undefined || digest.kind === 'password') {
        judges[index] = cannotCheck(field, algorithm, 'a value hashd does not compute')
        continue
      }
      digests.set(digest.name, digest)
      judges[index] = (_size, results) => {
        const bytes = results.get(digest.name)
        const actual = bytes === undefined ? undefined : Buffer.from(bytes).toString('hex')
        const base = { field: field.field, expected: field.expected, algorithm: digest.name }
        if (actual === undefined) return { ...base, verdict: 'cannot-check', reason: 'not computed' }
        return { ...base, verdict: actual === field.expected.toLowerCase() ? 'match' : 'mismatch', actual }
      }
      continue
    }
    const entry = findContentHash(field.contentHash)
    if (entry === undefined) {
      judges[index] = cannotCheck(field, algorithm, 'a value hashd does not compute')
      continue
    }
    const params: Record<string, string | number> = Object.fromEntries(Object.entries(field.parameters).filter((pair): pair is [string, string | number] => pair[1] !== undefined))
    // The size the store reported, where the entry takes one and the field gave none (a torrent's and S3's come with the reading).
    if ('size' in entry.parameters && params.size === undefined && reading.size !== undefined) params.size = reading.size
    const candidates = params.partSize === undefined && field.partSizeCandidates !== undefined
      ? field.partSizeCandidates.slice(0, MAX_PART_SIZE_CANDIDATES)
      : [undefined]
    try {
      // Checked here, once, so that a missing size is the field's reason rather than each hasher's error.
      resolveParameters(entry, { ...params, ...(candidates[0] !== undefined ? { partSize: candidates[0] } : {}) })
    } catch (error) {
      if (!(error instanceof Problem)) throw error
      const needsSize = 'size' in entry.parameters && params.size === undefined
      judges[index] = cannotCheck(field, algorithm, needsSize ? sizeHint(reading.shape, entry.name) : error.detail)
      continue
    }
    // btih chooses RHash's default piece length by the size, so it needs one or the other up front (as planContentHashes).
    if ('pieceLength' in entry.parameters && params.pieceLength === undefined && params.size === undefined) {
      judges[index] = cannotCheck(field, algorithm, sizeHint(reading.shape, entry.name))
      continue
    }
    const tries = candidates.map((partSize, attempt) => {
      const key = `field${index}.${attempt}`
      // The registry's defaults filled in (a single PUT's ETag names no part size, and the hasher still takes one).
      const resolved = resolveParameters(entry, { ...params, ...(partSize !== undefined ? { partSize } : {}) })
      const plain = Object.fromEntries(Object.entries(resolved).filter((pair): pair is [string, string | number] => pair[1] !== undefined))
      hashers.push({ key, name: ENTRY_HASHER, params: { entry: entry.name, ...plain } })
      const given = partSize ?? (typeof params.partSize === 'number' ? params.partSize : undefined)
      return given === undefined ? { key } : { key, partSize: given }
    })
    const judge = judgeTexts(field, algorithm, tries)
    // A git line of another size than the file is no match, whatever the id: say so, rather than the hasher's complaint.
    const fieldSize = typeof field.parameters.size === 'number' ? field.parameters.size : undefined
    judges[index] = fieldSize === undefined ? judge : (size, results, texts) => size === fieldSize
      ? judge(size, results, texts)
      : { field: field.field, verdict: 'mismatch', expected: field.expected, reason: 'size', algorithm }
  }

  return {
    digests: [...digests.values()],
    hashers,
    hashedWith: [...new Set([...digests.keys(), ...hashers.map(({ name, params }) => name === PIECES_HASHER ? 'sha1' : String(params.entry))])],
    verdicts(size, digestResults, texts) {
      let fields = judges.map((judge) => judge(size, digestResults, texts))
      if (reading.shape === 'git-ls-tree') fields = ownLines(reading.fields, fields, size, file.fileName)
      // The metadata's size is the object's: a file of another size matches none of its fields.
      if (reading.size !== undefined && size !== reading.size) {
        fields = [
          { field: 'size', verdict: 'mismatch', expected: String(reading.size), actual: String(size), reason: 'size', algorithm: 'size' },
          ...fields.map((field): FieldVerdict => ({ ...field, verdict: 'mismatch', reason: 'size' })),
        ]
      }
      return { verdict: overall(fields), shape: reading.shape, size, fields }
    },
  }
}

/** The fields' indexes in the order their hashers are planned: a git ls-tree line named as the file first. */
function planningOrder(reading: MetadataReading, fileName: string | undefined): number[] {
  const indexes = reading.fields.map((_, index) => index)
  if (reading.shape !== 'git-ls-tree' || fileName === undefined || fileName === '') return indexes
  const named = (index: number): boolean => {
    const path = reading.fields[index]?.field ?? ''
    return path === fileName || baseName(path) === fileName
  }
  return [...indexes.filter(named), ...indexes.filter((index) => !named(index))]
}

/** The last segment of a path as `git ls-tree` prints it (unquoted paths; a quoted one is compared whole). */
const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1)

/**
 * `git ls-tree` pasted whole lists a tree, and the file is one of its blobs: the verdict is about
 * the file's own line, not the others'. Its own lines are those whose path, or the path's last
 * segment, is the file part's name; when none is, those of the file's size (`-l`); of several,
 * the one the file matches. The other blobs' lines cannot be checked against this file ("another
 * file"). When no line is the file's by name or size, every line is judged as it is: the file is
 * none of them.
 */
function ownLines(expected: readonly ExpectedField[], fields: FieldVerdict[], size: number, fileName: string | undefined): FieldVerdict[] {
  if (fields.length < 2) return fields
  const lineSize = (index: number): number | undefined => {
    const value = expected[index]?.parameters.size
    return typeof value === 'number' ? value : undefined
  }
  const blob = (index: number): boolean => expected[index]?.cannotCheck === undefined
  const byName = fileName === undefined || fileName === ''
    ? []
    : fields.map((_, index) => index).filter((index) => blob(index) && (fields[index]?.field === fileName || baseName(fields[index]?.field ?? '') === fileName))
  const candidates = byName.length > 0 ? byName : fields.map((_, index) => index).filter((index) => blob(index) && lineSize(index) === size)
  // Of several lines of that name or size, the one the file matches is its own; the others are other files.
  const matched = candidates.filter((index) => fields[index]?.verdict === 'match')
  const own = matched.length > 0 ? matched : candidates
  if (own.length === 0) return fields
  const how = byName.length > 0 ? `its name, ${fileName}` : `its size, ${size} bytes`
  const chosen = new Set(own)
  return fields.map((field, index) => chosen.has(index) || !blob(index) ? field : {
    field: field.field, verdict: 'cannot-check', expected: field.expected, algorithm: field.algorithm,
    reason: `another file: the file's own line is ${own.length === 1 ? fields[own[0] as number]?.field : `one of ${own.length} lines`}, found by ${how}`,
  })
}

/** `match` only when every checkable field matched and one was; `mismatch` if any mismatched. */
function overall(fields: readonly FieldVerdict[]): Verdict {
  if (fields.some((field) => field.verdict === 'mismatch')) return 'mismatch'
  return fields.some((field) => field.verdict === 'match') ? 'match' : 'cannot-check'
}
