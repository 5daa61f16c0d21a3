/**
 * `npm run soak`: hashd under a mixed load for a bounded time, watching its memory.
 *
 * hashd is started as `npm start` starts it (package.json's Node flags), on a free loopback port,
 * with the environment of this process (so `LOG_LEVEL=warn npm run soak` soaks that config). The
 * limiter stays on with a max that never triggers unless RATE_LIMIT_MAX is set.
 *
 * The load, all at once, for SOAK_SECONDS (or `--seconds N`; default 600):
 * - SOAK_CONNECTIONS (default 16) connections posting short sha256 digests back to back;
 * - SOAK_CLIENTS (default 4) clients cycling through every operation: digests, HMACs, verifies
 *   (a digest, a bcrypt hash), identify (one hash, a batch of 200), 1 MiB uploads raw and
 *   multipart with one algorithm and with several (the threaded path), a few password hashes
 *   (bcrypt cost 10, argon2id at its defaults) and bad requests (each must get its 4xx).
 * SOAK_ONLY (comma-separated words) keeps only the cycling operations whose names contain one of
 * them, e.g. `SOAK_CONNECTIONS=0 SOAK_ONLY=argon2,bcrypt` for a password-hashing flood, or
 * `SOAK_ONLY=form` for multipart uploads alone; `every` is then ignored.
 * RSS (VmRSS of the process, every thread) is sampled every 250 ms and printed every 10 s; after
 * the load it is watched for SOAK_AFTER_SECONDS (default 60). At the end: the peak, the RSS one
 * minute after the load, the slope after warm-up (least squares over the samples after the first
 * fifth of the run, at least 10 s), the error count (any status other than the one expected, a
 * wrong digest, a failed connection) and the p99 latency of each operation.
 *
 * Goals (issue 19): peak ≤ 256 MB, ≤ 150 MB one minute after the load, no growth after warm-up.
 * A soak measures memory, not speed; no test asserts a figure from it. With BENCH_RECORD=1 a
 * two-minute soak of every operation (SOAK_SECONDS=120, the other settings at their defaults)
 * records its peak and the RSS a minute after into bench/figures.json, and one of identify batches
 * alone (SOAK_CONNECTIONS=0 SOAK_ONLY=identify) its peak (bench/figures.ts).
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { fileURLToPath } from 'node:url'
import { nodeKey, recordFigure } from './figures.js'
import { start, startFlags, stop, type Started } from './servers.js'

function option(name: string, environment: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`)
  const raw = index !== -1 ? process.argv[index + 1] : process.env[environment]
  const value = raw === undefined ? fallback : Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} / ${environment} must be a number ≥ 0, got ${raw}`)
  return value
}

const SECONDS = option('seconds', 'SOAK_SECONDS', 600)
const AFTER_SECONDS = option('after', 'SOAK_AFTER_SECONDS', 60)
const CONNECTIONS = option('connections', 'SOAK_CONNECTIONS', 16)
const CLIENTS = option('clients', 'SOAK_CLIENTS', 4)
const MB = 1e6
const GOAL_PEAK_MB = 256
const GOAL_AFTER_MB = 150

/** Latencies in buckets 2 % wide (enough for a p99), so a long run keeps no per-request list. */
class Latencies {
  readonly #buckets = new Map<number, number>()
  count = 0
  add(ms: number): void {
    const bucket = Math.max(0, Math.floor(Math.log(Math.max(ms, 0.01) * 100) / Math.log(1.02)))
    this.#buckets.set(bucket, (this.#buckets.get(bucket) ?? 0) + 1)
    this.count++
  }

  quantile(q: number): number {
    let seen = 0
    for (const bucket of [...this.#buckets.keys()].sort((a, b) => a - b)) {
      seen += this.#buckets.get(bucket) ?? 0
      if (seen >= q * this.count) return 1.02 ** (bucket + 1) / 100
    }
    return Number.NaN
  }
}

interface Answer { status: number, body: Buffer }

const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS + CLIENTS * 2 })
let base = { host: '127.0.0.1', port: 0 }

