/**
 * Optional API keys, in one place. With API_KEYS_FILE set, a request needs `Authorization: Bearer
 * <key>` (RFC 6750 §2.1) except on the open routes of src/keys/scopes.ts; without it, this plugin
 * does nothing.
 *
 * The file (src/keys/api-keys.ts, read and reloaded by the key ring) holds one key per line,
 * `<name> <sha256 of the key, 64 hex> [<requests per window>] [scopes=…] [hmac-keys=…]`. Only hashes
 * are stored, never keys. A request's key is hashed and looked up in a Map by that hash, so the
 * time to reject a key does not depend on how much of it is right: the client controls the key,
 * not its hash. Scopes deny by default (src/keys/scopes.ts): a key gets 403 insufficient_scope
 * (RFC 6750 §3.1) on a route none of its scopes names, before its body is read; `hmac-keys=` is
 * checked where the key name is read (the HMAC and webhook routes, per batch item), through
 * `keyAccess`. No refusal repeats a key name the client sent.
 *
 * Two hooks, so that unauthenticated floods are still limited per address: `onRequest` (added
 * before the rate-limit plugin's route-level hook) only identifies the key, so the rate limit can
 * count per key; `preParsing` (after the rate limit, before any body is read) refuses with 401 or 403.
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
import { accessOf, HEALTH_DETAIL_SCOPES, SCOPES, type Access } from '../keys/scopes.js'
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

const refusedScope = (scope: string) => `${REALM}, error="insufficient_scope", scope="${scope}"`

/** RFC 6750 §3.1: 403 with `error="insufficient_scope"` and the scope (src/keys/scopes.ts) the route needs. */
export function insufficientScope(key: ApiKey, scope: string, what: string): Problem {
  return new Problem(403, 'urn:hashd:problem:insufficient-scope', 'Forbidden',
    `The API key ${key.name} may not ${what}: it lacks the scope ${scope}`,
    { extensions: { scope }, headers: { 'www-authenticate': refusedScope(scope) } })
}

/** A route no scope names (src/keys/scopes.ts): no key may call it. */
function noScopeGrants(key: ApiKey, what: string): Problem {
  return new Problem(403, 'urn:hashd:problem:insufficient-scope', 'Forbidden',
    `The API key ${key.name} may not ${what}: no scope grants it`,
    { headers: { 'www-authenticate': `${REALM}, error="insufficient_scope"` } })
}

/** The `scope` of a named HMAC key outside the key's hmac-keys=: the option, never the name. */
export const HMAC_KEYS_SCOPE = 'hmac-keys'

/**
 * Whether the request may use the named HMAC key: always without API keys or with a line that has
 * no `hmac-keys=`; otherwise only the names it lists. Throws the 403 for the caller to pass on.
 * The 403 names neither the key asked for (a secret pasted into keyName must not come back, as
 * with 422 unknown-key) nor whether it exists; its pointer says which field, `scope` the option.
 */
export function keyAccess(apiKey: ApiKey | null): (name: string) => void {
  if (apiKey === null || apiKey.hmacKeys === null) return () => {}
  const allowed = apiKey.hmacKeys
  return (name) => {
    if (!allowed.has(name)) {
      throw new Problem(403, 'urn:hashd:problem:insufficient-scope', 'Forbidden',
        `The API key ${apiKey.name} may not use the HMAC key named in keyName: its hmac-keys= in API_KEYS_FILE does not list it (GET /api/keys lists those it may use)`,
        { extensions: { scope: HMAC_KEYS_SCOPE, errors: [{ pointer: '/body/keyName', message: 'not in this API key\'s hmac-keys=' }] }, headers: { 'www-authenticate': refusedScope(HMAC_KEYS_SCOPE) } })
    }
  }
}

/**
 * A request's access: by its route template when it matched one (so `/api/health/` or a query
 * string changes nothing), else by its path: an unknown path under /api/ needs a key, so a 404
 * does not tell a stranger which API paths exist, and so does any method but GET; a GET elsewhere
 * is an unknown page, a 404 for anyone.
 */
export function accessOfRequest(request: FastifyRequest): Access {
  const url = request.routeOptions.url
  if (url !== undefined) return accessOf(request.method, url)
  const path = request.url.split('?', 1)[0] ?? ''
  if (request.method !== 'GET' && request.method !== 'HEAD') return 'any key'
  return path.startsWith('/api/') || path === '/api' ? 'any key' : 'anyone'
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
  // role names for any scheme), and list 401, and 403 where a scope applies. /api/health needs no
  // key, and shows its details to one with a detail scope: an empty requirement or either scope.
  app.addHook('onRoute', (route) => {
    const method = [route.method].flat()[0] ?? 'GET'
    const access = accessOf(method, route.url)
    if (access === 'no scope') app.log.warn({ route: `${method} ${route.url}` }, 'no scope names this route, so every API key gets 403 on it: add it to src/keys/scopes.ts')
    if (!route.schema) return
    if (access === 'anyone') {
      if (route.url === '/api/health') route.schema = { ...route.schema, security: [{}, ...HEALTH_DETAIL_SCOPES.map((scope) => ({ apiKey: [scope] }))] } as typeof route.schema
      return
    }
    const response = (route.schema.response ?? {}) as Record<string, unknown>
    const spec = typeof access === 'object' ? SCOPES.find((each) => each.name === access.scope) : undefined
    const refused = spec
      ? `The API key lacks the scope ${spec.name} (${spec.description})`
        + `${spec.namedKeys ? `, or keyName names an HMAC key outside its hmac-keys= (scope ${HMAC_KEYS_SCOPE}; the name is not repeated)` : ''}`
      : access === 'no scope' ? 'No scope grants this route: every API key is refused' : undefined
    route.schema = {
      ...route.schema,
      security: [{ apiKey: spec ? [spec.name] : [] }],
      response: {
        ...response,
        401: problemResponse('No API key, or not a valid one; see WWW-Authenticate (RFC 6750 §3)'),
        ...(refused ? { 403: problemResponse(`${refused}; insufficient-scope with \`scope\`, and WWW-Authenticate (RFC 6750 §3.1)`) } : {}),
      },
    } as typeof route.schema
  })

  /** Why a request failed to authenticate, from onRequest to preParsing. */
  const refusals = new WeakMap<FastifyRequest, 'missing' | 'invalid'>()
  app.addHook('onRequest', (request, _reply, done) => {
    const result = keys.authenticate(request.headers.authorization)
    // An open route recognises a valid key (for /api/health's details, the access line and the
    // rate limit) and ignores a bad one; every other route needs one.
    if (typeof result !== 'string') request.apiKey = result
    else if (accessOfRequest(request) !== 'anyone') refusals.set(request, result)
    done()
  })
  app.addHook('preParsing', (request: FastifyRequest, _reply: FastifyReply, payload, done) => {
    const refusal = refusals.get(request)
    if (refusal) {
      done(unauthorized(refusal), payload)
      return
    }
    const key = request.apiKey
    if (key === null) {
      done(null, payload)
      return
    }
    const access = accessOfRequest(request)
    const what = () => `call ${request.method} ${request.routeOptions.url}`
    if (typeof access === 'object' && !key.scopes.has(access.scope)) done(insufficientScope(key, access.scope, what()), payload)
    else if (access === 'no scope') done(noScopeGrants(key, what()), payload)
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
