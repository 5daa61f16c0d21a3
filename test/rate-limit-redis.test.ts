/**
 * Rate limits shared through a real redis-server: two hashd processes count one budget for one
 * client; with Redis hung or stopped each counts alone with the same budget (the limit never goes
 * away) and reports "degraded"; with Redis back the shared count applies again without a restart.
 * A malformed REDIS_URL stops the process at start-up.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { documentFor, startHashd, spawnHashd, type HashdProcess } from './helpers/process.js'
import { scriptCalls, startRedis, type TestRedis } from './helpers/redis.js'
import { skipUnless } from './helpers/tools.js'

const hash = (server: HashdProcess) => server.fetch('/api/hash', {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'abc' }),
})

async function health(server: HashdProcess): Promise<{ status: string, rateLimitStore: string }> {
  return await (await server.fetch('/api/health')).json() as { status: string, rateLimitStore: string }
}

/**
 * hashd_rate_limit_local_decisions_total: requests decided on the instance's own count; read from
 * the metrics port (METRICS_PORT=0 in these tests), which the main port's rate limit does not reach.
 */
async function localDecisions(server: HashdProcess): Promise<number> {
  const port = /"metricsPort":(\d+)/.exec(server.stdout())?.[1]
  assert.ok(port, 'the metrics port is logged')
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  return Number(/^hashd_rate_limit_local_decisions_total (\d+)$/m.exec(text)?.[1])
}

