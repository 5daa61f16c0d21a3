/**
 * Rate limiting, keyed by client address (the socket's, unless TRUST_PROXY is set) or by API key,
 * with two budgets per client and window (RATE_LIMIT_WINDOW_MS):
 * - requests (`"default"`, RATE_LIMIT_MAX): every request counts one when it arrives;
 * - batch items (`"items"`, RATE_LIMIT_ITEMS_MAX): a batch's items count when its body has been
 *   read, all at once, so a runbook of 10,000-item batches fits without raising the request budget.
 * A request that a budget refuses costs nothing: a refused batch takes no items and gives back
 * its request. Responses carry the IETF fields of draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`, with the items
 * policy beside it on a batch; a 429's `RateLimit` names only the budget that refused it.
 * RATE_LIMIT_MAX=0 turns limiting off; RATE_LIMIT_ITEMS_MAX=0 counts a batch as one request.
 *
 * The counts (rate-limit-windows.ts) are kept in this process and, with REDIS_URL, shared through
 * Redis (rate-limit-redis.ts), a lease at a time (RATE_LIMIT_LEASE_PERCENT of a budget, so that a
 * busy client costs one call to Redis per lease, not per request). When Redis is slow or down, each
 * instance decides on its own count with the same budgets: a limit is never lifted. GET /api/health
 * says `"degraded"` meanwhile and the metrics count the requests decided that way.
 *
 * The counter is called from one callback hook per route, which writes the IETF fields straight
 * away; @fastify/rate-limit's plugin is not registered (its hook runs an async chain per request
 * and costs about a third of a short /api/hash); only its normalizeIP is used.
 *
 * The webhook replay store lives beside the counters (`app.replayStore`): in memory, or in the same
 * Redis, on the same connection. With REDIS_URL set Redis is used for replays even when
 * RATE_LIMIT_MAX=0 turns the limits off, so replicas share replay protection either way. Its
 * per-caller shares use the limits' buckets (`app.clientBucket`), whether the limits are on or off.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { normalizeIP } from '@fastify/rate-limit'
import type { Config } from '../config.js'
import { Problem, problems } from '../problem.js'
import { MemoryReplayStore, type ReplayStore } from '../webhooks/replay.js'
import type { RateLimitStoreState } from './rate-limit-redis.js'
import { WindowCounter, type Decision } from './rate-limit-windows.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where rate-limit counters live now, for GET /api/health. */
    rateLimitStoreState(): RateLimitStoreState
    /** Requests decided on this instance's own count because Redis did not answer (metrics). */
    rateLimitLocalDecisions(): number
    /** The limit as a hook, for handlers that are not routes (the 404 handler); absent when off. */
    limitRequest?: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
    /** Where verified webhooks are remembered (src/webhooks/replay.ts). */
    replayStore: ReplayStore
    /** The bucket a request counts in (its API key, or its client address): also whose share of the replay store it uses. */
    clientBucket(request: FastifyRequest): string
    /**
     * Counts a batch's `count` items against the request's items budget; rejects with 429 (and
     * gives back the request itself) when they do not fit. Absent when limiting is off.
     */
    chargeItems?: (request: FastifyRequest, reply: FastifyReply, count: number) => Promise<void>
  }
  interface FastifyRequest {
    /** What the requests budget decided for this request, for a give-back if its items are refused. */
    rateLimitDecision: Decision | null
  }
}

const POLICY = 'default'
const ITEMS_POLICY = 'items'
/** Clients whose counts are kept in memory, per budget; past it the least recently seen is forgotten. */
const MAX_CLIENTS = 10_000

/**
 * The bucket a request counts in: its API key's when it has one (plugins/auth.ts runs first), else
 * its client address. IPv4 addresses are used as they are; IPv6 ones go through the plugin's
 * normalizeIP, which folds IPv4-mapped addresses and counts a /56 as one client (one host may
 * hold a whole /64). The check for ':' spares IPv4 requests the plugin's IPv6 regular expression.
 */
function bucketOf(request: FastifyRequest): string {
  if (request.apiKey) return `key:${request.apiKey.name}`
  const ip = request.ip
  return ip.includes(':') ? normalizeIP(ip) : ip
}

