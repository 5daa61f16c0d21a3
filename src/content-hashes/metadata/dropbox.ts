/**
 * Dropbox: the `FileMetadata` that `files/get_metadata` returns (and `files/list_folder` lists):
 * `".tag": "file"`, `name`, `size`, and `content_hash`, the hex SHA-256 of the SHA-256s of the
 * file's 4 MiB blocks (Dropbox developer reference, "Content hash"). A folder has no content_hash.
 */
import { invalidMetadata } from './problems.js'
import type { MetadataShape } from './types.js'
import { hasPath, hexOf, optionalText, sizeOf } from './values.js'

export const dropboxMetadata: MetadataShape = {
  name: 'dropbox',
  accepts: 'Dropbox files/get_metadata JSON (content_hash)',
  matches: ({ json }) => json !== undefined && (hasPath(json, 'content_hash') || (json['.tag'] === 'file' && hasPath(json, 'rev'))),
  read: ({ json = {} }) => {
    const raw = optionalText('content_hash', json.content_hash)
    if (raw === undefined) throw invalidMetadata('content_hash', 'is missing: a Dropbox folder has no content hash')
    const size = sizeOf('size', json.size)
    return {
      shape: 'dropbox',
      ...(size !== undefined ? { size } : {}),
      fields: [{ field: 'content_hash', contentHash: 'dropbox', parameters: {}, expected: hexOf('content_hash', raw, 32) }],
    }
  },
}
