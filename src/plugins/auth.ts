/**
 * Optional API keys, in one place. With API_KEYS_FILE set, every request outside the public set
 * needs `Authorization: Bearer <key>` (RFC 6750 §2.1); without it, this plugin does nothing.
 *
 * The file (src/keys/api-keys.ts, read and reloaded by the key ring) holds one key per line,
 * `<name> <sha256 of the key, 64 hex> [<requests per window>] [scopes=…] [hmac-keys=…]`. Only hashes
 * are stored, never keys. A request's key is hashed and looked up in a Map by that hash, so the
 * time to reject a key does not depend on how much of it is right: the client controls the key,
 * not its hash. A key limited by `scopes=` gets 403 insufficient_scope (RFC 6750 §3.1) outside
 * them, before its body is read; `hmac-keys=` is checked where the key name is read (the HMAC
 * routes, per batch item), through `keyAccess`.
 *
 * Two hooks, so that unauthenticated floods are still limited per address: `onRequest` (added
 * before the rate-limit plugin's route-level hook) only identifies the key, so the rate limit can
 * count per key; `preParsing` (after the rate limit, before any body is read) refuses with 401.
 *
 * The file is read again when it changes on disk and on SIGHUP (src/keys/, file-reload.ts). A file
 * that cannot be read or parsed at start-up is a ConfigError naming the file and line; on reload the
 * same error is logged as a warning and the keys already loaded stay in force, so a typo during
 * rotation does not lock every client out.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Reloadable } from '../file-reload.js'
import { hashKey, type ApiKey } from '../keys/api-keys.js'
import { scopeOf, SCOPES } from '../keys/scopes.js'
import { Problem } from '../problem.js'
import { problemResponse } from '../routes/schemas.js'

export type { ApiKey } from '../keys/api-keys.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key this request authenticated with, if any (set by plugins/auth.ts). */
    apiKey: ApiKey | null
  }
}

/** Minted keys: `hk_` and base64url (scripts/apikey.ts); anything else is refused before hashing. */
const KEY_SYNTAX = /^[A-Za-z0-9._~+/-]{16,512}={0,2}$/

/** The key an Authorization header names: the key, `missing` (no Bearer credentials) or `invalid`. */
export function authenticate(keys: ReadonlyMap<string, ApiKey>, authorization: string | undefined): ApiKey | 'missing' | 'invalid' {
  if (authorization === undefined) return 'missing'
  // RFC 9110 §11.1: the scheme is case-insensitive. Other schemes are "no Bearer credentials"
  // (RFC 6750 §3.1: no error code for an unsupported method).
  // One blank after the scheme; the rest, trimmed, is the token (`[ \t]+(.*)` split a run of blanks every way).
  const match = /^bearer(?:[ \t](.*))?$/i.exec(authorization.trim())
  if (!match) return 'missing'
  const token = match[1]?.trim() ?? ''
  if (!KEY_SYNTAX.test(token)) return 'invalid'
  return keys.get(hashKey(token)) ?? 'invalid'
}

const REALM = 'Bearer realm="hashd"'

/** RFC 6750 §3: 401 with a challenge; `error="invalid_token"` when a key was sent and is not one. */
export function unauthorized(reason: 'missing' | 'invalid'): Problem {
  return reason === 'missing'
    ? new Problem(401, 'about:blank', 'Unauthorized', 'This server needs an API key: send Authorization: Bearer <key>',
      { headers: { 'www-authenticate': REALM } })
    : new Problem(401, 'about:blank', 'Unauthorized', 'The API key is not valid',
      { headers: { 'www-authenticate': `${REALM}, error="invalid_token"` } })
}

/**
 * RFC 6750 §3.1: 403 with `error="insufficient_scope"` and the scope the request needs. `scope` is
 * an operation's scope (src/keys/scopes.ts) or `hmac-key:<name>` for a named HMAC key the line's
 * `hmac-keys=` does not list.
 */
