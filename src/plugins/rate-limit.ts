/**
 * Rate limiting with @fastify/rate-limit, keyed by client address (the socket's, unless
 * TRUST_PROXY is set). Responses carry the IETF fields of draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`.
 * RATE_LIMIT_MAX=0 turns limiting off. With REDIS_URL the counters live in Redis, shared by every
 * instance (see rate-limit-redis.ts); without it they stay in this process's memory.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { Config } from '../config.js'
import { problems } from '../problem.js'
import type { RateLimitStoreState } from './rate-limit-redis.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where rate-limit counters live now, for GET /api/health. */
    rateLimitStoreState(): RateLimitStoreState
  }
}

const POLICY = 'default'

async function rateLimitPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { rateLimitMax, rateLimitWindowMs } = options.config
  if (rateLimitMax === 0) {
    app.decorate('rateLimitStoreState', (): RateLimitStoreState => 'off')
    return
  }
  const windowSeconds = Math.ceil(rateLimitWindowMs / 1000)
  const { redisUrl } = options.config
  // Loaded only when configured: without REDIS_URL, ioredis is never imported.
  const redis = redisUrl === undefined
    ? undefined
    : (await import('./rate-limit-redis.js')).redisRateLimitStore({ ...options.config, redisUrl }, app.log)
  app.decorate('rateLimitStoreState', redis ? redis.state : (): RateLimitStoreState => 'memory')
  if (redis) {
    app.addHook('onClose', redis.close)
    // With skipOnError, a Redis call that failed or timed out leaves the request uncounted and the
    // plugin reports remaining = limit (a counted request has at most limit − 1). Such a reply gets
    // no RateLimit fields, since no limit was applied to it; a counted one proves Redis is back.
    app.addHook('onSend', (_request, reply, payload, done) => {
      const remaining = reply.getHeader('x-ratelimit-remaining')
      if (remaining !== undefined) {
        if (remaining === reply.getHeader('x-ratelimit-limit')) {
          redis.noteFailure('a rate-limit call failed or timed out')
          reply.removeHeader('x-ratelimit-limit')
          reply.removeHeader('x-ratelimit-remaining')
          reply.removeHeader('x-ratelimit-reset')
        } else {
          redis.noteSuccess()
        }
      }
      done(null, payload)
    })
  }
  await app.register(rateLimit, {
    ...redis?.pluginOptions,
    global: true,
    // A request authenticated with an API key (plugins/auth.ts, whose onRequest hook runs before
    // this plugin's route-level one) is limited per key, at the key's own number if it has one.
    max: (request) => request.apiKey?.max ?? rateLimitMax,
    keyGenerator: (request) => request.apiKey ? `key:${request.apiKey.name}` : normalizeIP(request.ip),
    timeWindow: rateLimitWindowMs,
    // Counts only; the plugin's x-ratelimit-* headers are rewritten into the IETF fields below.
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) => problems.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    const remaining = reply.getHeader('x-ratelimit-remaining')
    if (remaining !== undefined) {
      const reset = reply.getHeader('x-ratelimit-reset') ?? windowSeconds
      reply.header('ratelimit-policy', `"${POLICY}";q=${String(reply.getHeader('x-ratelimit-limit') ?? rateLimitMax)};w=${windowSeconds}`)
      reply.header('ratelimit', `"${POLICY}";r=${String(remaining)};t=${String(reset)}`)
      reply.removeHeader('x-ratelimit-limit')
      reply.removeHeader('x-ratelimit-remaining')
      reply.removeHeader('x-ratelimit-reset')
    }
    done(null, payload)
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit' })
