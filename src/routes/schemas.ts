/**
 * JSON schemas shared by the routes; they validate requests and become the OpenAPI document
 * (plugins/openapi.ts). Conventions every route follows, so that the document describes the server
 * exactly (docs/development.md, "The API document"):
 * - error statuses use `errorResponses` (or `problemResponse`): RFC 9457 application/problem+json;
 *   429, 503 and, with API keys, 401 are added to every operation by plugins/openapi.ts;
 * - an algorithm field uses `AlgorithmName(operation, …)`: the document lists the canonical names
 *   that operation accepts as an enum, while the server also takes aliases in any case;
 * - a field the server reads more leniently than the document states is marked with
 *   `documentedAs(schema, extra)`: the server validates `schema`, the document shows `schema` and
 *   `extra`; nothing else may differ between the two.
 */
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { algorithms, refusal } from '../algorithms/registry.js'
import type { Operation } from '../algorithms/types.js'
import { KEY_PURPOSES } from '../keys/hmac.js'
import { INPUT_ENCODINGS, OUTPUT_ENCODINGS, type InputEncoding as InputEncodingName, type OutputEncoding as OutputEncodingName } from '../domain/encoding.js'
import { MAX_CONTEXT_LENGTH, MAX_CONTEXT_WORDS, REASON_CODES } from '../screening/screen.js'

/** Where `documentedAs` keeps what the document adds to a schema. A symbol: ajv and JSON never see it. */
const DOCUMENT_EXTRA = Symbol('hashd.documentExtra')

/** Marks `schema` so that the OpenAPI document shows it with `extra` merged in; the server validates it as it is. */
export function documentedAs<T extends TSchema>(schema: T, extra: Record<string, unknown>): T {
  Object.defineProperty(schema, DOCUMENT_EXTRA, { value: extra, enumerable: true })
  return schema
}

/**
 * A copy of `schema` that the server validates without its `default` (so that ajv does not fill it
 * in) while the document still shows it. For fields whose default the domain applies itself:
 * a batch's own fields apply to its items only where the items leave them out (routes/batch.ts).
 */
export function withDocumentedDefault<T extends TSchema>(schema: T): T {
  if (!('default' in schema)) return schema
  const { default: fallback, ...rest } = schema as T & { default: unknown }
  const extra = (schema as unknown as Record<symbol, Record<string, unknown> | undefined>)[DOCUMENT_EXTRA] ?? {}
  return documentedAs(rest as unknown as T, { ...extra, default: fallback })
}

/**
 * A copy of `schema` that the document shows as the server validates it, without what
 * `documentedAs` added (the enum of algorithm names), and with `note` added to its description:
 * for a batch item's fields, where a name the server does not take is that item's problem in a 200.
 */
export function withoutDocumentExtra<T extends TSchema>(schema: T, note: string): T {
  const copy = { ...schema } as T & Record<string | symbol, unknown>
  if (!(DOCUMENT_EXTRA in copy)) return schema
  delete copy[DOCUMENT_EXTRA]
  return { ...copy, description: `${String(copy.description ?? '')} ${note}`.trim() } as T
}

/**
 * A copy of a route schema as the document shows it: every schema marked by `documentedAs` gets its
 * extra keywords. Plain data is copied; anything else (symbols, functions) is left as it is.
 */
export function documentView(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(documentView)
  if (value === null || typeof value !== 'object') return value
  const source = value as Record<string | symbol, unknown>
  const copy: Record<string | symbol, unknown> = {}
  for (const key of Reflect.ownKeys(source)) {
    if (key === DOCUMENT_EXTRA) continue
    copy[key] = typeof key === 'string' ? documentView(source[key]) : source[key]
  }
  const extra = source[DOCUMENT_EXTRA] as Record<string, unknown> | undefined
  return extra ? { ...copy, ...extra } : copy
}

/** The canonical names an operation accepts, in registry order. */
export const canonicalNamesFor = (operation: Operation): string[] =>
  algorithms.filter((algorithm) => refusal(algorithm, operation) === null).map((algorithm) => algorithm.name)

