/**
 * Who may call which route when API_KEYS_FILE is set, as data: the scopes an API key may be limited
 * to (one per operation or family of routes), and the few routes no scope names. plugins/auth.ts
 * reads these tables to check each request and to mark each operation of the OpenAPI document with
 * what it needs; test/scopes.test.ts walks every route the server has against them.
 *
 * Deny by default: a key whose line has `scopes=` reaches a route only when one of its scopes names
 * that route, or the route is in OPEN_ROUTES below. A route in neither is refused to every key (403)
 * and to requests without one (401), and logged at start-up, so a route added without a scope is
 * closed, not open. A line without `scopes=` holds every scope, so it may call every route.
 */

export interface ScopeSpec {
  name: string
  /** `METHOD /route template` of each route the scope grants. */
  routes: readonly string[]
  description: string
  /** The routes take a named HMAC key (`keyName`), which must also be within the key's hmac-keys=. */
  namedKeys?: true
}

export const SCOPES: readonly ScopeSpec[] = [
  { name: 'hash', routes: ['POST /api/hash'], description: 'digests and password hashes' },
  { name: 'verify', routes: ['POST /api/verify'], description: 'checking an input against a digest or password hash' },
  { name: 'hmac', routes: ['POST /api/hmac'], description: 'making HMACs', namedKeys: true },
  { name: 'hmac:verify', routes: ['POST /api/hmac/verify'], description: 'checking HMACs', namedKeys: true },
  { name: 'filehash', routes: ['POST /api/filehash', 'PUT /api/filehash', 'POST /api/filehash/verify'], description: 'hashing uploads, and checking them against a store\'s metadata' },
  { name: 'checksums', routes: ['POST /api/checksums'], description: 'checking files against checksum lists' },
  { name: 'identify', routes: ['POST /api/identify'], description: 'identifying hashes' },
  { name: 'similarity', routes: ['POST /api/similarity/compare'], description: 'comparing similarity hashes (ssdeep, TLSH, PDQ)' },
  { name: 'similarity:match', routes: ['POST /api/similarity/match', 'POST /api/similarity/match/file'], description: 'matching hashes and uploads against the similarity banks (only the banks in the key\'s banks=, when it has one)' },
  { name: 'passwords:check', routes: ['POST /api/passwords/check'], description: 'screening prospective passwords' },
  { name: 'passwords:range', routes: ['GET /range/:prefix'], description: 'the Pwned Passwords range API of the breached-password store' },
  { name: 'pepper:rewrap', routes: ['POST /api/pepper/rewrap'], description: 'moving stored hashes to the current pepper key' },
  { name: 'calibrate', routes: ['POST /api/calibrate'], description: 'timing password-hash parameters on this server' },
  { name: 'webhooks:verify', routes: ['POST /api/webhooks/verify'], description: 'checking webhooks', namedKeys: true },
  { name: 'webhooks:sign', routes: ['POST /api/webhooks/sign'], description: 'signing webhooks', namedKeys: true },
  { name: 'keys', routes: ['GET /api/keys'], description: 'listing key names, versions and states (never secrets)' },
  { name: 'audit', routes: ['GET /api/audit/checkpoint'], description: 'the audit log\'s latest checkpoint (a count, a hash and a MAC; never an input)' },
  { name: 'metrics', routes: ['GET /metrics'], description: 'Prometheus metrics; also the details of GET /api/health' },
  { name: 'health', routes: [], description: 'the details of GET /api/health (worker pool, files read while running, screening); the route itself is open' },
]

export const SCOPE_NAMES: readonly string[] = SCOPES.map((scope) => scope.name)

/** The scopes that see GET /api/health's details; the summary is open to anyone. */
export const HEALTH_DETAIL_SCOPES: readonly string[] = ['health', 'metrics']

/**
 * The routes no scope names, and who may call them: the only exceptions to deny by default.
 * `anyone` needs no key at all, even with API_KEYS_FILE (a key that comes along is recognised, and
 * an invalid one is ignored: a probe never fails over a key); `any key` needs a valid key, whatever
 * its scopes=. A template ending in `/*` stands for every route under it. Everything here is GET
 * (and its HEAD); another method on these paths is an unknown route and needs a key.
 */
export const OPEN_ROUTES: ReadonlyArray<{ access: 'anyone' | 'any key', routes: readonly string[], why: string }> = [
  { access: 'anyone', routes: ['GET /api/health', 'GET /api/ready'], why: 'liveness and readiness probes carry no key; /api/health gives its details only to a key with health or metrics' },
  { access: 'anyone', routes: ['GET /api/openapi.json', 'GET /docs', 'GET /docs/*'], why: 'the API\'s description and its browser (Swagger UI), read before anyone has a key' },
  { access: 'anyone', routes: ['GET /', 'GET /index.html', 'GET /favicon.svg', 'GET /assets/*'], why: 'the web page\'s files (the page asks for a key before it calls the API)' },
  { access: 'any key', routes: ['GET /api/algorithms', 'GET /api/password-policy', 'GET /api/identify/formats'], why: 'the descriptions a client reads to build its requests' },
]

export type Access = { scope: string } | 'anyone' | 'any key' | 'no scope'

const byRoute = new Map<string, Access>([
  ...SCOPES.flatMap((scope) => scope.routes.map((route) => [route, { scope: scope.name }] as const)),
  ...OPEN_ROUTES.flatMap(({ access, routes }) => routes.filter((route) => !route.endsWith('/*')).map((route) => [route, access] as const)),
])
const byPrefix = OPEN_ROUTES.flatMap(({ access, routes }) => routes.filter((route) => route.endsWith('/*')).map((route) => [route.slice(0, -1), access] as const))

/**
 * What a route needs, by its method and template (`GET /metrics` → the scope metrics): a scope, no
 * key, any valid key, or `no scope` for a route neither table names, which no key may call.
 */
export function accessOf(method: string, url: string): Access {
  const route = `${method === 'HEAD' ? 'GET' : method} ${url}`
  return byRoute.get(route) ?? byPrefix.find(([prefix]) => route.startsWith(prefix))?.[1] ?? 'no scope'
}
