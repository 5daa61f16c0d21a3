/**
 * Prometheus metrics, in one place: the only module that imports prom-client. The rest of hashd
 * reports through the named functions of observe.ts, which this plugin implements; HTTP counts
 * come from an onResponse hook here and the worker pool's load is read when Prometheus scrapes.
 *
 * `GET /metrics` serves the text exposition format on the main port, or, with METRICS_PORT, on a
 * separate listener at METRICS_HOST (loopback by default) that serves nothing else. Either way it
 * needs an API key with the metrics scope when API_KEYS_FILE is set. METRICS=off registers nothing at all.
 *
 * Label values come only from fixed sets: route templates (never the URL; every unmatched request
 * is "unmatched"), a fixed list of methods, status codes hashd sends, registry names. A client
 * cannot create series.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer } from '../node-http.js'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client'
import type { Config } from '../config.js'
import type { Engine } from '../domain/engine.js'
import type { ReplayStore } from '../webhooks/replay.js'
import { reloadStatuses } from '../file-reload.js'
import { installObserver, type Observer } from '../observe.js'
import { storeReads, storesInForce } from '../screening/status.js'
import { banksInForce } from '../similarity/bank-status.js'
import type { ApiKeys } from './auth.js'
import { insufficientScope, unauthorized } from './auth.js'

/** Seconds: from a short digest served inline (~0.1 ms) to a costly password hash (seconds). */
export const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Methods Node's parser accepts are a bounded set already; this keeps the label to the usual few. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** The route label of a request that matched no route. */
export const UNMATCHED = 'unmatched'

/** A route's series: its latency histogram and its answers counted by status code. */
interface RouteSeries { timer: HistogramSeries, statuses: Map<number, number> }

/** One labelled series of a histogram: a count per bucket (not cumulative), their sum and count. */
interface HistogramSeries { labels: Record<string, string>, buckets: number[], sum: number, count: number }

/**
 * A histogram kept in plain numbers and handed to the registry in prom-client's own shape when
 * Prometheus scrapes. prom-client's `observe` validates the labels and builds a key from them on
 * every call, and the CPU profile of /api/hash under load showed it as the largest share of
 * hashd's own per-request work; here a request costs a bucket search and three additions. The
 * registry takes any object with prom-client's metric interface (`get`, `getForPromString`, `reset`).
 */
class TalliedHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  #series: HistogramSeries[] = []
  constructor(readonly name: string, readonly help: string, readonly upperBounds: readonly number[]) {}

  series(labels: Record<string, string>): HistogramSeries {
    const series: HistogramSeries = { labels, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 }
    this.#series.push(series)
    return series
  }

  observe(series: HistogramSeries, value: number): void {
    const bounds = this.upperBounds
    let index = 0
    while (index < bounds.length && value > (bounds[index] as number)) index++
    // Past the last bound the value counts only in +Inf (the count), as in prom-client.
    if (index < bounds.length) series.buckets[index] = (series.buckets[index] as number) + 1
    series.sum += value
    series.count += 1
  }

  reset(): void {
    for (const series of this.#series) {
      series.buckets.fill(0)
      series.sum = 0
      series.count = 0
    }
  }

  /** prom-client's shape: `le` as the value's own label, the series' labels as shared ones. */
  getForPromString() {
    type Value = { labels: Record<string, string | number>, sharedLabels: Record<string, string>, value: number, metricName: string }
    const values: Value[] = []
    for (const { labels, buckets, sum, count } of this.#series) {
      let cumulative = 0
      this.upperBounds.forEach((bound, index) => {
        cumulative += buckets[index] as number
        values.push({ labels: { le: bound }, sharedLabels: labels, value: cumulative, metricName: `${this.name}_bucket` })
      })
      values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: `${this.name}_bucket` })
      values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` })
      values.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` })
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator })
  }

  /** The JSON form (registry.getMetricsAsJSON) has each value's labels whole. */
  async get() {
    const data = await this.getForPromString()
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...sharedLabels, ...labels } })) }
  }
}