/** The canonical names of the password schemes an operation accepts. */
export const passwordNamesFor = (operation: Operation): string[] =>
  algorithms.filter((algorithm) => algorithm.kind === 'password' && refusal(algorithm, operation) === null).map((algorithm) => algorithm.name)

const LENIENCY = 'The server also accepts, case-insensitively and ignoring "-", "_", "/", "." and spaces, '
  + 'the display names and aliases GET /api/algorithms lists (and the document\'s root `x-hashd-algorithm-aliases`), e.g. SHA-256 or sha_256; '
  + 'any other value is 400 urn:hashd:problem:unknown-algorithm (with `suggestions` for near misses), '
  + 'and a known algorithm this operation does not take is 400 urn:hashd:problem:algorithm-not-allowed.'

/**
 * An algorithm field of `operation`. The server checks the name itself (algorithm-lookup.ts), so
 * that aliases in any case work and an unknown name gets suggestions; the document states the
 * exact set of canonical names as an enum.
 */
export const AlgorithmName = (operation: Operation, defaultName: string | undefined, description: string, contentHashes: readonly string[] = []) => documentedAs(
  Type.String({ minLength: 1, maxLength: 64, ...(defaultName ? { default: defaultName } : {}), description: `${description} ${LENIENCY}` }),
  { enum: [...canonicalNamesFor(operation), ...contentHashes], 'x-hashd-case-insensitive': true },
)

/**
 * A comma-separated list of algorithm names (POST /api/filehash `algorithms`). `contentHashes`:
 * the content-hash registry's names the operation also takes (src/content-hashes), which do not
 * count against `maxNames`.
 */
export const AlgorithmList = (operation: Operation, maxNames: number, contentHashes: readonly string[] = []) => {
  const name = `(?:${[...canonicalNamesFor(operation), ...contentHashes].map((each) => each.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`
  const content = contentHashes.length === 0 ? '' : ` Also the content hashes ${contentHashes.join(', ')} (canonical names only, any case), which are not counted against the ${maxNames}; each is printed in its store's own form and takes its parameters from the fields of the same names.`
  return documentedAs(
    Type.String({ minLength: 1, maxLength: 1024, default: 'sha256', description: `Comma-separated algorithm names, at most ${maxNames} different digests; duplicates collapse. ${LENIENCY}${content}` }),
    { pattern: `^\\s*${name}\\s*(?:,\\s*${name}\\s*)*$`, 'x-hashd-case-insensitive': true },
  )
}

/** The canonical names responses echo: an enum, read from the registry. */
export const CanonicalAlgorithm = Type.Unsafe<string>({ type: 'string', enum: algorithms.map((algorithm) => algorithm.name), description: 'Canonical algorithm name' })

/**
 * Encodings are one closed, lowercase set each: an enum (not a union of constants), so a wrong
 * value is one error that lists the allowed values. They are case-sensitive, unlike algorithm
 * names: each has one spelling, so the document can state it exactly.
 */
export const OutputEncoding: TUnsafe<OutputEncodingName> = Type.Unsafe<OutputEncodingName>({
  type: 'string', enum: [...OUTPUT_ENCODINGS], default: 'hex',
  description: 'hex (lowercase), base64 (padded) or base64url (unpadded); lowercase as written. Ignored by password hashes and formats with a standard text form.',
})

export const InputEncoding = (field: string): TUnsafe<InputEncodingName> => Type.Unsafe<InputEncodingName>({
  type: 'string', enum: [...INPUT_ENCODINGS], default: 'utf8',
  description: `How ${field} is written: utf8 text (default), or hex / base64 for binary data; lowercase as written. A ${field} that is not valid in its encoding is 400 with the pointer /body/${field}.`,
})

/**
 * What a field written in an input encoding must look like, for the document: the server reads it
 * with decodeInput (domain/encoding.ts), which is as strict as these patterns and answers 400 with
 * the field's pointer. hex: pairs of digits in either case. base64: RFC 4648 §4 with its padding
 * whole, partial or left out, or §5 base64url unpadded; a length of 4k+1 is never base64.
 */
