/**
 * /api/filehash with `expected`: the checksum a user pastes after a download, in every accepted
 * form (hex any case, base64, base64url, a SHA256SUMS line, a BSD tag line), as a form field and
 * as a query parameter, against published vectors (FIPS 180-2 appendix B "abc", RFC 1321 "abc")
 * and against coreutils' own sha256sum line for a random file.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, openAsBlob, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1: SHA-256("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
/** RFC 1321 appendix A.5: MD5("abc"). */
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'

async function upload(server: TestServer, fields: Record<string, string>, file: Blob, query = ''): Promise<TestResponse> {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) form.append(name, value)
  form.append('file', file, 'abc.txt')
  return toTestResponse(await fetch(`${server.url}/api/filehash${query}`, { method: 'POST', body: form }))
}

const abc = () => new Blob(['abc'])

describe('/api/filehash expected', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('has no matches without expected', async () => {
    const response = await upload(server, { algorithms: 'sha256' }, abc())
    assert.equal(response.status, 200)
    assert.equal(response.body.hashes.sha256, SHA256_ABC)
    assert.equal('matches' in response.body, false)
  })

  const readings: Array<[string, string]> = [
    ['lowercase hex', SHA256_ABC],
    ['uppercase hex', SHA256_ABC.toUpperCase()],
    ['hex with surrounding whitespace', `  ${SHA256_ABC}\n`],
    ['padded base64', Buffer.from(SHA256_ABC, 'hex').toString('base64')],
    ['base64url', Buffer.from(SHA256_ABC, 'hex').toString('base64url')],
    ['a SHA256SUMS line (text mode)', `${SHA256_ABC}  debian-13.iso`],
    ['a SHA256SUMS line (binary mode)', `${SHA256_ABC} *debian-13.iso`],
    ['a BSD tag line', `SHA256 (debian-13.iso) = ${SHA256_ABC}`],
  ]
  for (const [what, expected] of readings) {
    it(`matches ${what}, and says which digest matched`, async () => {
      const response = await upload(server, { algorithms: 'md5,sha256', expected }, abc())
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(response.body.hashes, { md5: MD5_ABC, sha256: SHA256_ABC })
      assert.deepEqual(response.body.matches, { md5: false, sha256: true })
    })
  }

  it('compares in the requested output encoding too', async () => {
    const response = await upload(server, { algorithms: 'md5,sha256', encoding: 'base64', expected: MD5_ABC.toUpperCase() }, abc())
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(response.body.matches, { md5: true, sha256: false })
  })

  it('reports false for every digest when nothing matches', async () => {
    const wrong = SHA256_ABC.slice(0, -1) + '0'
    const response = await upload(server, { algorithms: 'md5,sha256', expected: wrong }, abc())
    assert.equal(response.status, 200)
    assert.deepEqual(response.body.matches, { md5: false, sha256: false })
  })

  it('takes expected as a query parameter', async () => {
    const response = await upload(server, { algorithms: 'sha256' }, abc(), `?expected=${SHA256_ABC.toUpperCase()}`)
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(response.body.matches, { sha256: true })
  })

  it('refuses text that is no digest, pointing at the field', async () => {
    const field = await upload(server, { algorithms: 'sha256', expected: 'not a checksum!' }, abc())
    assert.equal(field.status, 400)
    assert.equal(field.headers.get('content-type'), 'application/problem+json; charset=utf-8')
    assert.deepEqual(field.body.errors.map((error: { pointer: string }) => error.pointer), ['/body/expected'])
    assert.equal(field.text.includes('not a checksum'), false, 'the problem does not quote the input')

    const query = await upload(server, { algorithms: 'sha256' }, abc(), '?expected=%3F%3F')
    assert.equal(query.status, 400)
    assert.deepEqual(query.body.errors.map((error: { pointer: string }) => error.pointer), ['/querystring/expected'])
  })

  it('refuses expected after the file part', async () => {
    const form = new FormData()
    form.append('file', abc(), 'abc.txt')
    form.append('expected', SHA256_ABC)
    const response = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'POST', body: form }))
    assert.equal(response.status, 400)
  })

  it('is documented in OpenAPI: the form field, the query parameter and matches', async () => {
    const spec = (await server.get('/api/openapi.json')).body
    const post = spec.paths['/api/filehash'].post
    assert.equal(post.requestBody.content['multipart/form-data'].schema.properties.expected.type, 'string')
    assert.ok(post.parameters.some((parameter: { name: string, in: string }) => parameter.name === 'expected' && parameter.in === 'query'))
    assert.equal(post.responses['200'].content['application/json'].schema.properties.matches.type, 'object')
  })

  it('matches the line sha256sum prints for a random file', { skip: skipUnless('sha256sum') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-expected-'))
    try {
      const file = join(dir, 'random.bin')
      writeFileSync(file, randomBytes(300_000))
      const line = run('sha256sum', [file]).trim()
      const response = await upload(server, { algorithms: 'sha1,sha256', expected: line }, await openAsBlob(file))
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(response.body.matches, { sha1: false, sha256: true })
      assert.equal(response.body.hashes.sha256, line.split(/\s+/)[0])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