/**
 * The registry and its metrics. The two counters bumped on every request (requests by status,
 * bytes hashed) are tallied in plain Maps keyed by the label values themselves and handed to
 * prom-client when Prometheus scrapes (`collect`), so a request costs a few Map lookups and
 * additions rather than prom-client's label validation and key building for each.
 */
export function buildRegistry(engine: Pick<Engine, 'stats'>, replays?: Pick<ReplayStore, 'refusals' | 'size'>) {
  const registry = new Registry()
  /** route → method → series. */
  const httpTally = new Map<string, Map<string, RouteSeries>>()
  /** operation → algorithm → bytes. */
  const byteTally = new Map<string, Map<string, number>>()
  collectDefaultMetrics({ register: registry })
  // prom-client also exports these three totals as gauges named `_total`, which promtool rejects
  // (only counters end in _total); the per-type gauges without the suffix carry the same numbers.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name)
  const registers = [registry]
  new Counter({
    name: 'hashd_http_requests_total', help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const, registers,
    collect() {
      this.reset()
      for (const [route, byMethod] of httpTally) {
        for (const [method, series] of byMethod) {
          for (const [status, count] of series.statuses) this.labels(method, route, String(status)).inc(count)
        }
      }
    },
  })
  const duration = new TalliedHistogram('hashd_http_request_duration_seconds', 'Time from request to response, by method and route template', DURATION_BUCKETS)
  registry.registerMetric(duration as unknown as Parameters<Registry['registerMetric']>[0])
  const rateLimited = new Counter({ name: 'hashd_rate_limited_total', help: 'Requests refused with 429 by the rate limit', registers })
  new Gauge({
    name: 'hashd_work_in_flight', help: 'Tasks running on the worker threads', registers,
    collect() { this.set(engine.stats().running) },
  })
  new Gauge({
    name: 'hashd_work_queued', help: 'Tasks waiting for a worker thread', registers,
    collect() { this.set(engine.stats().queued) },
  })
  new Gauge({
    name: 'hashd_work_memory_budget_bytes', help: 'Memory the running tasks may declare together (MAX_WORK_MEMORY_BYTES)', registers,
    collect() { this.set(engine.stats().memoryBudgetBytes) },
  })
  new Gauge({
    name: 'hashd_work_memory_in_use_bytes', help: 'Memory declared by the tasks running now (argon2 m KiB, scrypt 128·N·r, …)', registers,
    collect() { this.set(engine.stats().memoryInUseBytes) },
  })
  new Counter({
    name: 'hashd_work_started_total', help: 'Tasks handed to a worker thread since start', registers,
    collect() { this.reset(); this.inc(engine.stats().started) },
  })
  new Counter({
    name: 'hashd_work_rejected_total', help: 'Tasks refused with 503 because the worker pool and its queue were full', registers,
    collect() { this.reset(); this.inc(engine.stats().rejected) },
  })
  new Counter({
    name: 'hashd_hashed_bytes_total', help: 'Input bytes digested, by operation and canonical algorithm name',
    labelNames: ['operation', 'algorithm'] as const, registers,
    collect() {
      this.reset()
      for (const [operation, byAlgorithm] of byteTally) {
        for (const [algorithm, bytes] of byAlgorithm) this.labels(operation, algorithm).inc(bytes)
      }
    },
  })
  // Files read again while the server runs (file-reload.ts): keys files, certificates, stores.
  new Counter({
    name: 'hashd_file_loads_total', help: 'Loads of a reloadable file (keys, certificates, stores) since start, by source and outcome (ok, failed)',
    labelNames: ['source', 'outcome'] as const, registers,
    collect() {
      this.reset()
      for (const status of reloadStatuses()) {
        this.labels(status.source, 'ok').inc(status.loads)
        this.labels(status.source, 'failed').inc(status.failures)
      }
    },
  })
  new Gauge({
    name: 'hashd_file_reload_failing', help: '1 while the last load of a reloadable file failed and an older version stays in force, by source',
    labelNames: ['source'] as const, registers,
    collect() {
      this.reset()
      for (const status of reloadStatuses()) this.labels(status.source).set(status.lastError ? 1 : 0)
    },
  })
  new Gauge({
    name: 'hashd_file_loaded_timestamp_seconds', help: 'When the version in force of a reloadable file was loaded (Unix time), by source',
    labelNames: ['source'] as const, registers,
    collect() {
      this.reset()
      for (const status of reloadStatuses()) this.labels(status.source).set(Date.parse(status.loadedAt) / 1000)
    },
  })
  /** ring → key → version → operation → uses; label values come from the keys files only (observe.ts). */
  const keyUseTally = new Map<string, Map<string, Map<string, Map<string, number>>>>()
  new Counter({
    name: 'hashd_key_uses_total', help: 'Uses of the key ring\'s keys, by ring (hmac, pepper), key name, version and operation (hmac, verify, webhook-sign, webhook-verify, seal, open, rewrap)',
    labelNames: ['ring', 'key', 'version', 'operation'] as const, registers,
    collect() {
      this.reset()
      for (const [ring, byKey] of keyUseTally) {
        for (const [key, byVersion] of byKey) {
          for (const [version, byOperation] of byVersion) {
            for (const [operation, count] of byOperation) this.labels(ring, key, version, operation).inc(count)
          }
        }
      }
    },
  })
  // The similarity banks in force (SIMILARITY_BANKS_DIR): their size, and which files are refused.
  new Gauge({
    name: 'hashd_similarity_bank_entries', help: 'Entries of each similarity bank in force, by bank and type',
    labelNames: ['bank', 'type'] as const, registers,
    collect() {
      this.reset()
      for (const bank of banksInForce()) if (bank.count !== undefined && bank.type !== undefined) this.labels(bank.name, bank.type).set(bank.count)
    },
  })
  new Gauge({
    name: 'hashd_similarity_bank_refused', help: '1 while the file of a similarity bank is refused (damaged, truncated, another version): the version in force, if any, is older than the file',
    labelNames: ['bank'] as const, registers,
    collect() {
      this.reset()
      for (const bank of banksInForce()) this.labels(bank.name).set(bank.lastError === undefined ? 0 : 1)
    },
  })
  // The breached-password stores in force (src/screening/): their size and date, and the reads made of them.
  new Gauge({
    name: 'hashd_pwned_store_hashes', help: 'Hashes in the breached-password store in force, by kind (sha1, ntlm)',
    labelNames: ['kind'] as const, registers,
    collect() {
      this.reset()
      for (const store of storesInForce()) this.labels(store.kind).set(store.hashes)
    },
  })
  new Gauge({
    name: 'hashd_pwned_store_data_timestamp_seconds', help: 'When the data of the breached-password store in force was downloaded (Unix time), by kind',
    labelNames: ['kind'] as const, registers,
    collect() {
      this.reset()
      for (const store of storesInForce()) this.labels(store.kind).set(Date.parse(store.dataDate) / 1000)
    },
  })
  new Counter({
    name: 'hashd_pwned_store_reads_total', help: 'Reads of a breached-password store (lookups and /range answers), by kind and outcome (ok, failed)',
    labelNames: ['kind', 'outcome'] as const, registers,
    collect() {
      this.reset()
      for (const { kind, ok, failed } of storeReads()) {
        this.labels(kind, 'ok').inc(ok)
        this.labels(kind, 'failed').inc(failed)
      }
    },
  })
  new Counter({
    name: 'hashd_pwned_store_cached_reads_total',
    help: 'Reads of a breached-password store answered from the page cache without waiting for the disk (preadv2 RWF_NOWAIT), by kind; the other ok reads went through the thread pool',
    labelNames: ['kind'] as const, registers,
    collect() {
      this.reset()
      for (const { kind, cached } of storeReads()) this.labels(kind).inc(cached)
    },
  })
  // The webhook replay store (src/webhooks/replay.ts): what a full store refused, and what memory holds.
  new Counter({
    name: 'hashd_webhook_replay_refused_total',
    help: 'Valid webhooks answered 503 replay-store-full because the replay store (limit="store": WEBHOOK_REPLAY_MEMORY_MAX or Redis\'s maxmemory) ' +
      'or the caller\'s share of it (limit="caller": WEBHOOK_REPLAY_CALLER_MAX) was full',
    labelNames: ['limit'] as const, registers,
    collect() {
      this.reset()
      const refused = replays?.refusals()
      this.labels('store').inc(refused?.store ?? 0)
      this.labels('caller').inc(refused?.caller ?? 0)
    },
  })
  const replaySize = replays?.size?.bind(replays)
  if (replaySize !== undefined) {
    new Gauge({
      name: 'hashd_webhook_replay_entries', help: 'Webhooks remembered for replay protection in this process\'s memory (of WEBHOOK_REPLAY_MEMORY_MAX; expired ones not yet dropped included)',
      registers, collect() { this.set(replaySize()) },
    })
  }
  const passwordOperations = new Counter({
    name: 'hashd_password_operations_total', help: 'Password hashes and verifications, by operation, canonical scheme and outcome',
    labelNames: ['operation', 'scheme', 'outcome'] as const, registers,
  })
  return { registry, httpTally, byteTally, keyUseTally, duration, rateLimited, passwordOperations }
}

