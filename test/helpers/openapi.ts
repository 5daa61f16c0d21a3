/**
 * Checks HTTP responses against the OpenAPI document the server itself serves (GET
 * /api/openapi.json), so that the document stays an exact description of the server: every test
 * that starts a server through helpers/server.ts has every response checked (see there).
 *
 * A response is described when:
 * - its path and method are an operation of the document, its status is one of the operation's
 *   responses, its media type one of that response's content types, its body valid against that
 *   schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 says), and each header the response marks
 *   required is present and valid (Retry-After, WWW-Authenticate…; RateLimit fields are checked
 *   when present);
 * - or its path is a documented path and the method is not one of its operations: 405
 *   problem+json with an Allow header that names every documented method (the document says so in
 *   info.description); 401/429/503 may come first, as documented for every operation;
 * - or its path is under /api/ and not in the document: 404 problem+json (401 first with API keys).
 * Paths outside /api/ and /metrics (the web page, /docs) are not the API and are not checked.
 * HEAD is checked as the GET it stands for, without a body.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

// ajv-formats is CommonJS with a default export; under NodeNext its default is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

export interface CheckedResponse {
  method: string
  /** The request path, with or without a query string. */
  url: string
  status: number
  /** Lowercase header names. */
  headers: Record<string, string | string[] | number | undefined>
  /** The body as text; null when there is none to check (HEAD, a stream). */
  body: string | null
}

interface MediaObject { schema?: unknown }
interface HeaderObject { required?: boolean, schema?: unknown }
interface ResponseObject { content?: Record<string, MediaObject>, headers?: Record<string, HeaderObject> }
interface OperationObject { responses?: Record<string, ResponseObject> }
export interface OpenApiDocument { paths: Record<string, Record<string, OperationObject>>, [key: string]: unknown }

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace', 'query']
/** nginx's 499 is only ever logged: the client has gone and never sees it. */
const NEVER_SENT = new Set([499])

const escapePointer = (part: string): string => part.replaceAll('~', '~0').replaceAll('/', '~1')
const mediaTypeOf = (value: string | undefined): string => (value ?? '').split(';')[0]?.trim().toLowerCase() ?? ''

export class OpenApiChecker {
  readonly document: OpenApiDocument
  readonly #ajv: Ajv2020
  readonly #validators = new Map<string, ValidateFunction>()
  readonly #templates: Array<{ path: string, pattern: RegExp }>

  constructor(document: OpenApiDocument) {
    this.document = document
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true })
    addFormats(this.#ajv)
    // OpenAPI's own format for file bodies; a string is all JSON can say of it.
    this.#ajv.addFormat('binary', true)
    this.#ajv.addSchema(document as object, 'hashd-openapi')
    this.#templates = Object.keys(document.paths).map((path) => ({
      path,
      pattern: new RegExp(`^${path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}/?$`),
    }))
  }

  #validator(pointer: string): ValidateFunction {
    let validate = this.#validators.get(pointer)
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `hashd-openapi#${pointer}` })
      this.#validators.set(pointer, validate)
    }
    return validate
  }

  #validate(pointer: string, value: unknown, what: string): string[] {
    const validate = this.#validator(pointer)
    if (validate(value)) return []
    const errors = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`)
    return [`${what} does not match the document (${pointer}): ${errors.join('; ')}`]
  }

  /** What is wrong with this response by the document; empty when it is described. */
  check(response: CheckedResponse): string[] {
    if (NEVER_SENT.has(response.status)) return []
    const path = response.url.split('?')[0] ?? response.url
    if (!path.startsWith('/api/') && path !== '/api' && path !== '/metrics') return []
    const template = this.#templates.find((each) => each.pattern.test(path))
    const header = (name: string) => {
      const value = response.headers[name]
      return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value)
    }
    const where = `${response.method} ${path} → ${response.status}`
    const problemOnly = (allowed: number[]): string[] => {
      const failures: string[] = []
      if (!allowed.includes(response.status)) failures.push(`${where}: expected one of ${allowed.join(', ')}`)
      if (mediaTypeOf(header('content-type')) !== 'application/problem+json') failures.push(`${where}: content-type ${header('content-type')}, not application/problem+json`)
      if (response.body !== null) {
        try {
          failures.push(...this.#validate('/components/schemas/Problem', JSON.parse(response.body), `${where} body`))
        } catch {
          failures.push(`${where}: the body is not JSON`)
        }
      }
      return failures
    }
    if (!template) return problemOnly([401, 404, 429, 503])
    const operations = this.document.paths[template.path] ?? {}
    const method = response.method.toLowerCase() === 'head' ? 'get' : response.method.toLowerCase()
    const operation = operations[method]
    if (!operation) {
      const failures = problemOnly([401, 405, 429, 503])
      if (response.status === 405) {
        const allow = (header('allow') ?? '').split(',').map((each) => each.trim().toLowerCase())
        const missing = Object.keys(operations).filter((each) => METHODS.includes(each) && !allow.includes(each))
        if (missing.length > 0 || header('allow') === undefined) failures.push(`${where}: Allow "${header('allow')}" lacks ${missing.join(', ')}`)
      }
      return failures
    }
    const responses = operation.responses ?? {}
    const status = String(response.status)
    const key = status in responses ? status : `${status[0]}XX` in responses ? `${status[0]}XX` : 'default' in responses ? 'default' : undefined
    if (key === undefined) return [`${where}: status not documented for this operation (documented: ${Object.keys(responses).join(', ')}); body ${(response.body ?? '').slice(0, 300)}`]
    const described = responses[key] ?? {}
    const pointer = `/paths/${escapePointer(template.path)}/${method}/responses/${key}`
    const failures: string[] = []
    for (const [name, headerObject] of Object.entries(described.headers ?? {})) {
      const value = header(name.toLowerCase())
      if (value === undefined) {
        if (headerObject.required) failures.push(`${where}: required header ${name} is missing`)
        continue
      }
      if (headerObject.schema !== undefined) {
        const type = (headerObject.schema as { type?: string }).type
        const parsed = type === 'integer' || type === 'number' ? Number(value) : value
        failures.push(...this.#validate(`${pointer}/headers/${escapePointer(name)}/schema`, parsed, `${where} header ${name}`))
      }
    }
    if (described.content === undefined) return failures
    const mediaType = mediaTypeOf(header('content-type'))
    const media = described.content[mediaType]
    if (!media) {
      if (response.body === null || response.body === '') return failures
      return [...failures, `${where}: content-type ${header('content-type')} is not documented (documented: ${Object.keys(described.content).join(', ')})`]
    }
    if (response.body === null || media.schema === undefined) return failures
    let body: unknown = response.body
    if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
      try {
        body = JSON.parse(response.body)
      } catch {
        return [...failures, `${where}: the body is not JSON: ${response.body.slice(0, 200)}`]
      }
    }
    failures.push(...this.#validate(`${pointer}/content/${escapePointer(mediaType)}/schema`, body, `${where} body`))
    return failures
  }
}
