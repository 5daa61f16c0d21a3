/**
 * Google Cloud Storage: `gcloud storage objects describe gs://bucket/object --format=json`, whose
 * fields are snake_case (`crc32c_hash`, `md5_hash`, `size`, `storage_url`, `component_count`), and
 * the JSON API's object resource as `gsutil stat`'s source and `curl` print it (`"kind":
 * "storage#object"`, `crc32c`, `md5Hash`, `size` as a decimal string, `componentCount`).
 *
 * Both hashes are base64 of the big-endian bytes. A composite object (`gcloud storage objects
 * compose`) has a crc32c of its whole content but no MD5 ("Hashes and ETags: Best practices"):
 * then md5Hash is simply absent.
 */
import { invalidMetadata } from './problems.js'
import type { ExpectedField, MetadataShape } from './types.js'
import { base64Of, hasPath, optionalText, sizeOf } from './values.js'

/** Each hash under the name of either tool: gcloud storage's first, then the JSON API's. */
const GCS_FIELDS = [
  { names: ['crc32c_hash', 'crc32c'], contentHash: 'gcs-crc32c', bytes: 4 },
  { names: ['md5_hash', 'md5Hash'], contentHash: 'gcs-md5', bytes: 16 },
] as const

export const gcsMetadata: MetadataShape = {
  name: 'gcs',
  accepts: 'gcloud storage objects describe --format=json, or the Cloud Storage JSON API object (crc32c, md5Hash)',
  matches: ({ json }) => json !== undefined && (json.kind === 'storage#object' || GCS_FIELDS.some(({ names }) => names.some((name) => hasPath(json, name)))),
  read: ({ json = {} }) => {
    const fields: ExpectedField[] = []
    for (const { names, contentHash, bytes } of GCS_FIELDS) {
      const field = names.find((name) => json[name] !== undefined && json[name] !== null)
      if (field === undefined) continue
      fields.push({ field, contentHash, parameters: {}, expected: base64Of(field, optionalText(field, json[field]) as string, bytes) })
    }
    if (fields.length === 0) throw invalidMetadata('crc32c', 'the Cloud Storage object has neither crc32c nor md5Hash')
    const size = sizeOf('size', json.size)
    return { shape: 'gcs', ...(size !== undefined ? { size } : {}), fields }
  },
}
