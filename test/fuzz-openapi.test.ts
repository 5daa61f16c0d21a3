/**
 * Fuzzing from the document (issue 20): requests are generated from the schemas of
 * /api/openapi.json as the server serves it, operation by operation, and the answers are held to
 * the same document.
 * - A request valid by the document never gets a 5xx, gets only a documented answer (status,
 *   media type, body, headers; helpers/openapi.ts), and is never refused for its shape (a 400 from
 *   the server's own schema check would mean the server and the document disagree). It may still
 *   be refused for a rule the document states in words (an option out of range for the algorithm
 *   named, a cost above a cap): those answers are documented 400/422.
 * - A request that breaks the document (a required field dropped, an unknown field, a wrong type,
 *   a value outside an enum or a length bound, a body that is not an object) gets a documented 4xx
 *   problem+json.
 * Bounded: HASHD_FUZZ_RUNS cases per property (helpers/fuzz.ts) and a time limit per property; the
 * seed is printed as a diagnostic and fast-check prints the seed and path of any failure, so
 * HASHD_FUZZ_SEED=<seed> replays it. The generator reads only the document: a route another branch
 * adds is fuzzed as soon as it is in the document.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { FUZZ_SEED, fuzzParameters } from './helpers/fuzz.js'
import { OpenApiChecker, type OpenApiDocument } from './helpers/openapi.js'
import { startServer, type TestServer } from './helpers/server.js'

/** Low caps keep generated password work cheap: anything above them is a documented 422. */
const CHEAP_CAPS = {
  MAX_BCRYPT_COST: '5', MAX_ARGON2_MEMORY_KIB: '256', MAX_ARGON2_TIME_COST: '1', MAX_ARGON2_PARALLELISM: '1',
  MAX_SCRYPT_MEMORY_BYTES: String(256 * 1024), MAX_SCRYPT_PARALLELISM: '1', MAX_PBKDF2_ITERATIONS: '1000', MAX_SHA_CRYPT_ROUNDS: '1000',
  MAX_WORK_MEMORY_BYTES: String(64 * 1024 * 1024),
}
/** Each property stops after this long, passing with the cases run so far (fast-check's own limit). */
const TIME_LIMIT_MS = Number(process.env.HASHD_FUZZ_TIME_LIMIT_MS ?? 20_000) || 20_000

type Schema = {
  $ref?: string, type?: string | string[], enum?: unknown[], const?: unknown, pattern?: string, format?: string
  minLength?: number, maxLength?: number, minimum?: number, maximum?: number
  minItems?: number, maxItems?: number, items?: Schema, minProperties?: number, maxProperties?: number
  properties?: Record<string, Schema>, required?: string[], additionalProperties?: boolean | Schema
  patternProperties?: Record<string, Schema>, oneOf?: Schema[], anyOf?: Schema[], 'x-hashd-case-insensitive'?: boolean
  allOf?: Array<{ if?: Schema & { not?: Schema }, then?: Schema, anyOf?: Schema[] }>
}
interface Parameter { name: string, in: string, required?: boolean, schema: Schema }
interface Operation { parameters?: Parameter[], requestBody?: { content: Record<string, { schema: Schema }> }, responses: Record<string, unknown> }
interface Request { method: string, path: string, query: Record<string, string>, contentType?: string, body?: string | FormData | Uint8Array, label: string }

let server: TestServer
let document: OpenApiDocument & { 'x-hashd-algorithm-aliases'?: Record<string, string> }
let checker: OpenApiChecker
/** Every spelling the server accepts as an algorithm, normalised as the server does: no mutation may use one. */
let acceptedNames = new Set<string>()
const normalise = (name: string) => name.toLowerCase().replace(/[-_/. ]/g, '')

before(async () => {
  server = await startServer(CHEAP_CAPS)
  document = (await server.get('/api/openapi.json')).body
  checker = new OpenApiChecker(document)
  const aliases = document['x-hashd-algorithm-aliases'] ?? {}
  acceptedNames = new Set([...Object.keys(aliases), ...Object.values(aliases)].map(normalise))
})
after(async () => { await server.close() })

