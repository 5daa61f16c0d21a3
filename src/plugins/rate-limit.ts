/**
 * Rate limiting with @fastify/rate-limit's stores (its in-memory LRU store, or its Redis store and
 * Lua script), keyed by client address (the socket's, unless TRUST_PROXY is set) or by API key.
 * Responses carry the IETF fields of draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`.
 * RATE_LIMIT_MAX=0 turns limiting off. With REDIS_URL the counters live in Redis, shared by every
 * instance (see rate-limit-redis.ts); without it they stay in this process's memory.
 *
 * The stores are called from one callback hook per route, which writes the IETF fields straight
 * away; the plugin itself is not registered. Its hook runs an async chain per request (a promise for
 * the key, the max and the store call) and writes x-ratelimit-* headers that an onSend hook had to
 * rewrite, and it reports a failed Redis call only as "remaining = limit". Counted with callgrind
 * after warm-up, that hook cost about 50,000 instructions per request, a third of all hashd spends on
 * a short /api/hash; the in-memory store answers its callback at once, so this hook costs no promise.
 *
 * The webhook replay store lives beside the counters (`app.replayStore`): in memory, or in the same
 * Redis, on the same connection. With REDIS_URL set Redis is used for replays even when
 * RATE_LIMIT_MAX=0 turns the limits off, so replicas share replay protection either way. Its
 * per-caller shares use the limits' buckets (`app.clientBucket`), whether the limits are on or off.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { normalizeIP } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { Config } from '../config.js'
import { Problem, problems } from '../problem.js'
import { MemoryReplayStore, type ReplayStore } from '../webhooks/replay.js'
import type { RateLimitStoreState } from './rate-limit-redis.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where rate-limit counters live now, for GET /api/health. */
    rateLimitStoreState(): RateLimitStoreState
    /** The limit as a hook, for handlers that are not routes (the 404 handler); absent when off. */
    limitRequest?: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void
    /** Where verified webhooks are remembered (src/webhooks/replay.ts). */
    replayStore: ReplayStore
    /** The bucket a request counts in (its API key, or its client address): also whose share of the replay store it uses. */
    clientBucket(request: FastifyRequest): string
    /**
     * Counts `count` more requests against the request's bucket (a batch's items beyond the request
     * itself, which was counted when it arrived); rejects with 429 when that goes over the limit.
     * Absent when limiting is off.
     */
    chargeRequests?: (request: FastifyRequest, reply: FastifyReply, count: number) => Promise<void>
  }
}

const POLICY = 'default'

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
  const { rateLimitMax, rateLimitWindowMs } = options.config
  const { redisUrl } = options.config
  // Loaded only when configured: without REDIS_URL, ioredis is never imported.
  const redis = redisUrl === undefined
    ? undefined
    : (await import('./rate-limit-redis.js')).redisRateLimitStore({ ...options.config, redisUrl }, app.log)
  if (redis) app.addHook('onClose', redis.close)
  const { webhookReplayMemoryMax, webhookReplayCallerMax } = options.config
  app.decorate('replayStore', redis ? redis.replays : new MemoryReplayStore(webhookReplayMemoryMax, webhookReplayCallerMax))
  app.decorate('clientBucket', bucketOf)
  if (rateLimitMax === 0) {
    app.decorate('rateLimitStoreState', (): RateLimitStoreState => 'off')
    return
  }
  const windowSeconds = Math.ceil(rateLimitWindowMs / 1000)
  app.decorate('rateLimitStoreState', redis ? redis.state : (): RateLimitStoreState => 'memory')

  // The plugin's defaults: a fixed window that a refused request does not extend, and an LRU of
  // 5000 clients in memory (the least recent is forgotten first).
  const store = redis
    ? new RedisStore(false, false, redis.storeOptions.redis, redis.storeOptions.nameSpace)
    : new LocalStore(false, false, 5000)

  const defaultPolicy = `"${POLICY}";q=${rateLimitMax};w=${windowSeconds}`
  const limit = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    // A request authenticated with an API key is limited per key, at the key's own number if any.
    const max = request.apiKey?.max ?? rateLimitMax
    store.incr(bucketOf(request), (error, count) => {
      if (error !== null || count === null) {
        // Fail open (rate-limit-redis.ts): served, uncounted, and without RateLimit fields, since no
        // limit was applied to it.
        redis?.noteFailure('a rate-limit call failed or timed out')
        done()
        return
      }
      redis?.noteSuccess()
      const resetSeconds = Math.ceil(count.ttl / 1000)
      reply.header('ratelimit-policy', max === rateLimitMax ? defaultPolicy : `"${POLICY}";q=${max};w=${windowSeconds}`)
      reply.header('ratelimit', `"${POLICY}";r=${Math.max(0, max - count.current)};t=${resetSeconds}`)
      done(count.current > max ? problems.rateLimited(Math.max(1, resetSeconds)) : undefined)
    }, rateLimitWindowMs, max)
  }

  // A batch of n items counts as n requests (docs/api.md, "Batches"): the n - 1 beyond the request
  // itself are added once its body has been read, in one step, and a batch that goes over the
  // limit is refused whole. Counted like requests, refused like them: the window is not extended.
  const addLocal = (key: string, count: number): { current: number, ttl: number } => {
    const local = store as InstanceType<typeof LocalStore>
    const now = Date.now()
    let entry = local.lru.get(key)
    if (entry === undefined || entry.iterationStartMs + rateLimitWindowMs <= now) entry = { current: count, ttl: rateLimitWindowMs, iterationStartMs: now }
    else entry = { ...entry, current: entry.current + count, ttl: rateLimitWindowMs - (now - entry.iterationStartMs) }
    local.lru.set(key, entry)
    return entry
  }
  const chargeRequests = (request: FastifyRequest, reply: FastifyReply, count: number): Promise<void> => new Promise((resolve, reject) => {
    if (count <= 0) { resolve(); return }
    const max = request.apiKey?.max ?? rateLimitMax
    const settle = (error: Error | null, result: { current: number, ttl: number } | null): void => {
      if (error !== null || result === null) {
        redis?.noteFailure('a rate-limit call failed or timed out')
        resolve()
        return
      }
      redis?.noteSuccess()
      const resetSeconds = Math.ceil(result.ttl / 1000)
      reply.header('ratelimit', `"${POLICY}";r=${Math.max(0, max - result.current)};t=${resetSeconds}`)
      if (result.current <= max) { resolve(); return }
      const problem = problems.rateLimited(Math.max(1, resetSeconds))
      reject(new Problem(429, problem.type, problem.title,
        `${problem.detail}: a batch counts one request per item, and this one's ${count + 1} items go over the limit of ${max} per ${windowSeconds} s` +
        (count + 1 > max ? '; it can never fit: send smaller batches, or ask for a higher limit on your API key' : ''),
        { headers: problem.headers }))
    }
    if (redis) redis.incrBy(bucketOf(request), count, rateLimitWindowMs, settle)
    else settle(null, addLocal(bucketOf(request), count))
  })

  app.decorate('limitRequest', limit)
  app.decorate('chargeRequests', chargeRequests)
  // Every route but those with `config: { rateLimit: false }` (GET /api/health) is limited, as the
  // plugin's `global: true` would do, by a route-level onRequest hook: it runs after the app-level
  // ones (auth.ts names the key first). app.ts registers this plugin before every route.
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit === false) return
    route.onRequest = route.onRequest === undefined ? [limit] : [...[route.onRequest].flat(), limit]
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit' })
