/**
 * The error model: every error leaves hashd as an RFC 9457 problem detail.
 *
 * Domain code throws `Problem`s; the error handler (plugins/errors.ts) is the only place that turns
 * anything into an HTTP reply. `type` is `about:blank` where the status code says it all (RFC 9457
 * §4.2.1) and a `urn:hashd:problem:*` name where a client may want to branch on the kind of problem.
 * A problem's `detail` must never quote the request's input, key or hash.
 */

export interface ValidationIssue {
  /** JSON Pointer into the request, e.g. `/body/input`. */
  pointer: string
  message: string
}

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  errors?: ValidationIssue[]
  [extension: string]: unknown
}

export class Problem extends Error {
  readonly status: number
  readonly type: string
  readonly title: string
  readonly detail: string
  readonly extensions: Record<string, unknown>
  /** Response headers that belong with this problem (Retry-After, Allow). */
  readonly headers: Record<string, string>

  constructor(status: number, type: string, title: string, detail: string, options: { extensions?: Record<string, unknown>, headers?: Record<string, string> } = {}) {
    super(detail)
    this.name = 'Problem'
    this.status = status
    this.type = type
    this.title = title
    this.detail = detail
    this.extensions = options.extensions ?? {}
    this.headers = options.headers ?? {}
  }

  toBody(): ProblemBody {
    return { type: this.type, title: this.title, status: this.status, detail: this.detail, ...this.extensions }
  }
}

const urn = (slug: string): string => `urn:hashd:problem:${slug}`

