/**
 * The webhook row of `npm run bench`: POST /api/webhooks/verify of a 2 KB Standard Webhooks
 * payload ÷ POST /api/hmac (HMAC-SHA256) of the same payload, both over HTTP to the same hashd in
 * the same run, goal ≥ 0.8; with the replay store in memory and in Redis (a redis-server started
 * here on a free loopback port, with REDIS_COMMAND_TIMEOUT_MS=1000; skipped without one), each with
 * the rate limits off (RATE_LIMIT_MAX=0: /api/hmac then touches no store, verify makes one replay
 * check a request) and on (hashd's default, with a max that never triggers: both routes count each
 * request in the same store).
 *
 * Every verify request is a new webhook (its own id, timestamp and signature, made before the run),
 * so each one is verified in full and remembered: the replay store does its real work, a
 * set-if-absent per request. hashd runs pinned to core 0 and this process (autocannon)
 * to core 1 where taskset exists. Each store is measured in BENCH_WEBHOOK_ROUNDS rounds (default 5)
 * of A B B A (A: /api/hmac, B: verify), each run BENCH_SECONDS / 2 seconds after a warm-up; the
 * ratio is the median over the rounds of each round's ratio, by requests per second and by CPU time
 * per request (the server's own, from /proc).
 */
import { spawnSync } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { cpus } from 'node:os'
import autocannon from 'autocannon'
import { startRedis, type TestRedis } from '../test/helpers/redis.js'
import { cpuSeconds, median } from './load.js'
import { hasProgram, start, stop, type Started } from './servers.js'

const ROUNDS = Math.max(1, Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 5))
const CONNECTIONS = 50

/** A 2048-byte JSON event, as a sender would post it. */
function payload2k(): string {
  const head = '{"type":"invoice.paid","timestamp":"2025-01-31T12:00:00Z","data":{"id":"in_1Mtest","customer":"cus_9s6XKzkNRiz8i3","lines":"'
  const tail = '"}}'
  return head + 'x'.repeat(2048 - head.length - tail.length) + tail
}

interface Run { rate: number, cpuMicros: number, requests: number, /** Answers other than 200, by status. */ others: Record<string, number> }

/** A request stream: the path, and the rest of autocannon's options. */
interface Stream { path: string, options: Omit<autocannon.Options, 'url'> }

async function measure(server: Started, stream: Stream, seconds: number): Promise<Run> {
  const before = cpuSeconds(server.child.pid)
  const result = await autocannon({ ...stream.options, url: server.url + stream.path, connections: CONNECTIONS, duration: seconds })
  const requests = result.requests.total
  const others = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).filter(([status]) => status !== '200').map(([status, stats]) => [status, stats.count ?? 0]))
  return { rate: result.requests.average, cpuMicros: (cpuSeconds(server.child.pid) - before) * 1e6 / requests, requests, others }
}

/**
 * The two request streams, sent the same way so the load generator costs both alike: each request's
 * body is taken from a list by `setupRequest`. /api/hmac's list is one body; verify's is a fresh
 * pool of signed webhooks made before each run (own id, timestamp and signature each), sized from
 * the rate seen so far with room to spare, so the generator never signs while it measures. Were a
 * pool used up it would start again from the top, and those requests would be answered as replays
 * after the same work; `replayed` counts them.
 */
