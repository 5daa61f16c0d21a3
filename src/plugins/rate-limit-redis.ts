/**
 * The Redis side of the rate limit: one ioredis client that @fastify/rate-limit's own
 * RedisStore uses (its Lua script INCRs the key and sets or reads its PTTL atomically), so every
 * hashd instance pointed at the same Redis counts one budget per client. Only rate-limit.ts imports
 * this module, and only this module imports ioredis.
 *
 * Redis is an optimisation of fairness, not a dependency of service: when it is unreachable or slow
 * the request is served without counting (fail open; the bounded work queue still protects the
 * CPU). Every call is bounded by `REDIS_COMMAND_TIMEOUT_MS`, and with the offline queue off a call
 * made while disconnected fails at once instead of waiting for a reconnect. ioredis reconnects by
 * itself, so shared limiting resumes without a restart.
 */
import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'

/** What GET /api/health reports as `rateLimitStore`. */
export type RateLimitStoreState = 'memory' | 'redis' | 'degraded' | 'off'

/** At most one "Redis unavailable" warning per this interval, however many requests fail. */
const WARN_INTERVAL_MS = 60_000
/**
 * While degraded on an open connection (Redis hung, paused or slow, not gone), a PING this often:
 * its answer within the command timeout marks the store healthy again, so /api/health tells when
 * Redis is back whether or not requests arrive. A reconnection says so by itself ('ready').
 */
const PROBE_INTERVAL_MS = 1_000

export interface RedisRateLimitStore {
  /** What @fastify/rate-limit's RedisStore needs: this client and the key prefix. */
  storeOptions: { redis: Redis, nameSpace: string }
  state(): RateLimitStoreState
  /** A rate-limit call failed or timed out; mark degraded and maybe warn. */
  noteFailure(reason: string): void
  /** A rate-limit call succeeded; mark healthy again. */
  noteSuccess(): void
  /**
   * Counts `count` more requests in `key`'s window at once (a batch's items beyond the request
   * itself), with the window RedisStore's own script would give the key.
   */
  incrBy(key: string, count: number, windowMs: number, callback: (error: Error | null, result: { current: number, ttl: number } | null) => void): void
  close(): Promise<void>
}

export function redisRateLimitStore(config: Config & { redisUrl: string }, log: FastifyBaseLogger): RedisRateLimitStore {
  const client = new Redis(config.redisUrl, {
    // Fail fast, never queue: a request must not wait for Redis longer than the command timeout.
    commandTimeout: config.redisCommandTimeoutMs,
    connectTimeout: Math.max(config.redisCommandTimeoutMs, 1_000),
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // Keep trying to reconnect, backing off to one attempt every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    // The RedisStore defines its Lua script with defineCommand (EVALSHA, falling back to EVAL).
    lazyConnect: false,
  })
  let healthy = false
  let lastWarning = -Infinity
  let closing = false
  let probe: NodeJS.Timeout | undefined

  const noteSuccess = (): void => {
    if (probe !== undefined) { clearInterval(probe); probe = undefined }
    if (healthy) return
    healthy = true
    log.info('rate-limit store: Redis reachable; shared limits apply')
  }
  const noteFailure = (reason: string): void => {
    healthy = false
    if (closing) return
    if (probe === undefined) {
      probe = setInterval(() => {
        // Bounded by the command timeout like every call; a failed PING changes nothing.
        if (client.status === 'ready') client.ping().then(noteSuccess, () => {})
      }, PROBE_INTERVAL_MS)
      probe.unref()
    }
    const now = Date.now()
    if (now - lastWarning < WARN_INTERVAL_MS) return
    lastWarning = now
    log.warn({ reason }, 'rate-limit store: Redis unavailable; serving requests without shared limits until it returns')
  }

  client.on('ready', noteSuccess)
  // ioredis emits 'error' for each failed (re)connection; without a listener it would print to stderr.
  client.on('error', (error: Error) => { noteFailure(error.message) })
  client.on('close', () => { if (healthy) noteFailure('connection closed') })

  // INCRBY and the window in one script, as @fastify/rate-limit's RedisStore does with INCR: a key
  // this creates gets the window; one that exists keeps its own.
  client.defineCommand('hashdRateLimitBy', {
    numberOfKeys: 1,
    lua: `
      local current = redis.call('INCRBY', KEYS[1], ARGV[1])
      local ttl = redis.call('PTTL', KEYS[1])
      if current == tonumber(ARGV[1]) or ttl < 0 then
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        ttl = tonumber(ARGV[2])
      end
      return {current, ttl}`,
  })
  const scripted = client as unknown as { hashdRateLimitBy(key: string, count: number, windowMs: number, done: (error: Error | null, result?: [number, number]) => void): void }

  return {
    incrBy: (key, count, windowMs, callback) => {
      scripted.hashdRateLimitBy(config.redisPrefix + key, count, windowMs, (error, result) => {
        if (error || !result) callback(error ?? new Error('no answer'), null)
        else callback(null, { current: result[0], ttl: result[1] })
      })
    },
    storeOptions: { redis: client, nameSpace: config.redisPrefix },
    state: () => (healthy ? 'redis' : 'degraded'),
    noteFailure,
    noteSuccess,
    close: async () => {
      closing = true
      clearInterval(probe)
      client.disconnect()
    },
  }
}
