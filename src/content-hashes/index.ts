/**
 * Every content hash hashd knows, as data, in the manner of RHash's table that lists TTH, AICH
 * and BTIH beside MD5: the name, the store or protocol that reports it, how it is printed, its
 * parameters with their defaults and bounds, and a streaming `create`. A part size or a piece
 * length is a parameter of the entry, not a separate algorithm.
 */
import { AichHash, aichSegments } from './aich.js'
import { BT_MAX_PIECE_BYTES, BT_MIN_PIECE_BYTES, Bt2PiecesRoot, BtihV1, btihSegments } from './bittorrent.js'
import { DropboxContentHash, dropboxSegments } from './dropbox.js'
import { base64 } from './encoding.js'
import { GitBlobId } from './git.js'
import { MagnetLink, magnetSplit } from './magnet.js'
import { bytesParameter, optionalBytesParameter, resolveParameters, textParameter } from './parameters.js'
import { QuickXorHash, quickXorSegments } from './quickxor.js'
import {
  checksumTypeParameter, crc32, crc32c, crc64nvme, md5, multipartThresholdParameter, partSizeParameter, s3Checksum, s3Etag,
  s3ChecksumSegments, s3EtagSegments, sha1, sha256, wholeObject, type ChecksumType, type DigestFactory,
} from './s3.js'
import { splitSegments, type SegmentedHash } from './segments.js'
import { TigerTreeHash, tthSegments } from './tth.js'
import type { ByteSizeParameter, ContentHash, ContentHasher, ParameterSpec, RawParameters } from './types.js'

export type { ContentHash, ContentHasher, ParameterSpec, RawParameters, ResolvedParameters } from './types.js'
export { resolveParameters } from './parameters.js'

const OPENSSL = 'OpenSSL (node:crypto)'
const HASH_WASM = 'hash-wasm (WASM)'
const HAND_WRITTEN = 'hashd (src/content-hashes)'
const S3_CHECKSUMS = 'Amazon S3 User Guide, "Checking object integrity in Amazon S3" (full object and composite checksums)'

/** The size up front, for hashes whose first bytes depend on it (git's `blob <size>\0` header). */
const sizeParameter = (description: string, optional = false): ByteSizeParameter => ({
  kind: 'bytes', description, min: 0, max: Number.MAX_SAFE_INTEGER, ...(optional ? { optional } : {}),
})

/** btih's, and the magnet link's, which carries btih and names the file in `dn` too. */
const torrentParameters: Readonly<Record<string, ParameterSpec>> = {
  name: {
    kind: 'text', description: 'the file name the torrent carries (its info dictionary\'s name): a base name, no directories',
    minBytes: 1, maxBytes: 255,
    forbidden: [{ pattern: /[/\\]/, reason: 'must be a base name, without / or \\' }, { pattern: /\0/, reason: 'must not contain NUL' }],
  },
  pieceLength: {
    kind: 'bytes', description: 'the torrent\'s piece length; when absent, RHash\'s default for the size (16 KiB below 16 MiB, up to 8 MiB)',
    optional: true, min: BT_MIN_PIECE_BYTES, max: BT_MAX_PIECE_BYTES,
  },
  size: sizeParameter('the content\'s size in bytes; needed up front only without pieceLength, to choose RHash\'s default piece length', true),
}

function s3ChecksumEntry(name: string, displayName: string, factory: DigestFactory, implementation: string, types: readonly ChecksumType[], fallback: ChecksumType, field: string): ContentHash {
  const composite = types.includes('COMPOSITE')
  return {
    name, displayName, store: `Amazon S3: ${field} (head-object --checksum-mode ENABLED)`, output: 'base64',
    outputNote: composite ? 'base64 of the big-endian checksum; COMPOSITE adds -N for a multipart upload' : 'base64 of the big-endian checksum',
    reference: S3_CHECKSUMS, implementation,
    parameters: composite
      ? { checksumType: checksumTypeParameter(types, fallback), partSize: partSizeParameter, multipartThreshold: multipartThresholdParameter }
      : { checksumType: checksumTypeParameter(types, fallback) },
    create: (params) => s3Checksum(factory, params),
    split: (params) => optionalSplit(s3ChecksumSegments(factory, params)),
  }
}

