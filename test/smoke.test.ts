import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

describe('smoke: the real server answers each operation', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('hashes "abc" with sha256 as openssl does', { skip: skipUnless('openssl') }, async () => {
    const response = await server.post('/api/hash', { input: 'abc' })
    assert.equal(response.status, 200)
    const expected = run('openssl', ['dgst', '-sha256', '-r'], 'abc').split(' ')[0]
    assert.equal(response.body.hash, expected)
    assert.equal(response.body.algorithm, 'sha256')
    assert.equal(response.body.length, 64)
  })

  it('reports health', async () => {
    const response = await server.get('/api/health')
    assert.equal(response.status, 200)
    assert.equal(response.body.status, 'ok')
    // These suites run with RATE_LIMIT_MAX=0 (see helpers/server.ts).
    assert.equal(response.body.rateLimitStore, 'off')
    // Without API_KEYS_FILE no request has a key, so the details (pool, files, screening) are never served.
    assert.deepEqual(response.body, { status: 'ok', degraded: false, rateLimitStore: 'off', replayStore: 'memory' })
  })
})
