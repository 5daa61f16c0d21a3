// runs alone: a network namespace and veth pair, and answer times held to the Redis timeout
/**
 * Redis faults, with a real redis-server and two hashd processes sharing it, under steady traffic
 * (requests to both instances, /api/health and /api/ready polled on both throughout):
 *
 * - `CLIENT PAUSE` (every client's commands held by Redis itself);
 * - `SIGSTOP` then `SIGCONT` (a hung process: the connection stays open, nothing answers);
 * - a restart (the connection closes; Redis comes back empty);
 * - over a link the test controls (helpers/netns.ts: Redis in a network namespace of its own, a
 *   veth pair): added latency below and above REDIS_COMMAND_TIMEOUT_MS (tc netem; a delaying relay
 *   where the kernel has no netem), and a partition (the link down: no RST, no FIN).
 *
 * What must hold during each fault (docs/operations.md, "What Redis holds and how it fails"):
 * - every request is answered, 200, and none waits on Redis longer than REDIS_COMMAND_TIMEOUT_MS:
 *   the median answer during the fault is within the timeout plus the median answer of the same
 *   traffic with Redis healthy (plus 25 ms), and every answer within ANSWER_BOUND_MS, the bound
 *   these tests state for a loaded machine (the timeout is 50 ms);
 * - the limit never goes away: every answer carries its RateLimit field; a request Redis did not
 *   answer for is decided on the instance's own count (hashd_rate_limit_local_decisions_total
 *   counts it), /api/health says "degraded" while it lasts, and at most one warning is logged;
 * - readiness never changes: every /api/ready poll is 200 {"status":"ready"};
 * - no unhandled rejection: both processes are alive at the end, with nothing on stderr and no log
 *   line at level error or above;
 * and after it: both instances say "rateLimitStore":"redis" again within RECOVERY_MS, and share one
 * counter again (the RateLimit remaining count goes down by one per request, across the two).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it, type TestContext } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { namespaceSkip, startNamespacedRedis, type NamespacedRedis } from './helpers/netns.js'
import { startRedis, type TestRedis } from './helpers/redis.js'
import { skipUnless } from './helpers/tools.js'

/** hashd's default REDIS_COMMAND_TIMEOUT_MS, the longest a request waits on Redis. */
const COMMAND_TIMEOUT_MS = 50
/** Every answer during a fault, on a machine shared with other work. */
const ANSWER_BOUND_MS = 1_000
/** ioredis reconnects with a back-off that reaches one attempt every 2 s. */
const RECOVERY_MS = 10_000
const FAULT_MS = 2_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer { instance: number, at: number, ms: number, status: number, rateLimit: string | null }
interface Probe { instance: number, path: string, status: number, body: string, ms: number }

const hashRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'abc' }) }

