/**
 * The one place errors become responses: RFC 9457 `application/problem+json` for everything,
 * including what Fastify and its plugins throw while parsing (bad JSON, too large, wrong type),
 * unknown routes (404) and wrong methods on known routes (405 with Allow).
 * Nothing here echoes the request body: parser messages that quote it are replaced.
 */
import { STATUS_CODES } from '../node-http.js'
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { knownProblem, Problem, problems, type ValidationIssue } from '../problem.js'
import { serializeError } from './logging.js'

const PROBLEM_JSON = 'application/problem+json; charset=utf-8'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A route whose answer a client may take as text (`Accept: text/plain` on /api/checksums):
     * when this says so, the route's own refusals (400, 413, 415, 422) go as one text line,
     * `hashd: <type>: <detail>`, rather than problem+json. Refusals that are not the route's
     * (401, 429, 503) and 5xx stay problem+json.
     */
    problemsAsText?: (request: FastifyRequest) => boolean
  }
}

/** The statuses a route's problems may be sent as text with (problemsAsText). */
const TEXT_PROBLEM_STATUSES = new Set([400, 413, 415, 422])

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value)
  return reply.code(problem.status).type(PROBLEM_JSON).send(problem.toBody())
}

/** A problem as the one text line of a route that answers in text (problemsAsText). */
export function problemAsText(problem: Problem): string {
  return `hashd: ${problem.type === 'about:blank' ? problem.title : problem.type}: ${problem.detail}\n`
}

interface AjvIssue { instancePath: string, schemaPath?: string, message?: string, keyword: string, params: Record<string, unknown> }

/** A message that says what would be right: the allowed values of an enum, what a pattern means. */
function issueMessage(issue: AjvIssue, alternatives: AjvIssue[]): string {
  switch (issue.keyword) {
    case 'additionalProperties': return 'unknown property'
    case 'enum': return `must be one of ${(issue.params.allowedValues as unknown[] | undefined ?? []).join(', ')}`
    case 'pattern': return issue.params.pattern === '\\S' ? 'must not be empty or only white space' : (issue.message ?? 'invalid')
    case 'oneOf': {
      const required = alternatives.filter((each) => each.keyword === 'required').map((each) => String(each.params.missingProperty))
      if (Array.isArray(issue.params.passingSchemas)) return 'must match exactly one of the alternatives, and matches several: send only one of them'
      return required.length === alternatives.length && required.length > 0 ? `must have exactly one of ${required.join(', ')}` : 'must match exactly one of the alternatives'
    }
    default: return issue.message ?? 'invalid'
  }
}

/** At most this many fields at fault are listed; a body of 10,000 bad strings would otherwise list them all. */
const MAX_ISSUES = 100

/**
 * ajv's errors as RFC 9457 `errors` entries. A failed oneOf/anyOf is one entry that says what the
 * alternatives were, not one entry per alternative. Linear in the number of errors (each one's
 * group is found by the prefixes of its schema path), since ajv reports every error (allErrors) and
 * a large body can hold tens of thousands: a search per error over all of them held the event loop
 * for a minute on /api/identify's 10,000-string limit.
 */
function validationIssues(error: FastifyError): ValidationIssue[] {
  const context = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body'
  const issues = error.validation as AjvIssue[] | undefined ?? []
  const groups = new Set(issues.filter((issue) => issue.keyword === 'oneOf' || issue.keyword === 'anyOf').map((issue) => issue.schemaPath ?? '').filter((path) => path !== ''))
  /** The innermost oneOf/anyOf whose alternative reported this issue, if any. */
  const groupOf = (issue: AjvIssue): string | undefined => {
    const path = issue.schemaPath ?? ''
    for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) {
      const prefix = path.slice(0, end)
      if (groups.has(prefix)) return prefix
    }
    return undefined
  }
  const members = new Map<string, AjvIssue[]>()
  const outside: AjvIssue[] = []
  for (const issue of issues) {
    const group = groupOf(issue)
    if (group === undefined) outside.push(issue)
    else if (members.has(group)) members.get(group)?.push(issue)
    else members.set(group, [issue])
  }
  const alternativesOf = (issue: AjvIssue) => (issue.schemaPath === undefined ? [] : members.get(issue.schemaPath) ?? [])
  return outside
    // A oneOf that failed because a field inside it is invalid says nothing the field's own entry does not.
    .filter((issue) => issue.keyword !== 'oneOf' || alternativesOf(issue).every((each) => each.keyword === 'required'))
    .slice(0, MAX_ISSUES)
    .map((issue) => {
      const extra = issue.keyword === 'additionalProperties' ? `/${String(issue.params.additionalProperty)}` : ''
      return { pointer: `/${context}${issue.instancePath}${extra}`, message: issueMessage(issue, alternativesOf(issue)) }
    })
}

/** What a JSON value is, named without quoting it. */
function jsonKind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'boolean') return String(value)
  return typeof value === 'string' ? 'a string' : typeof value === 'number' ? 'a number' : 'another JSON value'
}

