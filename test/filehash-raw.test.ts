/**
 * /api/filehash with the raw body as the file: POST with application/octet-stream and PUT (what
 * `curl -T` sends, without a Content-Type), against sha256sum and OpenSSL reading the same bytes;
 * the query's algorithms, encoding and name; MAX_FILE_SIZE declared and streamed; and the same
 * problem+json errors as the multipart form.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { sendInPieces } from './helpers/send.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

const LIMIT = 1024 * 1024

/** A request with full control of headers (fetch always adds a Content-Type to some bodies). */
async function send(url: string, method: string, headers: Record<string, string>, chunks: Buffer[]): Promise<{ status: number, type: string, body: string }> {
  const { status, type, text } = await sendInPieces(url, method, headers, chunks)
  return { status, type, body: text }
}

const firstToken = (text: string): string => text.split(/\s+/)[0] as string

describe('/api/filehash, raw body', () => {
  let server: TestServer
  before(async () => { server = await startServer({ MAX_FILE_SIZE: String(LIMIT) }) })
  after(async () => { await server.close() })
  const octet = { 'content-type': 'application/octet-stream' }
  const post = async (body: Buffer, query: string): Promise<TestResponse> =>
    toTestResponse(await fetch(`${server.url}/api/filehash?${query}`, { method: 'POST', headers: octet, body }))

  it('POST application/octet-stream: sha256 and md5 match sha256sum and OpenSSL', { skip: skipUnless('sha256sum', 'openssl') }, async () => {
    for (const size of [0, 1, 65_537, LIMIT]) {
      const data = randomBytes(size)
      const response = await post(data, 'algorithms=sha256,md5&name=report.pdf')
      assert.equal(response.status, 200)
      assert.equal(response.body.name, 'report.pdf')
      assert.equal(response.body.size, size)
      assert.equal(response.body.hashes.sha256, firstToken(run('sha256sum', ['-'], data)))
      assert.equal(response.body.hashes.md5, firstToken(run('openssl', ['dgst', '-md5', '-r'], data)))
    }
  })

  it('PUT without a Content-Type (curl -T) hashes the body; the name defaults to empty', { skip: skipUnless('sha256sum') }, async () => {
    const data = randomBytes(300_000)
    const response = await send(`${server.url}/api/filehash?encoding=hex`, 'PUT', { 'content-length': String(data.length) }, [data])
    assert.equal(response.status, 200)
    const body = JSON.parse(response.body) as { name: string, size: number, hashes: Record<string, string> }
    assert.deepEqual(body, { name: '', size: data.length, hashes: { sha256: firstToken(run('sha256sum', ['-'], data)) } })
  })

  it('base64url encoding from the query', { skip: skipUnless('openssl') }, async () => {
    const data = randomBytes(1000)
    const response = await post(data, 'algorithms=sha1&encoding=base64url')
    const expected = Buffer.from(firstToken(run('openssl', ['dgst', '-sha1', '-r'], data)), 'hex').toString('base64url')
    assert.equal(response.body.hashes.sha1, expected)
  })

  it('413 for a declared length over MAX_FILE_SIZE, before the body is read', async () => {
    const response = await send(`${server.url}/api/filehash`, 'POST', { ...octet, 'content-length': String(LIMIT + 1) }, [])
    assert.equal(response.status, 413)
    assert.match(response.type, /^application\/problem\+json/)
  })

  it('413 for a chunked body that streams past MAX_FILE_SIZE', async () => {
    const chunks = Array.from({ length: 20 }, () => randomBytes(64 * 1024))
    const response = await send(`${server.url}/api/filehash`, 'PUT', { 'transfer-encoding': 'chunked' }, chunks)
    assert.equal(response.status, 413, response.body)
    assert.match(response.type, /^application\/problem\+json/)
  })

  it('exactly MAX_FILE_SIZE, chunked, is accepted', async () => {
    const data = randomBytes(LIMIT)
    const response = await send(`${server.url}/api/filehash?algorithms=crc32`, 'PUT', { 'transfer-encoding': 'chunked' }, [data.subarray(0, 1000), data.subarray(1000)])
    assert.equal(response.status, 200)
    assert.equal((JSON.parse(response.body) as { size: number }).size, LIMIT)
  })

  it('the same errors as the form: unknown algorithm, password hash, unknown query field, wrong media type', async () => {
    const data = randomBytes(10)
    const unknown = await post(data, 'algorithms=sha256,nope')
    assert.equal(unknown.status, 400)
    assert.equal(unknown.body.type, 'urn:hashd:problem:unknown-algorithm')
    const password = await post(data, 'algorithms=bcrypt')
    assert.equal(password.status, 400)
    assert.equal(password.body.type, 'urn:hashd:problem:algorithm-not-allowed')
    const extra = await post(data, 'algorithms=sha256&colour=blue')
    assert.equal(extra.status, 400)
    assert.match(extra.headers.get('content-type') ?? '', /^application\/problem\+json/)
    const text = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }))
    assert.equal(text.status, 415)
    const json = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' }))
    assert.equal(json.status, 415)
  })

  it('the OpenAPI document describes both forms', async () => {
    const document = (await server.get('/api/openapi.json')).body as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> }
    const path = document.paths['/api/filehash'] ?? {}
    assert.deepEqual(Object.keys(path.post?.requestBody?.content ?? {}).sort(), ['application/octet-stream', 'multipart/form-data'])
    assert.deepEqual(Object.keys(path.put?.requestBody?.content ?? {}), ['application/octet-stream'])
  })
})

describe('/api/filehash, a multipart body that ends early', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('is a 400 problem, not a 500', async () => {
    for (const body of [
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\nhello world',
      '--XX\r\nContent-Disposition: form-data; name="algorithms"\r\n\r\nsha256\r\n--XX\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nhel',
    ]) {
      const response = await send(`${server.url}/api/filehash`, 'POST', { 'content-type': 'multipart/form-data; boundary=XX', 'content-length': String(Buffer.byteLength(body)) }, [Buffer.from(body)])
      assert.equal(response.status, 400, response.body)
      assert.match(response.type, /^application\/problem\+json/)
    }
  })
})
