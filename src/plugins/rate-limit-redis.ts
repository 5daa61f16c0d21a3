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
 *
 * The same connection keeps the webhook replay store (src/webhooks/replay.ts): a verified webhook's
 * key is set with NX and a time to live, so every replica sees it; the checks of one event-loop
 * turn go as one script call. Unlike the limits, replay protection fails closed: a check Redis
 * cannot answer rejects (the route answers 503), since a webhook let through unchecked may be a
 * replay.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { ReplayStoreUnavailable, type ReplayStore } from '../webhooks/replay.js'

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
  /** The webhook replay store on this connection, under `<REDIS_PREFIX>replay:`. */
  replays: ReplayStore
  /**
   * Counts `count` more requests in `key`'s window at once (a batch's items beyond the request
   * itself), with the window RedisStore's own script would give the key.
   */
  incrBy(key: string, count: number, windowMs: number, callback: (error: Error | null, result: { current: number, ttl: number } | null) => void): void
  close(): Promise<void>
}

/**
 * Deletes a replay key only if it still holds this check's token: a SET that timed out may still
 * run when a hung Redis wakes (its command is on the connection), and would otherwise make the
 * sender's next delivery of that webhook look like a replay of one that was never accepted.
 */
const UNDO_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

/**
 * A batch of replay checks: KEYS are the replay keys, ARGV a time to live and a token for each. A
 * check with a token sets its key if absent (seen: 0) or finds it (seen: 1); one without a token
 * only looks. Redis runs a script whole, so each check is as atomic as a SET NX of its own.
 */
const CHECK_SCRIPT = `
local seen = {}
for i, key in ipairs(KEYS) do
  local ttl, token = ARGV[2 * i - 1], ARGV[2 * i]
  if token == '' then
    seen[i] = redis.call('EXISTS', key)
  elseif redis.call('SET', key, token, 'PX', ttl, 'NX') then
    seen[i] = 0
  else
    seen[i] = 1
  end
end
return seen`

/** At most this many checks in one script call. */
const MAX_BATCH = 256

interface ReplayCheck {
  key: string
  ttlMs: number
  token: string
  resolve(seen: boolean): void
  reject(error: Error): void
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
    log.warn({ reason }, 'rate-limit store: Redis unavailable; serving requests without shared limits until it returns (webhook replay checks answer 503)')
  }

  client.on('ready', noteSuccess)
  // ioredis emits 'error' for each failed (re)connection; without a listener it would print to stderr.
  client.on('error', (error: Error) => { noteFailure(error.message) })
  client.on('close', () => { if (healthy) noteFailure('connection closed') })

  // Replay checks are batched: those made in one turn of the event loop (the requests that arrived
  // together) go to Redis as one script call, a `SET key token PX ttl NX` (or an EXISTS) per check.
  // Each check costs its request a place in an array rather than a Redis command of its own.
  client.defineCommand('hashdReplayCheck', { lua: CHECK_SCRIPT })
  const replayScripted = client as unknown as { hashdReplayCheck(...args: [...Array<string | number>, (error: Error | null, seen?: unknown) => void]): void }
  const tokenPrefix = randomBytes(9).toString('base64url')
  let tokens = 0
  let batch: ReplayCheck[] = []
  const flush = (): void => {
    const checks = batch
    batch = []
    if (checks.length === 0) return
    const keys = checks.map((check) => check.key)
    const args = checks.flatMap((check) => [check.ttlMs, check.token])
    replayScripted.hashdReplayCheck(checks.length, ...keys, ...args, (error, seen) => {
      if (error !== null || !Array.isArray(seen) || seen.length !== checks.length) {
        noteFailure('a replay-store call failed or timed out')
        for (const check of checks) {
          if (check.token !== '') client.eval(UNDO_SCRIPT, 1, check.key, check.token).catch(() => {})
          check.reject(new ReplayStoreUnavailable())
        }
        return
      }
      noteSuccess()
      checks.forEach((check, index) => check.resolve(seen[index] === 1))
    })
  }
  const replays: ReplayStore = {
    seen(key, ttlMs, remember) {
      return new Promise((resolve, reject) => {
        if (batch.length === 0) setImmediate(flush)
        // Unique to this check: the process's random prefix and a counter; '' asks only whether it exists.
        const token = remember ? `${tokenPrefix}${(tokens++).toString(36)}` : ''
        batch.push({ key: `${config.redisPrefix}replay:${key}`, ttlMs, token, resolve, reject })
        if (batch.length >= MAX_BATCH) flush()
      })
    },
    state: () => (healthy ? 'redis' : 'degraded'),
  }

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
    replays,
    close: async () => {
      closing = true
      clearInterval(probe)
      client.disconnect()
    },
  }
}
