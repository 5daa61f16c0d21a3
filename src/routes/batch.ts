/**
 * What a route needs to take batches (domain/batch.ts runs them): the body schema that takes one
 * item or `items`, the answer schema, and the glue that counts the items against the rate limit
 * and hands them to the runner. A route declares its item's fields once; the single request and
 * each batch item are the same object, plus `reference`.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Operation } from '../algorithms/types.js'
import { algorithmFor } from '../domain/algorithm-lookup.js'
import { asciiInto, decodeInput, type InputEncoding } from '../domain/encoding.js'
import { runBatch, type BatchAnswer, type FieldGroup } from '../domain/batch.js'
import { problems } from '../problem.js'
import { documentedAs, Problem, ProcessingTime, withDocumentedDefault, withoutDocumentExtra } from './schemas.js'

export const Reference = Type.String({ maxLength: 256, description: 'Anything the caller likes (an id, a row number), echoed back in this item\'s result; at most 256 characters' })

/**
 * The body of an operation that takes one item or a batch: the item's fields, with those the item
 * requires required (oneOf) unless `items` is given instead. In a batch, the fields given at the
 * top apply to every item that does not give its own. What the document adds (documentedAs),
 * rules the server checks at run time: `single`, on the single request's branch of the oneOf (the
 * algorithm-option and pepper rules of /api/hash, exactly one of key and keyName), because a batch
 * item that breaks one is a `problem` in its result while the batch is 200; `shared`, on the whole
 * body (the encoding patterns), for rules batchOrSingle also checks on a batch's own fields (its
 * `encodedFields`); `batch`, on the batch's branch, for rules of the fields at the top that the
 * route's `checkTop` refuses for the whole batch (password work, a contradictory key choice). Items
 * carry none of them: the batch description says how an item fails. (Each kept
 * apart so that a generator can still negate the body: Schemathesis gives up on the product of
 * the option groups and the encodings in one branch.)
 */
export function batchableBody<P extends TProperties>(properties: P, config: Config['batch'], documentExtra: { single?: unknown[], shared?: unknown[], batch?: unknown[] } = {}) {
  const single = Type.Object(properties, { additionalProperties: false })
  const required: string[] = [...(single.required as string[] | undefined ?? [])]
  // No field has a default ajv would fill in: an item's would hide the batch's own field, and the
  // domain applies the defaults itself. The document shows them at the top, where they apply.
  // Nor an enum the server checks at run time (algorithm names): in an item, an unknown name is that
  // item's problem in a 200, so the document cannot call it a refusal of the request.
  const itemProperties = Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name,
    withoutDocumentExtra(withoutDefault(schema as TSchema), 'In an item, a value outside the names the field lists at the top is the item\'s problem (400 unknown-algorithm or algorithm-not-allowed), not the batch\'s.')])) as TProperties
  const item = Type.Object({ ...itemProperties, reference: Type.Optional(Reference) }, { additionalProperties: false })
  const optional = Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, Type.Optional(withDocumentedDefault(schema as TSchema))])) as TProperties
  const items = Type.Array(item, {
    minItems: 1, maxItems: config.maxItems,
    description: `A batch: each item is a request of its own, answered in \`results\` in the same order (see the description); at most ${config.maxItems} items (MAX_BATCH_ITEMS) and ${config.maxBodyBytes} bytes of body (MAX_BATCH_BODY_BYTES)`,
  })
  const body = Type.Object({ ...optional, items: Type.Optional(items) }, {
    additionalProperties: false,
    // Each branch names the properties it requires, with their schemas (ajv's strictRequired looks no further).
    oneOf: [
      documentedAs({ required, properties: Object.fromEntries(required.map((name) => [name, properties[name]])) } as unknown as TSchema, documentExtra.single ? { allOf: documentExtra.single } : {}),
      documentedAs({ required: ['items'], properties: { items } } as unknown as TSchema, documentExtra.batch ? { allOf: documentExtra.batch } : {}),
    ],
  })
  // The server's oneOf refuses a body with `items` and every field a single request requires (both
  // branches match). Stated apart, as "one of them is absent", since the document's single branch
  // carries rules the server's does not, and could otherwise fail where the server's matches.
  const notBoth = { anyOf: ['items', ...required].map((name) => ({ properties: { [name]: false } })) }
  return documentedAs(body, { allOf: [notBoth, ...documentExtra.shared ?? []] })
}