type Metrics = ReturnType<typeof buildRegistry>

/** The onResponse hook's work (exported for bench/metrics.ts). */
export function httpRecorder(metrics: Metrics) {
  const { httpTally, duration, rateLimited } = metrics
  return (rawMethod: string, routeTemplate: string | undefined, status: number, milliseconds: number) => {
    const method = METHODS.has(rawMethod) ? rawMethod : 'OTHER'
    const route = routeTemplate ?? UNMATCHED
    let byMethod = httpTally.get(route)
    if (byMethod === undefined) httpTally.set(route, byMethod = new Map())
    let series = byMethod.get(method)
    if (series === undefined) byMethod.set(method, series = { timer: duration.series({ method, route }), statuses: new Map() })
    series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1)
    duration.observe(series.timer, milliseconds / 1000)
    if (status === 429) rateLimited.inc()
  }
}

/** observe.ts's functions, implemented (exported for bench/metrics.ts). */
export function observerFor(metrics: Metrics): Observer {
  const { byteTally, keyUseTally, passwordOperations } = metrics
  return {
    hashedBytes(operation, algorithm, count) {
      let byAlgorithm = byteTally.get(operation)
      if (byAlgorithm === undefined) byteTally.set(operation, byAlgorithm = new Map())
      byAlgorithm.set(algorithm, (byAlgorithm.get(algorithm) ?? 0) + count)
    },
    // Password work takes milliseconds to seconds; prom-client's own bookkeeping is nothing beside it.
    passwordOperation(operation, scheme, outcome) {
      passwordOperations.labels(operation, scheme, outcome).inc()
    },
    // Four Map lookups and an addition, no string built (a batch of HMACs counts once, with its count).
    keyUse(ring, key, version, operation, uses) {
      let byKey = keyUseTally.get(ring)
      if (byKey === undefined) keyUseTally.set(ring, byKey = new Map())
      let byVersion = byKey.get(key)
      if (byVersion === undefined) byKey.set(key, byVersion = new Map())
      let byOperation = byVersion.get(version)
      if (byOperation === undefined) byVersion.set(version, byOperation = new Map())
      byOperation.set(operation, (byOperation.get(operation) ?? 0) + uses)
    },
  }
}

