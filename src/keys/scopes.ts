/**
 * The scopes an API key may be limited to, as data: one per operation or family of routes. A key
 * whose line in API_KEYS_FILE has no `scopes=` may call everything (as keys always could); one with
 * `scopes=verify,hmac:verify` may call only those. plugins/auth.ts reads this table to check each
 * request (403 insufficient_scope, RFC 6750 §3.1, naming the scope) and to mark each operation of
 * the OpenAPI document with the scope it needs. Routes not listed here need a valid key and no
 * scope (the descriptions: GET /api/algorithms, /api/password-policy, /api/identify/formats).
 */

export interface ScopeSpec {
  name: string
  /** `METHOD /path` of each route the scope grants. */
  routes: readonly string[]
  description: string
}

export const SCOPES: readonly ScopeSpec[] = [
  { name: 'hash', routes: ['POST /api/hash'], description: 'digests and password hashes' },
  { name: 'verify', routes: ['POST /api/verify'], description: 'checking an input against a digest or password hash' },
  { name: 'hmac', routes: ['POST /api/hmac'], description: 'making HMACs (with a named key, also within hmac-keys=)' },
  { name: 'hmac:verify', routes: ['POST /api/hmac/verify'], description: 'checking HMACs (with a named key, also within hmac-keys=)' },
  { name: 'filehash', routes: ['POST /api/filehash', 'PUT /api/filehash'], description: 'hashing uploads' },
  { name: 'checksums', routes: ['POST /api/checksums'], description: 'checking files against checksum lists' },
  { name: 'identify', routes: ['POST /api/identify'], description: 'identifying hashes' },
  { name: 'pepper:rewrap', routes: ['POST /api/pepper/rewrap'], description: 'moving stored hashes to the current pepper key' },
  { name: 'calibrate', routes: ['POST /api/calibrate'], description: 'timing password-hash parameters on this server' },
  { name: 'webhooks:verify', routes: ['POST /api/webhooks/verify'], description: 'checking webhooks (with a named key, also within hmac-keys=)' },
  { name: 'webhooks:sign', routes: ['POST /api/webhooks/sign'], description: 'signing webhooks (with a named key, also within hmac-keys=)' },
  { name: 'keys', routes: ['GET /api/keys'], description: 'listing key names, versions and states (never secrets)' },
  { name: 'metrics', routes: ['GET /metrics'], description: 'Prometheus metrics' },
]

export const SCOPE_NAMES: readonly string[] = SCOPES.map((scope) => scope.name)

const byRoute = new Map(SCOPES.flatMap((scope) => scope.routes.map((route) => [route, scope.name] as const)))

/** The scope a route needs (`GET /metrics` → metrics), or undefined when a valid key is enough. */
export function scopeOf(method: string, url: string): string | undefined {
  return byRoute.get(`${method === 'HEAD' ? 'GET' : method} ${url}`)
}