function call(method: string, path: string, headers: Record<string, string>, body: Uint8Array | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = typeof body === 'string' ? Buffer.from(body) : body
    const outgoing = request({ ...base, agent, method, path, headers: { ...headers, 'content-length': String(payload.length) } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

const json = (path: string, body: object | string) =>
  call('POST', path, { 'content-type': 'application/json' }, typeof body === 'string' ? body : JSON.stringify(body))

/** One operation: its request, and a check of the answer (status, and content where cheap). */
interface Operation { name: string, run: () => Promise<Answer>, check: (answer: Answer) => boolean }

const UPLOAD = randomBytes(1024 * 1024)
const hex = (algorithm: string, data: Uint8Array) => createHash(algorithm).update(data).digest('hex')
const UPLOAD_DIGESTS: Record<string, string> = Object.fromEntries(['sha256', 'md5', 'sha1', 'sha512'].map((name) => [name, hex(name, UPLOAD)]))
const BOUNDARY = 'hashd-soak-boundary-7d1c'

function multipart(algorithms: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="algorithms"\r\n\r\n${algorithms}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="soak.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    UPLOAD,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ])
}

/** The upload's digests in the answer equal node:crypto's of the same bytes. */
function uploadRight(names: string[]) {
  return (answer: Answer): boolean => {
    if (answer.status !== 200) return false
    const { hashes, size } = JSON.parse(answer.body.toString()) as { hashes: Record<string, string>, size: number }
    return size === UPLOAD.length && names.every((name) => hashes[name] === UPLOAD_DIGESTS[name])
  }
}

const status = (expected: number) => (answer: Answer) => answer.status === expected
const field = (name: string, value: unknown) => (answer: Answer) =>
  answer.status === 200 && (JSON.parse(answer.body.toString()) as Record<string, unknown>)[name] === value

// RFC 4231 test case 2.
const HMAC = { message: 'what do ya want for nothing?', key: 'Jefe', algorithm: 'sha256' }
const HMAC_EXPECTED = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
// A bcrypt $2b$ hash of "correct horse battery staple" at cost 10, from docs/api.md.
const BCRYPT_HASH = '$2b$10$ebzKPCNiLzgxqLSkL/dc5OZO7FXZaeECgKjhfsIsCjzXseBq21O7q'
const IDENTIFY_BATCH = Array.from({ length: 200 }, (_, index) => index % 3 === 0
  ? hex('md5', Buffer.from(String(index)))
  : index % 3 === 1 ? hex('sha256', Buffer.from(String(index))) : BCRYPT_HASH)
const MULTI = 'sha256,md5,sha1,sha512'
const rawUpload = (algorithms: string) => () => call('PUT', `/api/filehash?algorithms=${algorithms}`, { 'content-type': 'application/octet-stream' }, UPLOAD)
const formUpload = (algorithms: string) => {
  const body = multipart(algorithms)
  return () => call('POST', '/api/filehash', { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body)
}

/** What the cycling clients do, in order; `every` runs an operation only on every nth cycle. */
const CYCLE: Array<Operation & { every?: number }> = [
  { name: 'digest sha256', run: () => json('/api/hash', { input: randomBytes(16).toString('hex'), algorithm: 'sha256' }), check: status(200) },
  { name: 'digest blake3', run: () => json('/api/hash', { input: 'hello world', algorithm: 'blake3' }), check: field('hash', 'd74981efa70a0c880b8d8c1985d075dbcbf679b99a5f9914e5aaf96b831a9e24') },
  { name: 'hmac sha256', run: () => json('/api/hmac', HMAC), check: field('hmac', HMAC_EXPECTED) },
  { name: 'verify md5', run: () => json('/api/verify', { input: 'hello world', hash: '5eb63bbbe01eeed093cb22bb8f5acdc3' }), check: field('match', true) },
  { name: 'verify bcrypt', run: () => json('/api/verify', { input: 'correct horse battery staple', hash: BCRYPT_HASH }), check: field('match', true) },
  { name: 'identify one', run: () => json('/api/identify', { hash: BCRYPT_HASH }), check: status(200) },
  { name: 'identify batch 200', run: () => json('/api/identify', { hashes: IDENTIFY_BATCH }), check: status(200) },
  { name: 'upload raw sha256', run: rawUpload('sha256'), check: uploadRight(['sha256']) },
  { name: `upload raw ${MULTI}`, run: rawUpload(MULTI), check: uploadRight(MULTI.split(',')) },
  { name: 'upload form sha256', run: formUpload('sha256'), check: uploadRight(['sha256']) },
  { name: 'upload form sha1,md5', run: formUpload('sha1,md5'), check: uploadRight(['sha1', 'md5']) },
  { name: 'hash bcrypt cost 10', every: 4, run: () => json('/api/hash', { input: 'soak', algorithm: 'bcrypt', options: { cost: 10 } }), check: status(200) },
  { name: 'hash argon2id', every: 4, run: () => json('/api/hash', { input: 'soak', algorithm: 'argon2id' }), check: status(200) },
  { name: 'bad: unknown algorithm', run: () => json('/api/hash', { input: 'x', algorithm: 'sha257' }), check: status(400) },
  { name: 'bad: malformed JSON', run: () => json('/api/hash', '{"input":'), check: status(400) },
  { name: 'bad: body too large', every: 4, run: () => json('/api/hash', { input: 'x'.repeat(1100 * 1024) }), check: status(413) },
  { name: 'bad: bcrypt input over 72 bytes', run: () => json('/api/hash', { input: 'x'.repeat(80), algorithm: 'bcrypt', options: { cost: 4 } }), check: status(422) },
]
const ONLY = (process.env.SOAK_ONLY ?? '').split(',').map((word) => word.trim()).filter((word) => word !== '')
const SELECTED = ONLY.length === 0 ? CYCLE : CYCLE.filter((operation) => ONLY.some((word) => operation.name.includes(word))).map((operation) => ({ ...operation, every: undefined }))
const HAMMER: Operation = { name: `digest sha256 (${CONNECTIONS} connections)`, run: () => json('/api/hash', { input: 'hashd-soak-input-32-bytes-long!!', algorithm: 'sha256' }), check: status(200) }

const latencies = new Map<string, Latencies>()
const errors = new Map<string, number>()

async function perform(operation: Operation): Promise<void> {
  const started = performance.now()
  let right = false
  try {
    right = operation.check(await operation.run())
  } catch {
    right = false
  }
  const lat = latencies.get(operation.name) ?? new Latencies()
  latencies.set(operation.name, lat)
  lat.add(performance.now() - started)
  if (!right) errors.set(operation.name, (errors.get(operation.name) ?? 0) + 1)
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) * 1024 : Number.NaN
}

/** Least-squares slope of (seconds, bytes) samples, in MB per minute. */
function slopeMbPerMinute(samples: Array<[number, number]>): number {
  const n = samples.length
  if (n < 2) return Number.NaN
  const meanT = samples.reduce((sum, [t]) => sum + t, 0) / n
  const meanR = samples.reduce((sum, [, r]) => sum + r, 0) / n
  let num = 0
  let den = 0
  for (const [t, r] of samples) { num += (t - meanT) * (r - meanR); den += (t - meanT) ** 2 }
  return (num / den) * 60 / MB
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(0)} MB`

async function main(): Promise<void> {
  const env: Record<string, string> = { RATE_LIMIT_MAX: process.env.RATE_LIMIT_MAX ?? '1000000000' }
  const server: Started = await start(fileURLToPath(new URL('../src/server.js', import.meta.url)), env)
  const pid = server.child.pid as number
  base = { host: '127.0.0.1', port: Number(new URL(server.url).port) }
  try {
    console.log(`hashd soak: ${SECONDS} s of load, then ${AFTER_SECONDS} s idle; node ${process.version}; LOG_LEVEL=${process.env.LOG_LEVEL ?? 'info (default)'}, RATE_LIMIT_MAX=${env.RATE_LIMIT_MAX}`)
    console.log(`server: node ${startFlags().join(' ')} dist/src/server.js, pid ${pid}, its stdout in ${server.log}`)
    console.log(`load: ${CONNECTIONS} connections of short sha256 digests, ${CLIENTS} clients cycling ${ONLY.length === 0 ? `${CYCLE.length} operations (1 MiB uploads raw and multipart, one and several algorithms)` : `${SELECTED.map((operation) => operation.name).join(', ')}`}`)
    await new Promise((resolve) => setTimeout(resolve, 3000))
    const startRss = rssBytes(pid)
    console.log(`RSS before load: ${mb(startRss)}`)

    const began = performance.now()
    const elapsed = () => (performance.now() - began) / 1000
    const samples: Array<[number, number]> = []
    let peak = startRss
    let stopping = false
    let requests = 0
    const sampler = setInterval(() => {
      const rss = rssBytes(pid)
      samples.push([elapsed(), rss])
      peak = Math.max(peak, rss)
    }, 250)
    let lastRequests = 0
    const printer = setInterval(() => {
      const errorCount = [...errors.values()].reduce((a, b) => a + b, 0)
      console.log(`t=${elapsed().toFixed(0).padStart(4)} s  RSS ${mb(rssBytes(pid)).padStart(7)}  peak ${mb(peak).padStart(7)}  ${((requests - lastRequests) / 10).toFixed(0).padStart(6)} req/s  errors ${errorCount}`)
      lastRequests = requests
    }, 10_000)

    const hammer = async () => { while (!stopping) { await perform(HAMMER); requests++ } }
    const cycler = async () => {
      if (SELECTED.length === 0) return
      for (let cycle = 0; !stopping; cycle++) {
        for (const operation of SELECTED) {
          if (stopping) return
          if (operation.every !== undefined && cycle % operation.every !== 0) continue
          await perform(operation)
          requests++
        }
      }
    }
    const stopper = setTimeout(() => { stopping = true }, SECONDS * 1000)
    await Promise.all([...Array.from({ length: CONNECTIONS }, hammer), ...Array.from({ length: CLIENTS }, cycler)])
    clearTimeout(stopper)
    const loadSeconds = elapsed()
    const endRss = rssBytes(pid)
    console.log(`load ended at t=${loadSeconds.toFixed(0)} s: RSS ${mb(endRss)}; watching it for ${AFTER_SECONDS} s with no load`)
    agent.destroy()
    await new Promise((resolve) => setTimeout(resolve, AFTER_SECONDS * 1000))
    clearInterval(sampler)
    clearInterval(printer)
    const afterRss = rssBytes(pid)
    let heap = ''
    try {
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1])
      heap = `; main thread's JS heap ${mb(value('nodejs_heap_size_used_bytes'))}, external ${mb(value('nodejs_external_memory_bytes'))}`
    } catch {
      // METRICS=false: nothing to add.
    }

    const warmUp = Math.max(10, loadSeconds / 5)
    const slope = slopeMbPerMinute(samples.filter(([t]) => t >= warmUp && t <= loadSeconds))
    const errorCount = [...errors.values()].reduce((a, b) => a + b, 0)
    console.log('\nsummary')
    console.log(`RSS before load ${mb(startRss)}; at the end of the load ${mb(endRss)}${heap}`)
    console.log(`peak RSS ${mb(peak)} (goal ≤ ${GOAL_PEAK_MB} MB: ${peak <= GOAL_PEAK_MB * MB ? 'met' : 'NOT met'})`)
    console.log(`RSS ${AFTER_SECONDS} s after the load ${mb(afterRss)} (goal ≤ ${GOAL_AFTER_MB} MB: ${afterRss <= GOAL_AFTER_MB * MB ? 'met' : 'NOT met'})`)
    console.log(`slope after warm-up (t ≥ ${warmUp.toFixed(0)} s): ${slope >= 0 ? '+' : ''}${slope.toFixed(2)} MB/min`)
    console.log(`requests ${[...latencies.values()].reduce((sum, l) => sum + l.count, 0)}, errors ${errorCount}${errorCount > 0 ? ` (${[...errors].map(([name, count]) => `${name}: ${count}`).join(', ')})` : ''}`)
    console.log('\noperation                                   count     p50 ms     p99 ms')
    for (const operation of [HAMMER, ...CYCLE]) {
      const lat = latencies.get(operation.name)
      if (!lat) continue
      console.log(`${operation.name.padEnd(40)} ${String(lat.count).padStart(8)} ${lat.quantile(0.5).toFixed(1).padStart(10)} ${lat.quantile(0.99).toFixed(1).padStart(10)}`)
    }
    // Only the configurations the figures state (a clean run: no errors).
    const defaults = AFTER_SECONDS === 60 && CLIENTS === 4 && errorCount === 0
    if (defaults && SECONDS === 120 && CONNECTIONS === 16 && ONLY.length === 0) {
      recordFigure('soak-peak', { [nodeKey()]: Math.round(peak / MB) })
      recordFigure('soak-after', { [nodeKey()]: Math.round(afterRss / MB) })
    }
    if (defaults && CONNECTIONS === 0 && ONLY.join(',') === 'identify') recordFigure('identify-peak', { mb: Math.round(peak / MB) })
  } finally {
    await stop(server)
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
