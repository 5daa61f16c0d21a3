/**
 * Prometheus metrics (plugins/metrics.ts): counts after known traffic, the scrape checked by
 * promtool, METRICS=off, METRICS_PORT, and user input that never becomes a label.
 */
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parseMetrics, valueOf, type Sample } from './helpers/metrics.js'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'
import { promtoolCheckMetrics } from './helpers/promtool.js'
import { skipUnless } from './helpers/tools.js'

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ text: string, samples: Sample[], contentType: string }> {
  const response = await fetch(`${url}/metrics`, { headers })
  assert.equal(response.status, 200)
  const text = await response.text()
  return { text, samples: parseMetrics(text), contentType: response.headers.get('content-type') ?? '' }
}

/** The METRICS_PORT listener's URL, from its log line. */
function metricsUrl(server: TestServer): string {
  const line = server.logs().split('\n').find((entry) => entry.includes('"metrics listening"'))
  assert.ok(line, server.logs())
  return `http://127.0.0.1:${(JSON.parse(line) as { metricsPort: number }).metricsPort}`
}

const json = (server: TestServer, path: string, body: unknown) => server.post(path, body)

// Published vectors, so the traffic is known to succeed: FIPS 180-4 SHA-256("abc"), RFC 4231 §4.3
// (HMAC-SHA-256, key "Jefe"), and OpenBSD's bcrypt test vector for "U*U" at cost 5.
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const RFC4231_MESSAGE = 'what do ya want for nothing?'
const RFC4231_SHA256 = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
const BCRYPT_UU = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'

describe('metrics: counts after known traffic', () => {
  let server: TestServer
  const marker = randomUUID()
  after(() => server.close())

  it('counts requests by route template, bytes by algorithm, password operations by outcome', async () => {
    server = await startServer({ WORKER_THREADS: '1' })
    for (let i = 0; i < 3; i++) assert.equal((await json(server, '/api/hash', { input: 'abc' })).body.hash, SHA256_ABC)
    for (let i = 0; i < 2; i++) assert.equal((await json(server, '/api/hash', { input: 'abcd', algorithm: 'MD5' })).status, 200)
    assert.equal((await json(server, '/api/hash', { input: 'x', algorithm: 'bcrypt', options: { cost: 4 } })).status, 200)
    assert.equal((await json(server, '/api/verify', { input: 'U*U', hash: BCRYPT_UU })).body.match, true)
    assert.equal((await json(server, '/api/verify', { input: 'U*V', hash: BCRYPT_UU })).body.match, false)
    assert.equal((await json(server, '/api/verify', { input: 'abc', hash: SHA256_ABC, algorithm: 'sha-256' })).body.match, true)
    assert.equal((await json(server, '/api/hmac', { message: RFC4231_MESSAGE, key: 'Jefe' })).body.hmac, RFC4231_SHA256)
    const form = new FormData()
    form.append('algorithms', 'sha256,md5')
    form.append('file', new Blob(['abc']), `${marker}.txt`)
    const upload = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'POST', body: form }))
    assert.equal(upload.body.hashes.sha256, SHA256_ABC)
    // User input in every place it could leak into a label: paths, algorithm names, methods.
    assert.equal((await json(server, '/api/hash', { input: 'a', algorithm: marker })).status, 400)
    assert.equal((await server.get(`/api/${marker}`)).status, 404)
    assert.equal((await server.get(`/${marker}/x?${marker}=1`)).status, 404)
    assert.equal((await fetch(`${server.url}/${marker}`, { method: 'PROPFIND' })).status, 404)

    const { text, samples, contentType } = await scrape(server.url)
    assert.match(contentType, /^text\/plain; version=0\.0\.4/)
    const requests = (method: string, route: string, status: string) => valueOf(samples, 'hashd_http_requests_total', { method, route, status })
    assert.equal(requests('POST', '/api/hash', '200'), 6)
    assert.equal(requests('POST', '/api/hash', '400'), 1)
    assert.equal(requests('POST', '/api/verify', '200'), 3)
    assert.equal(requests('POST', '/api/hmac', '200'), 1)
    assert.equal(requests('POST', '/api/filehash', '200'), 1)
    assert.equal(requests('GET', 'unmatched', '404'), 2)
    assert.equal(requests('OTHER', 'unmatched', '404'), 1)
    assert.equal(requests('GET', '/metrics', '200'), 0, 'a scrape counts itself only after it is answered')
    assert.equal(valueOf(samples, 'hashd_http_request_duration_seconds_count', { method: 'POST', route: '/api/hash' }), 7)
    assert.equal(valueOf(samples, 'hashd_http_request_duration_seconds_bucket', { method: 'POST', route: '/api/hash', le: '+Inf' }), 7)
    const buckets = samples.filter((sample) => sample.name === 'hashd_http_request_duration_seconds_bucket' && sample.labels.route === '/api/hash')
    assert.deepEqual(buckets.map((sample) => sample.labels.le), ['0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'])

    const bytes = (operation: string, algorithm: string) => valueOf(samples, 'hashd_hashed_bytes_total', { operation, algorithm })
    assert.equal(bytes('hash', 'sha256'), 9)
    assert.equal(bytes('hash', 'md5'), 8)
    assert.equal(bytes('verify', 'sha256'), 3)
    assert.equal(bytes('hmac', 'sha256'), RFC4231_MESSAGE.length)
    assert.equal(bytes('filehash', 'sha256'), 3)
    assert.equal(bytes('filehash', 'md5'), 3)
    const passwords = (operation: string, scheme: string, outcome: string) => valueOf(samples, 'hashd_password_operations_total', { operation, scheme, outcome })
    assert.equal(passwords('hash', 'bcrypt', 'ok'), 1)
    assert.equal(passwords('verify', 'bcrypt', 'match'), 1)
    assert.equal(passwords('verify', 'bcrypt', 'mismatch'), 1)
    assert.equal(valueOf(samples, 'hashd_rate_limited_total'), 0)
    assert.equal(valueOf(samples, 'hashd_work_in_flight'), 0)
    assert.equal(valueOf(samples, 'hashd_work_queued'), 0)
    assert.equal(valueOf(samples, 'hashd_work_rejected_total'), 0)
    for (const name of ['process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'process_cpu_seconds_total']) {
      assert.ok(samples.some((sample) => sample.name === name), name)
    }

    assert.ok(!text.includes(marker), 'user input became a label')
    const routes = new Set(samples.filter((sample) => sample.name === 'hashd_http_requests_total').map((sample) => sample.labels.route))
    assert.deepEqual([...routes].sort(), ['/api/filehash', '/api/hash', '/api/hmac', '/api/verify', 'unmatched'])

    // The next scrape sees the first one.
    assert.equal(valueOf((await scrape(server.url)).samples, 'hashd_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }), 1)
  })

  it('passes promtool check metrics', { skip: skipUnless('promtool') }, async () => {
    const { text } = await scrape(server.url)
    const verdict = promtoolCheckMetrics(text)
    assert.ok(verdict.ok, verdict.output)
    assert.equal(verdict.output, '')
  })
})