export const ENCODED_PATTERNS: Readonly<Record<Exclude<InputEncodingName, 'utf8'>, string>> = {
  hex: '^(?:[0-9a-fA-F]{2})*$',
  base64: '^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==?)?|[A-Za-z0-9+/]{3}=?)?|(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?)$',
}

/**
 * For a field whose encoding another field names (`input` by `inputEncoding`), to go in a body's
 * `allOf` through `documentedAs`: the field matches its encoding's pattern. One `anyOf` with a
 * branch per encoding rather than an if/then per encoding: generators that canonicalize the schema
 * (Schemathesis) give up on the product of many if/then pairs beside the per-algorithm options.
 */
export function encodedFieldRule(field: string, encodingField: string): unknown {
  return {
    anyOf: [
      { properties: { [encodingField]: { enum: ['utf8'] } } },
      ...Object.entries(ENCODED_PATTERNS).map(([encoding, pattern]) => ({
        required: [encodingField], properties: { [encodingField]: { enum: [encoding] }, [field]: { pattern } },
      })),
    ],
  }
}

export const PROBLEM_JSON = 'application/problem+json'

export const Problem = Type.Object({
  type: Type.String({ description: 'about:blank, or urn:hashd:problem:<kind> (docs/api.md lists every kind)' }),
  title: Type.String(),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({
    pointer: Type.String({ description: 'JSON Pointer into the request: /body/<field>, /querystring/<field>, or /body for the whole body' }),
    message: Type.String(),
  }), { description: 'The fields at fault (validation problems)' })),
  suggestions: Type.Optional(Type.Array(Type.String(), { description: 'unknown-algorithm: canonical names close to the one given ("did you mean")' })),
  algorithms: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], {
    description: 'unknown-algorithm: where the list of algorithms is (a path); algorithm-not-allowed-for-key: the algorithms the key allows (a list)',
  })),
  purpose: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: [...KEY_PURPOSES], description: 'key-purpose: the purpose= of HMAC_KEYS_FILE a named key needs for this operation' })),
  policy: Type.Optional(Type.String({ description: '429 from the rate limit: the budget that refused, as the RateLimit field names it: "default" (requests) or "items" (batch items)' })),
}, { additionalProperties: true, description: 'RFC 9457 problem details (application/problem+json)' })

/** Response headers the document names (OpenAPI header objects); plugins/openapi.ts adds them where they apply. */
export const HEADERS = {
  retryAfter: { 'Retry-After': { required: true, description: 'Seconds to wait before retrying (RFC 9110 §10.2.3)', schema: { type: 'integer', minimum: 0 } } },
  allow: { Allow: { required: true, description: 'The methods this path takes', schema: { type: 'string' } } },
  wwwAuthenticate: { 'WWW-Authenticate': { required: true, description: 'Bearer challenge (RFC 6750 §3)', schema: { type: 'string' } } },
  rateLimit: {
    RateLimit: {
      required: false, schema: { type: 'string' },
      description: 'Remaining quota and seconds to reset (draft-ietf-httpapi-ratelimit-headers), when rate limiting is on: "default" (requests), and "items" (batch items) ' +
        'on a batch; a 429 names only the budget that refused it',
    },
    'RateLimit-Policy': { required: false, description: 'The quotas and window (draft-ietf-httpapi-ratelimit-headers), when rate limiting is on: "default" (requests), and "items" (batch items) on a batch', schema: { type: 'string' } },
  },
} as const

/** An error response: problem+json. plugins/openapi.ts adds the headers that belong to its status. */
export const problemResponse = (description: string) => ({ description, content: { [PROBLEM_JSON]: { schema: Problem } } })

const DEFAULT_ERRORS = {
  400: 'Malformed or invalid request: the body or query does not match the schema (each field at fault is in `errors`), an unknown algorithm or one this operation does not take',
  413: 'Body too large (BODY_LIMIT, MAX_FILE_SIZE)',
  415: 'Wrong Content-Type',
  422: 'Well-formed but unprocessable',
  503: 'Overloaded or shutting down; see Retry-After',
}