/** A copy of a property's schema without its `default` (its description still says what the default is). */
function withoutDefault(schema: TSchema): TSchema {
  if (!('default' in schema)) return schema
  const { default: fallback, ...rest } = schema
  return { ...rest, description: `${rest.description ?? ''}${rest.description ? ' ' : ''}Default: the batch's own field, or ${JSON.stringify(fallback)}.` } as TSchema
}

/** Where a batch's answer is written, piece by piece. */
export interface JsonOut {
  /** JSON text, already escaped. */
  push(text: string): void
  /** JSON text already encoded as UTF-8 (a piece written again and again, encoded once). */
  pushBytes(bytes: Uint8Array): void
}

/**
 * A route's own writer of a successful item's JSON (the single answer less processingTimeMs, plus `reference`), for a
 * result shape hot enough to deserve one: it writes its pieces into `out` and returns true, or
 * returns false (having written nothing) to hand the result to the compiled serializer. It must
 * write what the compiled serializer of that form would (the same fields; the tests' response
 * checker validates every answer against the document).
 */
export type ResultWriter<R> = (result: R & { reference?: string }, out: JsonOut) => boolean

/** The forms of one result of a batch, kept for the serializer (batchOrSingle), and the route's own writer of the done form. */
const resultForms = new WeakMap<object, { item: TObject, problem: TSchema, write?: ResultWriter<never> | undefined }>()

/**
 * The answer: the single result, or `results` of a batch, each the single result without its
 * `processingTimeMs`, plus `reference`, or a problem. An item's own time is left out, as Vault
 * Transit's batch_results have none: a digest or HMAC of a short input takes a microsecond or two,
 * about what reading the clock around it costs, and the batch's `processingTimeMs` counts them all.
 */
export function batchableResponse<R = never>(single: TObject, write?: ResultWriter<R>) {
  const { processingTimeMs: _timed, ...answered } = single.properties
  const item = Type.Object(answered)
  const done = Type.Object({ reference: Type.Optional(Reference), ...answered }, { description: 'An item that succeeded: the answer a single request would get, less its processingTimeMs (the batch\'s own counts every item), and its reference' })
  const problem = { ...Problem, description: 'Why this item failed: the problem a single request would get (its status inside); the other items are not affected' }
  const failed = Type.Object({ reference: Type.Optional(Reference), problem }, { description: 'An item that failed' })
  const batch = Type.Object({
    results: Type.Array(Type.Union([done, failed]), { description: 'One per item, in the order of `items`' }),
    processingTimeMs: ProcessingTime,
  }, { description: 'The answer to a batch (`items`)' })
  const response = Type.Union([single, batch], { description: 'The result, or for a batch the results' })
  resultForms.set(response, { item, problem, write: write as ResultWriter<never> | undefined })
  return response
}

export const BATCH_DESCRIPTION = (operation: string, config: Config['batch']) =>
  ` **Batches:** instead of one ${operation}, \`items\` may hold up to ${config.maxItems} of them (each with an optional \`reference\`); fields at the top ` +
  'apply to every item that does not set its own. The answer is `{results, processingTimeMs}`, one result per item in order: the single answer without its ' +
  '`processingTimeMs` (the batch\'s own counts every item) plus `reference`, or `{reference, problem}` for an item that failed (its status is inside; the batch is 200). ' +
  'The fields at the top are checked before any item runs, each alone and with the other fields at the top, as a single request\'s are: a mistake there is the same for every item, ' +
  'so it is the whole batch\'s 4xx (pointers at the top: /body/<field>), and no item runs. A batch counts as one request per item ' +
  'against the rate limit, all at once: one that goes over is 429 whole. Password work is refused (422 password-in-batch): per item, or whole when the top asks for it.'

