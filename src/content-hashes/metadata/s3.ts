/**
 * Amazon S3: the JSON of `aws s3api head-object --checksum-mode ENABLED` (the AWS CLI prints the
 * HeadObject response: `ETag` with HTTP's quotes, `ContentLength`, the `Checksum*` fields,
 * `ChecksumType`, `ServerSideEncryption`, `SSECustomerAlgorithm`, and `PartsCount` when asked for
 * a part), and the JSON of `aws s3api get-object-attributes` (`ETag` without quotes, `ObjectSize`,
 * the checksums under `Checksum`, the parts under `ObjectParts`, whose first part's `Size` is the
 * part size).
 *
 * - The ETag is the MD5 of the object, or for a multipart upload the MD5 of the parts' MD5s and
 *   `-N`, only for unencrypted and SSE-S3 objects: "objects encrypted by SSE-C or SSE-KMS have
 *   ETags that are not an MD5 digest of their object data" (S3 API reference, `Object`, ETag).
 * - A checksum without `-N` is that of the whole object (a single PUT, or FULL_OBJECT); one with
 *   `-N` is COMPOSITE, the checksum of the parts' checksums (S3 User Guide, "Checking object
 *   integrity in Amazon S3"). CRC-64/NVME is only ever FULL_OBJECT.
 * - S3 keeps the number of parts, not their size: without `ObjectParts.Parts` the part sizes to
 *   try come from part-sizes.ts.
 */
import { S3_MAX_PART_BYTES, S3_MAX_PARTS, S3_MAX_PUT_BYTES, S3_MIN_PART_BYTES } from '../parts.js'
import type { RawParameters } from '../types.js'
import { partSizeCandidates } from './part-sizes.js'
import { invalidMetadata } from './problems.js'
import type { ExpectedField, MetadataShape } from './types.js'
import { at, base64Of, hasPath, isObject, optionalText, sizeOf } from './values.js'

/** S3's additional checksums as data: the response field, the registry entry, the checksum's size. */
export const S3_CHECKSUM_FIELDS = [
  { field: 'ChecksumCRC64NVME', contentHash: 's3-crc64nvme', bytes: 8 },
  { field: 'ChecksumCRC32', contentHash: 's3-crc32', bytes: 4 },
  { field: 'ChecksumCRC32C', contentHash: 's3-crc32c', bytes: 4 },
  { field: 'ChecksumSHA1', contentHash: 's3-sha1', bytes: 20 },
  { field: 'ChecksumSHA256', contentHash: 's3-sha256', bytes: 32 },
] as const

const MD5_ETAG = /^[0-9a-fA-F]{32}$/
const PART_COUNT = /^[1-9][0-9]{0,4}$/
const KMS = new Set(['aws:kms', 'aws:kms:dsse'])

/** `<value>-<N>` split at its last `-`: the value and N, or N undefined when there is no suffix. */
function splitParts(value: string): [string, string | undefined] {
  const dash = value.lastIndexOf('-')
  return dash === -1 ? [value, undefined] : [value.slice(0, dash), value.slice(dash + 1)]
}

/** HTTP's quotes around an ETag (RFC 9110 §8.8.3), which head-object keeps and get-object-attributes drops. */
function unquoted(etag: string): string {
  return etag.length >= 2 && etag.startsWith('"') && etag.endsWith('"') ? etag.slice(1, -1) : etag
}

interface Multipart {
  parts: number
  parameters: RawParameters
  partSizeCandidates: number[]
  cannotCheck?: string
}

/**
 * The part size get-object-attributes listed, as a candidate: a lone part may be smaller than S3's
 * 5 MiB minimum, and any part size from 5 MiB up cuts it the same; more parts must be 5 MiB to 5 GiB.
 */
function knownCandidates(parts: number, partSize: number): number[] {
  if (parts === 1) return [Math.min(Math.max(partSize, S3_MIN_PART_BYTES), S3_MAX_PART_BYTES)]
  return partSize >= S3_MIN_PART_BYTES && partSize <= S3_MAX_PART_BYTES ? [partSize] : []
}

/** Parameters and part sizes for `-N`: in parts from the first byte, at the sizes that give N parts. */
function multipart(field: string, suffix: string, length: number | undefined, knownPartSize: number | undefined): Multipart {
  if (!PART_COUNT.test(suffix) || Number(suffix) > S3_MAX_PARTS) throw invalidMetadata(field, `ends in a part count that is not 1 to ${S3_MAX_PARTS}`)
  const parts = Number(suffix)
  const candidates = knownPartSize === undefined ? partSizeCandidates(parts, length) : knownCandidates(parts, knownPartSize)
  return {
    parts,
    parameters: { multipartThreshold: 0 },
    partSizeCandidates: candidates,
    ...(candidates.length === 0 ? { cannotCheck: `no part size S3 allows cuts ${length ?? 'the'} bytes into ${parts} parts` } : {}),
  }
}

