/**
 * `npm run bench:ablate`: what each of hashd's per-request features costs, found by taking them
 * out one at a time. Issue 19 asks for /api/hash at 0.85 of bare Fastify's rate; this says where
 * the rest goes.
 *
 * Each variant is hashd as built (dist/) with one feature removed: by its own setting where hashd
 * has one (METRICS=off, the log level, RATE_LIMIT_MAX), otherwise by a textual patch to a copy of
 * the compiled JavaScript in a temporary directory. The copies exist only to be measured: none of
 * the patched features can be turned off in the product, since each is part of the contract
 * (docs/api.md, docs/configuration.md). A patch whose text is no longer in the build stops the run
 * with the text it looked for (bench/patched-build.ts): update it here when the source changes.
 *
 * Each run is measured as `npm run bench`'s first row: POST /api/hash (sha256 of 32 bytes), 50
 * connections, the server started as `npm start` starts it and pinned to core 0, wrk on core 1,
 * 2 s of warm-up, then the server's CPU time per request (user + system, from /proc). A round runs
 * every variant once, in an order reversed each round (A B C, C B A, …), and the medians over the
 * rounds are printed with each variant's difference from hashd as built, beside the medians of
 * the user and system halves. ABLATE_ROUNDS (default 5), BENCH_SECONDS (default 5) and
 * ABLATE_ONLY (variant names, comma-separated; hashd itself always runs) set the size of the run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cpuTimes, median, throughput } from './load.js'
import { patchedBuild, type Patch } from './patched-build.js'
import { hasProgram, start, stop } from './servers.js'

const ROUNDS = Number(process.env.ABLATE_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const here = fileURLToPath(new URL('.', import.meta.url))
const dist = join(here, '..')
const BODY = { input: 'hashd-bench-input-32-bytes-long!', algorithm: 'sha256' }

interface Variant {
  name: string
  /** What the variant shows, for the table. */
  what: string
  env?: Record<string, string>
  patches?: Patch[]
  /** A server other than hashd (the bare Fastify peer). */
  script?: string
}

const QUIET = { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }

const patches = {
  headers: [
    { file: 'src/app.js', find: "reply.header('x-request-id', request.id);", replace: '' },
    { file: 'src/app.js', find: "reply.header('x-content-type-options', 'nosniff');", replace: '' },
    { file: 'src/app.js', find: "reply.header('cache-control', 'no-store');", replace: ';' },
  ],
  socketTimeout: [{ file: 'src/app.js', find: 'connectionTimeout: config.requestTimeoutMs,', replace: '' }],
  requestIds: [{ file: 'src/app.js', find: 'genReqId: requestIds(),', replace: '' }],
  utf8Parser: [
    { file: 'src/plugins/body.js', find: "app.removeContentTypeParser('application/json');", replace: '' },
    { file: 'src/plugins/body.js', find: "app.addContentTypeParser('application/json',", replace: "false && app.addContentTypeParser('application/json'," },
  ],
  mediaType: [{ file: 'src/routes/hash.js', find: "config: { accepts: 'application/json' },", replace: '' }],
  unbatched: [{ file: 'src/app.js', find: 'await app.register(batchedWritesPlugin);', replace: '' }],
  otherRoutes: ['openapiPlugin', 'metricsPlugin, { config, engine }', 'verifyRoute, { engine }', 'hmacRoute, { engine }',
    'fileHashRoute, { config }', 'checksumsRoute, { config }', 'identifyRoute', 'passwordPolicyRoute',
    'calibrateRoute, { engine }', 'pepperRoute', 'webPlugin']
    .map((plugin) => ({ file: 'src/app.js', find: `await app.register(${plugin});`, replace: '' })),
} satisfies Record<string, Patch[]>