const resolve = (schema: Schema): Schema => {
  if (!schema.$ref) return schema
  const target = schema.$ref.replace(/^#\//, '').split('/').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key.replaceAll('~1', '/').replaceAll('~0', '~')], document)
  return resolve(target as Schema)
}

/** Values valid by `schema` (the subset of JSON Schema the document uses). */
function valid(raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(raw)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((branch) => valid(branch, depth + 1)))
  if (schema.oneOf && schema.type !== 'object') return fc.oneof(...schema.oneOf.map((branch) => valid(branch, depth + 1)))
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string': {
      const maxLength = Math.min(schema.maxLength ?? 80, 80)
      const minLength = schema.minLength ?? 0
      if (schema.pattern) {
        const pattern = new RegExp(schema.pattern)
        return fc.stringMatching(pattern).filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity))
      }
      // Text, and the hex and base64 that encoded fields take, so that valid requests are often accepted too.
      const bytes = fc.uint8Array({ minLength: Math.ceil(minLength / 2), maxLength: Math.floor(maxLength / 2) })
      return fc.oneof(
        fc.string({ minLength, maxLength: Math.max(minLength, maxLength), unit: 'grapheme' }),
        fc.string({ minLength, maxLength: Math.max(minLength, maxLength) }),
        bytes.map((value) => Buffer.from(value).toString('hex')),
        bytes.map((value) => Buffer.from(value).toString('base64')),
      ).filter((value) => value.length >= minLength && value.length <= maxLength)
    }
    case 'integer': return fc.integer({ min: schema.minimum ?? -1_000, max: schema.maximum ?? 100_000 })
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true })
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': return fc.array(valid(schema.items ?? {}, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, Math.max(schema.minItems ?? 0, 4)) })
    case 'object': return validObject(schema, depth)
    default: return fc.jsonValue({ maxDepth: 1 })
  }
}

/** Whether `body` meets an `if` of the kinds the document uses: required keys, enums and consts, `not: {required}`. */
function meets(condition: Schema & { not?: Schema }, body: Record<string, unknown>): boolean {
  if (condition.not?.required && condition.not.required.every((key) => key in body)) return false
  if (condition.required && !condition.required.every((key) => key in body)) return false
  return Object.entries(condition.properties ?? {}).every(([key, property]) => !(key in body)
    || ((!property.enum || property.enum.includes(body[key])) && (property.const === undefined || property.const === body[key])))
}

/**
 * The allOf rules of a body as condition and consequence: an if/then, or each branch of an anyOf
 * whose branches are told apart by a field's enum (an encoded field's pattern under each encoding,
 * the options of each group of algorithms): the branch's enums are its condition, its other
 * properties the consequence. An anyOf of "a boolean field is absent or `const`" and another branch
 * (the pepper rule) is that branch when the field is the other boolean.
 */
function conditionalRules(schema: Schema): Array<{ when: Schema & { not?: Schema }, then: Schema }> {
  return (schema.allOf ?? []).flatMap((rule): Array<{ when: Schema & { not?: Schema }, then: Schema }> => {
    if (rule.if && rule.then) return [{ when: rule.if, then: rule.then }]
    const [first, second, ...rest] = rule.anyOf ?? []
    const unless = Object.entries(first?.properties ?? {}).filter(([, property]) => (property as unknown) !== false)
    const only = unless.length === 1 ? unless[0]![1].const ?? unless[0]![1].enum?.[0] : undefined
    if (second && rest.length === 0 && !first?.required && typeof only === 'boolean') {
      const [field] = unless[0]!
      const value = only
      return [{ when: { required: [field], properties: { [field]: { enum: [!value] } } }, then: second }]
    }
    return (rule.anyOf ?? []).filter((branch) => Object.values(branch.properties ?? {}).some((property) => property.enum)).map((branch) => {
      const entries = Object.entries(branch.properties ?? {})
      return {
        when: { required: branch.required ?? [], properties: Object.fromEntries(entries.filter(([, property]) => property.enum)) },
        then: { properties: Object.fromEntries(entries.filter(([, property]) => !property.enum)) },
      }
    })
  })
}

