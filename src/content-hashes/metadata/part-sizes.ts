/**
 * The part sizes to try for a multipart ETag or a composite checksum (`…-N`) when the metadata does
 * not give the part size: S3 keeps only the number of parts. The sizes common tools upload with,
 * likeliest first, then the sizes the object's length and N imply; only sizes that cut the object
 * into exactly N parts, within S3's part limits, are kept.
 *
 * The tools' sizes, from their sources:
 * - 8 MiB: the AWS CLI and boto3 (s3transfer `TransferConfig.multipart_chunksize`), and the AWS SDK
 *   for Java 2.x transfer manager; for more than 10,000 parts s3transfer's `ChunksizeAdjuster`
 *   doubles it until the parts fit, so 16, 32, 64, 128 MiB … 4 GiB follow;
 * - 5 MiB: S3's minimum, and the default of the AWS SDK for JavaScript v3 (`@aws-sdk/lib-storage`
 *   `Upload`, MIN_PART_SIZE), of the AWS SDK for Go v2 (`feature/s3/manager`
 *   DefaultUploadPartSize) and of rclone (`--s3-chunk-size`);
 * - 16 MiB: minio-go (and so `mc`), whose `minPartSize` is 16 MiB and whose optimal part size is a
 *   multiple of it;
 * - 15 MiB: s3cmd (`multipart_chunk_size_mb = 15`).
 *
 * The implied sizes: N parts of p bytes hold between (N-1)·p + 1 and N·p bytes, so p lies in
 * [ceil(len / N), ceil(len / (N-1)) - 1]. The smallest such p rounded up to a whole MiB (tools that
 * divide the length by a part count and round), then the smallest exactly.
 */
import { MiB } from '../parameters.js'
import { S3_MAX_PART_BYTES, S3_MAX_PARTS, S3_MIN_PART_BYTES } from '../parts.js'

/** The AWS CLI's 8 MiB and its doublings, up to S3's 5 GiB part (s3transfer ChunksizeAdjuster). */
const AWS_CLI_SIZES: readonly number[] = Array.from({ length: 10 }, (_, doublings) => 8 * MiB * 2 ** doublings)

/** The tools' part sizes, likeliest first: what is tried when the object's length is unknown. */
export const COMMON_PART_SIZES: readonly number[] = [8 * MiB, 5 * MiB, 16 * MiB, 15 * MiB, ...AWS_CLI_SIZES.slice(2)]

/**
 * The part sizes to try for an object of `parts` parts and, when known, `length` bytes; empty when
 * no part size S3 allows gives that many parts. One part of a known length: every size from the
 * length up gives the same answer, so only the first is returned.
 */
export function partSizeCandidates(parts: number, length?: number): number[] {
  if (!Number.isSafeInteger(parts) || parts < 1 || parts > S3_MAX_PARTS) return []
  if (length === undefined) return [...COMMON_PART_SIZES]
  // Parts before the last are at least 5 MiB; a lone part may be any size up to 5 GiB.
  const smallest = Math.max(S3_MIN_PART_BYTES, Math.ceil(length / parts))
  const largest = Math.min(S3_MAX_PART_BYTES, parts === 1 ? S3_MAX_PART_BYTES : Math.ceil(length / (parts - 1)) - 1)
  if (length === 0 && parts !== 1) return []
  if (smallest > largest) return []
  const implied = [Math.ceil(smallest / MiB) * MiB, smallest]
  const fits = (size: number): boolean => size >= smallest && size <= largest
  const candidates = [...new Set([...COMMON_PART_SIZES, ...implied])].filter(fits)
  return parts === 1 ? candidates.slice(0, 1) : candidates
}