/**
 * A body that is not a JSON object where the route's schema wants one (every JSON route's does):
 * ajv then also reports the alternatives of a oneOf as matched, since `required` and `properties`
 * hold vacuously for a non-object (JSON Schema 2020-12 §10.3.2), which would read as "matches
 * several". The one thing to say is what the body must be.
 */
function notAnObject(error: FastifyError, body: unknown): Problem | null {
  const context = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body'
  const issues = error.validation as AjvIssue[] | undefined ?? []
  if (context !== 'body' || !issues.some((issue) => issue.instancePath === '' && issue.keyword === 'type' && issue.params.type === 'object')) return null
  return problems.validation(`The request body must be a JSON object ({…}), not ${jsonKind(body)}`, [{ pointer: '/body', message: 'must be a JSON object' }])
}

/** Maps Fastify's errors to problems with safe details. */
function problemFor(error: FastifyError, request: FastifyRequest): Problem | null {
  if (error.validation) {
    const wrongShape = notAnObject(error, request.body)
    if (wrongShape !== null) return wrongShape
    const errors = validationIssues(error)
    const summary = errors.map((issue) => `${issue.pointer} ${issue.message}`).join('; ')
    return problems.validation(`The request does not match the schema: ${summary}`.slice(0, 500), errors)
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problems.unsupportedMediaType('This endpoint takes application/json (POST /api/filehash takes multipart/form-data)')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problems.tooLarge('The request body is larger than BODY_LIMIT')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problems.validation('The request body is empty; send a JSON object')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problems.validation('Content-Length does not match the body')
    case 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE':
      return problems.validation('A QUERY request needs a Content-Type (RFC 10008 §2)')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_UTF8':
      return problems.validation(error.message)
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    // V8's JSON.parse messages quote the body ("Unexpected token … in "<body>""); never echo it.
    return problems.validation('The request body is not valid JSON')
  }
  const status = error.statusCode ?? 500
  if (status >= 400 && status < 500) {
    return new Problem(status, 'about:blank', STATUS_CODES[status] ?? 'Client Error', STATUS_CODES[status] ?? 'The request cannot be processed')
  }
  return null
}

/**
 * Errors Node's HTTP parser raises before Fastify has a request: a header or request deadline
 * (408), headers too large (431), malformed HTTP (400). Fastify's default answers these in its own
 * JSON shape and logs the error at trace level with `rawPacket`, the bytes the client sent, which
 * may hold a password or an Authorization header; here the answer is problem+json and the log
 * line carries only the error code.
 */
export function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const detail = status === 408
    ? 'The request was not received in time (HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS)'
    : status === 431 ? 'The request headers are too large' : 'The request is not valid HTTP/1.1'
  this.log.debug({ code: error.code, status }, 'client error')
  const answer = (): void => {
    // A response still owed to an earlier, complete request on this connection (a pipelined upload
    // being hashed) goes first, so that the refusal cannot be read as its answer (RFC 9112 §9.3.2).
    // The response of the request that broke off (a bad chunk in its body) is this refusal itself.
    const owed = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
    if (owed && owed.req.complete && !owed.writableFinished && !owed.destroyed) {
      owed.once('close', answer)
      return
    }
    if (socket.writable) {
      const body = JSON.stringify(new Problem(status, 'about:blank', STATUS_CODES[status] ?? 'Client Error', detail).toBody())
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    }
    socket.destroySoon()
  }
  answer()
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  /** Methods each path answers, for 405 and its Allow header (RFC 9110 §15.5.6). */
  const methodsByPath = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = methodsByPath.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    methodsByPath.set(route.url, methods)
  })

  /** 405 with Allow on a known path, else 404. */
  const notFound = (request: FastifyRequest): Problem => {
    const path = request.url.split('?')[0] ?? request.url
    const allowed = methodsByPath.get(path)
    if (allowed && !allowed.has(request.method)) return problems.methodNotAllowed(request.method, [...allowed].sort())
    return problems.notFound(path)
  }

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // Fastify refuses a QUERY without Content-Type (RFC 10008 §2) before the not-found handler
    // runs: no route takes QUERY, so the answer is that of any other method no route takes.
    const problem = error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE' && request.routeOptions.url === undefined
      ? notFound(request)
      : knownProblem(error) ?? problemFor(error, request)
    if (problem) {
      request.log.info({ problem: problem.type, status: problem.status, code: error.code }, 'request refused')
      if (TEXT_PROBLEM_STATUSES.has(problem.status) && request.routeOptions.config?.problemsAsText?.(request) === true) {
        for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value)
        return reply.code(problem.status).type('text/plain; charset=utf-8').send(problemAsText(problem))
      }
      return sendProblem(reply, problem)
    }
    // A bug: log where it happened, answer with nothing. The message is left out of the log too:
    // messages may quote values (V8's JSON.parse, Node's argument errors), and a value here may be
    // a password. The stack frames and the error's class and code locate the bug.
    request.log.error({ err: serializeError(error) }, 'unhandled error')
    return sendProblem(reply, problems.internal())
  })

  app.setNotFoundHandler({ preHandler: app.limitRequest }, (request, reply) => sendProblem(reply, notFound(request)))
}

export default fp(errorsPlugin, { name: 'errors', dependencies: ['rate-limit'] })
