/**
 * `npm run bench`: throughput and latency of POST /api/hash (sha256 of a 32-byte input) against a
 * bare node:http server doing the same hash, in the same run on the same machine, and the p99 of
 * a cheap md5 request while a flood of bcrypt requests is in flight.
 *
 * Each server runs in its own process. For the throughput rows the server is pinned to core 0
 * and wrk (when installed; autocannon otherwise) to core 1, and each hashd configuration is run in
 * A B B A order with the bare server, so drift on a shared machine falls on both alike. Then the
 * upload rows (uploads.ts), then the password rows against native references (passwords.ts), then
 * named HMAC keys and batches (keys.ts), then the breached-password store (pwned.ts: size, import,
 * /range against a bare server, check latency, memory), then webhook verification against
 * /api/hmac of the same payload (webhooks.ts), then the rate limit counting in Redis against
 * counting in memory (`ratelimit`), then the content hashes against their reference tools on 1 GiB
 * and a 4 GiB upload's memory (content-hashes.ts: `content`). Durations can be set with BENCH_SECONDS (default 10);
 * BENCH_ONLY picks sections by name (`api`, `flood`, `uploads`, `passwords`, `keys`, `pwned`,
 * `webhooks`, `ratelimit`, `content`, comma-separated; all by default). `banks` (not in the default
 * set: its 10 M-hash PDQ bank takes a quarter of an hour, Meta's peer longer) runs bench/banks.ts,
 * the similarity bank lookups in-process against their peers (`npm run bench:banks` alone).
 */
import { spawnSync } from 'node:child_process'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { cpuSeconds, load, median, throughput } from './load.js'
import { hasProgram, start, stop, type Started } from './servers.js'
import { benchKeys } from './keys.js'
import { benchPasswords } from './passwords.js'
import { benchPwned } from './pwned.js'
import { benchUploads } from './uploads.js'
import { benchContentHashes } from './content-hashes.js'
import { benchWebhooks } from './webhooks.js'
import { scriptCalls, startRedis } from '../test/helpers/redis.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ONLY = new Set((process.env.BENCH_ONLY ?? 'api,flood,uploads,passwords,keys,pwned,webhooks,ratelimit,content').split(',').map((name) => name.trim()))
const here = fileURLToPath(new URL('.', import.meta.url))
const INPUT_32_BYTES = 'hashd-bench-input-32-bytes-long!'

function row(name: string, result: autocannon.Result): string {
  return `${name.padEnd(34)} ${result.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms   non-2xx ${result.non2xx}`
}

/** `served`: every request the run's server answered, its warm-up's too. */
interface Measured { rate: number, cpuMicros: number, p99Ms: number, served: number }

/** A B B A against the bare server, each on core 0 with its own warm-up; the means of each pair. */
async function versusBare(script: string, env: Record<string, string>, body: object, peer = `${here}bare-server.js`, peerEnv: Record<string, string> = {}): Promise<{ hashd: Measured, bare: Measured }> {
  const run = async (path: string, environment: Record<string, string>): Promise<Measured> => {
    const server = await start(path, environment, '0')
    try {
      const warm = await throughput(server.url, body, 2)
      const before = cpuSeconds(server.child.pid)
      const { rate, requests, p99Ms } = await throughput(server.url, body, SECONDS)
      return { rate, p99Ms, cpuMicros: (cpuSeconds(server.child.pid) - before) * 1e6 / requests, served: warm.requests + requests }
    } finally {
      await stop(server)
    }
  }
  const bare = peer
  const a1 = await run(bare, peerEnv); const b1 = await run(script, env); const b2 = await run(script, env); const a2 = await run(bare, peerEnv)
  const mean = (x: Measured, y: Measured): Measured => ({ rate: (x.rate + y.rate) / 2, cpuMicros: (x.cpuMicros + y.cpuMicros) / 2, p99Ms: (x.p99Ms + y.p99Ms) / 2, served: x.served + y.served })
  return { hashd: mean(b1, b2), bare: mean(a1, a2) }
}

function versusLine(label: string, { hashd, bare }: { hashd: Measured, bare: Measured }, goal: string, peer = 'bare'): string {
  const p99 = (measured: Measured) => Number.isNaN(measured.p99Ms) ? '' : ` p99 ${measured.p99Ms.toFixed(2).padStart(5)} ms`
  return `${label.padEnd(44)} ${hashd.rate.toFixed(0).padStart(7)} req/s ${hashd.cpuMicros.toFixed(1).padStart(6)} µs CPU/req${p99(hashd)}   ` +
    `${peer} ${bare.rate.toFixed(0).padStart(7)} req/s ${bare.cpuMicros.toFixed(1).padStart(6)} µs CPU/req${p99(bare)}   ` +
    `ratio ${(hashd.rate / bare.rate).toFixed(2)} by req/s, ${(bare.cpuMicros / hashd.cpuMicros).toFixed(2)} by CPU/req${goal ? ` (goal ${goal})` : ''}`
}

