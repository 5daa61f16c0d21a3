/**
 * `npm run bench:metrics`: what Prometheus metrics (and API keys) cost at the /api/hash request
 * rate (sha256 of a 32-byte input, the cheapest request, where a per-request cost shows most).
 *
 * Three hashd processes: metrics off, metrics on (the default), metrics on with API_KEYS_FILE and
 * a key on every request. wrk drives one at a time, in the order A B C C B A within one run, so
 * drift on a shared machine (other work, thermal state) falls on every variant alike; each server
 * is pinned to one core and wrk to another with taskset where there are two cores or more.
 * BENCH_SECONDS sets each measurement's length (default 10), BENCH_CONNECTIONS wrk's connections (32),
 * BENCH_ROUNDS how many times the A B C C B A block runs (default 1).
 *
 * Besides requests per second, each run reports the server's CPU time per request (user + system,
 * from /proc/<pid>/stat, over the requests wrk completed). On a machine shared with other work the
 * rate swings with what else runs; CPU time per request swings less, and it is what metrics add.
 * Last, the work each request gains is timed in-process, call by call (CPU time, best of 7 rounds of
 * 200,000 calls): the onResponse hook's
 * recording, a domain count, and an API key's lookup, against a call of the silent observer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { countHashedBytes, installObserver } from '../src/observe.js'
import { hashKey } from '../src/keys/api-keys.js'
import { authenticate } from '../src/plugins/auth.js'
import { buildRegistry, httpRecorder, observerFor } from '../src/plugins/metrics.js'
import { cpuSeconds } from './load.js'
import { freePort } from './servers.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const SERVER = fileURLToPath(new URL('../src/server.js', import.meta.url))
const INPUT_32_BYTES = 'hashd-bench-input-32-bytes-long!'

const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
const pinned = has('taskset') && availableParallelism() >= 2
/** Server on core 0, wrk on core 1 (when there are two): they never compete for one core. */
const pin = (core: number, argv: string[]) => pinned ? ['taskset', '-c', String(core), ...argv] : argv

interface Variant { name: string, env: Record<string, string>, key?: string }
interface Started { variant: Variant, child: ChildProcess, url: string }

/** Starts hashd pinned to core 0, its access log going to a file as in a deployment. */
async function start(variant: Variant, dir: string): Promise<Started> {
  const port = await freePort()
  const log = openSync(join(dir, `${variant.name.replace(/\W+/g, '-')}.log`), 'w')
  const [command, ...args] = pin(0, [process.execPath, SERVER])
  const child = spawn(command as string, args, {
    env: { ...process.env, RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info', WORKER_THREADS: '1', ...variant.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', log, 'inherit'],
  })
  closeSync(log)
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`${variant.name}: hashd exited with ${child.exitCode}`)
    try {
      await fetch(`${url}/api/health`)
      return { variant, child, url }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${variant.name}: hashd did not start`)
}

interface Measured { requestsPerSecond: number, cpuMicrosPerRequest: number, p50: string, p99: string, errors: string }

/** One wrk run against POST /api/hash; wrk pinned to core 1. */
function measure(server: Started, seconds: number, dir: string): Measured {
  const script = join(dir, `${server.variant.name.replace(/\W+/g, '-')}.lua`)
  const headers = [`wrk.headers["Content-Type"] = "application/json"`]
  if (server.variant.key) headers.push(`wrk.headers["Authorization"] = "Bearer ${server.variant.key}"`)
  writeFileSync(script, ['wrk.method = "POST"', `wrk.body = '${JSON.stringify({ input: INPUT_32_BYTES, algorithm: 'sha256' })}'`, ...headers].join('\n'))
  const [command, ...args] = pin(1, ['wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, `${server.url}/api/hash`])
  const cpuBefore = cpuSeconds(server.child.pid)
  const result = spawnSync(command as string, args, { encoding: 'utf8' })
  const cpu = cpuSeconds(server.child.pid) - cpuBefore
  if (result.status !== 0) throw new Error(`wrk failed: ${result.stderr}`)
  const out = result.stdout
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]
  const requests = /(\d+) requests in/.exec(out)?.[1]
  if (rate === undefined || requests === undefined) throw new Error(`cannot read wrk's output:\n${out}`)
  return {
    requestsPerSecond: Number(rate),
    cpuMicrosPerRequest: (cpu / Number(requests)) * 1e6,
    p50: /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    p99: /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?',
    // wrk prints these lines only when there were errors or non-2xx answers.
    errors: [/Non-2xx or 3xx responses: \d+/.exec(out)?.[0], /Socket errors: .*/.exec(out)?.[0]].filter(Boolean).join('; '),
  }
}

/**
 * Nanoseconds of this process's CPU time per call of `fn`, the best of 7 rounds. CPU time, not
 * wall time: while other processes hold the core, the wall clock runs on and CPU time does not.
 */
function nanosPerCall(fn: (index: number) => void, calls = 200_000): number {
  let best = Infinity
  for (let round = 0; round < 7; round++) {
    const started = process.cpuUsage()
    for (let index = 0; index < calls; index++) fn(index)
    const used = process.cpuUsage(started)
    best = Math.min(best, ((used.user + used.system) * 1e3) / calls)
  }
  return best
}