/** How a route's batches are read beyond its item schema. */
export interface BatchRules<I> {
  /** Encoded fields and the field that names their encoding: a batch's own are checked at the top. */
  encodedFields?: ReadonlyArray<readonly [field: string, encodingField: string]>
  /** Fields an item takes from the top together or not at all (domain/batch.ts). */
  together?: ReadonlyArray<FieldGroup<I>>
  /**
   * The route's own checks of the fields at the top (the domain's, e.g. an unknown keyName, or a
   * password algorithm): it throws the problem of the whole batch before any item runs.
   */
  checkTop?: (top: Partial<I>) => void
  /** Names the route takes beside the algorithm registry's (/api/hash's content hashes), which `checkTop` checks instead. */
  otherAlgorithm?: (name: string) => boolean
  /** Items that may be in flight at once (domain/batch.ts `runBatch`), decided from the fields at the top; 1 by default. */
  inFlight?: (top: Partial<I>) => number
}

/**
 * Answers a request that may be a batch: a single one goes to `run` as it is; a batch's fields at
 * the top are checked (a mistake there would fail every item, so it fails the request, before any
 * item runs), its items are counted against the rate limit (one request each), then run in order by
 * the batch runner. A single request larger than BODY_LIMIT is 413 here: the route takes bodies up
 * to MAX_BATCH_BODY_BYTES for the batches' sake.
 */
export async function batchOrSingle<I extends object, R extends object>(
  app: FastifyInstance, config: Config, request: FastifyRequest, reply: FastifyReply, run: (item: I) => R | Promise<R>, operation: Operation,
  rules: BatchRules<I> = {},
): Promise<R | BatchAnswer<R>> {
  const body = request.body as I & { items?: I[] }
  if (body.items === undefined) {
    if (request.bodyBytes > config.bodyLimit) throw problems.tooLarge(`The request body is larger than BODY_LIMIT (${config.bodyLimit} bytes); only a batch (items) may be up to MAX_BATCH_BODY_BYTES`)
    return run(body)
  }
  const { items, ...defaults } = body
  // The one field the server reads more leniently than the document (aliases of algorithm names)
  // is checked at the top even when every item names its own: a wrong one is the batch's 400.
  const shared = defaults as { algorithm?: unknown }
  if (typeof shared.algorithm === 'string' && rules.otherAlgorithm?.(shared.algorithm) !== true) algorithmFor(shared.algorithm, operation)
  // So are the batch's own encoded fields (the document states their patterns on the whole body):
  // a top-level `input` not valid in the top-level inputEncoding is the batch's 400 (/body/input).
  const fields = defaults as Record<string, unknown>
  for (const [field, encodingField] of rules.encodedFields ?? []) {
    const value = fields[field]
    if (typeof value === 'string') decodeInput(value, (fields[encodingField] as InputEncoding | undefined) ?? 'utf8', field)
  }
  rules.checkTop?.(defaults as Partial<I>)
  await app.chargeItems?.(request, reply, items.length)
  const forms = resultForms.get((request.routeOptions.schema?.response as Record<string, object> | undefined)?.[200] ?? {})
  const options = { clientGone: () => request.raw.socket.destroyed, together: rules.together ?? [], inFlight: rules.inFlight?.(defaults as Partial<I>) ?? 1 }
  if (!forms) return runBatch<I, R>(items, defaults as Partial<I>, run, options)
  // Written result by result, as each is made, with the compiled serializer of its own form: the
  // route's serializer would first check the whole answer against each alternative of the response
  // schema (a single answer or a batch), then each result against each of its two forms, before
  // writing a byte; and results kept to the end would stay alive through the batch.
  // `reference` is written first, in a result as in a problem ({reference, problem}): the compiled
  // serializer of the result's form would write the required fields first and `reference` after.
  const single = reply.compileSerializationSchema(forms.item)
  const problem = reply.compileSerializationSchema(forms.problem)
  // A route's own writer (routes/hmac.ts) first, where it has one: it knows which of its strings
  // need no escaping, where the compiled serializer tests each against a regular expression.
  const write = forms.write as ResultWriter<R> | undefined
  const answer = new JsonBytes('{"results":[')
  const { processingTimeMs } = await runBatch<I, R>(items, defaults as Partial<I>, run, {
    ...options,
    emit: (entry, index) => {
      // No answer of a single request has a `problem` field: only a failed item does.
      if (index > 0) answer.push(',')
      if ('problem' in entry) {
        answer.push(referenced(entry.reference, `{"problem":${problem(entry.problem as unknown as Record<string, unknown>)}}`))
      } else if (!write?.(entry as R & { reference?: string }, answer)) {
        // The item's form has no `reference`, so its serializer leaves it out (and the single answer's processingTimeMs).
        answer.push(referenced((entry as { reference?: string }).reference, single(entry as unknown as Record<string, unknown>)))
      }
    },
  })
  answer.push(`],"processingTimeMs":${processingTimeMs}}`)
  return reply.type('application/json; charset=utf-8').send(answer.bytes()) as unknown as BatchAnswer<R>
}