async function main(): Promise<void> {
  const hashdScript = `${here}../src/server.js`
  const hashdEnv = { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info' }
  const sha256 = { input: INPUT_32_BYTES, algorithm: 'sha256' }
  const md5 = { input: INPUT_32_BYTES, algorithm: 'md5' }

  const cores = cpus()
  console.log(`hashd bench: ${SECONDS} s per run, node ${process.version}, ${cores.length} cores, ${cores[0]?.model ?? 'unknown CPU'}`)
  console.log(`load generator: ${hasProgram('wrk') ? 'wrk' : 'autocannon'}${hasProgram('taskset') ? ', server on core 0, load on core 1' : ''}\n`)
  if (ONLY.has('api')) await benchApi(hashdScript, sha256)
  if (ONLY.has('flood')) await benchFlood(hashdScript, hashdEnv, md5)
  if (ONLY.has('uploads')) await benchUploads(hashdScript, `${here}bare-upload-server.js`)
  if (ONLY.has('passwords')) await benchPasswords(hashdScript, SECONDS)
  if (ONLY.has('keys')) await benchKeys(hashdScript, SECONDS)
  if (ONLY.has('pwned')) await benchPwned(hashdScript, SECONDS)
  if (ONLY.has('webhooks')) await benchWebhooks(hashdScript, SECONDS)
  if (ONLY.has('ratelimit')) await benchRateLimit(hashdScript, sha256)
  if (ONLY.has('content')) await benchContentHashes(hashdScript)
  if (ONLY.has('banks')) spawnSync(process.execPath, ['--expose-gc', `${here}banks.js`], { stdio: 'inherit' })
}

async function benchApi(hashdScript: string, sha256: object): Promise<void> {
  console.log('1. POST /api/hash sha256 of 32 bytes, 50 connections, A B B A against bare node:http doing the same crypto hash, and against bare Fastify with a JSON body schema and the same answer')
  const quiet = await versusBare(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }, sha256)
  console.log(versusLine('hashd, LOG_LEVEL=warn, RATE_LIMIT_MAX=0', quiet, '≥ 0.70'))
  // The default config: access log at info, and the limiter on with a max that never triggers.
  const full = await versusBare(hashdScript, { LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000000' }, sha256)
  console.log(versusLine('hashd, default config (info log, limiter on)', full, '≥ 0.60'))
  const fastify = await versusBare(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }, sha256, `${here}fastify-server.js`)
  console.log(versusLine('hashd, LOG_LEVEL=warn, RATE_LIMIT_MAX=0', fastify, '≥ 0.85', 'bare Fastify') + '\n')
}

async function benchFlood(hashdScript: string, hashdEnv: Record<string, string>, md5: object): Promise<void> {
  const hashd: Started = await start(hashdScript, hashdEnv)
  console.log('2. md5 latency while 200 bcrypt (cost 10) requests are in flight, 5 connections of md5')
  const idle = await load(hashd.url, md5, { connections: 5, duration: Math.max(3, SECONDS / 2) })
  const flood = load(hashd.url, { input: 'password', algorithm: 'bcrypt', options: { cost: 10 } }, { connections: 200, duration: SECONDS + 2 })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const during = await load(hashd.url, md5, { connections: 5, duration: SECONDS })
  const floodResult = await flood
  await stop(hashd)
  console.log(row('md5, idle server', idle))
  console.log(row('md5, during bcrypt flood', during))
  console.log(row('bcrypt flood itself', floodResult))
  console.log(`   md5 p99 during flood: ${during.latency.p99} ms (idle: ${idle.latency.p99} ms; goal < 10 ms); bcrypt 503s: ${floodResult.non2xx}\n`)
}

/**
 * What sharing the counts through Redis costs: the same short /api/hash with the limiter on, counting
 * in Redis (a redis-server started here, at the default command timeout) ÷ counting in memory only,
 * with a budget no run reaches (RATE_LIMIT_MAX 100,000,000: a lease of 100, one call to Redis per
 * 101 requests). BENCH_RATELIMIT_ROUNDS rounds (default 3) of A B B A, each round's ratio, and their
 * median: on two shared cores one round moves by ±15 % and more, the same size as the overhead
 * measured. Goal ≥ 0.9.
 */
async function benchRateLimit(hashdScript: string, sha256: object): Promise<void> {
  const rounds = Math.max(1, Number(process.env.BENCH_RATELIMIT_ROUNDS ?? 3))
  console.log(`7. POST /api/hash sha256 of 32 bytes, 50 connections, the limiter counting in Redis ÷ counting in memory, ${rounds} rounds of A B B A`)
  if (!hasProgram('redis-server')) {
    console.log('skipped: redis-server not installed (Debian: redis-server)\n')
    return
  }
  const redis = await startRedis()
  try {
    const limiter = { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000000' }
    const rateRatios: number[] = []
    const cpuRatios: number[] = []
    let calls = 0
    let served = 0
    for (let round = 0; round < rounds; round++) {
      const shared = { ...limiter, REDIS_URL: redis.url, REDIS_PREFIX: `hashd-bench-${process.pid}-${round}:` }
      await redis.command('CONFIG RESETSTAT')
      const result = await versusBare(hashdScript, shared, sha256, hashdScript, limiter)
      calls += await scriptCalls(redis)
      served += result.hashd.served
      rateRatios.push(result.hashd.rate / result.bare.rate)
      cpuRatios.push(result.bare.cpuMicros / result.hashd.cpuMicros)
      console.log(versusLine(`round ${round + 1}: hashd, counts in Redis`, result, '', 'in memory'))
    }
    console.log(`hashd, counts in Redis ÷ in memory: median ${median(rateRatios).toFixed(2)} by req/s, ${median(cpuRatios).toFixed(2)} by CPU/req (goal ≥ 0.90)`)
    // Leases (RATE_LIMIT_LEASE_PERCENT, 1 % of the budget, at most 100): one call per lease.
    console.log(`Redis: ${calls} rate-limit script calls for ${served} requests, one per ${(served / Math.max(1, calls)).toFixed(0)}\n`)
  } finally {
    await redis.destroy()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
