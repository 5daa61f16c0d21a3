/**
 * What Amazon S3 reports for an object: its ETag and its additional checksums, computed the way S3
 * computes them for an object uploaded in one PUT or in parts.
 *
 * - ETag: for a single PUT (unencrypted or SSE-S3), the hex MD5 of the object. For a multipart
 *   upload, the MD5 of the parts' binary MD5s one after another, then `-` and the number of parts
 *   (S3 User Guide, "Checking object integrity", the ETag and multipart notes; the API reference
 *   for `Object`: "the ETag ... is not an MD5 digest" for multipart and SSE-KMS objects).
 * - Additional checksums (S3 User Guide, "Checking object integrity in Amazon S3", "Using
 *   full object checksums" and "Using part-level checksums for multipart uploads"): base64 of the
 *   big-endian checksum bytes. FULL_OBJECT is the checksum of the whole object, whatever the
 *   parts; S3 supports it for CRC-64/NVME, CRC-32 and CRC-32C. COMPOSITE is the checksum of the
 *   parts' binary checksums one after another, then `-N`; S3 supports it for CRC-32, CRC-32C,
 *   SHA-1 and SHA-256, and not for CRC-64/NVME. An object from a single PUT has no parts: its
 *   checksum is that of the whole object, without `-N`.
 *
 * Whether an upload was multipart is not in the bytes: it is the uploader's choice. The AWS CLI and
 * boto3 (s3transfer) upload in parts when the object is at least `multipart_threshold` bytes
 * (8 MiB by default) and cut it into `multipart_chunksize` parts (8 MiB by default); the
 * parameters `multipartThreshold` and `partSize` say the same here with the same defaults.
 */
import { createCRC32, createCRC64 } from 'hash-wasm'
import { base64, hex } from './encoding.js'
import { bytesParameter, MiB } from './parameters.js'
import {
  concatenated, opensslDigest, PartDigests, S3_MAX_PART_BYTES, S3_MAX_PARTS, S3_MAX_PUT_BYTES, S3_MIN_PART_BYTES, tooManyParts, wasmDigest, type RestartableDigest,
} from './parts.js'
import { fixedSegments, type SegmentedHash } from './segments.js'
import type { ByteSizeParameter, ChoiceParameter, ContentHasher, ResolvedParameters } from './types.js'

/** The AWS CLI's and boto3's `multipart_chunksize` and `multipart_threshold` defaults. */
export const AWS_CLI_PART_BYTES = 8 * MiB
export const AWS_CLI_MULTIPART_THRESHOLD = 8 * MiB

export const partSizeParameter: ByteSizeParameter = {
  kind: 'bytes',
  description: 'the size of each part of a multipart upload (the last may be smaller): 5 MiB to 5 GiB, at most 10,000 parts; the AWS CLI and boto3 use 8 MiB',
  default: AWS_CLI_PART_BYTES,
  min: S3_MIN_PART_BYTES,
  max: S3_MAX_PART_BYTES,
}

export const multipartThresholdParameter: ByteSizeParameter = {
  kind: 'bytes',
  description: 'objects of at least this size were uploaded in parts, smaller ones in a single PUT (the AWS CLI\'s and boto3\'s multipart_threshold, 8 MiB); 0: always in parts',
  default: AWS_CLI_MULTIPART_THRESHOLD,
  min: 0,
  max: S3_MAX_PUT_BYTES,
}

export type ChecksumType = 'FULL_OBJECT' | 'COMPOSITE'

export function checksumTypeParameter(values: readonly ChecksumType[], fallback: ChecksumType): ChoiceParameter {
  return {
    kind: 'choice',
    description: 'FULL_OBJECT: the checksum of the whole object; COMPOSITE: the checksum of the parts\' checksums, then -N (S3\'s ChecksumType)',
    values,
    default: fallback,
  }
}

/** The digest S3 computes, made fresh for each hasher (hash-wasm instantiates WASM per hasher). */
export type DigestFactory = () => RestartableDigest | Promise<RestartableDigest>

export const md5: DigestFactory = () => opensslDigest('md5')
export const sha1: DigestFactory = () => opensslDigest('sha1')
export const sha256: DigestFactory = () => opensslDigest('sha256')
/** CRC-32/ISO-HDLC (zlib), S3's CRC32. */
export const crc32: DigestFactory = async () => wasmDigest(await createCRC32())
/** CRC-32/ISCSI (Castagnoli, RFC 3720 §B.4), S3's CRC32C and Cloud Storage's crc32c; 0x82f63b78 is its polynomial reflected. */
export const crc32c: DigestFactory = async () => wasmDigest(await createCRC32(0x82f63b78))
/**
 * CRC-64/NVME (NVM Express Command Set spec §5.2.1.3.3; the "CRC-64/NVME" entry of Greg Cook's
 * CRC catalogue: poly 0xad93d23594c93659, reflected, init and xorout all ones, check
 * 0xae8b14860a799888). It differs from CRC-64/XZ only in the polynomial, which hash-wasm takes
 * reflected: 0x9a6c9329ac4bc9b5.
 */