function perRequestWork(): void {
  const metrics = buildRegistry({ stats: () => ({ threads: 1, running: 0, queued: 0, memoryBudgetBytes: 0, memoryInUseBytes: 0, rejected: 0, started: 0 }) })
  const record = httpRecorder(metrics)
  const silent = nanosPerCall(() => countHashedBytes('hash', 'sha256', 32))
  const uninstall = installObserver(observerFor(metrics))
  const counted = nanosPerCall(() => countHashedBytes('hash', 'sha256', 32))
  uninstall()
  const recorded = nanosPerCall((index) => record('POST', '/api/hash', 200, 0.2 + (index % 7) * 0.1))
  const key = `hk_${randomBytes(32).toString('base64url')}`
  const keys = new Map([[hashKey(key), { name: 'bench', max: null, itemsMax: null, scopes: new Set<string>(), hmacKeys: null, banks: null }]])
  const header = `Bearer ${key}`
  const looked = nanosPerCall(() => authenticate(keys, header))
  console.log('\nper-request work, in-process CPU time (best of 7 rounds of 200,000 calls):')
  console.log(`  METRICS=off: countHashedBytes on the silent observer   ${silent.toFixed(0).padStart(6)} ns`)
  console.log(`  metrics on:  countHashedBytes                          ${counted.toFixed(0).padStart(6)} ns`)
  console.log(`  metrics on:  the onResponse recording (counter+histogram) ${recorded.toFixed(0).padStart(3)} ns`)
  console.log(`  API keys:    authenticate (sha256 + Map lookup)        ${looked.toFixed(0).padStart(6)} ns`)
}

async function main(): Promise<void> {
  if (!has('wrk')) {
    process.stderr.write('bench:metrics needs wrk (Debian: wrk)\n')
    process.exit(1)
  }
  const dir = mkdtempSync(join(tmpdir(), 'hashd-bench-metrics-'))
  const key = `hk_${randomBytes(32).toString('base64url')}`
  const keysFile = join(dir, 'keys')
  writeFileSync(keysFile, `bench ${createHash('sha256').update(key).digest('hex')}\n`)
  const variants: Variant[] = [
    { name: 'A metrics off', env: { METRICS: 'off' } },
    { name: 'B metrics on', env: { METRICS: 'on' } },
    { name: 'C metrics on + API key', env: { METRICS: 'on', API_KEYS_FILE: keysFile }, key },
  ]
  const servers: Started[] = []
  try {
    for (const variant of variants) servers.push(await start(variant, dir))
    console.log(`POST /api/hash (sha256, 32-byte input), wrk -t1 -c${CONNECTIONS}, ${SECONDS} s per run; ` +
      (pinned ? 'hashd on core 0, wrk on core 1 (taskset)' : 'not pinned (no taskset or one core)'))
    // Warm-up: JIT, connection set-up, first-use allocations.
    for (const server of servers) measure(server, Math.min(3, SECONDS), dir)
    const order = Array.from({ length: ROUNDS }, () => [0, 1, 2, 2, 1, 0]).flat()
    const results = new Map<string, Measured[]>()
    for (const index of order) {
      const server = servers[index] as Started
      const measured = measure(server, SECONDS, dir)
      results.set(server.variant.name, [...(results.get(server.variant.name) ?? []), measured])
      console.log(`${server.variant.name.padEnd(24)} ${measured.requestsPerSecond.toFixed(0).padStart(8)} req/s   ` +
        `${measured.cpuMicrosPerRequest.toFixed(1).padStart(6)} µs CPU/req   p50 ${measured.p50.padStart(8)}   p99 ${measured.p99.padStart(8)}${measured.errors ? `   ${measured.errors}` : ''}`)
    }
    const mean = (name: string, pick: (measured: Measured) => number) => {
      const runs = results.get(name) ?? []
      return runs.reduce((sum, run) => sum + pick(run), 0) / runs.length
    }
    const percent = (value: number, base: number) => { const change = ((value - base) / base) * 100; return `${change >= 0 ? '+' : ''}${change.toFixed(1)}%` }
    const offRate = mean('A metrics off', (run) => run.requestsPerSecond)
    const offCpu = mean('A metrics off', (run) => run.cpuMicrosPerRequest)
    console.log('')
    for (const variant of variants) {
      const rate = mean(variant.name, (run) => run.requestsPerSecond)
      const cpu = mean(variant.name, (run) => run.cpuMicrosPerRequest)
      const against = variant.name === 'A metrics off' ? '(baseline)' : `(${percent(rate, offRate)} req/s, ${percent(cpu, offCpu)} CPU/req against metrics off)`
      console.log(`${variant.name.padEnd(24)} mean ${rate.toFixed(0).padStart(8)} req/s ${cpu.toFixed(1).padStart(6)} µs CPU/req   ${against}`)
    }
    perRequestWork()
  } finally {
    for (const server of servers) {
      server.child.kill('SIGTERM')
      await once(server.child, 'exit')
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
