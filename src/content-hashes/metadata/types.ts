/**
 * The shapes of the metadata readers (index.ts): what a store says about an object, pasted whole
 * (`aws s3api head-object` JSON, a `.torrent`, a magnet link, `git ls-tree` lines), read into the
 * list of values a file must have to be that object. Each reader is a pure function of the
 * metadata: no HTTP and no file here; a route checks the fields against an upload.
 */
import type { RawParameters } from '../types.js'

/**
 * The pieces of a v1 torrent, for a check one piece at a time as a client's recheck does: the file
 * cut into `pieceLength` pieces (the last may be shorter), the SHA-1 of piece i at
 * `hashes.subarray(20 * i, 20 * i + 20)`.
 */
export interface PiecePlan {
  algorithm: 'sha1'
  pieceLength: number
  /** The file's length, as the torrent gives it. */
  length: number
  /** The SHA-1s of the pieces one after another (20 bytes each), as the torrent's `pieces`. */
  hashes: Uint8Array
}

/**
 * One value the store reports, and how to compute it from the file. A field names either a content
 * hash of the registry (`contentHash`, with `parameters` for it) or, where the store reports a
 * plain digest of the whole file (OneDrive's `sha1Hash`, a magnet link's `urn:sha1:`), a digest
 * of the algorithm registry (`digest`, with `contentHash` null). A field that cannot be checked
 * says why in `cannotCheck`, and still shows what the store reported.
 */
export interface ExpectedField {
  /** The store's own name for the field: `ETag`, `ChecksumCRC64NVME`, `md5Hash`, `file.hashes.quickXorHash`, `info-hash`, `xt`, a path for `git ls-tree`. */
  field: string
  /** A name of the content-hash registry (src/content-hashes/index.ts), or null for a plain digest or a field nothing computes. */
  contentHash: string | null
  /** A digest of src/algorithms (`sha1`, `sha256`, `md5`, `crc32`, `ed2k`), when the field is the plain digest of the whole file. */
  digest?: string
  /** The content hash's parameters, as /api/filehash takes them (the route adds `partSize` from `partSizeCandidates`, and `size` from the upload where the store gave none). */
  parameters: RawParameters
  /** What the store reported, written as the registry prints it (hex in lower case, base64, base32 in upper case, `-N` kept). */
  expected: string
  /** Why the field cannot be checked against the file, when it cannot. */
  cannotCheck?: string
  /** For a multipart ETag or composite checksum whose part size the metadata does not give: the part sizes to try, likeliest first. */
  partSizeCandidates?: number[]
  /** For a v1 torrent's `pieces`: the check piece by piece. */
  pieces?: PiecePlan
}

export type MetadataShapeName = 's3' | 'gcs' | 'azure' | 'dropbox' | 'onedrive' | 'torrent' | 'magnet' | 'git-ls-tree'

export interface MetadataReading {
  shape: MetadataShapeName
  /** The object's size in bytes, when the store reports it (ContentLength, size, xl, length). */
  size?: number
  /** The object's name, when the metadata carries one (a torrent's name, a magnet link's dn). */
  name?: string
  fields: ExpectedField[]
}

/** The metadata as it arrived, and as text and as JSON where it is either (index.ts prepares it once). */
export interface MetadataInput {
  bytes: Uint8Array
  /** The input as UTF-8 text, without a byte-order mark and trimmed; null when it is not UTF-8. */
  text: string | null
  /** The parsed JSON when the text is a JSON object; undefined otherwise. */
  json: Readonly<Record<string, unknown>> | undefined
}

/** One store's reader: whether an input is its shape, and the reading. */
export interface MetadataShape {
  name: MetadataShapeName
  /** What to paste, for the message that lists the accepted shapes. */
  accepts: string
  /** Cheap and certain: true only for input that can be nothing else. */
  matches(input: MetadataInput): boolean
  read(input: MetadataInput): MetadataReading
}
