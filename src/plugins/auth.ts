/**
 * Optional API keys, in one place. With API_KEYS_FILE set, every request outside the public set
 * needs `Authorization: Bearer <key>` (RFC 6750 §2.1); without it, this plugin does nothing.
 *
 * The file holds one key per line, `<name> <sha256 of the key, 64 hex> [<requests per window>]`,
 * `#` to the end of a line is a comment. Only hashes are stored, never keys. A request's key is
 * hashed and looked up in a Map by that hash, so the time to reject a key does not depend on how
 * much of it is right: the client controls the key, not its hash.
 *
 * Two hooks, so that unauthenticated floods are still limited per address: `onRequest` (added
 * before the rate-limit plugin's route-level hook) only identifies the key, so the rate limit can
 * count per key; `preParsing` (after the rate limit, before any body is read) refuses with 401.
 *
 * The file is read again when it changes on disk and on SIGHUP (file-reload.ts). A file that cannot
 * be read or parsed at start-up is a ConfigError naming the file and line; on reload the same error
 * is logged as a warning and the keys already loaded stay in force, so a typo during rotation does
 * not lock every client out.
 */
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ConfigError, type Config } from '../config.js'
import { reloadable, type Reloadable } from '../file-reload.js'
import { keysFileLines, readKeysFileText } from '../keys-file.js'
import { Problem } from '../problem.js'
import { problemResponse } from '../routes/schemas.js'

export interface ApiKey {
  /** The name from the file: logged, and the rate-limit key. Never the key itself. */
  name: string
  /** Requests per RATE_LIMIT_WINDOW_MS for this key, overriding RATE_LIMIT_MAX; null keeps the default. */
  max: number | null
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key this request authenticated with, if any (set by plugins/auth.ts). */
    apiKey: ApiKey | null
  }
}

/** Names appear in logs and rate-limit keys: keep them to a plain, bounded alphabet. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
/** Minted keys: `hk_` and base64url (scripts/apikey.ts); anything else is refused before hashing. */
const KEY_SYNTAX = /^[A-Za-z0-9._~+/-]{16,512}={0,2}$/
const SHA256_HEX = /^[0-9a-fA-F]{64}$/

/** The sha256 of a key, hex: what the file stores and the Map is keyed by. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The file's line for a key. */
export function keyLine(name: string, key: string, max?: number): string {
  return `${name} ${hashKey(key)}${max === undefined ? '' : ` ${max}`}`
}

/**
 * Parses a keys file. Errors name the file and line and describe the field, never quote it: a
 * key pasted where its hash belongs must not end up in a log.
 */
export function parseKeysFile(text: string, file: string): Map<string, ApiKey> {
  const keys = new Map<string, ApiKey>()
  const names = new Set<string>()
  for (const { where, fields } of keysFileLines(text, 'API_KEYS_FILE', file)) {
    const [name, hash, max] = fields as [string, string | undefined, string | undefined]
    if (fields.length > 3 || hash === undefined) {
      throw new ConfigError(`${where}: expected "<name> <sha256 of the key, 64 hex> [<requests per window>]", got ${fields.length} field(s)`)
    }
    if (!KEY_NAME.test(name)) throw new ConfigError(`${where}: the name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`)
    if (!SHA256_HEX.test(hash)) throw new ConfigError(`${where}: the second field must be the key's sha256 as 64 hex digits (npm run apikey prints it), not the key`)
    if (max !== undefined && !/^[1-9]\d{0,8}$/.test(max)) throw new ConfigError(`${where}: requests per window must be a whole number from 1 to 999999999`)
    if (names.has(name)) throw new ConfigError(`${where}: the name ${name} is already used on an earlier line`)
    const digest = hash.toLowerCase()
    if (keys.has(digest)) throw new ConfigError(`${where}: this hash is already used on an earlier line`)
    names.add(name)
    keys.set(digest, { name, max: max === undefined ? null : Number(max) })
  }
  return keys
}

export function readKeysFile(file: string): Map<string, ApiKey> {
  return parseKeysFile(readKeysFileText('API_KEYS_FILE', file), file)
}

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
  readonly #keys: Reloadable<Map<string, ApiKey>>

  constructor(keys: Reloadable<Map<string, ApiKey>>) {
    this.#keys = keys
  }

  get size(): number { return this.#keys.value.size }

  authenticate(authorization: string | undefined): ApiKey | 'missing' | 'invalid' {
    return authenticate(this.#keys.value, authorization)
  }
}

async function authPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  app.decorateRequest('apiKey', null)
  const file = options.config.apiKeysFile
  if (file === null) return
  const loaded = reloadable({
    source: 'api-keys', what: 'API keys', files: [file], log: app.log,
    load: () => readKeysFile(file), describe: (value) => ({ keysFile: file, keys: value.size }),
  })
  app.addHook('onClose', async () => { loaded.close() })
  const keys = new ApiKeys(loaded)
  app.decorate('apiKeys', keys)
  app.log.info({ keysFile: file, keys: keys.size }, 'API keys loaded')

  // The OpenAPI document: operations that need a key name the bearer scheme (declared in
  // plugins/openapi.ts) and list 401.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!route.schema || methods.every((method) => isPublicPath(method, route.url))) return
    const response = (route.schema.response ?? {}) as Record<string, unknown>
    route.schema = {
      ...route.schema,
      security: [{ apiKey: [] }],
      response: { ...response, 401: problemResponse('No API key, or not a valid one; see WWW-Authenticate (RFC 6750 §3)') },
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
    if (refusal) done(unauthorized(refusal), payload)
    else done(null, payload)
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The API keys in force, when API_KEYS_FILE is set. */
    apiKeys?: ApiKeys
  }
}

export default fp(authPlugin, { name: 'auth' })