export function insufficientScope(key: ApiKey, scope: string, what: string): Problem {
  return new Problem(403, 'urn:hashd:problem:insufficient-scope', 'Forbidden',
    `The API key ${key.name} may not ${what}: it lacks the scope ${scope}`,
    { extensions: { scope }, headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` } })
}

/**
 * Whether the request may use the named HMAC key: always without API keys or with a line that has
 * no `hmac-keys=`; otherwise only the names it lists. Throws the 403 for the caller to pass on.
 */
export function keyAccess(apiKey: ApiKey | null): (name: string) => void {
  if (apiKey === null || apiKey.hmacKeys === null) return () => {}
  const allowed = apiKey.hmacKeys
  return (name) => {
    if (!allowed.has(name)) throw insufficientScope(apiKey, `hmac-key:${name}`, `use the HMAC key ${name}`)
  }
}

/** API paths anyone may GET: liveness, readiness (probes carry no key) and the API description. */
const PUBLIC_API = new Set(['/api/health', '/api/ready', '/api/openapi.json'])

/**
 * What needs no key: GET (and HEAD) of the listed API paths, and of everything outside /api/ and
 * /metrics, which is the documentation (/docs and its assets) and the web page's static files.
 * Matched requests are judged by their route template, so `/api/health/` or a query string
 * changes nothing; unmatched ones by their path, and under /api/ they need a key, so a 404
 * does not tell a stranger which API paths exist.
 */
export function isPublic(request: FastifyRequest): boolean {
  return isPublicPath(request.method, request.routeOptions.url ?? request.url.split('?', 1)[0] ?? '')
}

function isPublicPath(method: string, path: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false
  if (PUBLIC_API.has(path)) return true
  return !path.startsWith('/api/') && path !== '/api' && path !== '/metrics'
}

/** The keys in force, reloaded when the file changes. */
export class ApiKeys {
  readonly #keys: { readonly value: ReadonlyMap<string, ApiKey> }

  constructor(keys: Reloadable<Map<string, ApiKey>>) {
    this.#keys = keys
  }

  get size(): number { return this.#keys.value.size }

  authenticate(authorization: string | undefined): ApiKey | 'missing' | 'invalid' {
    return authenticate(this.#keys.value, authorization)
  }
}

async function authPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('apiKey', null)
  const loaded = app.keyRing.apiKeys
  if (loaded === null) return
  const keys = new ApiKeys(loaded)
  app.decorate('apiKeys', keys)

  // The OpenAPI document: operations that need a key name the bearer scheme (declared in
  // plugins/openapi.ts) with the scope they need (OpenAPI 3.1 lets a security requirement list
  // role names for any scheme), and list 401, and 403 where a scope applies.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!route.schema || methods.every((method) => isPublicPath(method, route.url))) return
    const response = (route.schema.response ?? {}) as Record<string, unknown>
    const scope = scopeOf(methods[0] ?? 'GET', route.url)
    const spec = SCOPES.find((each) => each.name === scope)
    route.schema = {
      ...route.schema,
      security: [{ apiKey: scope === undefined ? [] : [scope] }],
      response: {
        ...response,
        401: problemResponse('No API key, or not a valid one; see WWW-Authenticate (RFC 6750 §3)'),
        ...(spec ? { 403: problemResponse(`The API key lacks the scope ${spec.name} (${spec.description})${spec.name.startsWith('hmac') ? ', or the named HMAC key is not in its hmac-keys= (scope hmac-key:<name>)' : ''}; insufficient-scope with \`scope\`, and WWW-Authenticate (RFC 6750 §3.1)`) } : {}),
      },
    } as typeof route.schema
  })

  /** Why a request failed to authenticate, from onRequest to preParsing. */
  const refusals = new WeakMap<FastifyRequest, 'missing' | 'invalid'>()
  app.addHook('onRequest', (request, _reply, done) => {
    if (!isPublic(request)) {
      const result = keys.authenticate(request.headers.authorization)
      if (typeof result === 'string') refusals.set(request, result)
      else request.apiKey = result
    }
    done()
  })
  app.addHook('preParsing', (request: FastifyRequest, _reply: FastifyReply, payload, done) => {
    const refusal = refusals.get(request)
    if (refusal) {
      done(unauthorized(refusal), payload)
      return
    }
    const key = request.apiKey
    const url = request.routeOptions.url
    const scope = key === null || url === undefined ? undefined : scopeOf(request.method, url)
    if (key !== null && scope !== undefined && !key.scopes.has(scope)) done(insufficientScope(key, scope, `call ${request.method} ${url}`), payload)
    else done(null, payload)
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API keys in force, when API_KEYS_FILE is set. */
    apiKeys?: ApiKeys
  }
}

export default fp(authPlugin, { name: 'auth', dependencies: ['keys'] })
