/**
 * How the web page is served (src/plugins/web.ts), over HTTP without a browser: the CSP, caching
 * by content hash, precompressed assets, that the page's routes leave the API's 404 and 405 alone,
 * and what `/` says when the page was never built.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Fastify from 'fastify'
import webPlugin from '../src/plugins/web.js'
import { startServer, type TestServer } from './helpers/server.js'

describe('the web page over HTTP', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('serves / as HTML under a strict CSP, not cached', async () => {
    const response = await fetch(`${server.url}/`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(response.headers.get('cache-control'), 'no-cache')
    const csp = response.headers.get('content-security-policy') ?? ''
    assert.match(csp, /(?:^|; )default-src 'self'(?:;|$)/)
    assert.match(csp, /frame-ancestors 'none'/)
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/)
    const html = await response.text()
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
    assert.doesNotMatch(html, /<style|\sstyle=/, 'no inline style')
    assert.doesNotMatch(html, /(?:src|href)="(?:https?:)?\/\//, 'nothing from another origin')
  })

  it('serves content-hashed assets as immutable for a year, precompressed where accepted', async () => {
    const html = await (await fetch(`${server.url}/`)).text()
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1] as string)
    assert.ok(assets.some((asset) => /-[\w-]{8,}\.js$/.test(asset)) && assets.some((asset) => /-[\w-]{8,}\.css$/.test(asset)), String(assets))
    for (const asset of assets) {
      const plain = await fetch(server.url + asset, { headers: { 'accept-encoding': 'identity' } })
      assert.equal(plain.status, 200)
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      assert.equal(plain.headers.get('content-encoding'), null)
      const body = Buffer.from(await plain.arrayBuffer())
      const compressed = await fetch(server.url + asset, { headers: { 'accept-encoding': 'gzip' } })
      assert.equal(compressed.headers.get('content-encoding'), 'gzip')
      // fetch decompresses: the bytes must be the same file.
      assert.deepEqual(Buffer.from(await compressed.arrayBuffer()), body)
    }
  })

  it('leaves unknown paths to the 404 problem and API paths to their 405', async () => {
    const missing = await server.get('/assets/nope.js')
    assert.equal(missing.status, 404)
    assert.equal(missing.headers.get('content-type'), 'application/problem+json; charset=utf-8')
    const compressedCopy = await server.get('/index.html.gz')
    assert.equal(compressedCopy.status, 404, 'the .gz copies are not routes of their own')
    const wrongMethod = await server.get('/api/hash')
    assert.equal(wrongMethod.status, 405)
    const docs = await fetch(`${server.url}/docs/`)
    assert.doesNotMatch(docs.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, 'Swagger UI keeps its own policy')
  })
})

describe('the web page plugin without a build', () => {
  it('says plainly that the page is not built, and how to build it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'hashd-noweb-'))
    const app = Fastify({ logger: false })
    await app.register(webPlugin, { root: empty })
    await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const address = app.server.address()
      assert.ok(address !== null && typeof address === 'object')
      const response = await fetch(`http://127.0.0.1:${address.port}/`)
      assert.equal(response.status, 503)
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/)
      assert.match(await response.text(), /has not been built[\s\S]*npm run build/)
    } finally {
      await app.close()
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