/**
 * Applies every allOf rule a generated object meets, in order: the properties its consequence
 * constrains are generated anew from the property's own schema with the consequence's keywords on
 * top (a `pattern` on an encoded field, the options of the algorithm named), and its required keys are added.
 */
function withRules(schema: Schema, objects: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const rules = conditionalRules(schema)
  if (rules.length === 0) return objects
  const applyFrom = (index: number, body: Record<string, unknown>): fc.Arbitrary<unknown> => {
    const at = rules.findIndex((each, position) => position >= index && meets(each.when, body))
    if (at === -1) return fc.constant(body)
    const then = rules[at]!.then
    const keys = new Set([...Object.keys(then.properties ?? {}).filter((key) => key in body), ...(then.required ?? [])])
    if (keys.size === 0) return applyFrom(at + 1, body)
    const own = resolve(schema).properties ?? {}
    const regenerated = fc.record(Object.fromEntries([...keys].map((key) => [key, valid({ ...resolve(own[key] ?? {}), ...then.properties?.[key] })])))
    return regenerated.chain((replaced) => applyFrom(at + 1, { ...body, ...replaced }))
  }
  return objects.chain((value) => applyFrom(0, value as Record<string, unknown>))
}

function validObject(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  return plainObject(schema, depth)
}

function plainObject(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const branches = schema.oneOf && schema.oneOf.length > 0 ? schema.oneOf.map(resolve) : [{}]
  return fc.oneof(...branches.map((branch) => {
    // Exactly one branch of a oneOf: its required fields present, the others' required fields absent.
    const others = new Set(branches.filter((each) => each !== branch).flatMap((each) => each.required ?? []))
    const properties = { ...schema.properties, ...branch.properties }
    const required = new Set([...schema.required ?? [], ...branch.required ?? []])
    const keys = Object.keys(properties).filter((key) => required.has(key) || !others.has(key))
    // The rules the document states for this branch only (a single request's, not a batch's) apply to it.
    const fixed = withRules({ ...schema, allOf: [...schema.allOf ?? [], ...branch.allOf ?? []] }, fc.record(Object.fromEntries(keys.map((key) => [key, valid(properties[key] ?? {}, depth + 1)])),
      { requiredKeys: keys.filter((key) => required.has(key)) }))
    const extraSchema = schema.patternProperties ? Object.values(schema.patternProperties)[0] : typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined
    if (!extraSchema || Object.keys(properties).length > 0) return fixed
    const maxKeys = Math.min(schema.maxProperties ?? 3, 3)
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), valid(extraSchema, depth + 1), { maxKeys })
  }))
}

/** A value that `schema` refuses, where one can be made; null otherwise. */
function invalid(raw: Schema): fc.Arbitrary<unknown> | null {
  const schema = resolve(raw)
  const choices: Array<fc.Arbitrary<unknown>> = []
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  // A wrong JSON type is always refused (the server does not coerce).
  if (type === 'string') choices.push(fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([])))
  if (type === 'integer' || type === 'number') choices.push(fc.oneof(fc.string({ maxLength: 5 }), fc.boolean(), fc.constant({})))
  if (type === 'integer') choices.push(fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }))
  if (type === 'boolean' || type === 'array' || type === 'object') choices.push(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()))
  if (schema.enum && type === 'string') {
    // The server also accepts aliases of algorithm names (x-hashd-case-insensitive): none of them here.
    const outside = fc.string({ maxLength: 20 }).filter((value) => !schema.enum!.includes(value)
      && !(schema['x-hashd-case-insensitive'] && acceptedNames.has(normalise(value))))
    choices.push(outside)
  }
  if (type === 'string' && schema.minLength !== undefined && schema.minLength > 0) choices.push(fc.constant(''))
  if (type === 'string' && schema.maxLength !== undefined && schema.maxLength < 100_000) choices.push(fc.constant('a'.repeat(schema.maxLength + 1)))
  if (type === 'integer' && schema.maximum !== undefined) choices.push(fc.constant(schema.maximum + 1))
  return choices.length > 0 ? fc.oneof(...choices) : null
}

