/**
 * OneDrive and SharePoint: a `driveItem` (Microsoft Graph, `GET /me/drive/items/{id}`), whose
 * `file.hashes` holds what the service computed ("hashes resource type"): `quickXorHash` (base64,
 * OneDrive for Business and SharePoint, and now personal OneDrive too), and on personal OneDrive
 * formerly `sha1Hash` and `sha256Hash` (hex in upper case) and `crc32Hash` (hex of the CRC-32 in
 * little-endian byte order).
 *
 * `sha1Hash` and `sha256Hash` are plain digests of the whole file, not content hashes of the
 * registry: they are fields with `digest` set. `crc32Hash` is the zlib CRC-32 with its bytes
 * reversed; it is given here in the big-endian hex the digest `crc32` prints.
 */
import { invalidMetadata } from './problems.js'
import type { ExpectedField, MetadataShape } from './types.js'
import { at, base64Of, hasPath, hexOf, isObject, optionalText, sizeOf } from './values.js'

export const oneDriveMetadata: MetadataShape = {
  name: 'onedrive',
  accepts: 'a OneDrive or SharePoint driveItem JSON (file.hashes)',
  matches: ({ json }) => json !== undefined && (hasPath(json, 'file.hashes') || (typeof json['@odata.context'] === 'string' && hasPath(json, 'file'))),
  read: ({ json = {} }) => {
    const hashes = at(json, 'file.hashes')
    if (!isObject(hashes)) throw invalidMetadata('file.hashes', 'is missing: the driveItem is not a file, or the service computed no hash yet')
    const fields: ExpectedField[] = []
    const text = (name: string): string | undefined => optionalText(`file.hashes.${name}`, hashes[name])
    const quickXor = text('quickXorHash')
    if (quickXor !== undefined) fields.push({ field: 'file.hashes.quickXorHash', contentHash: 'quickxor', parameters: {}, expected: base64Of('file.hashes.quickXorHash', quickXor, 20) })
    const sha1 = text('sha1Hash')
    if (sha1 !== undefined) fields.push({ field: 'file.hashes.sha1Hash', contentHash: null, digest: 'sha1', parameters: {}, expected: hexOf('file.hashes.sha1Hash', sha1, 20) })
    const sha256 = text('sha256Hash')
    if (sha256 !== undefined) fields.push({ field: 'file.hashes.sha256Hash', contentHash: null, digest: 'sha256', parameters: {}, expected: hexOf('file.hashes.sha256Hash', sha256, 32) })
    const crc32 = text('crc32Hash')
    if (crc32 !== undefined) {
      const bigEndian = Buffer.from(hexOf('file.hashes.crc32Hash', crc32, 4), 'hex').reverse().toString('hex')
      fields.push({ field: 'file.hashes.crc32Hash', contentHash: null, digest: 'crc32', parameters: {}, expected: bigEndian })
    }
    if (fields.length === 0) throw invalidMetadata('file.hashes', 'holds no hash hashd knows (quickXorHash, sha1Hash, sha256Hash, crc32Hash)')
    const size = sizeOf('size', json.size)
    return { shape: 'onedrive', ...(size !== undefined ? { size } : {}), fields }
  },
}