async function rateLimitPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { rateLimitMax, rateLimitItemsMax, rateLimitWindowMs, rateLimitLeasePercent, redisUrl } = options.config
  // Loaded only when configured: without REDIS_URL, ioredis is never imported.
  const redis = redisUrl === undefined
    ? undefined
    : (await import('./rate-limit-redis.js')).redisRateLimitStore({ ...options.config, redisUrl }, app.log)
  if (redis) app.addHook('onClose', redis.close)
  const { webhookReplayMemoryMax, webhookReplayCallerMax } = options.config
  app.decorate('replayStore', redis ? redis.replays : new MemoryReplayStore(webhookReplayMemoryMax, webhookReplayCallerMax))
  app.decorate('clientBucket', bucketOf)
  let localDecisions = 0
  app.decorate('rateLimitLocalDecisions', () => localDecisions)
  if (rateLimitMax === 0) {
    app.decorate('rateLimitStoreState', (): RateLimitStoreState => 'off')
    return
  }
  const windowSeconds = Math.ceil(rateLimitWindowMs / 1000)
  app.decorate('rateLimitStoreState', redis ? redis.state : (): RateLimitStoreState => 'memory')
  app.decorateRequest('rateLimitDecision', null)

  const counterFor = (namespace: string) => new WindowCounter({
    windowMs: rateLimitWindowMs, maxClients: MAX_CLIENTS, namespace, shared: redis?.counter, leasePercent: rateLimitLeasePercent,
    onSharedFailure: () => { localDecisions++ },
  })
  // Request windows are `<REDIS_PREFIX><client>:<window>`, item windows `<REDIS_PREFIX>items:<client>:<window>`.
  const requests = counterFor('')
  const items = counterFor(`${ITEMS_POLICY}:`)

  const policyOf = (name: string, max: number) => `"${name}";q=${max};w=${windowSeconds}`
  const defaultPolicy = policyOf(POLICY, rateLimitMax)
  const stateOf = (name: string, max: number, decision: Decision) =>
    `"${name}";r=${Math.max(0, max - decision.current)};t=${resetSeconds(decision)}`
  const limit = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // A request authenticated with an API key is limited per key, at the key's own number if any.
    const max = request.apiKey?.max ?? rateLimitMax
    requests.take(bucketOf(request), 1, max, (decision) => {
      request.rateLimitDecision = decision
      reply.header('ratelimit-policy', max === rateLimitMax ? defaultPolicy : policyOf(POLICY, max))
      reply.header('ratelimit', stateOf(POLICY, max, decision))
      done(decision.allowed ? undefined : problems.rateLimited(resetSeconds(decision)))
    })
  }

  // A batch of n items takes n from the items budget (docs/api.md, "Batches") once its body has
  // been read, in one step; a batch that does not fit is refused whole and costs nothing. With
  // RATE_LIMIT_ITEMS_MAX=0 a batch counts as the one request it is.
  const chargeItems = (request: FastifyRequest, reply: FastifyReply, count: number): Promise<void> => new Promise((resolve, reject) => {
    const itemsMax = request.apiKey?.itemsMax ?? rateLimitItemsMax
    if (itemsMax === 0 || count <= 0) { resolve(); return }
    const bucket = bucketOf(request)
    items.take(bucket, count, itemsMax, (decision) => {
      const max = request.apiKey?.max ?? rateLimitMax
      const taken = request.rateLimitDecision
      reply.header('ratelimit-policy', `${max === rateLimitMax ? defaultPolicy : policyOf(POLICY, max)}, ${policyOf(ITEMS_POLICY, itemsMax)}`)
      if (decision.allowed) {
        const requestState = taken === null ? '' : `${stateOf(POLICY, max, taken)}, `
        reply.header('ratelimit', `${requestState}${stateOf(ITEMS_POLICY, itemsMax, decision)}`)
        resolve()
        return
      }
      if (taken !== null && taken.allowed) requests.giveBack(bucket, 1, taken)
      reply.header('ratelimit', stateOf(ITEMS_POLICY, itemsMax, decision))
      const seconds = resetSeconds(decision)
      const problem = problems.rateLimited(seconds, ITEMS_POLICY)
      const left = Math.max(0, itemsMax - decision.current)
      reject(new Problem(429, problem.type, problem.title,
        `${problem.detail}: this batch's ${count} items go over the items budget (${left} of ${itemsMax} per ${windowSeconds} s left; RATE_LIMIT_ITEMS_MAX)` +
        (count > itemsMax ? '; it can never fit: send smaller batches, or ask for a larger items budget on your API key' : '') +
        '. A refused batch costs nothing', { headers: problem.headers, extensions: problem.extensions }))
    })
  })

  app.decorate('limitRequest', limit)
  app.decorate('chargeItems', chargeItems)
  // Every route but those with `config: { rateLimit: false }` (GET /api/health) is limited, as the
  // plugin's `global: true` would do, by a route-level onRequest hook: it runs after the app-level
  // ones (auth.ts names the key first). app.ts registers this plugin before every route.
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === false) return
    route.onRequest = route.onRequest === undefined ? [limit] : [...[route.onRequest].flat(), limit]
  })
}

/** Whole seconds until the window ends, at least 1 (Retry-After and the `t` parameter). */
function resetSeconds(decision: Decision): number {
  return Math.max(1, Math.ceil(decision.resetMs / 1000))
}

export default fp(rateLimitPlugin, { name: 'rate-limit' })
