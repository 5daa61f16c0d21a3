/**
 * What a store says about an object, read into the fields a file must match: one `readMetadata`
 * seam over one small reader per store, tried in the order of the table below. The first whose
 * `matches` accepts the input reads it; none is a 422 that lists the shapes.
 *
 * Bounds, before any parsing: a `.torrent` may be up to 16 MiB (BENCODE_MAX_INPUT_BYTES: its
 * pieces are 20 bytes per piece, 1.3 MB for 1 TiB in 16 KiB pieces); every other shape is text of
 * at most 1 MiB, far beyond any store's JSON or a page of `git ls-tree` lines. More is a 413.
 */
import { BENCODE_MAX_INPUT_BYTES } from '../bencode.js'
import { azureMetadata } from './azure.js'
import { dropboxMetadata } from './dropbox.js'
import { gcsMetadata } from './gcs.js'
import { gitLsTreeMetadata } from './git.js'
import { magnetMetadata } from './magnet.js'
import { oneDriveMetadata } from './onedrive.js'
import { invalidMetadata, metadataTooLarge, unknownMetadataShape } from './problems.js'
import { s3Metadata } from './s3.js'
import { torrentMetadata } from './torrent.js'
import type { MetadataInput, MetadataReading, MetadataShape } from './types.js'

export type { ExpectedField, MetadataReading, MetadataShape, MetadataShapeName, PiecePlan } from './types.js'
export { partSizeCandidates, COMMON_PART_SIZES } from './part-sizes.js'

/** Text metadata (JSON, a magnet link, ls-tree lines) is at most this long. */
export const MAX_TEXT_METADATA_BYTES = 1024 * 1024
/** A `.torrent` is at most this long. */
export const MAX_TORRENT_BYTES = BENCODE_MAX_INPUT_BYTES

/**
 * The readers, as data. Order matters only between JSON shapes whose keys could overlap: S3's
 * PascalCase `ETag` and `Checksum*` first; OneDrive's `file.hashes` and Azure's `contentSettings`
 * before Cloud Storage's `md5Hash`; Dropbox's `content_hash` last of the JSON shapes.
 */
export const metadataShapes: readonly MetadataShape[] = [
  torrentMetadata, s3Metadata, oneDriveMetadata, azureMetadata, gcsMetadata, dropboxMetadata, magnetMetadata, gitLsTreeMetadata,
]

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The input as text (no BOM, trimmed), or null when it is not UTF-8. */
function asText(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes).trim()
  } catch {
    return null
  }
}

/** The JSON object the text is, or undefined: only text that starts with `{` is parsed. */
function asJson(text: string | null): Readonly<Record<string, unknown>> | undefined {
  if (text === null || !text.startsWith('{')) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalidMetadata('metadata', 'starts like JSON and is not valid JSON')
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
}

/**
 * The fields of the metadata a store returned, pasted whole (text) or uploaded (a `.torrent`).
 * Throws a 413 for input beyond the bounds above, and a 422 (`unknown-metadata`, or
 * `invalid-metadata` naming the field) for anything else it cannot read.
 */
export function readMetadata(metadata: Uint8Array | string): MetadataReading {
  const bytes = typeof metadata === 'string' ? Buffer.from(metadata, 'utf8') : metadata
  if (bytes.length > MAX_TORRENT_BYTES) throw metadataTooLarge('a .torrent', MAX_TORRENT_BYTES)
  const torrent: MetadataInput = { bytes, text: null, json: undefined }
  if (torrentMetadata.matches(torrent)) return torrentMetadata.read(torrent)
  if (bytes.length > MAX_TEXT_METADATA_BYTES) throw metadataTooLarge('a store\'s JSON, a magnet link or git ls-tree lines', MAX_TEXT_METADATA_BYTES)
  const text = asText(bytes)
  const input: MetadataInput = { bytes, text, json: asJson(text) }
  const shape = metadataShapes.find((candidate) => candidate !== torrentMetadata && candidate.matches(input))
  if (shape === undefined) throw unknownMetadataShape(metadataShapes.map((candidate) => candidate.accepts))
  return shape.read(input)
}