/** A request object with one thing wrong: a required field dropped, an unknown field, or one field invalid. */
function invalidObject(schema: Schema): fc.Arbitrary<unknown> {
  const resolved = resolve(schema)
  const properties = Object.entries(resolved.properties ?? {})
  const mutations: Array<fc.Arbitrary<unknown>> = [fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }))]
  const base = valid(resolved) as fc.Arbitrary<Record<string, unknown>>
  if (resolved.additionalProperties === false) {
    mutations.push(fc.tuple(base, fc.string({ minLength: 1, maxLength: 10 }).filter((key) => !(key in (resolved.properties ?? {})) && key !== '__proto__'))
      .map(([body, key]) => ({ ...body, [key]: 1 })))
  }
  for (const key of resolved.required ?? []) mutations.push(base.map((body) => { const copy = { ...body }; delete copy[key]; return copy }))
  for (const [key, property] of properties) {
    const bad = invalid(property)
    if (bad) mutations.push(fc.tuple(base, bad).map(([body, value]) => ({ ...body, [key]: value })))
  }
  return fc.oneof(...mutations)
}

async function send(request: Request): Promise<{ status: number, messages: string[], text: string, contentType: string }> {
  const query = new URLSearchParams(request.query).toString()
  const url = `${request.path}${query ? `?${query}` : ''}`
  const response = await fetch(server.url + url, {
    method: request.method,
    headers: request.contentType ? { 'content-type': request.contentType } : {},
    ...(request.body === undefined ? {} : { body: request.body }),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  const headers = Object.fromEntries(response.headers)
  const messages = checker.check({ method: request.method, url, status: response.status, headers, body: request.method === 'HEAD' ? null : text })
  return { status: response.status, messages, text, contentType: headers['content-type'] ?? '' }
}

/** The operations of the document, as [method, path, operation]. */
const operations = () => Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => [method.toUpperCase(), path, operation as unknown as Operation] as const))

/** Requests valid by the document for one operation: its query parameters and one of its body forms. */
function validRequests(method: string, path: string, operation: Operation): fc.Arbitrary<Request> {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
  const query = fc.record(Object.fromEntries(parameters.map((parameter) => [parameter.name, valid(parameter.schema).map(String)])),
    { requiredKeys: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name) }) as fc.Arbitrary<Record<string, string>>
  const forms: Array<fc.Arbitrary<Request>> = []
  const content = operation.requestBody?.content ?? {}
  for (const [mediaType, { schema }] of Object.entries(content)) {
    if (mediaType === 'application/json') {
      forms.push(fc.tuple(query, valid(schema)).map(([q, body]) => ({ method, path, query: q, contentType: mediaType, body: JSON.stringify(body), label: JSON.stringify(body).slice(0, 300) })))
    } else if (mediaType === 'application/octet-stream') {
      forms.push(fc.tuple(query, fc.uint8Array({ maxLength: 4096 })).map(([q, bytes]) => ({ method, path, query: q, contentType: mediaType, body: bytes, label: `${bytes.length} bytes ${JSON.stringify(q)}` })))
    } else if (mediaType === 'multipart/form-data') {
      const resolved = resolve(schema)
      const fields = Object.entries(resolved.properties ?? {}).filter(([, property]) => property.format !== 'binary')
      const fileField = Object.entries(resolved.properties ?? {}).find(([, property]) => property.format === 'binary')?.[0] ?? 'file'
      const values = fc.record(Object.fromEntries(fields.map(([name, property]) => [name, valid(property).map(String)])), { requiredKeys: [] }) as fc.Arbitrary<Record<string, string>>
      forms.push(fc.tuple(values, fc.uint8Array({ maxLength: 4096 })).map(([fieldValues, bytes]) => {
        const form = new FormData()
        // The description says text fields come before the file part.
        for (const [name, value] of Object.entries(fieldValues)) form.append(name, value)
        form.append(fileField, new Blob([bytes]), 'upload.bin')
        return { method, path, query: {}, body: form, label: `multipart ${JSON.stringify(fieldValues)} + ${bytes.length} bytes` }
      }))
    }
  }
  if (forms.length === 0) forms.push(query.map((q) => ({ method, path, query: q, label: JSON.stringify(q) })))
  return fc.oneof(...forms)
}