const VARIANTS: Variant[] = [
  { name: 'hashd', what: 'as built, LOG_LEVEL=warn, RATE_LIMIT_MAX=0', env: QUIET },
  { name: 'headers', what: 'without x-request-id, nosniff and no-store (app.ts onRequest hook)', env: QUIET, patches: patches.headers },
  { name: 'socket-timeout', what: 'without the socket inactivity timeout (connectionTimeout)', env: QUIET, patches: patches.socketTimeout },
  { name: 'request-ids', what: "with Fastify's request ids instead of hashd's", env: QUIET, patches: patches.requestIds },
  { name: 'utf8-parser', what: "with Fastify's JSON parser (no UTF-8 check of the bytes)", env: QUIET, patches: patches.utf8Parser },
  { name: 'media-type', what: 'without the media-type check (415)', env: QUIET, patches: patches.mediaType },
  { name: 'metrics', what: 'METRICS=off', env: { ...QUIET, METRICS: 'off' } },
  { name: 'one-route', what: 'only /api/hash and the meta routes (/api/health, /api/ready, /api/algorithms): no other operations, metrics, OpenAPI or page', env: QUIET, patches: patches.otherRoutes },
  {
    name: 'all-removed', what: 'every feature above removed at once (the replies still batched)', env: { ...QUIET, METRICS: 'off' },
    patches: [...patches.headers, ...patches.socketTimeout, ...patches.requestIds, ...patches.utf8Parser, ...patches.mediaType, ...patches.otherRoutes],
  },
  { name: 'unbatched', what: 'each reply written when it is ready, not at the end of its turn (plugins/batched-writes.ts)', env: QUIET, patches: patches.unbatched },
  { name: 'access-log', what: 'with the access log (LOG_LEVEL=info)', env: { LOG_LEVEL: 'info', RATE_LIMIT_MAX: '0' } },
  { name: 'limiter', what: 'with the rate limiter on (a max that never triggers)', env: { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000000' } },
  { name: 'bare-fastify', what: 'bench/fastify-server.ts: Fastify with a body and a response schema, nothing else', script: 'bench/fastify-server.js' },
  { name: 'bare-spin', what: 'the same bare Fastify with 4 µs of busy work added to each request (BENCH_SPIN_US=4)', script: 'bench/fastify-server.js', env: { BENCH_SPIN_US: '4' } },
  { name: 'bare-batched', what: 'the same bare Fastify with hashd\'s batched writes (BENCH_BATCHED_WRITES=1)', script: 'bench/fastify-server.js', env: { BENCH_BATCHED_WRITES: '1' } },
]

/** CPU µs per request: user space, kernel, and their sum. */
interface Cost { user: number, system: number, total: number }

async function measure(script: string, env: Record<string, string>): Promise<Cost> {
  const server = await start(script, env, '0')
  try {
    await throughput(server.url, BODY, 2)
    const before = cpuTimes(server.child.pid)
    const { requests } = await throughput(server.url, BODY, SECONDS)
    const after = cpuTimes(server.child.pid)
    const user = (after.user - before.user) * 1e6 / requests
    const system = (after.system - before.system) * 1e6 / requests
    return { user, system, total: user + system }
  } finally {
    await stop(server)
  }
}

async function main(): Promise<void> {
  if (!hasProgram('wrk') || !hasProgram('taskset')) {
    console.log('bench:ablate needs wrk and taskset (Debian packages wrk and util-linux): CPU time per request is read with the server alone on its core')
    return
  }
  const only = process.env.ABLATE_ONLY?.split(',').map((name) => name.trim())
  const variants = VARIANTS.filter((variant) => variant.name === 'hashd' || only === undefined || only.includes(variant.name))
  const parent = mkdtempSync(join(tmpdir(), 'hashd-ablate-'))
  try {
    const scripts = new Map(variants.map((variant) => [variant.name,
      variant.script ? join(dist, variant.script) : join(variant.patches ? patchedBuild(variant.name, variant.patches, parent) : dist, 'src', 'server.js')]))
    console.log(`hashd bench:ablate: ${ROUNDS} rounds of ${SECONDS} s per variant, node ${process.version}, ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}`)
    console.log('POST /api/hash sha256 of 32 bytes, 50 connections, server on core 0, wrk on core 1; CPU µs per request, median of the rounds\n')
    const results = new Map<string, Cost[]>(variants.map((variant) => [variant.name, []]))
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse()
      for (const variant of order) {
        results.get(variant.name)?.push(await measure(scripts.get(variant.name) as string, variant.env ?? {}))
      }
      process.stderr.write(`round ${round + 1} of ${ROUNDS} done\n`)
    }
    const base = median((results.get('hashd') ?? []).map((run) => run.total))
    for (const variant of variants) {
      const runs = results.get(variant.name) ?? []
      const value = median(runs.map((run) => run.total))
      const split = `user ${median(runs.map((run) => run.user)).toFixed(1)}, system ${median(runs.map((run) => run.system)).toFixed(1)}`
      const difference = variant.name === 'hashd' ? '' : `${value - base >= 0 ? '+' : ''}${(value - base).toFixed(1)}`
      console.log(`${variant.name.padEnd(14)} ${value.toFixed(1).padStart(6)} µs ${difference.padStart(6)}   ${variant.what}   (${split}; runs: ${runs.map((run) => run.total.toFixed(1)).join(' ')})`)
    }
  } finally {
    rmSync(parent, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