export const problems = {
  validation: (detail: string, errors: ValidationIssue[] = []) =>
    new Problem(400, urn('validation'), 'Invalid request', detail, { extensions: { errors } }),
  /**
   * The name is echoed (cut to 64 characters): it is an algorithm name the client chose, never a
   * secret. `suggestions` are canonical names close to it ("did you mean").
   */
  unknownAlgorithm: (name: string, pointer = '/body/algorithm', suggestions: string[] = []) =>
    new Problem(400, urn('unknown-algorithm'), 'Unknown algorithm',
      `"${name.slice(0, 64)}" is not an algorithm hashd knows; ${suggestions.length ? `did you mean ${suggestions.join(' or ')}? ` : ''}GET /api/algorithms lists them all`,
      { extensions: { errors: [{ pointer, message: 'unknown algorithm' }], algorithms: '/api/algorithms', ...(suggestions.length ? { suggestions } : {}) } }),
  wrongOperation: (name: string, operation: string, why: string, pointer = '/body/algorithm') =>
    new Problem(400, urn('algorithm-not-allowed'), 'Algorithm not allowed here',
      `${name} cannot be used with ${operation}: ${why}; GET /api/algorithms lists what each operation accepts`,
      { extensions: { errors: [{ pointer, message: 'not allowed with this operation' }] } }),
  invalidEncoding: (field: string, encoding: string) =>
    new Problem(400, urn('validation'), 'Invalid request', `${field} is not valid ${encoding}`,
      { extensions: { errors: [{ pointer: `/body/${field}`, message: `not valid ${encoding}` }] } }),
  invalidOption: (option: string, detail: string) =>
    new Problem(400, urn('validation'), 'Invalid request', detail,
      { extensions: { errors: [{ pointer: `/body/options/${option}`, message: detail }] } }),
  notFound: (path: string) => new Problem(404, 'about:blank', 'Not Found', `No route matches ${path.slice(0, 200)}`),
  /** A route that exists, for something this server does not have. */
  notFoundWhy: (detail: string) => new Problem(404, 'about:blank', 'Not Found', detail),
  methodNotAllowed: (method: string, allow: string[]) =>
    new Problem(405, 'about:blank', 'Method Not Allowed', `${method} is not allowed here; use ${allow.join(', ')}`, { headers: { allow: allow.join(', ') } }),
  tooLarge: (detail: string) => new Problem(413, 'about:blank', 'Content Too Large', detail),
  unsupportedMediaType: (detail: string) => new Problem(415, 'about:blank', 'Unsupported Media Type', detail),
  unprocessable: (slug: string, title: string, detail: string, extensions: Record<string, unknown> = {}) =>
    new Problem(422, urn(slug), title, detail, { extensions }),
  costAboveCap: (detail: string) => new Problem(422, urn('cost-above-cap'), 'Cost above the server cap', detail),
  malformedHash: (algorithm: string, detail: string) =>
    new Problem(422, urn('malformed-hash'), 'Malformed hash', `Not a valid ${algorithm} hash: ${detail}`),
  /** `policy`: the budget that refused, as the RateLimit field names it ("default" for requests, "items" for batch items). */
  rateLimited: (retryAfterSeconds: number, policy = 'default') =>
    new Problem(429, 'about:blank', 'Too Many Requests', `Rate limit exceeded; retry in ${retryAfterSeconds} s`, { headers: { 'retry-after': String(retryAfterSeconds) }, extensions: { policy } }),
  overloaded: (retryAfterSeconds = 1) =>
    new Problem(503, 'about:blank', 'Service Unavailable', 'The server is busy with other hashing work; retry shortly', { headers: { 'retry-after': String(retryAfterSeconds) } }),
  shuttingDown: () =>
    new Problem(503, 'about:blank', 'Service Unavailable', 'The server is shutting down; retry shortly', { headers: { 'retry-after': '1', connection: 'close' } }),
  notReady: (state: 'starting' | 'draining') =>
    new Problem(503, 'about:blank', 'Service Unavailable',
      state === 'starting' ? 'The server is starting; retry shortly' : 'The server is shutting down; retry shortly', { headers: { 'retry-after': '1' } }),
  /** AUDIT_FAIL=closed and the audit log cannot be written: keyed work waits until it can (src/audit/). */
  auditUnavailable: () =>
    new Problem(503, urn('audit-unavailable'), 'Audit log unavailable',
      'The audit log cannot be written, and keyed operations are not done without a record; retry shortly', { headers: { 'retry-after': '1' } }),
  /**
   * A key held in a PKCS#11 token cannot be used now (src/keys/pkcs11/token.ts: module not loadable,
   * token missing, PIN refused, device gone, every session busy): keyed work stops, never falls back.
   * `reason` is the way it failed; the detail names variables, never a PIN or a key.
   */
  keySourceUnavailable: (reason: string, detail: string) =>
    new Problem(503, urn('key-source-unavailable'), 'Key source unavailable',
      `The HSM (PKCS#11 token) holding this key cannot be used: ${detail}; retry shortly`, { headers: { 'retry-after': '1' }, extensions: { reason } }),
  /** The token refuses an operation with a key it holds (a mechanism or key size it does not allow). */
  keyRefusedByToken: (detail: string) =>
    new Problem(422, urn('key-refused-by-token'), 'Key refused by the token', detail),
  notImplemented: (detail: string) => new Problem(501, 'about:blank', 'Not Implemented', detail),
  /** nginx's 499: the client went away before the answer; only the access log ever sees it. */
  clientClosed: () => new Problem(499, 'about:blank', 'Client Closed Request', 'The client closed the connection before the work was done'),
  internal: () => new Problem(500, 'about:blank', 'Internal Server Error', 'The server failed to process the request'),
}

/**
 * The problem a thrown error stands for when it is the request's fault rather than a bug, or null.
 * Text that is not UTF-8 reaching an algorithm defined on text (NTLM) is the input's fault, and a
 * request body cut off by the client's going away is the client's.
 */
export function knownProblem(error: unknown): Problem | null {
  if (error instanceof Problem) return error
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  // Node's IncomingMessage fails a body the client stopped sending with ECONNRESET "aborted"
  // (abortIncoming); whatever reads the body passes it on. The client left: 499, not a bug.
  if (code === 'ECONNRESET' && message === 'aborted') return problems.clientClosed()
  if (code === 'ERR_ENCODING_INVALID_ENCODED_DATA') {
    return problems.unprocessable('not-text', 'Input is not text', 'This algorithm is defined on text, and the input bytes are not valid UTF-8')
  }
  return null
}