/** Requests that break the document for one operation, where the document constrains anything. */
function invalidRequests(method: string, path: string, operation: Operation): fc.Arbitrary<Request> | null {
  const forms: Array<fc.Arbitrary<Request>> = []
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
  const json = operation.requestBody?.content['application/json']
  if (json) {
    forms.push(invalidObject(json.schema).map((body) => ({ method, path, query: {}, contentType: 'application/json', body: JSON.stringify(body), label: JSON.stringify(body).slice(0, 300) })))
  }
  if (parameters.length > 0) {
    const raw = operation.requestBody?.content['application/octet-stream'] ? { contentType: 'application/octet-stream', body: new Uint8Array([1, 2, 3]) } : {}
    forms.push(fc.constantFrom(...parameters).chain((parameter) => (invalid(parameter.schema) ?? fc.constant(null)).map((value) => ({
      method, path, query: { [parameter.name]: typeof value === 'string' ? value : JSON.stringify(value) }, ...raw,
      label: `${parameter.name}=${JSON.stringify(value)}`,
    }))).filter((request) => {
      // A query string is text: a wrong JSON type is only wrong where the text itself breaks the schema.
      const [name, value] = Object.entries(request.query)[0] ?? ['', '']
      const parameter = parameters.find((each) => each.name === name)
      const resolved = parameter ? resolve(parameter.schema) : {}
      if (resolved.type !== 'string') return true
      if (resolved.enum) return !resolved.enum.includes(value) && !(resolved['x-hashd-case-insensitive'] && acceptedNames.has(normalise(value)))
      if (resolved.pattern && new RegExp(resolved.pattern).test(value)) return (resolved.maxLength !== undefined && value.length > resolved.maxLength) || value.length < (resolved.minLength ?? 0)
      if (resolved.pattern) return true
      return (resolved.maxLength !== undefined && value.length > resolved.maxLength) || value.length < (resolved.minLength ?? 0)
    }))
    forms.push(fc.constant({ method, path, query: { notAParameter: '1' }, ...raw, label: 'an unknown query parameter' }))
  }
  return forms.length > 0 ? fc.oneof(...forms) : null
}

const limits = (share: number) => ({ ...fuzzParameters(share), interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false })

describe('fuzz from the OpenAPI document', () => {
  it('has operations to fuzz', (t) => {
    t.diagnostic(`seed ${FUZZ_SEED} (replay with HASHD_FUZZ_SEED=${FUZZ_SEED}); runs per property: ${fuzzParameters().numRuns}; time limit ${TIME_LIMIT_MS} ms`)
    assert.ok(operations().length >= 8, 'the document lists the operations')
  })

  it('requests valid by the document: never a 5xx, only documented answers, never refused for their shape', async () => {
    for (const [method, path, operation] of operations()) {
      await fc.assert(fc.asyncProperty(validRequests(method, path, operation), async (request) => {
        const answer = await send(request)
        const context = `${method} ${path} ${request.label}: ${answer.status} ${answer.text.slice(0, 300)}`
        assert.ok(answer.status < 500, context)
        assert.deepEqual(answer.messages, [], context)
        if (answer.status === 400) {
          const problem = JSON.parse(answer.text) as { detail: string }
          assert.doesNotMatch(problem.detail, /does not match the schema/, `the server's schema refused what the document allows: ${context}`)
        }
      }), limits(0.5))
    }
  })

  it('requests that break the document: a documented 4xx problem+json', async () => {
    for (const [method, path, operation] of operations()) {
      const requests = invalidRequests(method, path, operation)
      if (!requests) continue
      await fc.assert(fc.asyncProperty(requests, async (request) => {
        const answer = await send(request)
        const context = `${method} ${path} ${request.label}: ${answer.status} ${answer.text.slice(0, 300)}`
        assert.ok(answer.status >= 400 && answer.status < 500, context)
        assert.match(answer.contentType, /^application\/problem\+json/, context)
        assert.deepEqual(answer.messages, [], context)
      }), limits(0.5))
    }
  })
})
