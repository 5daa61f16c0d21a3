/**
 * The invariants of a metadata reading (src/content-hashes/metadata/), shared by the fuzz targets
 * that feed readMetadata: torrent-metadata (bencode and raw bytes) and store-metadata (JSON, magnet
 * links and git ls-tree lines built from the fuzzer's bytes).
 *
 * A reading has fields; each names a content hash of the registry or a digest of src/algorithms
 * (or is a v1 torrent's piece plan, or cannot be checked); the parameters of a field that can be
 * checked are ones the registry accepts, with each candidate part size; a piece plan holds one
 * 20-byte hash per piece of its length. Expected refusals: Problem 413, and 422
 * `invalid-metadata` or `unknown-metadata`. Anything else is a finding.
 */
import { findAlgorithm } from '../src/algorithms/registry.js'
import { findContentHash, resolveParameters } from '../src/content-hashes/index.js'
import { readMetadata, type MetadataReading } from '../src/content-hashes/metadata/index.js'
import { S3_MAX_PART_BYTES, S3_MIN_PART_BYTES } from '../src/content-hashes/parts.js'
import { invariant, isProblem, refusing } from './support.js'

export const METADATA_REFUSALS = ['urn:hashd:problem:invalid-metadata', 'urn:hashd:problem:unknown-metadata']

/** Reads the metadata and checks the reading; undefined when it was refused as documented. */
export function checkReader(input: Buffer | string): MetadataReading | undefined {
  const reading = refusing(() => readMetadata(input), (error) => isProblem(error, [413]) || isProblem(error, [422], METADATA_REFUSALS))
  if (reading === undefined) return undefined
  invariant(reading.fields.length > 0, `a ${reading.shape} reading without fields`)
  for (const field of reading.fields) {
    invariant(typeof field.expected === 'string' && field.field.length > 0, 'a field without a name or an expected string')
    const entry = field.contentHash === null ? undefined : findContentHash(field.contentHash)
    invariant(field.contentHash === null || entry !== undefined, `a field names the unknown content hash ${field.contentHash}`)
    if (field.digest !== undefined) invariant(findAlgorithm(field.digest)?.kind !== 'password' && findAlgorithm(field.digest) !== undefined, `a field names the unknown digest ${field.digest}`)
    if (field.pieces !== undefined) {
      const { pieceLength, length, hashes } = field.pieces
      invariant(pieceLength > 0 && hashes.length === Math.ceil(length / pieceLength) * 20, 'a piece plan whose hashes do not fit its length')
    }
    for (const size of field.partSizeCandidates ?? []) invariant(size >= S3_MIN_PART_BYTES && size <= S3_MAX_PART_BYTES, `a candidate part size ${size} S3 does not allow`)
    if (field.cannotCheck !== undefined) continue
    invariant(entry !== undefined || field.digest !== undefined || field.pieces !== undefined, `the field ${field.field} can be checked, by nothing`)
    if (entry === undefined) continue
    for (const partSize of field.partSizeCandidates ?? [undefined]) {
      // As the route will: a candidate part size, and the upload's size where the entry needs one and the store gave none.
      const size = field.parameters.size ?? (Object.hasOwn(entry.parameters, 'size') ? reading.size ?? 0 : undefined)
      const parameters = { ...field.parameters, ...(partSize === undefined ? {} : { partSize }), ...(size === undefined ? {} : { size }) }
      const resolved = refusing(() => resolveParameters(entry, parameters), () => true)
      invariant(resolved !== undefined, `the registry refuses the parameters of ${field.field}`)
    }
  }
  return reading
}