/** A result's JSON object with `reference` as its first field, when the item has one. */
function referenced(reference: string | undefined, json: string): string {
  if (reference === undefined) return json
  return `{"reference":${JSON.stringify(reference)}${json === '{}' ? '' : ','}${json.slice(1)}`
}

/**
 * A JSON answer written as UTF-8 while it is made, straight into buffers of 64 KiB or more. A
 * piece of a few ASCII characters (punctuation, a number) is copied by a loop in JavaScript, one
 * encoded once is copied as bytes, and the rest (hex, base64, a compiled serializer's output) goes
 * through one Buffer#write each (domain/encoding.ts `asciiInto`). Joining the pieces into a string
 * first made a rope of small strings per item that then had to be flattened and copied again.
 */
class JsonBytes implements JsonOut {
  static readonly CHUNK = 64 * 1024
  /** Pieces up to this long go through the loop. */
  static readonly LOOP_MAX = 24
  readonly #full: Buffer[] = []
  #chunk = Buffer.allocUnsafe(JsonBytes.CHUNK)
  #used = 0

  constructor(start: string) {
    this.push(start)
  }

  push(text: string): void {
    const length = text.length
    // A UTF-16 code unit is at most three bytes of UTF-8: text that may not fit starts a chunk.
    if (this.#used + length * 3 > this.#chunk.length) this.#next(length * 3)
    // A short ASCII piece by the loop; a long or non-ASCII one as UTF-8, from where this piece starts.
    this.#used += asciiInto(text, this.#chunk, this.#used, JsonBytes.LOOP_MAX) ?? this.#chunk.write(text, this.#used, 'utf8')
  }

  pushBytes(bytes: Uint8Array): void {
    if (this.#used + bytes.length > this.#chunk.length) this.#next(bytes.length)
    this.#chunk.set(bytes, this.#used)
    this.#used += bytes.length
  }

  #next(room: number): void {
    this.#full.push(this.#chunk.subarray(0, this.#used))
    this.#chunk = Buffer.allocUnsafe(Math.max(JsonBytes.CHUNK, room))
    this.#used = 0
  }

  bytes(): Buffer {
    const last = this.#chunk.subarray(0, this.#used)
    return this.#full.length === 0 ? last : Buffer.concat([...this.#full, last])
  }
}

/** The body limit of a route that takes batches. */
export const batchBodyLimit = (config: Config) => Math.max(config.bodyLimit, config.batch.maxBodyBytes)