/** Requests to both instances (two loops each) and probes of health and readiness, until stopped. */
function traffic(servers: HashdProcess[]): { stop(): Promise<{ answers: Answer[], probes: Probe[] }> } {
  let running = true
  const answers: Answer[] = []
  const probes: Probe[] = []
  const loop = async (instance: number) => {
    while (running) {
      const started = performance.now()
      const response = await servers[instance]!.fetch('/api/hash', { ...hashRequest, signal: AbortSignal.timeout(10_000) })
      const body = await response.json() as { hash?: string }
      answers.push({ instance, at: started, ms: performance.now() - started, status: response.status, rateLimit: response.headers.get('ratelimit') })
      assert.equal(body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    }
  }
  const probe = async (instance: number) => {
    while (running) {
      for (const path of ['/api/ready', '/api/health']) {
        const started = performance.now()
        const response = await servers[instance]!.fetch(path, { signal: AbortSignal.timeout(10_000) })
        probes.push({ instance, path, status: response.status, body: await response.text(), ms: performance.now() - started })
      }
      await sleep(50)
    }
  }
  const loops = servers.flatMap((_, instance) => [loop(instance), loop(instance), probe(instance)])
  return {
    stop: async () => {
      running = false
      await Promise.all(loops)
      return { answers, probes }
    },
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

/**
 * hashd_rate_limit_local_decisions_total of both instances together, read from their metrics ports
 * (METRICS_PORT=0): a scrape of the main port would itself be a request the limit counts.
 */
async function localDecisions(servers: HashdProcess[]): Promise<number> {
  let total = 0
  for (const server of servers) {
    const port = /"metricsPort":(\d+)/.exec(server.stdout())?.[1]
    assert.ok(port, 'the metrics port is logged')
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
    total += Number(/^hashd_rate_limit_local_decisions_total (\d+)$/m.exec(text)?.[1])
  }
  return total
}

async function store(server: HashdProcess): Promise<string> {
  return (await (await server.fetch('/api/health')).json() as { rateLimitStore: string }).rateLimitStore
}

async function waitForStore(servers: HashdProcess[], state: string, withinMs: number): Promise<number> {
  const started = performance.now()
  for (const server of servers) {
    let last = ''
    while ((last = await store(server)) !== state) {
      if (performance.now() - started > withinMs) assert.fail(`rateLimitStore stayed "${last}" for ${withinMs} ms, expected "${state}"`)
      await sleep(25)
    }
  }
  return performance.now() - started
}

/**
 * Sequential requests alternating between the instances: each counted once, in one shared counter.
 * A round in which an instance decided a request on its own count (its call to Redis failed or
 * timed out after the store said "redis" again: a loaded CI machine once held one past the 300 ms
 * timeout, and that request repeated the other instance's count) says nothing about the shared
 * counter, so it is run again, three rounds at most; a round with every call answered must count
 * one by one. A counter that is not shared fails every round.
 */
async function assertShared(servers: HashdProcess[]): Promise<void> {
  const rounds: string[] = []
  for (let round = 0; round < 3; round++) {
    const localBefore = await localDecisions(servers)
    const remaining: number[] = []
    for (let index = 0; index < 6; index++) {
      const response = await servers[index % servers.length]!.fetch('/api/hash', hashRequest)
      await response.text()
      assert.equal(response.status, 200)
      const field = /^"default";r=(\d+);t=\d+$/.exec(response.headers.get('ratelimit') ?? '')
      assert.ok(field, `request ${index} after recovery has no RateLimit field: ${response.headers.get('ratelimit')}`)
      remaining.push(Number(field[1]))
    }
    const local = await localDecisions(servers) - localBefore
    if (local === 0) {
      assert.deepEqual(remaining, remaining.map((_, index) => remaining[0]! - index), `one counter across both instances: ${remaining.join(', ')}`)
      return
    }
    rounds.push(`${remaining.join(', ')} (${local} decided on an instance's own count)`)
  }
  assert.fail(`no round of six requests with every call to Redis answered: ${rounds.join('; ')}`)
}

/** With Redis healthy: the traffic's median answer, the baseline the faults are measured against. */
async function baseline(servers: HashdProcess[]): Promise<number> {
  const run = traffic(servers)
  await sleep(1_000)
  const { answers } = await run.stop()
  return median(answers.map((answer) => answer.ms))
}

/**
 * Runs `fault` (which returns when the fault is over) under traffic and checks the rules above;
 * `degraded`: whether the fault must show as "degraded" (a delay under the timeout must not).
 */
async function underFault(t: TestContext, servers: HashdProcess[], name: string, fault: () => Promise<void>, options: { degraded: boolean, timeoutMs?: number }): Promise<void> {
  const base = await baseline(servers)
  const warningsBefore = servers.map((server) => warnings(server))
  const localBefore = await localDecisions(servers)
  const run = traffic(servers)
  await sleep(200)
  const faultStarted = performance.now()
  await fault()
  const faultEnded = performance.now()
  const { answers, probes } = await run.stop()
  // Traffic stops with the fault: "redis" again must come without requests too.
  const recovered = await waitForStore(servers, 'redis', RECOVERY_MS)
  const times = answers.map((answer) => answer.ms)
  // The median of the requests sent while the fault lasted (not those before it, nor the last ones after).
  const during = answers.filter((answer) => answer.at >= faultStarted && answer.at < faultEnded - 500).map((answer) => answer.ms)
  const unannounced = answers.filter((answer) => answer.rateLimit === null).length
  const local = await localDecisions(servers) - localBefore
  const degradedSeen = probes.some((probe) => probe.path === '/api/health' && probe.body.includes('"rateLimitStore":"degraded"'))
  t.diagnostic(`${name}: ${answers.length} requests, ${local} decided on an instance's own count; while it lasted ${during.length}, median ${median(during).toFixed(1)} ms (healthy: ${base.toFixed(1)} ms); max ${Math.max(...times).toFixed(1)} ms; ` +
    `${probes.length} probes, max ${Math.max(...probes.map((probe) => probe.ms)).toFixed(1)} ms; "redis" again ${recovered.toFixed(0)} ms after`)

  assert.ok(answers.length >= 20, `only ${answers.length} requests answered during ${name}`)
  assert.deepEqual(answers.filter((answer) => answer.status !== 200), [], 'every request served')
  assert.equal(unannounced, 0, 'every answer carries its RateLimit field: the limit applied throughout')
  const timeout = options.timeoutMs ?? COMMAND_TIMEOUT_MS
  assert.ok(during.length >= 4, `only ${during.length} requests sent during ${name}`)
  assert.ok(median(during) <= base + timeout + 25, `median ${median(during).toFixed(1)} ms during ${name}, over the healthy ${base.toFixed(1)} ms + ${timeout} ms`)
  assert.ok(Math.max(...times) <= ANSWER_BOUND_MS, `an answer took ${Math.max(...times).toFixed(0)} ms`)
  for (const probe of probes) {
    assert.equal(probe.status, 200, `${probe.path}: ${probe.body}`)
    assert.ok(probe.ms <= ANSWER_BOUND_MS, `${probe.path} took ${probe.ms.toFixed(0)} ms`)
    if (probe.path === '/api/ready') assert.equal(probe.body, '{"status":"ready"}')
    else {
      // Alive throughout; degraded (an alert, not a failure) whenever the shared count is.
      const health = JSON.parse(probe.body) as { status: string, degraded: boolean, rateLimitStore: string }
      assert.equal(health.status, 'ok')
      assert.ok(['redis', 'degraded'].includes(health.rateLimitStore), probe.body)
      if (health.rateLimitStore === 'degraded') assert.equal(health.degraded, true, probe.body)
    }
  }
  if (options.degraded) {
    assert.ok(local > 0, 'some requests were decided on an instance\'s own count')
    assert.ok(degradedSeen, '/api/health said "degraded" during the fault')
  } else {
    assert.equal(local, 0, 'a delay under the timeout leaves every request to the shared count')
    assert.ok(!degradedSeen, 'a delay under the timeout is no degradation')
  }
  // At most one warning per instance per minute, however many requests Redis did not answer for.
  for (const [index, server] of servers.entries()) assert.ok(warnings(server) - warningsBefore[index]! <= 1, `warnings of instance ${index}`)
  await assertShared(servers)
}

const warnings = (server: HashdProcess) => server.stdout().split('\n').filter((line) => line.includes('rate-limit store: Redis unavailable')).length

/** Nothing went wrong out of sight: alive, stderr empty, no log line at error level or above. */
function assertClean(servers: HashdProcess[]): void {
  for (const server of servers) {
    assert.equal(server.child.exitCode, null, `exited: ${server.stderr()}`)
    assert.equal(server.stderr(), '')
    const errors = server.stdout().split('\n').filter((line) => {
      try { return (JSON.parse(line) as { level: number }).level >= 50 } catch { return false }
    })
    assert.deepEqual(errors, [])
  }
}

async function startPair(url: string, env: Record<string, string> = {}): Promise<HashdProcess[]> {
  // A budget no test reaches: every request is served, and the RateLimit field says whether Redis counted it.
  // No lease (RATE_LIMIT_LEASE_PERCENT=0): every request calls Redis, so every request meets the
  // fault, and the two instances' counts are one exact count (leases: rate-limit-redis.test.ts and
  // the flood in rate-limit-flood.test.ts).
  env = { ...env, REDIS_URL: url, REDIS_PREFIX: `hashd-faults-${randomBytes(4).toString('hex')}:`, RATE_LIMIT_MAX: '1000000', RATE_LIMIT_LEASE_PERCENT: '0', RATE_LIMIT_WINDOW_MS: '600000', METRICS_PORT: '0' }
  const servers = await Promise.all([startHashd(env), startHashd(env)])
  await waitForStore(servers, 'redis', RECOVERY_MS)
  return servers
}

describe('Redis faults (a real redis-server, two hashd instances)', { skip: skipUnless('redis-server') }, () => {
  let redis: TestRedis
  let servers: HashdProcess[] = []
  before(async () => {
    redis = await startRedis()
    servers = await startPair(redis.url)
  })
  after(async () => {
    redis?.resume()
    await Promise.all(servers.map((server) => server.stop()))
    await redis?.destroy()
  })

  it('CLIENT PAUSE ALL for 2 s', async (t) => {
    await underFault(t, servers, 'CLIENT PAUSE', async () => {
      assert.equal(await redis.command(`CLIENT PAUSE ${FAULT_MS} ALL`), '+OK\r\n')
      await sleep(FAULT_MS + 200)
    }, { degraded: true })
    assertClean(servers)
  })

  it('SIGSTOP, 2 s, then SIGCONT', async (t) => {
    await underFault(t, servers, 'SIGSTOP', async () => {
      redis.pause()
      try { await sleep(FAULT_MS) } finally { redis.resume() }
    }, { degraded: true })
    assertClean(servers)
  })

  it('a restart: stopped for 2 s, started again empty', async (t) => {
    await underFault(t, servers, 'restart', async () => {
      await redis.stop()
      await sleep(FAULT_MS)
      await redis.start()
    }, { degraded: true })
    assertClean(servers)
  })
})

describe('Redis over a link the test controls (a network namespace and a veth pair)', { skip: namespaceSkip() }, () => {
  // A longer timeout than the default, so that a delay well under it stays under it on a loaded machine.
  const timeoutMs = 300
  let redis: NamespacedRedis | undefined
  let servers: HashdProcess[] = []
  before(async () => {
    redis = await startNamespacedRedis()
    servers = await startPair(redis.url, { REDIS_COMMAND_TIMEOUT_MS: String(timeoutMs) })
  })
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await redis?.destroy()
  })

  it(`added latency under the command timeout (30 ms of ${timeoutMs}): every request counted, shared, 30 ms slower at most`, async (t) => {
    t.diagnostic(`latency added by ${redis!.latencyBy}`)
    await underFault(t, servers, 'latency 30 ms', async () => {
      await redis!.setLatency(30)
      try { await sleep(FAULT_MS) } finally { await redis!.setLatency(0) }
    }, { degraded: false, timeoutMs: 30 })
    assertClean(servers)
  })

  it(`added latency over the command timeout (1 s): decided on the instance's own count after ${timeoutMs} ms at most`, async (t) => {
    t.diagnostic(`latency added by ${redis!.latencyBy}`)
    await underFault(t, servers, 'latency 1 s', async () => {
      await redis!.setLatency(1_000)
      try { await sleep(FAULT_MS) } finally { await redis!.setLatency(0) }
    }, { degraded: true, timeoutMs })
    assertClean(servers)
  })

  it('a partition: the link down for 2 s (no RST, no FIN), then up', async (t) => {
    await underFault(t, servers, 'partition', async () => {
      redis!.setLink(false)
      try { await sleep(FAULT_MS) } finally { redis!.setLink(true) }
    }, { degraded: true, timeoutMs })
    assertClean(servers)
  })
})