/** The separate metrics listener (METRICS_PORT): GET /metrics and nothing else. */
function metricsServer(registry: Registry, keys: ApiKeys | undefined): Server {
  const answer = (response: ServerResponse, status: number, headers: Record<string, string>, body: string) => {
    response.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body), 'x-content-type-options': 'nosniff' }).end(body)
  }
  return createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?', 1)[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      answer(response, 404, { 'content-type': 'application/problem+json' },
        JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'This port serves GET /metrics only' }))
      return
    }
    const key = keys?.authenticate(request.headers.authorization)
    if (key !== undefined) {
      const problem = typeof key === 'string' ? unauthorized(key) : key.scopes.has('metrics') ? null : insufficientScope(key, 'metrics', 'call GET /metrics')
      if (problem) {
        answer(response, problem.status, { 'content-type': 'application/problem+json', ...problem.headers }, JSON.stringify(problem.toBody()))
        return
      }
    }
    registry.metrics().then(
      (text) => answer(response, 200, { 'content-type': registry.contentType }, request.method === 'HEAD' ? '' : text),
      () => answer(response, 500, { 'content-type': 'text/plain' }, 'metrics collection failed\n'))
  })
}

/**
 * Where the rate limit counts (plugins/rate-limit.ts, registered before this plugin): 1 for the
 * state in force, and the requests decided on this instance's own count while Redis did not answer.
 */
