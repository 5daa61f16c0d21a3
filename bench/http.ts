/**
 * `npm run bench`: throughput and latency of POST /api/hash (sha256 of a 32-byte input) against a
 * bare node:http server doing the same hash, in the same run on the same machine, and the p99 of
 * a cheap md5 request while a flood of bcrypt requests is in flight.
 *
 * Each server runs in its own process; autocannon drives it from this one. Durations can be set
 * with BENCH_SECONDS (default 10).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const here = fileURLToPath(new URL('.', import.meta.url))
const INPUT_32_BYTES = 'hashd-bench-input-32-bytes-long!'

interface Started { child: ChildProcess, url: string }

/** A port that is free now: the OS picks one, and it is handed to the server process. */
async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * Starts a server process and waits until it answers. Its stdout (hashd's access log) goes to a
 * file, as in a deployment, not to a pipe this busy process would drain late.
 */
async function start(script: string, env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort()
  const log = openSync(join(tmpdir(), `hashd-bench-${process.pid}-${port}.log`), 'w')
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', log, 'inherit'] })
  closeSync(log)
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`)
    try {
      await fetch(`${url}/api/health`)
      return { child, url }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${script} did not start`)
}

async function stop(server: Started): Promise<void> {
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}

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

async function main(): Promise<void> {
  const hashdScript = `${here}../src/server.js`
  const hashdEnv = { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info' }
  const sha256 = { input: INPUT_32_BYTES, algorithm: 'sha256' }
  const md5 = { input: INPUT_32_BYTES, algorithm: 'md5' }

  console.log(`hashd bench: ${SECONDS} s per run, node ${process.version}\n`)
  console.log('1. POST /api/hash sha256 of 32 bytes, 50 connections')
  const bare = await start(`${here}bare-server.js`)
  await load(bare.url, sha256, { connections: 50, duration: 2 }) // warm-up
  const bareResult = await load(bare.url, sha256, { connections: 50, duration: SECONDS })
  await stop(bare)

  const fastify = await start(`${here}fastify-server.js`)
  await load(fastify.url, sha256, { connections: 50, duration: 2 })
  const fastifyResult = await load(fastify.url, sha256, { connections: 50, duration: SECONDS })
  await stop(fastify)

  const quietHashd = await start(hashdScript, { ...hashdEnv, LOG_LEVEL: 'warn' })
  await load(quietHashd.url, sha256, { connections: 50, duration: 2 })
  const quietResult = await load(quietHashd.url, sha256, { connections: 50, duration: SECONDS })
  await stop(quietHashd)

  const hashd = await start(hashdScript, hashdEnv)
  await load(hashd.url, sha256, { connections: 50, duration: 2 })
  const hashdResult = await load(hashd.url, sha256, { connections: 50, duration: SECONDS })
  const ratio = (result: autocannon.Result) => (result.requests.average / bareResult.requests.average).toFixed(2)
  console.log(row('bare node:http + crypto', bareResult))
  console.log(row('bare Fastify + crypto', fastifyResult), `  ${ratio(fastifyResult)} of bare`)
  console.log(row('hashd, LOG_LEVEL=warn', quietResult), `  ${ratio(quietResult)} of bare`)
  console.log(row('hashd (default: access log on)', hashdResult), `  ${ratio(hashdResult)} of bare`)
  console.log(`   throughput ratio hashd/bare: ${ratio(hashdResult)} (goal ≥ 0.80)`)
  console.log(`   p99 ratio hashd/bare: ${(hashdResult.latency.p99 / Math.max(1, bareResult.latency.p99)).toFixed(2)}\n`)

  console.log('2. md5 latency while 200 bcrypt (cost 10) requests are in flight, 5 connections of md5')
  const quiet = await load(hashd.url, md5, { connections: 5, duration: Math.max(3, SECONDS / 2) })
  const flood = load(hashd.url, { input: 'password', algorithm: 'bcrypt', options: { cost: 10 } }, { connections: 200, duration: SECONDS + 2 })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const during = await load(hashd.url, md5, { connections: 5, duration: SECONDS })
  const floodResult = await flood
  await stop(hashd)
  console.log(row('md5, idle server', quiet))
  console.log(row('md5, during bcrypt flood', during))
  console.log(row('bcrypt flood itself', floodResult))
  console.log(`   md5 p99 during flood: ${during.latency.p99} ms (idle: ${quiet.latency.p99} ms); bcrypt 503s: ${floodResult.non2xx}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
