/**
 * The Redis side of the rate limit: one ioredis client whose Lua script takes from a window's
 * count only what fits (rate-limit-windows.ts keys the windows), so every hashd instance pointed at
 * the same Redis counts one budget per client. Only rate-limit.ts imports this module, and only
 * this module imports ioredis.
 *
 * Redis shares the count; it is not what enforces it. When Redis is unreachable or slow, each
 * instance goes on counting in its own memory with the same budget (rate-limit-windows.ts), so a
 * limit holds on every instance whatever Redis does. Every call is bounded by
 * `REDIS_COMMAND_TIMEOUT_MS`, and with the offline queue off a call made while disconnected fails
 * at once instead of waiting for a reconnect. ioredis reconnects by itself, so shared counting
 * resumes without a restart.
 *
 * The takes made in one turn of the event loop (the requests that arrived together) go to Redis
 * as one script call: under a flood that is one command per turn, not one per request.
 *
 * The same connection keeps the webhook replay store (src/webhooks/replay.ts): a verified webhook's
 * key is set with NX and a time to live, so every replica sees it; the checks of one event-loop
 * turn go as one script call. Replay protection fails closed: a check Redis
 * cannot answer rejects (the route answers 503), since a webhook let through unchecked may be a
 * replay. A Redis at its maxmemory refuses the SET (with maxmemory-policy noeviction), which is a
 * full store (503 replay-store-full); a policy that evicts keys would forget webhooks before their
 * time, so hashd warns about it at every connection. Each caller's share is a sorted set of its
 * replay keys by expiry (`<prefix>replay-share:<bucket>`), trimmed of expired members and counted
 * in the same script, by Redis's clock.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import type { SharedCounter } from './rate-limit-windows.js'
import { ReplayStoreFull, ReplayStoreUnavailable, secondsUntil, type ReplayLimit, type ReplayStore } from '../webhooks/replay.js'

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
  /** The shared counts of the rate limit's windows. */
  counter: SharedCounter
  state(): RateLimitStoreState
  /** A rate-limit call failed or timed out; mark degraded and maybe warn. */
  noteFailure(reason: string): void
  /** A rate-limit call succeeded; mark healthy again. */
  noteSuccess(): void
  /** The webhook replay store on this connection, under `<REDIS_PREFIX>replay:`. */
  replays: ReplayStore
  close(): Promise<void>
}

/**
 * Deletes a replay key (and its place in its caller's share) only if it still holds this check's
 * token: a SET that timed out may still run when a hung Redis wakes (its command is on the
 * connection), and would otherwise make the sender's next delivery of that webhook look like a
 * replay of one that was never accepted.
 */
const UNDO_SCRIPT = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('zrem', KEYS[2], KEYS[1])
  return redis.call('del', KEYS[1])
end
return 0`

/** What a check's answer from CHECK_SCRIPT means. */
const ANSWER = { unseen: 0, seen: 1, storeFull: 2, callerFull: 3 } as const

/**
 * A batch of replay checks: KEYS are a replay key and its caller's share for each check, ARGV the
 * share's size (0: none), then a time to live and a token for each. A check with a token sets its
 * key if absent and its caller has room ({0}), finds it ({1}), or is refused: Redis at its
 * maxmemory ({2}), or the caller's share full ({3, milliseconds until its soonest member expires}).
 * One without a token only looks. Redis runs a script whole, so each check is as atomic as a SET NX
 * of its own. The share's members are scored by their expiry on Redis's clock (TIME; Redis
 * replicates a script's effects, so a script may read the clock and write).
 *
 * The SET is the script's first write, and is made before the share is trimmed and counted (and
 * deleted again when the share is full): Redis refuses a script's write for maxmemory only while the
 * script has written nothing (a script is not stopped halfway), so a later SET in the same call
 * would go through. Once one is refused, the rest of the batch is refused without trying.
 */
const CHECK_SCRIPT = `
local share = tonumber(ARGV[1])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local full = false
local answers = {}
for i = 1, #KEYS / 2 do
  local key, owner = KEYS[2 * i - 1], KEYS[2 * i]
  local ttl, token = tonumber(ARGV[2 * i]), ARGV[2 * i + 1]
  if redis.call('EXISTS', key) == 1 then
    answers[i] = {1}
  elseif token == '' then
    answers[i] = {0}
  elseif full then
    answers[i] = {2}
  else
    local set = redis.pcall('SET', key, token, 'PX', ttl, 'NX')
    if type(set) == 'table' and set.err then
      if string.find(set.err, 'OOM', 1, true) == nil then return redis.error_reply(set.err) end
      full = true
      answers[i] = {2}
    elseif share > 0 then
      redis.call('ZREMRANGEBYSCORE', owner, '-inf', now)
      if redis.call('ZCARD', owner) >= share then
        redis.call('DEL', key)
        local soonest = redis.call('ZRANGE', owner, 0, 0, 'WITHSCORES')
        answers[i] = {3, tonumber(soonest[2]) - now}
      else
        redis.call('ZADD', owner, now + ttl, key)
        if redis.call('PTTL', owner) < ttl then redis.call('PEXPIRE', owner, ttl) end
        answers[i] = {0}
      end
    else
      answers[i] = {0}
    end
  end