/** Polls GET /api/health until it reports this store state (ioredis connects and reconnects on its own). */
async function waitForStore(server: HashdProcess, state: string): Promise<void> {
  const deadline = Date.now() + 15_000
  let last = ''
  while (Date.now() < deadline) {
    last = (await health(server)).rateLimitStore
    if (last === state) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail(`rateLimitStore stayed "${last}", expected "${state}"`)
}

describe('rate limits shared through Redis', { skip: skipUnless('redis-server') }, () => {
  let redis: TestRedis
  const processes: HashdProcess[] = []
  const prefix = `hashd-test-${randomBytes(4).toString('hex')}:`
  const start = async (env: Record<string, string>) => {
    const started = await startHashd({ REDIS_URL: redis.url, REDIS_PREFIX: prefix, RATE_LIMIT_WINDOW_MS: '60000', ...env })
    processes.push(started)
    return started
  }

  before(async () => { redis = await startRedis() })
  after(async () => {
    await Promise.all(processes.map((process) => process.stop()))
    await redis.destroy()
  })

  it('serves the same OpenAPI document as one built without REDIS_URL (what helpers/process.ts checks responses against)', async () => {
    const env = { REDIS_URL: redis.url, REDIS_PREFIX: `${prefix}document:`, RATE_LIMIT_WINDOW_MS: '60000', RATE_LIMIT_MAX: '10' }
    const server = await start(env)
    await waitForStore(server, 'redis')
    const served = await (await server.fetch('/api/openapi.json')).json() as unknown
    assert.deepEqual(served, await documentFor(env))
    await server.stop()
  })

  it('two instances sharing one Redis enforce one limit for one client, with the IETF fields right on both', async () => {
    // A command timeout far above Redis's answer on loopback: this counts, and a call that a loaded
    // machine delays past the default 50 ms would be served uncounted (fail open, redis-faults.test.ts).
    const env = { RATE_LIMIT_MAX: '10', REDIS_COMMAND_TIMEOUT_MS: '1000' }
    const [a, b] = await Promise.all([start(env), start(env)])
    await Promise.all([waitForStore(a, 'redis'), waitForStore(b, 'redis')])
    const seen: Array<{ status: number, policy: string | null, limit: string | null, retryAfter: string | null }> = []
    for (let index = 0; index < 14; index++) {
      const response = await hash(index % 2 === 0 ? a : b)
      await response.text()
      seen.push({ status: response.status, policy: response.headers.get('ratelimit-policy'), limit: response.headers.get('ratelimit'), retryAfter: response.headers.get('retry-after') })
    }
    // One budget of 10 across both instances (each alone would have let all 14 through).
    assert.deepEqual(seen.map((entry) => entry.status), [...Array(10).fill(200), ...Array(4).fill(429)])
    for (const [index, entry] of seen.entries()) {
      assert.equal(entry.policy, '"default";q=10;w=60')
      const fields = /^"default";r=(\d+);t=(\d+)$/.exec(entry.limit ?? '')
      assert.ok(fields, `RateLimit field: ${entry.limit}`)
      // Remaining counts down across the two instances: 9, 8, … 0, then 0.
      assert.equal(Number(fields[1]), Math.max(0, 9 - index))
      assert.ok(Number(fields[2]) >= 1 && Number(fields[2]) <= 60, `t=${fields[2]}`)
      if (entry.status === 429) {
        assert.ok(Number(entry.retryAfter) >= 1 && Number(entry.retryAfter) <= 60, `Retry-After ${entry.retryAfter}`)
      }
    }
    // The counter lives in Redis under the configured prefix.
    const keys = await redis.command(`KEYS ${prefix}*`)
    assert.match(keys, new RegExp(`\\$${prefix.length + '127.0.0.1'.length}\\r\\n${prefix}127\\.0\\.0\\.1\\r\\n`))
    await Promise.all([a.stop(), b.stop()])
  })

  it('leases: a busy client costs one call to Redis per lease (1 % of its budget), and two instances together never pass the limit', async () => {
    // A budget of 1,000: a lease of 10, so each call takes what its request needs and 10 more.
    const env = { RATE_LIMIT_MAX: '1000', REDIS_PREFIX: `${prefix}lease:`, REDIS_COMMAND_TIMEOUT_MS: '1000' }
    const [a, b] = await Promise.all([start(env), start(env)])
    await Promise.all([waitForStore(a, 'redis'), waitForStore(b, 'redis')])
    await redis.command('CONFIG RESETSTAT')
    for (let index = 0; index < 110; index++) {
      const response = await hash(a)
      await response.text()
      assert.equal(response.status, 200)
      // One instance alone: its count is exact, whatever its lease holds.
      assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${999 - index};t=\\d+$`))
    }
    // 110 requests, 11 per call (1 + a lease of 10): 10 calls, where a call per request would be 110.
    assert.equal(await scriptCalls(redis), 10)
    assert.match(await redis.command(`GET ${prefix}lease:127.0.0.1`), /^\$3\r\n110\r\n$/)

    // Both instances at once, 20 requests in flight on each, until 1,500 more have been answered.
    let sent = 0
    let admitted = 0
    const worker = async (server: HashdProcess) => {
      while (sent < 1_500) {
        sent++
        const response = await hash(server)
        await response.text()
        assert.ok(response.status === 200 || response.status === 429, `status ${response.status}`)
        if (response.status === 200) admitted++
      }
    }
    await Promise.all([...Array(20).fill(a), ...Array(20).fill(b)].map(worker))
    // Never past the limit; short of it by at most the lease the other instance may hold unused.
    assert.ok(admitted <= 890 && admitted >= 890 - 10, `${admitted} admitted of the 890 left`)
    assert.match(await redis.command(`GET ${prefix}lease:127.0.0.1`), /^\$4\r\n1000\r\n$/)
    await Promise.all([a.stop(), b.stop()])
  })

  it('RATE_LIMIT_LEASE_PERCENT=0: a call to Redis per request, and one exact count across instances', async () => {
    const env = { RATE_LIMIT_MAX: '1000', RATE_LIMIT_LEASE_PERCENT: '0', REDIS_PREFIX: `${prefix}no-lease:`, REDIS_COMMAND_TIMEOUT_MS: '1000' }
    const [a, b] = await Promise.all([start(env), start(env)])
    await Promise.all([waitForStore(a, 'redis'), waitForStore(b, 'redis')])
    await redis.command('CONFIG RESETSTAT')
    for (let index = 0; index < 20; index++) {
      const response = await hash(index % 2 === 0 ? a : b)
      await response.text()
      assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${999 - index};t=\\d+$`))
    }
    assert.equal(await scriptCalls(redis), 20)
    await Promise.all([a.stop(), b.stop()])
  })

  it('with Redis hung (SIGSTOP), answers within the command timeout on its own count with the same budget; the shared count again when it thaws', async () => {
    const server = await start({ RATE_LIMIT_MAX: '3', REDIS_PREFIX: `${prefix}hung:`, REDIS_COMMAND_TIMEOUT_MS: '50', METRICS_PORT: '0' })
    await waitForStore(server, 'redis')
    redis.pause()
    const statuses: number[] = []
    try {
      for (let index = 0; index < 5; index++) {
        const response = await hash(server)
        await response.text()
        statuses.push(response.status)
        // A limit was applied, so it is announced.
        assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${Math.max(0, 2 - index)};t=\\d+$`))
      }
      assert.equal((await health(server)).rateLimitStore, 'degraded')
    } finally {
      redis.resume()
    }
    // The budget of 3 held: the first three on this instance's count, the rest refused.
    assert.deepEqual(statuses, [200, 200, 200, 429, 429])
    assert.equal(await localDecisions(server), 3)
    await waitForStore(server, 'redis')
    // The three timed-out calls were still queued on the connection, and Redis ran them when it
    // thawed: the shared count is 3 as well, and the client stays over its budget.
    const after = await hash(server)
    await after.text()
    assert.equal(after.status, 429)
    assert.match(after.headers.get('ratelimit') ?? '', /^"default";r=0;t=\d+$/)
    assert.match(await redis.command(`GET ${prefix}hung:127.0.0.1`), /^\$1\r\n3\r\n$/)
    await server.stop()
  })

  it('with Redis stopped, counts alone with the same budget, reports degraded and warns once; with Redis back, shared again, the outage\'s requests still counted', async () => {
    const server = await start({ RATE_LIMIT_MAX: '3', REDIS_PREFIX: `${prefix}outage:`, METRICS_PORT: '0' })
    await waitForStore(server, 'redis')
    const before = await hash(server)
    await before.text()
    assert.equal(before.status, 200)
    assert.match(before.headers.get('ratelimit') ?? '', /^"default";r=2;t=(60|59)$/)

    await redis.stop()
    await waitForStore(server, 'degraded')
    const healthResponse = await server.fetch('/api/health')
    assert.equal(healthResponse.status, 200)
    // Alive (status ok, so no restart), and degraded: an alert, with the store's state word.
    const { status, degraded, rateLimitStore } = await healthResponse.json() as { status: string, degraded: boolean, rateLimitStore: string }
    assert.deepEqual([status, degraded, rateLimitStore], ['ok', true, 'degraded'])
    const statuses: number[] = []
    for (let index = 0; index < 8; index++) {
      const response = await hash(server)
      const body = await response.json() as { hash?: string }
      statuses.push(response.status)
      if (response.status === 200) assert.equal(body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
      assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"default";r=${Math.max(0, 1 - index)};t=\\d+$`), 'the limit still applies, so it is announced')
    }
    // One request before the outage, two during it: the budget of 3 held without Redis.
    assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429, 429, 429])
    assert.equal(await localDecisions(server), 2)
    const warnings = server.stdout().split('\n').filter((line) => line.includes('rate-limit store: Redis unavailable'))
    assert.equal(warnings.length, 1, `one warning per interval, got ${warnings.length}`)

    await redis.start()
    await waitForStore(server, 'redis')
    // The restarted Redis is empty (no persistence), but this client spent its budget in this
    // window: still refused, and this instance's count is what says so.
    const after = await hash(server)
    await after.text()
    assert.equal(after.status, 429)
    assert.equal(await localDecisions(server), 2)
    await server.stop()
  })
})

describe('REDIS_URL validation', () => {
  for (const [label, value] of <Array<[string, string]>>[['not a URL', 'localhost:6379'], ['another scheme', 'http://127.0.0.1:6379'], ['a path that is no database number', 'redis://:hunter2@127.0.0.1:6379/zero']]) {
    it(`refuses to start with ${label}, naming the variable and not echoing a password`, async () => {
      const spawned = spawnHashd({ REDIS_URL: value })
      const exit = await spawned.exited
      assert.deepEqual(exit, { code: 2, signal: null })
      assert.match(spawned.stderr(), /REDIS_URL/)
      assert.doesNotMatch(spawned.stderr(), /hunter2/)
    })
  }
})
