/**
 * GET /api/health answers anyone what a load balancer needs (status, degraded, the two store
 * states) and its details (worker pool, files, screening) only to an API key with the health or
 * metrics scope: no key, a key that is not valid, a key with other scopes and a server without
 * API_KEYS_FILE all get the summary, which names no file and quotes no reason.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { hashKey } from '../src/keys/api-keys.js'
import { startServer, type TestServer } from './helpers/server.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-health-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const SUMMARY = ['degraded', 'rateLimitStore', 'replayStore', 'status']
const DETAILED = [...SUMMARY, 'files', 'screening', 'work'].sort()
const newKey = () => `hk_${randomBytes(32).toString('base64url')}`

describe('GET /api/health with API keys', () => {
  const keys = { health: newKey(), metrics: newKey(), hash: newKey(), every: newKey() }
  const keysFile = join(dir, 'api-keys')
  const lines = [
    `prober ${hashKey(keys.health)} scopes=health`,
    `prometheus ${hashKey(keys.metrics)} scopes=metrics`,
    `app ${hashKey(keys.hash)} scopes=hash,verify,passwords:check`,
    `admin ${hashKey(keys.every)}`,
  ].join('\n')
  const blocklist = join(dir, 'blocklist.txt')
  let server: TestServer
  before(async () => {
    writeFileSync(keysFile, `${lines}\n`)
    writeFileSync(blocklist, 'acmecorp\nroadrunner\nwidgetmaster\n')
    server = await startServer({
      API_KEYS_FILE: keysFile, PASSWORD_BLOCKLIST_FILE: blocklist, PASSWORD_SCREENING: 'warn', PASSWORD_MIN_LENGTH: '8', PASSWORD_MAX_LENGTH: '64',
    })
  })
  after(() => server.close())
  const health = async (key?: string) => {
    const response = await server.fetch('/api/health', key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } })
    assert.equal(response.status, 200)
    const text = await response.text()
    return { text, body: JSON.parse(text) as Record<string, unknown> & { work?: { started: number }, files?: Array<{ source: string, lastError?: { reason: string } }>, screening?: Record<string, unknown> } }
  }

  it('without a key, or with one that is not valid: the summary only', async () => {
    for (const key of [undefined, newKey(), 'not a key at all']) {
      const { body } = await health(key)
      assert.deepEqual(body, { status: 'ok', degraded: false, rateLimitStore: 'off', replayStore: 'memory' })
    }
    const head = await server.fetch('/api/health', { method: 'HEAD' })
    assert.equal(head.status, 200)
  })

  it('a key with health or metrics, or without scopes=: the details; a key with other scopes: the summary', async () => {
    for (const key of [keys.health, keys.metrics, keys.every]) {
      const { body } = await health(key)
      assert.deepEqual(Object.keys(body).sort(), DETAILED)
      assert.deepEqual(Object.keys(body.work ?? {}).sort(), ['memoryBudgetBytes', 'memoryInUseBytes', 'queued', 'running', 'started', 'threads'])
      assert.deepEqual(body.files?.map((file) => file.source).sort(), ['api-keys', 'password-blocklist'])
      // The configuration given above, and the built-in list's entries within the length policy.
      assert.deepEqual({ ...body.screening }, { mode: 'warn', fail: 'open', commonPasswords: 49233, blocklist: 3, stores: [] })
    }
    assert.deepEqual(Object.keys((await health(keys.hash)).body).sort(), SUMMARY)
  })

  it('a failed reload of a watched file: degraded for anyone, the file and its reason only with the details', async () => {
    writeFileSync(keysFile, `${lines}\nbroken\n`)
    const deadline = Date.now() + 15_000
    while ((await health()).body.degraded !== true) {
      assert.ok(Date.now() < deadline, 'the reload never failed')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const { body, text } = await health()
    assert.deepEqual(body, { status: 'ok', degraded: true, rateLimitStore: 'off', replayStore: 'memory' })
    for (const leak of [dir, 'API_KEYS_FILE', 'line 5', 'api-keys']) assert.ok(!text.includes(leak), `the summary says ${leak}`)
    // The keys in force stay: the prober still sees why.
    const detailed = (await health(keys.health)).body
    assert.equal(detailed.degraded, true)
    assert.match(detailed.files?.find((file) => file.source === 'api-keys')?.lastError?.reason ?? '', /API_KEYS_FILE .* line 5: /)
    writeFileSync(keysFile, `${lines}\n`)
    while ((await health()).body.degraded !== false) {
      assert.ok(Date.now() < deadline, 'the fixed file was never loaded')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })
})

describe('GET /api/health without API_KEYS_FILE', () => {
  it('serves the summary to everyone, whatever Authorization says: nobody has a key, so the details stay in the log and the metrics', async () => {
    const server = await startServer()
    try {
      for (const headers of [{}, { authorization: `Bearer ${newKey()}` }] as Array<Record<string, string>>) {
        const response = await server.fetch('/api/health', { headers })
        assert.deepEqual(await response.json(), { status: 'ok', degraded: false, rateLimitStore: 'off', replayStore: 'memory' })
      }
      assert.match(await (await server.fetch('/metrics')).text(), /^hashd_work_started_total \d+$/m)
    } finally {
      await server.close()
    }
  })
})