function requests(): { hmac: Stream, verify: Stream, refill(count: number): void, replayed(): number } {
  const secretBytes = randomBytes(32)
  const secret = `whsec_${secretBytes.toString('base64')}`
  const payload = payload2k()
  const payloadJson = JSON.stringify(payload)
  const hmacBody = JSON.stringify({ message: payload, key: secretBytes.toString('base64'), keyEncoding: 'base64', algorithm: 'sha256', encoding: 'base64' })
  const prefix = `msg_bench${randomBytes(4).toString('hex')}_`
  let counter = 0
  let pool: string[] = []
  let next = 0
  let wrapped = 0
  const stream = (path: string, body: () => string): Stream => ({
    path,
    options: {
      method: 'POST', headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => { request.body = body(); return request } }],
    },
  })
  return {
    hmac: stream('/api/hmac', () => hmacBody),
    verify: stream('/api/webhooks/verify', () => {
      if (next === pool.length) { next = 0; wrapped++ }
      return pool[next++] as string
    }),
    refill(count: number) {
      const timestamp = Math.floor(Date.now() / 1000)
      pool = Array.from({ length: count }, () => {
        const id = `${prefix}${counter++}`
        const signature = createHmac('sha256', secretBytes).update(`${id}.${timestamp}.`).update(payload).digest('base64')
        return `{"profile":"standard-webhooks","payload":${payloadJson},"secret":"${secret}","headers":{"webhook-id":"${id}","webhook-timestamp":"${timestamp}","webhook-signature":"v1,${signature}","content-type":"application/json"}}`
      })
      next = 0
    },
    replayed: () => wrapped,
  }
}

async function checkValid(server: Started, streams: ReturnType<typeof requests>, replayStore: string): Promise<void> {
  // With REDIS_URL the store is ready once the connection is: until then a valid webhook gets 503.
  for (let tries = 0; ; tries++) {
    const health = await (await fetch(`${server.url}/api/health`)).json() as { replayStore?: string }
    if (health.replayStore === replayStore) break
    if (tries > 200) throw new Error(`the replay store stayed ${health.replayStore}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  // One request by hand first: the stream must really be verifying, not being refused.
  streams.refill(1)
  const request = { method: 'POST', path: streams.verify.path, headers: {}, body: '' } as unknown as autocannon.Request
  const setup = streams.verify.options.requests?.[0]?.setupRequest
  const made = typeof setup === 'function' ? setup(request, {}) : request
  const answer = await (await fetch(`${server.url}/api/webhooks/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: String(made.body) })).json() as { valid?: boolean }
  if (answer.valid !== true) throw new Error(`the bench's webhook does not verify: ${JSON.stringify(answer)}`)
}

async function benchStore(label: string, hashdScript: string, env: Record<string, string>, seconds: number): Promise<void> {
  // One client sends every webhook, more than a default store (or a default caller's share of it)
  // holds within the time each is remembered: both raised, so that no answer is a 503 replay-store-full
  // and the share is still counted (in Redis, its sorted set) as it is by default.
  const server = await start(hashdScript, { LOG_LEVEL: 'warn', WEBHOOK_REPLAY_MEMORY_MAX: '10000000', WEBHOOK_REPLAY_CALLER_MAX: '10000000', ...env }, '0')
  try {
    const streams = requests()
    const { hmac, verify } = streams
    await checkValid(server, streams, env.REDIS_URL === undefined ? 'memory' : 'redis')
    let fastest = (await measure(server, hmac, 2)).rate
    // Twice the fastest rate seen, for the run's length (and never fewer than 20,000).
    const timedVerify = async () => {
      streams.refill(Math.max(20_000, Math.ceil(2 * fastest * seconds)))
      const run = await measure(server, verify, seconds)
      fastest = Math.max(fastest, run.rate)
      return run
    }
    streams.refill(Math.max(20_000, Math.ceil(2 * fastest * 2)))
    await measure(server, verify, 2)
    // Answers other than 200 are counted and shown (a 503 when a starved Redis misses even the 1 s
    // timeout); past 1 % of the requests the row is marked as not measured.
    const others: Record<string, number> = {}
    let total = 0
    const rateRatios: number[] = []
    const cpuRatios: number[] = []
    const a: Run[] = []
    const b: Run[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const a1 = await measure(server, hmac, seconds)
      const b1 = await timedVerify()
      const b2 = await timedVerify()
      const a2 = await measure(server, hmac, seconds)
      fastest = Math.max(fastest, a1.rate, a2.rate)
      for (const run of [a1, b1, b2, a2]) {
        for (const [status, count] of Object.entries(run.others)) others[status] = (others[status] ?? 0) + count
        total += run.requests
      }
      a.push(a1, a2)
      b.push(b1, b2)
      rateRatios.push(((b1.rate + b2.rate) / 2) / ((a1.rate + a2.rate) / 2))
      cpuRatios.push(((a1.cpuMicros + a2.cpuMicros) / 2) / ((b1.cpuMicros + b2.cpuMicros) / 2))
    }
    const rate = (runs: Run[]) => median(runs.map((run) => run.rate))
    const cpu = (runs: Run[]) => median(runs.map((run) => run.cpuMicros))
    console.log(`${label.padEnd(30)} verify ${rate(b).toFixed(0).padStart(6)} req/s ${cpu(b).toFixed(1).padStart(6)} µs CPU/req   ` +
      `hmac ${rate(a).toFixed(0).padStart(6)} req/s ${cpu(a).toFixed(1).padStart(6)} µs CPU/req   ` +
      `ratio ${median(rateRatios).toFixed(2)} by req/s, ${median(cpuRatios).toFixed(2)} by CPU/req (goal ≥ 0.80; rounds by req/s: ${rateRatios.map((ratio) => ratio.toFixed(2)).join(' ')})` +
      (streams.replayed() > 0 ? `; a pool ran out ${streams.replayed()} times (those requests were replays)` : '') +
      (Object.keys(others).length > 0 ? `; not 200: ${Object.entries(others).map(([status, count]) => `${count} × ${status}`).join(', ')} of ${total}` : '') +
      (Object.values(others).reduce((sum, count) => sum + count, 0) > total / 100 ? ' — NOT MEASURED: over 1 % of the answers were errors' : ''))
  } finally {
    await stop(server)
  }
}

