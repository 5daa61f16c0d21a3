/** JSON schemas shared by the routes; they validate requests and become the OpenAPI document. */
import { Type } from '@sinclair/typebox'
import { algorithms } from '../algorithms/registry.js'
import { INPUT_ENCODINGS, OUTPUT_ENCODINGS } from '../domain/encoding.js'

const names = (kind?: (name: string) => boolean) => algorithms.map((algorithm) => algorithm.name).filter((name) => kind?.(name) ?? true)

export const AlgorithmName = (defaultName: string | undefined, description: string) => Type.String({
  minLength: 1,
  maxLength: 64,
  ...(defaultName ? { default: defaultName } : {}),
  description: `${description} Case-insensitive; common spellings such as SHA-256 or sha_256 are accepted. GET /api/algorithms lists every name and alias.`,
  examples: names().slice(0, 12),
})

/** The canonical names responses echo: an enum, read from the registry. */
export const CanonicalAlgorithm = Type.Unsafe<string>({ type: 'string', enum: names(), description: 'Canonical algorithm name' })

export const OutputEncoding = Type.Union(OUTPUT_ENCODINGS.map((encoding) => Type.Literal(encoding)), {
  default: 'hex', description: 'hex (lowercase), base64 (padded) or base64url (unpadded). Ignored by password hashes and formats with a standard text form.',
})

export const InputEncoding = (field: string) => Type.Union(INPUT_ENCODINGS.map((encoding) => Type.Literal(encoding)), {
  default: 'utf8', description: `How ${field} is written: utf8 text (default), or hex / base64 for binary data.`,
})

export const Problem = Type.Object({
  type: Type.String({ description: 'about:blank, or urn:hashd:problem:<kind>' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }))),
}, { additionalProperties: true, description: 'RFC 9457 problem details (application/problem+json)' })

const problemResponse = (description: string) => ({ ...Problem, description })

/** The error responses every JSON operation may give. */
export const errorResponses = {
  400: problemResponse('Malformed or invalid request'),
  413: problemResponse('Body too large'),
  415: problemResponse('Wrong Content-Type'),
  422: problemResponse('Well-formed but unprocessable (input too long for bcrypt, cost above a cap, malformed hash)'),
  429: problemResponse('Rate limited; see Retry-After'),
  503: problemResponse('Overloaded; see Retry-After'),
}

export const ProcessingTime = Type.Number({ description: 'Wall time of the hashing work itself, in milliseconds (fractional)' })