function etagField(json: Readonly<Record<string, unknown>>, length: number | undefined, knownPartSize: number | undefined): ExpectedField | undefined {
  const raw = optionalText('ETag', json.ETag)
  if (raw === undefined) return undefined
  const [md5, suffix] = splitParts(unquoted(raw))
  const expected = `${md5.toLowerCase()}${suffix === undefined ? '' : `-${suffix}`}`.slice(0, 128)
  const sse = optionalText('ServerSideEncryption', json.ServerSideEncryption)
  if ((sse !== undefined && KMS.has(sse)) || json.SSECustomerAlgorithm !== undefined) {
    return { field: 'ETag', contentHash: 's3-etag', parameters: {}, expected, cannotCheck: 'the ETag of an SSE-KMS or SSE-C object is not an MD5 of its content (S3 API reference, Object: ETag)' }
  }
  if (!MD5_ETAG.test(md5)) {
    return { field: 'ETag', contentHash: 's3-etag', parameters: {}, expected, cannotCheck: 'the ETag is not an MD5 (32 hex digits, then -N for a multipart upload): S3 did not derive it from the content alone' }
  }
  if (suffix === undefined) {
    // A single PUT: the MD5 of the whole object, whatever its size (a PUT takes up to 5 GiB).
    return { field: 'ETag', contentHash: 's3-etag', parameters: { multipartThreshold: S3_MAX_PUT_BYTES }, expected }
  }
  const { parameters, partSizeCandidates, cannotCheck } = multipart('ETag', suffix, length, knownPartSize)
  return { field: 'ETag', contentHash: 's3-etag', parameters, expected, partSizeCandidates, ...(cannotCheck ? { cannotCheck } : {}) }
}

function checksumFields(checksums: Readonly<Record<string, unknown>>, length: number | undefined, knownPartSize: number | undefined): ExpectedField[] {
  const fields: ExpectedField[] = []
  // S3 reports one ChecksumType for the object; the -N of each checksum must agree with it.
  const declared = optionalText('ChecksumType', checksums.ChecksumType)
  if (declared !== undefined && declared !== 'FULL_OBJECT' && declared !== 'COMPOSITE') throw invalidMetadata('ChecksumType', 'is neither FULL_OBJECT nor COMPOSITE')
  for (const { field, contentHash, bytes } of S3_CHECKSUM_FIELDS) {
    const raw = optionalText(field, checksums[field])
    if (raw === undefined) continue
    const [value, suffix] = splitParts(raw)
    const checksum = base64Of(field, value, bytes)
    if (declared !== undefined && (declared === 'COMPOSITE') !== (suffix !== undefined) && contentHash !== 's3-crc64nvme') {
      throw invalidMetadata(field, `${suffix === undefined ? 'has no' : 'has a'} part count (-N), and ChecksumType is ${declared}`)
    }
    if (suffix === undefined) {
      fields.push({ field, contentHash, parameters: { checksumType: 'FULL_OBJECT' }, expected: checksum })
      continue
    }
    if (contentHash === 's3-crc64nvme') throw invalidMetadata(field, 'has a part count, and S3 keeps CRC-64/NVME only for the full object')
    const { parts, parameters, partSizeCandidates, cannotCheck } = multipart(field, suffix, length, knownPartSize)
    fields.push({
      field, contentHash, parameters: { checksumType: 'COMPOSITE', ...parameters }, expected: `${checksum}-${parts}`, partSizeCandidates,
      ...(cannotCheck ? { cannotCheck } : {}),
    })
  }
  return fields
}

const hasChecksum = (json: unknown): boolean => S3_CHECKSUM_FIELDS.some(({ field }) => hasPath(json, field))

export const s3Metadata: MetadataShape = {
  name: 's3',
  accepts: 'aws s3api head-object --checksum-mode ENABLED (or get-object-attributes) JSON',
  matches: ({ json }) => json !== undefined && (hasPath(json, 'ETag') || hasChecksum(json) || hasPath(json, 'ObjectParts') || isObject(json.Checksum)),
  read: ({ json = {} }) => {
    const length = sizeOf('ContentLength', json.ContentLength) ?? sizeOf('ObjectSize', json.ObjectSize)
    // get-object-attributes lists the parts it was asked for: the first part's size is the part size.
    const firstPart = at(json, 'ObjectParts.Parts')
    const knownPartSize = Array.isArray(firstPart) && isObject(firstPart[0]) && firstPart[0].PartNumber === 1
      ? sizeOf('ObjectParts.Parts.Size', firstPart[0].Size) : undefined
    const checksums = isObject(json.Checksum) ? json.Checksum : json
    const etag = etagField(json, length, knownPartSize)
    const fields = [...(etag ? [etag] : []), ...checksumFields(checksums, length, knownPartSize)]
    if (fields.length === 0) throw invalidMetadata('ETag', 'the S3 metadata has neither an ETag nor a Checksum field')
    return { shape: 's3', ...(length !== undefined ? { size: length } : {}), fields }
  },
}
