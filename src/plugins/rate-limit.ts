/**
 * Rate limiting with @fastify/rate-limit, keyed by client address (the socket's, unless
 * TRUST_PROXY is set). Responses carry the IETF fields of draft-ietf-httpapi-ratelimit-headers:
 * `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`.
 * RATE_LIMIT_MAX=0 turns limiting off.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { Config } from '../config.js'
import { problems } from '../problem.js'

const POLICY = 'default'

async function rateLimitPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const { rateLimitMax, rateLimitWindowMs } = options.config
  if (rateLimitMax === 0) return
  const windowSeconds = Math.ceil(rateLimitWindowMs / 1000)
  await app.register(rateLimit, {
    global: true,
    max: rateLimitMax,
    timeWindow: rateLimitWindowMs,
    // Counts only; the plugin's x-ratelimit-* headers are rewritten into the IETF fields below.
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_request, context) => problems.rateLimited(Math.max(1, Math.ceil(context.ttl / 1000))),
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    const remaining = reply.getHeader('x-ratelimit-remaining')
    if (remaining !== undefined) {
      const reset = reply.getHeader('x-ratelimit-reset') ?? windowSeconds
      reply.header('ratelimit-policy', `"${POLICY}";q=${rateLimitMax};w=${windowSeconds}`)
      reply.header('ratelimit', `"${POLICY}";r=${String(remaining)};t=${String(reset)}`)
      reply.removeHeader('x-ratelimit-limit')
      reply.removeHeader('x-ratelimit-remaining')
      reply.removeHeader('x-ratelimit-reset')
    }
    done(null, payload)
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit' })
