/**
 * `npm run bench`: throughput and latency of POST /api/hash (sha256 of a 32-byte input) against a
 * bare node:http server doing the same hash, in the same run on the same machine, and the p99 of
 * a cheap md5 request while a flood of bcrypt requests is in flight.
 *
 * Each server runs in its own process. For the throughput rows the server is pinned to core 0
 * and wrk (when installed; autocannon otherwise) to core 1, and each hashd configuration is run in
 * A B B A order with the bare server, so drift on a shared machine falls on both alike. Then the
 * upload rows (uploads.ts), then the password rows against native references (passwords.ts).
 * Durations can be set with BENCH_SECONDS (default 10); BENCH_ONLY picks sections by name (`api`,
 * `flood`, `uploads`, `passwords`, comma-separated; all by default).
 */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { hasProgram, start, stop, type Started } from './servers.js'
import { benchPasswords } from './passwords.js'
import { benchUploads } from './uploads.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const ONLY = new Set((process.env.BENCH_ONLY ?? 'api,flood,uploads,passwords').split(',').map((name) => name.trim()))
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
async function throughput(url: string, body: object, seconds: number): Promise<{ rate: number, requests: number }> {
  if (hasProgram('wrk')) {
    writeFileSync(WRK_SCRIPT, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${JSON.stringify(body)}'\n`)
    const pin = hasProgram('taskset') ? ['taskset', '-c', '1'] : []
    const [command, ...args] = [...pin, 'wrk', '-t1', '-c50', `-d${seconds}s`, '-s', WRK_SCRIPT, `${url}/api/hash`]
    const output = String(spawnSync(command as string, args, { encoding: 'utf8' }).stdout)
    if (/Non-2xx/.test(output)) throw new Error(`non-2xx answers from ${url}: ${output}`)
    return { rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN), requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN) }
  }
  const result = await load(url, body, { connections: 50, duration: seconds })
  return { rate: result.requests.average, requests: result.requests.total }
}

/**
 * CPU seconds a process has used (user + system, from /proc), or NaN off Linux. CPU time per
 * request is the per-request cost itself, and drifts less than req/s when other work shares the core.
 */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

interface Measured { rate: number, cpuMicros: number }

/** A B B A against the bare server, each on core 0 with its own warm-up; the means of each pair. */
async function versusBare(script: string, env: Record<string, string>, body: object, peer = `${here}bare-server.js`): Promise<{ hashd: Measured, bare: Measured }> {
  const run = async (path: string, environment: Record<string, string>): Promise<Measured> => {
    const server = await start(path, environment, '0')
    try {
      await throughput(server.url, body, 2)
      const before = cpuSeconds(server.child.pid)
      const { rate, requests } = await throughput(server.url, body, SECONDS)
      return { rate, cpuMicros: (cpuSeconds(server.child.pid) - before) * 1e6 / requests }
    } finally {
      await stop(server)
    }
  }
  const bare = peer
  const a1 = await run(bare, {}); const b1 = await run(script, env); const b2 = await run(script, env); const a2 = await run(bare, {})
  const mean = (x: Measured, y: Measured): Measured => ({ rate: (x.rate + y.rate) / 2, cpuMicros: (x.cpuMicros + y.cpuMicros) / 2 })
  return { hashd: mean(b1, b2), bare: mean(a1, a2) }
}

function versusLine(label: string, { hashd, bare }: { hashd: Measured, bare: Measured }, goal: string, peer = 'bare'): string {
  return `${label.padEnd(44)} ${hashd.rate.toFixed(0).padStart(7)} req/s ${hashd.cpuMicros.toFixed(1).padStart(6)} µs CPU/req   ` +
    `${peer} ${bare.rate.toFixed(0).padStart(7)} req/s ${bare.cpuMicros.toFixed(1).padStart(6)} µs CPU/req   ` +
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

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