end
return answers`

/**
 * A batch of rate-limit takes: KEYS are client keys, ARGV an amount, a maximum and a window (ms)
 * for each. A take adds as much of its amount as keeps the count within the maximum (all of it, a
 * part, or nothing: rate-limit-windows.ts asks for what its requests need plus a lease) and answers
 * the count after it, what it added and the ms left in the window. The first take of a window
 * starts it (the key's time to live); a take that adds nothing leaves no key. Redis runs a script
 * whole, so each take is atomic.
 */
const TAKE_SCRIPT = `
local answers = {}
for i, key in ipairs(KEYS) do
  local n, max, window = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local current = tonumber(redis.call('GET', key) or '0')
  local ttl = redis.call('PTTL', key)
  local taken = math.max(0, math.min(n, max - current))
  if taken > 0 then
    current = redis.call('INCRBY', key, taken)
    if ttl < 0 then
      redis.call('PEXPIRE', key, window)
      ttl = window
    end
  elseif ttl < 0 then
    ttl = window
  end
  answers[3 * i - 2], answers[3 * i - 1], answers[3 * i] = current, taken, ttl
end
return answers`

interface Take {
  key: string
  n: number
  max: number
  windowMs: number
  done(error: Error | null, current: number, taken: number, ttlMs: number): void
}

/** At most this many checks or takes in one script call. */
const MAX_BATCH = 256

/** The Retry-After of a Redis at its maxmemory: keys expire at their own pace, which hashd cannot see. */
const FULL_RETRY_SECONDS = 60

interface ReplayCheck {
  key: string
  owner: string
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
    // The scripts are defined with defineCommand (EVALSHA, falling back to EVAL).
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
    log.warn({ reason }, 'rate-limit store: Redis unavailable; each instance counts its own requests against the same limits until it returns (webhook replay checks answer 503)')
  }

  client.on('ready', noteSuccess)
  // A Redis that evicts keys at its maxmemory may drop a replay key before its time, and its replay
  // would then pass: checked at every connection (the setting can change while hashd runs).
  client.on('ready', () => {
    client.info('memory').then((text) => {
      const policy = /^maxmemory_policy:(\S+)/m.exec(text)?.[1]
      if (policy !== undefined && policy !== 'noeviction') {
        log.warn({ maxmemoryPolicy: policy }, 'Redis may evict webhook replay keys before they expire (its maxmemory-policy is not noeviction), ' +
          'and a replayed webhook would then be accepted: set maxmemory-policy noeviction')
      }
    }, () => { /* INFO not allowed here: nothing to say */ })
  })
  // ioredis emits 'error' for each failed (re)connection; without a listener it would print to stderr.
  client.on('error', (error: Error) => { noteFailure(error.message) })
  client.on('close', () => { if (healthy) noteFailure('connection closed') })

  // Replay checks are batched: those made in one turn of the event loop (the requests that arrived
  // together) go to Redis as one script call, a `SET key token PX ttl NX` (or an EXISTS) per check.
  // Each check costs its request a place in an array rather than a Redis command of its own.
  client.defineCommand('hashdReplayCheck', { lua: CHECK_SCRIPT })
  const replayScripted = client as unknown as { hashdReplayCheck(...args: [...Array<string | number>, (error: Error | null, seen?: unknown) => void]): void }
  const tokenPrefix = randomBytes(9).toString('base64url')
  const refusals: Record<ReplayLimit, number> = { store: 0, caller: 0 }
  const refuse = (check: ReplayCheck, limit: ReplayLimit, retryAfterSeconds: number): void => {
    refusals[limit]++
    check.reject(new ReplayStoreFull(limit, retryAfterSeconds, 'Redis\'s maxmemory'))
  }
  let tokens = 0
  let batch: ReplayCheck[] = []
  const flush = (): void => {
    const checks = batch
    batch = []
    if (checks.length === 0) return
    const keys = checks.flatMap((check) => [check.key, check.owner])
    const args = checks.flatMap((check) => [check.ttlMs, check.token])
    replayScripted.hashdReplayCheck(keys.length, ...keys, config.webhookReplayCallerMax, ...args, (error, answers) => {
      // A Redis at its maxmemory may refuse the whole script before it runs: every check is then a full store.
      if (error !== null && error.message.startsWith('OOM')) {
        noteSuccess()
        for (const check of checks) refuse(check, 'store', FULL_RETRY_SECONDS)
        return
      }
      if (error !== null || !Array.isArray(answers) || answers.length !== checks.length) {
        noteFailure('a replay-store call failed or timed out')
        for (const check of checks) {
          if (check.token !== '') client.eval(UNDO_SCRIPT, 2, check.key, check.owner, check.token).catch(() => {})
          check.reject(new ReplayStoreUnavailable())
        }
        return
      }
      noteSuccess()
      checks.forEach((check, index) => {
        const [answer, soonestMs] = answers[index] as [number, number?]
        if (answer === ANSWER.storeFull) refuse(check, 'store', FULL_RETRY_SECONDS)
        else if (answer === ANSWER.callerFull) refuse(check, 'caller', secondsUntil(soonestMs ?? 0, 0))
        else check.resolve(answer === ANSWER.seen)
      })
    })
  }
  const replays: ReplayStore = {
    seen(key, expiresAtMs, remember, caller) {
      return new Promise((resolve, reject) => {
        if (batch.length === 0) setImmediate(flush)
        // Unique to this check: the process's random prefix and a counter; '' asks only whether it exists.
        const token = remember ? `${tokenPrefix}${(tokens++).toString(36)}` : ''
        batch.push({
          key: `${config.redisPrefix}replay:${key}`, owner: `${config.redisPrefix}replay-share:${caller}`,
          ttlMs: Math.max(1, expiresAtMs - Date.now()), token, resolve, reject,
        })
        if (batch.length >= MAX_BATCH) flush()
      })
    },
    state: () => (healthy ? 'redis' : 'degraded'),
    refusals: () => refusals,
  }

  // Rate-limit takes, batched per turn like the replay checks (TAKE_SCRIPT).
  client.defineCommand('hashdRateLimitTake', { lua: TAKE_SCRIPT })
  const takeScripted = client as unknown as { hashdRateLimitTake(...args: [...Array<string | number>, (error: Error | null, answers?: unknown) => void]): void }
  let takes: Take[] = []
  const flushTakes = (): void => {
    const pending = takes
    takes = []
    if (pending.length === 0) return
    const keys = pending.map((take) => take.key)
    const args = pending.flatMap((take) => [take.n, take.max, take.windowMs])
    takeScripted.hashdRateLimitTake(pending.length, ...keys, ...args, (error, answers) => {
      if (error !== null || !Array.isArray(answers) || answers.length !== 3 * pending.length) {
        noteFailure('a rate-limit call failed or timed out')
        const failure = error ?? new Error('no answer')
        for (const take of pending) take.done(failure, 0, 0, 0)
        return
      }
      noteSuccess()
      pending.forEach((take, index) => take.done(null, Number(answers[3 * index]), Number(answers[3 * index + 1]), Number(answers[3 * index + 2])))
    })
  }
  const counter: SharedCounter = {
    take(key, n, max, windowMs, done) {
      if (takes.length === 0) setImmediate(flushTakes)
      takes.push({ key: config.redisPrefix + key, n, max, windowMs, done })
      if (takes.length >= MAX_BATCH) flushTakes()
    },
  }

  return {
    counter,
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
