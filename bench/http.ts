/**
 * `npm run bench`: throughput and latency of POST /api/hash (sha256 of a 32-byte input) against a
 * bare node:http server doing the same hash, in the same run on the same machine, and the p99 of
 * a cheap md5 request while a flood of bcrypt requests is in flight.
 *
 * Each server runs in its own process. For the throughput rows the server is pinned to core 0
 * and wrk (when installed; autocannon otherwise) to core 1, and each hashd configuration is run in
 * A B B A order with the bare server, so drift on a shared machine falls on both alike. Then the
 * upload rows (uploads.ts). Durations can be set with BENCH_SECONDS (default 10).
 */
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { hasProgram, start, stop, type Started } from './servers.js'
import { benchUploads } from './uploads.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const here = fileURLToPath(new URL('.', import.meta.url))
const INPUT_32_BYTES = 'hashd-bench-input-32-bytes-long!'

function load(url: string, body: object, options: { connections: number, duration: number }): Promise<autocannon.Result> {
  return autocannon({
    url: `${url}/api/hash`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: options.connections,
    duration: options.duration,
  })
}

function row(name: string, result: autocannon.Result): string {
  return `${name.padEnd(34)} ${result.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms   non-2xx ${result.non2xx}`
}

const WRK_SCRIPT = join(tmpdir(), `hashd-bench-${process.pid}.lua`)

/** Requests per second against /api/hash: wrk on core 1 when present, else autocannon in this process. */
async function throughput(url: string, body: object, seconds: number): Promise<number> {
  if (hasProgram('wrk')) {
    writeFileSync(WRK_SCRIPT, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${JSON.stringify(body)}'\n`)
    const pin = hasProgram('taskset') ? ['taskset', '-c', '1'] : []
    const [command, ...args] = [...pin, 'wrk', '-t1', '-c50', `-d${seconds}s`, '-s', WRK_SCRIPT, `${url}/api/hash`]
    const output = String(spawnSync(command as string, args, { encoding: 'utf8' }).stdout)
    if (/Non-2xx/.test(output)) throw new Error(`non-2xx answers from ${url}: ${output}`)
    return Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN)
  }
  return (await load(url, body, { connections: 50, duration: seconds })).requests.average
}

/** A B B A against the bare server, each on core 0 with its own warm-up; the means of each pair. */
async function versusBare(script: string, env: Record<string, string>, body: object): Promise<{ hashd: number, bare: number }> {
  const run = async (path: string, environment: Record<string, string>): Promise<number> => {
    const server = await start(path, environment, '0')
    try {
      await throughput(server.url, body, 2)
      return await throughput(server.url, body, SECONDS)
    } finally {
      await stop(server)
    }
  }
  const bare = `${here}bare-server.js`
  const a1 = await run(bare, {}); const b1 = await run(script, env); const b2 = await run(script, env); const a2 = await run(bare, {})
  return { hashd: (b1 + b2) / 2, bare: (a1 + a2) / 2 }
}

async function main(): Promise<void> {
  const hashdScript = `${here}../src/server.js`
  const hashdEnv = { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info' }
  const sha256 = { input: INPUT_32_BYTES, algorithm: 'sha256' }
  const md5 = { input: INPUT_32_BYTES, algorithm: 'md5' }

  const cores = cpus()
  console.log(`hashd bench: ${SECONDS} s per run, node ${process.version}, ${cores.length} cores, ${cores[0]?.model ?? 'unknown CPU'}`)
  console.log(`load generator: ${hasProgram('wrk') ? 'wrk' : 'autocannon'}${hasProgram('taskset') ? ', server on core 0, load on core 1' : ''}\n`)
  console.log('1. POST /api/hash sha256 of 32 bytes, 50 connections, A B B A against bare node:http doing the same crypto hash')
  const quiet = await versusBare(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }, sha256)
  console.log(`hashd, LOG_LEVEL=warn, RATE_LIMIT_MAX=0     ${quiet.hashd.toFixed(0).padStart(7)} req/s   bare ${quiet.bare.toFixed(0).padStart(7)} req/s   ratio ${(quiet.hashd / quiet.bare).toFixed(2)} (goal ≥ 0.80)`)
  // The default config: access log at info, and the limiter on with a max that never triggers.
  const full = await versusBare(hashdScript, { LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000000' }, sha256)
  console.log(`hashd, default config (info log, limiter on) ${full.hashd.toFixed(0).padStart(7)} req/s   bare ${full.bare.toFixed(0).padStart(7)} req/s   ratio ${(full.hashd / full.bare).toFixed(2)} (goal ≥ 0.65)`)
  const fastify = await versusBare(`${here}fastify-server.js`, {}, sha256)
  console.log(`bare Fastify (for scale)                     ${fastify.hashd.toFixed(0).padStart(7)} req/s   bare ${fastify.bare.toFixed(0).padStart(7)} req/s   ratio ${(fastify.hashd / fastify.bare).toFixed(2)}\n`)

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
  console.log(`   md5 p99 during flood: ${during.latency.p99} ms (idle: ${idle.latency.p99} ms; goal < 10 ms); bcrypt 503s: ${floodResult.non2xx}`)

  await benchUploads(hashdScript, `${here}bare-upload-server.js`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