/**
 * The error responses of an operation that takes a body, with the operation's own rules named in
 * the 400 and 422 descriptions (rules a schema cannot state: a key that is not valid base64, options
 * to an algorithm that takes none, a malformed hash…).
 */
export function errorResponsesWith(rules: { 400?: string, 413?: string, 422?: string, 501?: string, 503?: string } = {}) {
  return {
    ...(rules[501] ? { 501: problemResponse(rules[501]) } : {}),
    400: problemResponse(rules[400] ? `${DEFAULT_ERRORS[400]}; ${rules[400]}` : DEFAULT_ERRORS[400]),
    413: problemResponse(rules[413] ? `${DEFAULT_ERRORS[413]}; ${rules[413]}` : DEFAULT_ERRORS[413]),
    415: problemResponse(DEFAULT_ERRORS[415]),
    422: problemResponse(rules[422] ? `${DEFAULT_ERRORS[422]}: ${rules[422]}` : DEFAULT_ERRORS[422]),
    429: problemResponse('Rate limited; see Retry-After'),
    503: problemResponse(rules[503] ? `${DEFAULT_ERRORS[503]}; ${rules[503]}` : DEFAULT_ERRORS[503]),
  }
}

/** The error responses every JSON operation may give. */
export const errorResponses = errorResponsesWith()

const PdqHex = Type.String({ pattern: '^[0-9a-f]{64}$', description: '256 bits as 64 lowercase hex digits, as Meta\'s reference prints them' })

/** PDQ of an image (similarity/pdq): `hashes.pdq` in /api/filehash. */
export const PdqHashSchema = Type.Object({
  hash: PdqHex,
  quality: Type.Integer({ minimum: 0, maximum: 100, description: 'How much significant gradient the image has, 0–100; Meta advises ignoring hashes of quality below 50' }),
  dihedral: Type.Optional(Type.Object({
    rotate90: PdqHex, rotate180: PdqHex, rotate270: PdqHex, flipX: PdqHex, flipY: PdqHex, flipPlus1: PdqHex, flipMinus1: PdqHex,
  }, { description: 'With dihedral=true: the hashes of the image rotated by 90°, 180° and 270° and flipped (about either axis and either diagonal), named as in Meta\'s reference' })),
}, { description: 'PDQ (Meta): the perceptual hash of the image and its quality' })

export const ProcessingTime = Type.Number({ description: 'Wall time of the hashing work itself, in milliseconds (fractional)' })

export const ReasonCode = Type.Unsafe<string>({
  type: 'string', enum: [...REASON_CODES],
  description: 'too-short, too-long (the length policy), common (the built-in list of common passwords), breached (the breached-password store), context (the user\'s own words, or the organization\'s blocklist)',
})

/** What screening found: POST /api/passwords/check's answer, and `screening` in hash and verify answers. */
export const Screened = Type.Object({
  acceptable: Type.Boolean({ description: 'true when no reason below applies' }),
  reasons: Type.Array(Type.Object({ code: ReasonCode, message: Type.String({ description: 'What is wrong and what to do, for the user; never quotes the password' }) })),
  breachCount: Type.Optional(Type.Integer({ minimum: 0, description: 'Times the password appears in the breached-password data; present when a store was read (0: not found)' })),
  checked: Type.Array(Type.String(), { description: 'The comparisons made: length, common, blocklist (PASSWORD_BLOCKLIST_FILE), context (when given), breached (PWNED_STORE)' }),
  warnings: Type.Array(Type.String(), { description: 'What could not be checked, and why' }),
})

export const ContextWords = Type.Array(Type.String({ maxLength: MAX_CONTEXT_LENGTH }), {
  maxItems: MAX_CONTEXT_WORDS,
  description: 'Words the password must not be built from: the user name, the e-mail address, the service\'s name. Compared whole and by their parts (an e-mail\'s local part, the words of a name)',
  examples: [['alice', 'alice@example.com', 'Example Mail']],
})
