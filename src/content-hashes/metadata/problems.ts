/**
 * The refusals of the metadata readers, one place for their wording. Every one names the field it
 * is about (the store's field name, under the form part `metadata`) and never quotes the value:
 * problem details do not echo input (src/problem.ts).
 */
import { problems } from '../../problem.js'

/** Where the metadata sits in the request: the form part the issue names `metadata`. */
export const METADATA_POINTER = '/body/metadata'

/** A 422: the metadata is of a known shape, but a field of it is not what that store writes. */
export function invalidMetadata(field: string, detail: string) {
  const message = `${field.slice(0, 128)}: ${detail}`
  return problems.unprocessable('invalid-metadata', 'Invalid metadata', message, {
    errors: [{ pointer: METADATA_POINTER, message }],
    field: field.slice(0, 128),
  })
}

/** A 422: the metadata is none of the shapes hashd reads; the message lists them. */
export function unknownMetadataShape(accepted: readonly string[]) {
  const detail = `The metadata is none of the shapes hashd reads: ${accepted.join('; ')}`
  return problems.unprocessable('unknown-metadata', 'Unknown metadata', detail, {
    errors: [{ pointer: METADATA_POINTER, message: 'not a known shape' }],
    shapes: accepted,
  })
}

/** A 413: metadata larger than its shape is ever written. */
export function metadataTooLarge(what: string, limit: number) {
  return problems.tooLarge(`The metadata is larger than ${limit} bytes, more than ${what} ever takes`)
}