describe('metrics: rate limits and the worker pool', () => {
  it('counts 429s', async () => {
    // Scraped on METRICS_PORT, which the main port's rate limit does not cover.
    const server = await startServer({ RATE_LIMIT_MAX: '2', METRICS_PORT: '0' })
    try {
      const statuses = []
      for (let i = 0; i < 4; i++) statuses.push((await json(server, '/api/hash', { input: 'abc' })).status)
      assert.deepEqual(statuses, [200, 200, 429, 429])
      const { samples } = await scrape(metricsUrl(server))
      assert.equal(valueOf(samples, 'hashd_rate_limited_total'), 2)
      assert.equal(valueOf(samples, 'hashd_http_requests_total', { method: 'POST', route: '/api/hash', status: '429' }), 2)
      assert.equal(valueOf(samples, 'hashd_hashed_bytes_total', { operation: 'hash', algorithm: 'sha256' }), 6)
    } finally {
      await server.close()
    }
  })

  it('reads in-flight work and 503s from the pool', async () => {
    const server = await startServer({ WORKER_THREADS: '1', WORK_QUEUE_MAX: '0' })
    try {
      // bcrypt at the default cap (cost 14) keeps the only thread busy long enough to see it.
      const slow = json(server, '/api/hash', { input: 'slow', algorithm: 'bcrypt', options: { cost: 14 } })
      let inFlight = 0
      for (let tries = 0; tries < 2000 && inFlight === 0; tries++) {
        inFlight = valueOf((await scrape(server.url)).samples, 'hashd_work_in_flight')
        if (inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      }
      assert.equal(inFlight, 1)
      const refused = await json(server, '/api/hash', { input: 'x', algorithm: 'bcrypt', options: { cost: 4 } })
      assert.equal(refused.status, 503)
      assert.equal((await slow).status, 200)
      const { samples } = await scrape(server.url)
      assert.equal(valueOf(samples, 'hashd_work_rejected_total'), 1)
      assert.equal(valueOf(samples, 'hashd_work_in_flight'), 0)
      assert.equal(valueOf(samples, 'hashd_http_requests_total', { method: 'POST', route: '/api/hash', status: '503' }), 1)
      assert.equal(valueOf(samples, 'hashd_password_operations_total', { operation: 'hash', scheme: 'bcrypt', outcome: 'error' }), 1)
    } finally {
      await server.close()
    }
  })
})

describe('metrics: METRICS and METRICS_PORT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-metrics-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('METRICS=off removes /metrics and nothing else', async () => {
    const server = await startServer({ METRICS: 'off' })
    try {
      assert.equal((await server.get('/metrics')).status, 404)
      assert.equal((await json(server, '/api/hash', { input: 'abc' })).body.hash, SHA256_ABC)
      const spec = (await server.get('/api/openapi.json')).body
      assert.equal(spec.paths['/metrics'], undefined)
    } finally {
      await server.close()
    }
  })

  it('METRICS_PORT serves /metrics on its own loopback listener, and only there', async () => {
    const server = await startServer({ METRICS_PORT: '0' })
    try {
      const line = server.logs().split('\n').find((entry) => entry.includes('"metrics listening"'))
      assert.ok(line, server.logs())
      const { metricsAddress, metricsPort } = JSON.parse(line) as { metricsAddress: string, metricsPort: number }
      assert.equal(metricsAddress, '127.0.0.1')
      assert.notEqual(metricsPort, Number(new URL(server.url).port))
      assert.equal((await server.get('/metrics')).status, 404)
      await json(server, '/api/hash', { input: 'abc' })
      const metricsUrl = `http://127.0.0.1:${metricsPort}`
      const { samples } = await scrape(metricsUrl)
      assert.equal(valueOf(samples, 'hashd_http_requests_total', { method: 'POST', route: '/api/hash', status: '200' }), 1)
      assert.equal(valueOf(samples, 'hashd_hashed_bytes_total', { operation: 'hash', algorithm: 'sha256' }), 3)
      assert.equal((await fetch(`${metricsUrl}/api/hash`)).status, 404)
      assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404)
    } finally {
      await server.close()
    }
  })

  it('needs an API key with the metrics scope when keys are on, on the main port and on METRICS_PORT', async () => {
    const key = `hk_${randomUUID()}`
    const scoped = `hk_${randomUUID()}`
    const without = `hk_${randomUUID()}`
    const file = join(dir, 'keys')
    const line = (name: string, secret: string, options = '') => `${name} ${createHash('sha256').update(secret).digest('hex')}${options}\n`
    writeFileSync(file, line('prometheus', key) + line('scraper', scoped, ' scopes=metrics') + line('app', without, ' scopes=-metrics'))
    const envs: Array<Record<string, string>> = [{}, { METRICS_PORT: '0' }]
    for (const env of envs) {
      const server = await startServer({ API_KEYS_FILE: file, ...env })
      try {
        const url = env.METRICS_PORT ? metricsUrl(server) : server.url
        const refused = await fetch(`${url}/metrics`)
        assert.equal(refused.status, 401)
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="hashd"')
        const wrong = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer hk_${randomUUID()}` } })
        assert.equal(wrong.headers.get('www-authenticate'), 'Bearer realm="hashd", error="invalid_token"')
        const { text } = await scrape(url, { authorization: `Bearer ${key}` })
        assert.match(text, /^# TYPE hashd_http_requests_total counter$/m)
        assert.match((await scrape(url, { authorization: `Bearer ${scoped}` })).text, /^# TYPE hashd_http_requests_total counter$/m)
        // Every scope but metrics: refused, naming the scope (RFC 6750 §3.1).
        const outside = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${without}` } })
        assert.equal(outside.status, 403, env.METRICS_PORT ? 'on METRICS_PORT' : 'on the main port')
        assert.equal(outside.headers.get('www-authenticate'), 'Bearer realm="hashd", error="insufficient_scope", scope="metrics"')
        assert.match(outside.headers.get('content-type') ?? '', /^application\/problem\+json/)
        const problem = await outside.json() as { type: string, scope: string }
        assert.deepEqual([problem.type, problem.scope], ['urn:hashd:problem:insufficient-scope', 'metrics'])
        assert.doesNotMatch(JSON.stringify(problem), /hashd_/, 'no metrics in the refusal')
      } finally {
        await server.close()
      }
    }
  })
})
