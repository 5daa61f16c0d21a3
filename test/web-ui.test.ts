/**
 * WEB_UI=off: an instance that serves only machines has no page for people, neither the web page
 * at / (and its files) nor the API browser at /docs; the API and its document stay.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'

describe('WEB_UI=off', () => {
  let off: TestServer
  let on: TestServer
  before(async () => {
    off = await startServer({ WEB_UI: 'off' })
    on = await startServer()
  })
  after(async () => {
    await off?.close()
    await on?.close()
  })

  it('serves no page: / and /docs are 404 problems, while the API and its document answer', async () => {
    for (const path of ['/', '/docs', '/docs/', '/favicon.svg']) {
      const response = await off.get(path)
      assert.equal(response.status, 404, path)
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8', path)
    }
    const document = await off.get('/api/openapi.json')
    assert.equal(document.status, 200)
    assert.equal(Object.keys(document.body.paths).some((path: string) => path.startsWith('/docs')), false, 'the document lists no /docs')
    const hashed = await off.post('/api/hash', { input: 'abc', algorithm: 'sha256' })
    // FIPS 180-2 appendix B.1.
    assert.equal(hashed.body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.match(off.logs(), /"webUi":false/)
  })

  it('serves both by default', async () => {
    assert.equal((await on.get('/docs/')).status, 200)
    const page = await on.get('/')
    assert.ok(page.status === 200 || page.status === 503, `GET / is the page, or says it is not built (${page.status})`)
    assert.match(page.headers.get('content-type') ?? '', /^text\/(html|plain)/)
  })
})