function rateLimitMetrics(app: FastifyInstance, registry: Registry): void {
  const states = ['memory', 'redis', 'degraded', 'off'] as const
  new Gauge({
    name: 'hashd_rate_limit_store', labelNames: ['state'] as const, registers: [registry],
    help: 'Where rate-limit counts live, 1 for the state in force: memory (this process), redis (shared), degraded (REDIS_URL set but Redis ' +
      'not answering: each instance counts alone with the same budgets), off (RATE_LIMIT_MAX=0)',
    collect() {
      const now = app.hasDecorator('rateLimitStoreState') ? app.rateLimitStoreState() : 'off'
      for (const state of states) this.labels(state).set(state === now ? 1 : 0)
    },
  })
  new Counter({
    name: 'hashd_rate_limit_local_decisions_total', registers: [registry],
    help: 'Requests and batches the rate limit decided on this instance\'s own count because Redis did not answer within REDIS_COMMAND_TIMEOUT_MS',
    collect() {
      this.reset()
      this.inc(app.hasDecorator('rateLimitLocalDecisions') ? app.rateLimitLocalDecisions() : 0)
    },
  })
}

async function metricsPlugin(app: FastifyInstance, options: { config: Config, engine: Engine }): Promise<void> {
  const { config, engine } = options
  if (!config.metrics) return
  const metrics = buildRegistry(engine, app.replayStore)
  const { registry } = metrics
  rateLimitMetrics(app, registry)

  const uninstall = installObserver(observerFor(metrics))
  app.addHook('onClose', async () => { uninstall() })

  const record = httpRecorder(metrics)
  app.addHook('onResponse', (request, reply, done) => {
    record(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime)
    done()
  })

  if (config.metricsPort === null) {
    app.get('/metrics', {
      schema: {
        tags: ['meta'],
        summary: 'Prometheus metrics (text exposition format); absent with METRICS=off or METRICS_PORT',
        response: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    }, async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()))
    return
  }

  const server = metricsServer(registry, app.apiKeys)
  // onReady, not onListen: a metrics port that cannot be bound fails the start-up.
  app.addHook('onReady', async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.metricsPort ?? 0, config.metricsHost, () => { server.off('error', reject); resolve() })
    })
    const { address, port } = server.address() as AddressInfo
    app.log.info({ metricsAddress: address, metricsPort: port }, 'metrics listening')
  })
  app.addHook('onClose', async () => {
    if (!server.listening) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

export default fp(metricsPlugin, { name: 'metrics' })