/** Pins this process (the load generator) to core 1 while the row runs, when taskset exists. */
function pinSelf(cores: string): void {
  if (hasProgram('taskset')) spawnSync('taskset', ['-a', '-p', '-c', cores, String(process.pid)], { stdio: 'ignore' })
}

export async function benchWebhooks(hashdScript: string, seconds: number): Promise<void> {
  const runSeconds = Math.max(2, Math.round(seconds / 2))
  console.log(`\n6. POST /api/webhooks/verify (2 KB Standard Webhooks payload, a new webhook each request) ÷ POST /api/hmac of the same payload, ${CONNECTIONS} connections, ` +
    `${ROUNDS} rounds of A B B A, ${runSeconds} s a run, medians`)
  pinSelf('1')
  // Limits off: /api/hmac touches no store at all, verify one replay check per request. Limits on (a
  // max that never triggers), hashd's default: both count each request in the same store.
  const limitsOff = { RATE_LIMIT_MAX: '0' }
  const limitsOn = { RATE_LIMIT_MAX: '100000000' }
  try {
    await benchStore('memory, limits off', hashdScript, limitsOff, runSeconds)
    await benchStore('memory, limits on', hashdScript, limitsOn, runSeconds)
    if (!hasProgram('redis-server')) {
      console.log('Redis                          skipped: redis-server not installed (Debian: redis-server)')
      return
    }
    let redis: TestRedis | undefined
    try {
      redis = await startRedis()
      // A command timeout of 1 s rather than the default 50 ms: on a shared machine a starved
      // redis-server can stall past 50 ms, and a replay check that times out is a 503 (fail closed),
      // which would end the row; the row measures throughput, not the machine's worst stall.
      const shared = { REDIS_URL: redis.url, REDIS_PREFIX: `hashd-bench-${process.pid}:`, REDIS_COMMAND_TIMEOUT_MS: '1000' }
      await benchStore('Redis, limits off', hashdScript, { ...shared, ...limitsOff }, runSeconds)
      await benchStore('Redis, limits on', hashdScript, { ...shared, ...limitsOn }, runSeconds)
    } finally {
      await redis?.destroy()
    }
  } finally {
    pinSelf(`0-${cpus().length - 1}`)
  }
}