export const crc64nvme: DigestFactory = async () => wasmDigest(await createCRC64('9a6c9329ac4bc9b5'))

/** The whole object's digest in one encoding, with no parts: Cloud Storage, Azure, S3's FULL_OBJECT. */
export async function wholeObject(factory: DigestFactory, encode: (digest: Uint8Array) => string): Promise<ContentHasher> {
  const digest = await factory()
  digest.restart()
  return { update: (chunk) => digest.update(chunk), finish: () => encode(digest.digest()) }
}

/**
 * An object uploaded in a single PUT below `threshold` bytes and in parts from there on: the digest
 * of the whole object, or the digest of the parts' digests with `-N`. Both are computed in the one
 * pass, since the size is known only at the end; the whole-object digest stops at `threshold`
 * bytes (beyond it the upload was multipart) and is not needed at all when the threshold is no
 * more than a part, because then a single-PUT object is its own first part.
 */
class MultipartHasher implements ContentHasher {
  readonly #parts: PartDigests
  readonly #part: RestartableDigest
  readonly #whole: RestartableDigest | null
  readonly #threshold: number
  readonly #encode: (digest: Uint8Array) => string
  #total = 0

  constructor(part: RestartableDigest, whole: RestartableDigest | null, partSize: number, threshold: number, encode: (digest: Uint8Array) => string) {
    this.#part = part
    this.#parts = new PartDigests(part, partSize)
    this.#whole = whole
    whole?.restart()
    this.#threshold = threshold
    this.#encode = encode
  }

  update(chunk: Uint8Array): void {
    if (this.#whole && this.#total < this.#threshold) {
      this.#whole.update(chunk.subarray(0, this.#threshold - this.#total))
    }
    this.#total += chunk.length
    this.#parts.update(chunk)
  }

  finish(): string {
    const digests = this.#parts.finish()
    if (this.#total < this.#threshold) return this.#encode(this.#whole ? this.#whole.digest() : digests[0] as Uint8Array)
    this.#part.restart()
    this.#part.update(concatenated(digests))
    return `${this.#encode(this.#part.digest())}-${digests.length}`
  }
}

async function multipart(factory: DigestFactory, params: ResolvedParameters, encode: (digest: Uint8Array) => string): Promise<ContentHasher> {
  const partSize = bytesParameter(params, 'partSize')
  const threshold = bytesParameter(params, 'multipartThreshold')
  const whole = threshold > partSize ? await factory() : null
  return new MultipartHasher(await factory(), whole, partSize, threshold, encode)
}

/** `s3-etag`: hex MD5, or hex MD5 of the parts' MD5s and `-N`. Printed without the quotes HTTP puts around it. */
export function s3Etag(params: ResolvedParameters): Promise<ContentHasher> {
  return multipart(md5, params, hex)
}

/** An S3 additional checksum: FULL_OBJECT or COMPOSITE, base64 of the big-endian bytes. */
export function s3Checksum(factory: DigestFactory, params: ResolvedParameters): Promise<ContentHasher> {
  if (params.checksumType === 'FULL_OBJECT') return wholeObject(factory, base64)
  return multipart(factory, params, base64)
}

/**
 * A multipart hash split by data (segments.ts): a segment is a part. Only where the threshold is
 * at most a part, so that a single-PUT object is its own first part; otherwise undefined (the
 * whole-object digest of the first `threshold` bytes is one sequential digest).
 */
function multipartSegments(factory: DigestFactory, params: ResolvedParameters, encode: (digest: Uint8Array) => string): SegmentedHash | undefined {
  const partSize = bytesParameter(params, 'partSize')
  const threshold = bytesParameter(params, 'multipartThreshold')
  if (threshold > partSize) return undefined
  return {
    segmentStart: fixedSegments(partSize),
    async segmentDigest() {
      const digest = await factory()
      return { begin: () => digest.restart(), update: (bytes) => digest.update(bytes), end: () => digest.digest() }
    },
    emptyIsOneSegment: true,
    checkSegment(index) {
      if (index >= S3_MAX_PARTS) throw tooManyParts(partSize)
    },
    async combine(digests, length) {
      if (length < threshold) return encode(digests[0] as Uint8Array)
      const digest = await factory()
      digest.restart()
      digest.update(concatenated(digests))
      return `${encode(digest.digest())}-${digests.length}`
    },
  }
}

export const s3EtagSegments = (params: ResolvedParameters): SegmentedHash | undefined => multipartSegments(md5, params, hex)

export function s3ChecksumSegments(factory: DigestFactory, params: ResolvedParameters): SegmentedHash | undefined {
  return params.checksumType === 'FULL_OBJECT' ? undefined : multipartSegments(factory, params, base64)
}
