/**
 * Azure Blob Storage: `az storage blob show` JSON, whose `properties.contentSettings.contentMd5` is
 * the blob's Content-MD5 in base64 (RFC 1864), and the same object with `contentSettings` at the
 * top (as `az storage blob list` items and the Python SDK's `BlobProperties` serialize it).
 *
 * Azure computes Content-MD5 itself only for a blob made by one Put Blob; a blob committed from
 * blocks (Put Block List, as `az storage blob upload` does for large files) has the MD5 the
 * uploader set, or none ("Put Blob" and "Put Block List", x-ms-blob-content-md5). An empty
 * contentMd5 is therefore a field that cannot be checked, not an error.
 */
import type { MetadataShape } from './types.js'
import { at, base64Of, hasPath, optionalText, sizeOf } from './values.js'

const PATHS = ['properties.contentSettings.contentMd5', 'contentSettings.contentMd5'] as const

export const azureMetadata: MetadataShape = {
  name: 'azure',
  accepts: 'az storage blob show JSON (properties.contentSettings.contentMd5)',
  matches: ({ json }) => json !== undefined && (PATHS.some((path) => hasPath(json, path)) || hasPath(json, 'properties.blobType')),
  read: ({ json = {} }) => {
    const path = PATHS.find((candidate) => hasPath(json, candidate)) ?? PATHS[0]
    const raw = optionalText(path, at(json, path))
    const size = sizeOf('properties.contentLength', at(json, 'properties.contentLength') ?? at(json, 'size'))
    const common = { shape: 'azure' as const, ...(size !== undefined ? { size } : {}) }
    if (raw === undefined || raw === '') {
      return {
        ...common,
        fields: [{ field: 'contentSettings.contentMd5', contentHash: 'azure-md5', parameters: {}, expected: '', cannotCheck: 'the blob has no Content-MD5: Azure sets it only for a blob uploaded in one Put Blob, or when the uploader sent one' }],
      }
    }
    return { ...common, fields: [{ field: 'contentSettings.contentMd5', contentHash: 'azure-md5', parameters: {}, expected: base64Of(path, raw, 16) }] }
  },
}
