/**
 * The generated TypeScript client (clients/typescript/, `npm run client`): it is up to date with
 * the document the server serves, and every operation works through it against the real server
 * with API keys on, multipart and raw uploads included, and errors arrive as typed problems.
 * Expected digests are published test vectors (FIPS 180-2, RFC 1321, RFC 4231), not hashd's output.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createHashdClient, isProblem, multipartUpload, rawUpload, API_VERSION, type HashdClient, type Problem } from '../clients/typescript/index.js'
import { staleClientFiles } from '../scripts/client.js'
import { keyLine } from '../src/keys/api-keys.js'
import { startServer, type TestServer } from './helpers/server.js'

/** FIPS 180-2 B.1: SHA-256("abc"); RFC 1321 A.5: MD5("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'
/** RFC 4231 test case 2: HMAC-SHA-256 with key "Jefe". */
const HMAC_JEFE = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'

let server: TestServer
let client: HashdClient
let anonymous: HashdClient
let dir: string
const key = `hk_${randomBytes(32).toString('base64url')}`

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hashd-client-test-'))
  const keysFile = join(dir, 'keys')
  writeFileSync(keysFile, `${keyLine('client-test', key)}\n`)
  server = await startServer({ API_KEYS_FILE: keysFile })
  client = createHashdClient({ baseUrl: server.url, apiKey: key })
  anonymous = createHashdClient({ baseUrl: server.url })
})
after(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the generated client', () => {
  it('is up to date with the document the server serves (npm run client regenerates it)', async () => {
    assert.deepEqual(await staleClientFiles(), [], 'clients/typescript is out of date: run npm run client')
  })

  it('was generated from this API version', async () => {
    const { data } = await anonymous.GET('/api/openapi.json')
    assert.equal(data?.info.version, API_VERSION)
  })

  it('hashes, verifies and HMACs, one at a time and in a batch', async () => {
    const hashed = await client.POST('/api/hash', { body: { input: 'abc', algorithm: 'sha256' } })
    assert.ok(hashed.data && 'hash' in hashed.data)
    assert.equal(hashed.data.hash, SHA256_ABC)
    const verified = await client.POST('/api/verify', { body: { input: 'abc', hash: MD5_ABC, algorithm: 'md5' } })
    assert.ok(verified.data && 'match' in verified.data)
    assert.equal(verified.data.match, true)
    const mac = await client.POST('/api/hmac', { body: { message: 'what do ya want for nothing?', key: 'Jefe', algorithm: 'sha256' } })
    assert.ok(mac.data && 'hmac' in mac.data)
    assert.equal(mac.data.hmac, HMAC_JEFE)
    const batch = await client.POST('/api/hmac', { body: { key: 'Jefe', items: [{ message: 'what do ya want for nothing?', reference: 'jefe' }] } })
    assert.ok(batch.data && 'results' in batch.data)
    assert.deepEqual(batch.data.results.map((result) => 'hmac' in result ? [result.reference, result.hmac] : null), [['jefe', HMAC_JEFE]])
  })

  it('identifies one hash and a batch', async () => {
    const one = await client.POST('/api/identify', { body: { hash: SHA256_ABC } })
    assert.ok(one.data && 'matches' in one.data)
    assert.ok(one.data.matches.some((match) => match.algorithm === 'sha256'))
    const batch = await client.POST('/api/identify', { body: { hashes: [SHA256_ABC, MD5_ABC] } })
    assert.ok(batch.data && 'results' in batch.data)
    assert.equal(batch.data.results.length, 2)
  })

  it('uploads a file as multipart and as a raw body (POST and PUT)', async () => {
    const file = new Blob([new TextEncoder().encode('abc')])
    const form = await client.POST('/api/filehash', { ...multipartUpload(file, 'abc.txt', { algorithms: 'sha256,md5' }) })
    assert.deepEqual(form.data?.hashes, { sha256: SHA256_ABC, md5: MD5_ABC })
    assert.equal(form.data?.name, 'abc.txt')
    const put = await client.PUT('/api/filehash', { params: { query: { algorithms: 'md5', name: 'abc.txt' } }, ...rawUpload(new TextEncoder().encode('abc')) })
    assert.deepEqual(put.data?.hashes, { md5: MD5_ABC })
    const post = await client.POST('/api/filehash', { params: { query: { algorithms: 'sha256', expected: SHA256_ABC } }, ...rawUpload(new TextEncoder().encode('abc')) })
    assert.deepEqual(post.data?.matches, { sha256: true })
  })

  it('reads the catalogue, health and metrics', async () => {
    const catalogue = await client.GET('/api/algorithms')
    assert.ok(catalogue.data?.algorithms.some((algorithm) => algorithm.name === 'sha256'))
    const health = await anonymous.GET('/api/health')
    assert.equal(health.data?.status, 'ok')
    const metrics = await client.GET('/metrics', { parseAs: 'text' })
    assert.match(String(metrics.data), /^# HELP /m)
  })

  it('gives errors as typed problems: 400 with suggestions, 422, and 401 without a key', async () => {
    const unknown = await client.POST('/api/hash', { body: { input: 'abc', algorithm: 'sha-265' as 'sha256' } })
    assert.equal(unknown.response.status, 400)
    assert.ok(isProblem(unknown.error))
    const problem: Problem = unknown.error
    assert.equal(problem.type, 'urn:hashd:problem:unknown-algorithm')
    assert.deepEqual(problem.suggestions, ['sha256'])
    const malformed = await client.POST('/api/verify', { body: { input: 'abc', hash: '$2b$04$short', algorithm: 'bcrypt' } })
    assert.equal(malformed.response.status, 422)
    assert.equal(malformed.error?.type, 'urn:hashd:problem:malformed-hash')
    const refused = await anonymous.POST('/api/hash', { body: { input: 'abc' } })
    assert.equal(refused.response.status, 401)
    assert.ok(isProblem(refused.error))
    assert.match(refused.response.headers.get('www-authenticate') ?? '', /^Bearer realm="hashd"/)
  })
})