export const contentHashes: readonly ContentHash[] = [
  {
    name: 's3-etag', displayName: 'S3 ETag', store: 'Amazon S3: ETag (of unencrypted and SSE-S3 objects)', output: 'hex',
    outputNote: 'hex MD5 for a single PUT; for a multipart upload, hex MD5 of the parts\' MD5s, then -N; without HTTP\'s quotes',
    reference: 'Amazon S3 User Guide, "Checking object integrity" (ETag); AWS CLI s3 transfer settings (multipart_chunksize, multipart_threshold)',
    implementation: OPENSSL,
    parameters: { partSize: partSizeParameter, multipartThreshold: multipartThresholdParameter },
    create: s3Etag,
    split: (params) => optionalSplit(s3EtagSegments(params)),
  },
  s3ChecksumEntry('s3-crc64nvme', 'S3 CRC-64/NVME', crc64nvme, HASH_WASM, ['FULL_OBJECT'], 'FULL_OBJECT', 'ChecksumCRC64NVME'),
  s3ChecksumEntry('s3-crc32', 'S3 CRC-32', crc32, HASH_WASM, ['FULL_OBJECT', 'COMPOSITE'], 'FULL_OBJECT', 'ChecksumCRC32'),
  s3ChecksumEntry('s3-crc32c', 'S3 CRC-32C', crc32c, HASH_WASM, ['FULL_OBJECT', 'COMPOSITE'], 'FULL_OBJECT', 'ChecksumCRC32C'),
  // S3 takes SHA checksums of a multipart upload only as COMPOSITE; FULL_OBJECT is a single PUT's.
  s3ChecksumEntry('s3-sha1', 'S3 SHA-1', sha1, OPENSSL, ['COMPOSITE', 'FULL_OBJECT'], 'COMPOSITE', 'ChecksumSHA1'),
  s3ChecksumEntry('s3-sha256', 'S3 SHA-256', sha256, OPENSSL, ['COMPOSITE', 'FULL_OBJECT'], 'COMPOSITE', 'ChecksumSHA256'),
  {
    // A composed object's crc32c is still the CRC of its whole content (Cloud Storage docs, "Hashes and ETags").
    name: 'gcs-crc32c', displayName: 'Cloud Storage CRC-32C', store: 'Google Cloud Storage: crc32c (objects describe, JSON API)', output: 'base64',
    outputNote: 'base64 of the big-endian CRC-32C', reference: 'Cloud Storage documentation, "Hashes and ETags: Best practices"; RFC 4960 Appendix B',
    implementation: HASH_WASM, parameters: {}, create: () => wholeObject(crc32c, base64),
  },
  {
    name: 'gcs-md5', displayName: 'Cloud Storage MD5', store: 'Google Cloud Storage: md5Hash (objects describe, JSON API; not for composite objects)', output: 'base64',
    outputNote: 'base64 of the MD5', reference: 'Cloud Storage documentation, "Hashes and ETags: Best practices"',
    implementation: OPENSSL, parameters: {}, create: () => wholeObject(md5, base64),
  },
  {
    name: 'azure-md5', displayName: 'Azure Blob Content-MD5', store: 'Azure Blob Storage: Content-MD5 (contentSettings.contentMd5 in az storage blob show)', output: 'base64',
    outputNote: 'base64 of the MD5', reference: 'Azure Storage REST API, "Put Blob" and "Get Blob Properties" (Content-MD5); RFC 1864',
    implementation: OPENSSL, parameters: {}, create: () => wholeObject(md5, base64),
  },
  {
    name: 'dropbox', displayName: 'Dropbox content hash', store: 'Dropbox: content_hash (files/get_metadata)', output: 'hex',
    outputNote: 'hex SHA-256 of the SHA-256s of 4 MiB blocks', reference: 'Dropbox developer reference, "Content hash"',
    implementation: `${HAND_WRITTEN} over ${OPENSSL}`, parameters: {}, create: () => new DropboxContentHash(), split: () => splitSegments(dropboxSegments),
  },
  {
    name: 'quickxor', displayName: 'QuickXorHash', store: 'OneDrive and SharePoint: file.hashes.quickXorHash (driveItem)', output: 'base64',
    outputNote: 'base64 of the 20-byte hash', reference: 'Microsoft OneDrive developer documentation, "QuickXorHash" code snippet',
    implementation: HAND_WRITTEN, parameters: {}, create: () => new QuickXorHash(), split: () => splitSegments(quickXorSegments),
  },
  {
    name: 'git-blob-sha1', displayName: 'Git blob id (SHA-1)', store: 'Git: blob object id (git hash-object, git ls-tree)', output: 'hex',
    outputNote: 'hex SHA-1 of "blob <size>\\0" and the content', reference: 'Git documentation, gitformat-object and "Git Internals - Git Objects"',
    implementation: OPENSSL, parameters: { size: sizeParameter('the content\'s size in bytes, which git puts in the object header before the content') },
    create: (params) => new GitBlobId('sha1', bytesParameter(params, 'size')),
  },
  {
    name: 'git-blob-sha256', displayName: 'Git blob id (SHA-256)', store: 'Git: blob object id in a SHA-256 repository (git init --object-format=sha256)', output: 'hex',
    outputNote: 'hex SHA-256 of "blob <size>\\0" and the content', reference: 'Git documentation, hash-function-transition and gitformat-object',
    implementation: OPENSSL, parameters: { size: sizeParameter('the content\'s size in bytes, which git puts in the object header before the content') },
    create: (params) => new GitBlobId('sha256', bytesParameter(params, 'size')),
  },
  {
    name: 'tth', displayName: 'Tiger Tree Hash', store: 'Direct Connect and Gnutella: TTH (DC++, urn:tree:tiger: in magnet links)', output: 'base32',
    outputNote: 'base32 (RFC 4648, upper case, 39 characters)', reference: 'THEX, Tree Hash EXchange format (Chapweske and Mohr, 2003), 1,024-byte leaves; as RHash --tth',
    implementation: `${HAND_WRITTEN} over hashd's Tiger (C compiled to WebAssembly)`, parameters: {}, create: () => new TigerTreeHash(), split: () => splitSegments(tthSegments),
  },
  {
    name: 'aich', displayName: 'eMule AICH', store: 'eMule and aMule: AICH root hash (h= in ed2k links, urn:aich: in magnet links)', output: 'base32',
    outputNote: 'base32 (RFC 4648, upper case, 32 characters)', reference: 'aMule wiki, "AICH"; eMule SHAHashSet.cpp; as RHash --aich',
    implementation: `${HAND_WRITTEN} over ${OPENSSL}`, parameters: {}, create: () => new AichHash(), split: () => splitSegments(aichSegments),
  },
  {
    name: 'btih', displayName: 'BitTorrent v1 info-hash', store: 'BitTorrent v1: info-hash of a single-file torrent (urn:btih: in magnet links)', output: 'hex',
    outputNote: 'hex SHA-1 of the bencoded info dictionary', reference: 'BEP 3, "The BitTorrent Protocol Specification"; piece length as RHash --btih',
    implementation: `${HAND_WRITTEN} over ${OPENSSL}`,
    parameters: torrentParameters,
    create: (params) => new BtihV1(textParameter(params, 'name') as string, optionalBytesParameter(params, 'pieceLength'), optionalBytesParameter(params, 'size')),
    split: (params) => optionalSplit(btihSegments(textParameter(params, 'name') as string, optionalBytesParameter(params, 'pieceLength'), optionalBytesParameter(params, 'size'))),
  },
  {
    name: 'bt2-root', displayName: 'BitTorrent v2 pieces root', store: 'BitTorrent v2: a file\'s pieces root (file tree of a v2 torrent)', output: 'hex',
    outputNote: 'hex SHA-256 Merkle root over 16 KiB blocks; empty for an empty file, which has none', reference: 'BEP 52, "The BitTorrent Protocol Specification v2"',
    implementation: `${HAND_WRITTEN} over ${OPENSSL}`, parameters: {}, create: () => new Bt2PiecesRoot(),
  },
  {
    name: 'ipfs-cid', displayName: 'IPFS CID', store: 'IPFS: the CID ipfs add gives (kubo defaults: UnixFS, 256 KiB chunks, balanced DAG of 174 links)', output: 'multibase',
    outputNote: 'CIDv0 in base58btc (Qm…) by default; cidVersion=1: CIDv1 with raw leaves in base32 (bafy…, or bafk… for a file of one chunk)',
    reference: 'IPFS specifications: UnixFS, DAG-PB and CID; kubo ipfs add (--cid-version, --raw-leaves); ipfs-unixfs-importer\'s balanced layout',
    implementation: `${HAND_WRITTEN} over multiformats, @ipld/dag-pb, ipfs-unixfs and ${OPENSSL}`,
    parameters: {
      cidVersion: {
        kind: 'choice', description: 'the CID version, as ipfs add --cid-version: 0 (dag-pb leaves, base58btc) or 1 (raw leaves, base32)',
        values: ['0', '1'], default: '0',
      },
    },
    // Imported on first use: multiformats, dag-pb and UnixFS take some 100 ms to load, which a start need not pay.
    create: async (params) => new (await import('./ipfs.js')).IpfsCid(textParameter(params, 'cidVersion') === '1' ? 1 : 0),
  },
  {
    name: 'magnet', displayName: 'Magnet link', store: 'Peer-to-peer clients: a magnet link (BitTorrent, eMule, DC++), as rhash --magnet --btih --tth --ed2k --aich', output: 'uri',
    outputNote: 'magnet:?xl=<size>&dn=<name, percent-encoded>&xt=urn:tree:tiger:<tth>&xt=urn:btih:<btih>&xt=urn:ed2k:<ed2k>&xt=urn:aich:<aich>, the hashes in lower case',
    reference: 'RHash --magnet (librhash rhash_print_magnet); BEP 9 (magnet URI format); RFC 3986 §2 (percent-encoding)',
    implementation: `${HAND_WRITTEN}: its TTH, AICH and btih, and ed2k over hash-wasm's MD4 (WASM)`,
    parameters: torrentParameters,
    create: (params) => MagnetLink.create(textParameter(params, 'name') as string, optionalBytesParameter(params, 'pieceLength'), optionalBytesParameter(params, 'size')),
    split: (params) => magnetSplit(textParameter(params, 'name') as string, optionalBytesParameter(params, 'pieceLength'), optionalBytesParameter(params, 'size')),
  },
]

const optionalSplit = (hash: SegmentedHash | undefined) => (hash === undefined ? undefined : splitSegments(hash))

const byName = new Map(contentHashes.map((entry) => [entry.name, entry]))

export function findContentHash(name: string): ContentHash | undefined {
  return byName.get(name.toLowerCase())
}

/** Validates the parameters (a 422 naming the field) and makes a hasher. */
export async function createContentHasher(entry: ContentHash, raw: RawParameters = {}): Promise<ContentHasher> {
  return entry.create(resolveParameters(entry, raw))
}
