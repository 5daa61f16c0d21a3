/**
 * The contract of /api/hash and /api/verify that cuts across algorithm families (defaults, XOF
 * lengths, password defaults, caps checked before any work, digest detection), and the
 * self-description endpoints (/api/algorithms, /api/openapi.json, /docs).
 * Expected values come from Debian's Python hashlib, openssl and the OWASP Password Storage Cheat
 * Sheet's minimums as restated in issue 2 — never from hashd itself.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { algorithms } from '../src/algorithms/registry.js'
import { constantTimeEqual } from '../src/domain/encoding.js'
import { startServer, tasksStarted, type TestServer } from './helpers/server.js'
import { python, run, skipUnless } from './helpers/tools.js'

const pyDigest = (expression: string, input: string): string =>
  python(`import hashlib, sys; data = sys.argv[1].encode(); print(${expression})`, [input])

describe('contract: /api/hash', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('defaults to sha256 in hex', { skip: skipUnless('openssl') }, async () => {
    const response = await server.post('/api/hash', { input: 'The quick brown fox' })
    assert.equal(response.status, 200)
    assert.equal(response.body.algorithm, 'sha256')
    assert.equal(response.body.encoding, 'hex')
    assert.equal(response.body.hash, run('openssl', ['dgst', '-sha256', '-r'], 'The quick brown fox').split(' ')[0])
    assert.equal(response.body.length, 64)
  })

  it('gives shake128 256 bits and shake256 512 bits by default, and honours outputLength (bytes)', { skip: skipUnless('python3') }, async () => {
    const input = 'contract'
    const shake128 = await server.post('/api/hash', { input, algorithm: 'shake128' })
    assert.equal(shake128.body.hash, pyDigest('hashlib.shake_128(data).hexdigest(32)', input))
    const shake256 = await server.post('/api/hash', { input, algorithm: 'SHAKE-256' })
    assert.equal(shake256.body.algorithm, 'shake256')
    assert.equal(shake256.body.hash, pyDigest('hashlib.shake_256(data).hexdigest(64)', input))
    for (const outputLength of [1, 17, 100]) {
      const response = await server.post('/api/hash', { input, algorithm: 'shake128', options: { outputLength } })
      assert.equal(response.body.hash, pyDigest(`hashlib.shake_128(data).hexdigest(${outputLength})`, input))
    }
    const long = await server.post('/api/hash', { input, algorithm: 'shake256', options: { outputLength: 200 }, encoding: 'base64' })
    assert.equal(long.body.hash, python('import hashlib, base64, sys; print(base64.b64encode(hashlib.shake_256(sys.argv[1].encode()).digest(200)).decode())', [input]))
    assert.equal((await server.post('/api/hash', { input, algorithm: 'shake128', options: { outputLength: 0 } })).status, 400)
    assert.equal((await server.post('/api/hash', { input, algorithm: 'sha256', options: { outputLength: 16 } })).status, 400)
  })

  // OWASP Password Storage Cheat Sheet minimums, as issue 2 restates them.
  it('uses password defaults at or above OWASP: argon2id m=19456,t=2,p=1', async () => {
    const response = await server.post('/api/hash', { input: 'pw', algorithm: 'argon2id' })
    assert.equal(response.status, 200)
    const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(response.body.hash)
    assert.ok(match, response.body.hash)
    assert.deepEqual(match.slice(1).map(Number), [19456, 2, 1])
    assert.equal(response.body.length, response.body.hash.length)
    assert.equal(typeof response.body.processingTimeMs, 'number')
  })

  it('uses password defaults at or above OWASP: bcrypt cost ≥ 10 in $2b$', async () => {
    const response = await server.post('/api/hash', { input: 'pw', algorithm: 'bcrypt' })
    const match = /^\$2b\$(\d\d)\$[./A-Za-z0-9]{53}$/.exec(response.body.hash)
    assert.ok(match, response.body.hash)
    assert.ok(Number(match[1]) >= 10)
  })

  it('uses password defaults at or above OWASP: scrypt ln=17,r=8,p=1', async () => {
    const response = await server.post('/api/hash', { input: 'pw', algorithm: 'scrypt' })
    const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$[^$]+\$[^$]+$/.exec(response.body.hash)
    assert.ok(match, response.body.hash)
    assert.deepEqual(match.slice(1).map(Number), [17, 8, 1])
  })

  it('uses password defaults at or above OWASP: pbkdf2-sha256 600000 and pbkdf2-sha512 210000 iterations', async () => {
    for (const [algorithm, minimum] of [['pbkdf2-sha256', 600_000], ['pbkdf2-sha512', 210_000]] as const) {
      const response = await server.post('/api/hash', { input: 'pw', algorithm })
      // passlib writes the rounds bare ($pbkdf2-sha256$29000$…); accept an i= prefix as well.
      const match = new RegExp(`^\\$${algorithm}\\$(?:i=)?(\\d+)\\$[^$]+\\$[^$]+$`).exec(response.body.hash)
      assert.ok(match, response.body.hash)
      assert.ok(Number(match[1]) >= minimum, `${algorithm} ${match[1]}`)
    }
  })

  it('refuses options above the server caps with 422 before any work', async () => {
    const overCap = [
      { algorithm: 'bcrypt', options: { cost: 15 } },
      { algorithm: 'argon2id', options: { memoryCost: 262_145 } },
      { algorithm: 'argon2id', options: { timeCost: 11 } },
      { algorithm: 'argon2id', options: { parallelism: 17 } },
      { algorithm: 'scrypt', options: { N: 2 ** 19, r: 8 } }, // 128·N·r = 512 MiB > 256 MiB
      { algorithm: 'scrypt', options: { p: 17 } },
      { algorithm: 'pbkdf2-sha256', options: { iterations: 2_000_001 } },
    ]
    for (const body of overCap) {
      const tasksBefore = await tasksStarted(server)
      const response = await server.post('/api/hash', { input: 'pw', ...body })
      assert.equal(response.status, 422, `${JSON.stringify(body)}: ${response.text}`)
      assert.match(response.headers.get('content-type') ?? '', /problem\+json/)
      assert.equal(await tasksStarted(server), tasksBefore, `${JSON.stringify(body)}: work was started before the cap check`)
    }
  })

  it('refuses bcrypt input over 72 bytes with 422 (counting bytes, not characters)', async () => {
    assert.equal((await server.post('/api/hash', { input: 'a'.repeat(73), algorithm: 'bcrypt', options: { cost: 4 } })).status, 422)
    // 36 × "é" is 36 characters but 72 bytes: allowed; one more is 74 bytes.
    assert.equal((await server.post('/api/hash', { input: 'é'.repeat(36), algorithm: 'bcrypt', options: { cost: 4 } })).status, 200)
    assert.equal((await server.post('/api/hash', { input: 'é'.repeat(37), algorithm: 'bcrypt', options: { cost: 4 } })).status, 422)
  })
})

describe('contract: /api/verify', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('compares in constant time without throwing when lengths differ', () => {
    assert.equal(constantTimeEqual(Buffer.from('abc'), Buffer.from('abcd')), false)
    assert.equal(constantTimeEqual(Buffer.from(''), Buffer.from('a')), false)
    assert.equal(constantTimeEqual(Buffer.from('abcd'), Buffer.from('abc')), false)
    assert.equal(constantTimeEqual(Buffer.from('abce'), Buffer.from('abcd')), false)
    assert.equal(constantTimeEqual(Buffer.from('abcd'), Buffer.from('abcd')), true)
    assert.equal(constantTimeEqual(new Uint8Array(0), new Uint8Array(0)), true)
  })

  it('without algorithm, tries the digests of a bare hex hash\'s length and names the one that matched', { skip: skipUnless('python3') }, async () => {
    const input = 'verify me'
    const md5 = pyDigest('hashlib.md5(data).hexdigest()', input)
    const byMd5 = await server.post('/api/verify', { input, hash: md5 })
    assert.equal(byMd5.status, 200)
    assert.deepEqual([byMd5.body.match, byMd5.body.algorithm], [true, 'md5'])
    assert.ok(Array.isArray(byMd5.body.warnings))
    // sha3-256 shares its 32-byte length with sha256, blake2s-256, sm3 …: the matching one is named.
    const sha3 = pyDigest('hashlib.sha3_256(data).hexdigest()', input)
    const bySha3 = await server.post('/api/verify', { input, hash: sha3 })
    assert.deepEqual([bySha3.body.match, bySha3.body.algorithm], [true, 'sha3-256'])
    const blake2s = pyDigest('hashlib.blake2s(data).hexdigest()', input)
    assert.equal((await server.post('/api/verify', { input, hash: blake2s })).body.algorithm, 'blake2s-256')
    const none = await server.post('/api/verify', { input: 'something else', hash: sha3 })
    assert.equal(none.status, 200)
    assert.deepEqual([none.body.match, none.body.algorithm], [false, null])
  })

  it('reads digests as hex in either case, base64 and base64url', { skip: skipUnless('python3') }, async () => {
    const input = 'case'
    const hex = pyDigest('hashlib.sha256(data).hexdigest()', input)
    for (const hash of [
      hex.toUpperCase(),
      python('import hashlib, base64, sys; print(base64.b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode())', [input]),
      python('import hashlib, base64, sys; print(base64.urlsafe_b64encode(hashlib.sha256(sys.argv[1].encode()).digest()).decode().rstrip("="))', [input]),
    ]) {
      const named = await server.post('/api/verify', { input, hash, algorithm: 'sha256' })
      assert.deepEqual([named.status, named.body.match, named.body.algorithm], [200, true, 'sha256'], hash)
      const detected = await server.post('/api/verify', { input, hash })
      assert.equal(detected.body.match, true, hash)
    }
    const wrong = await server.post('/api/verify', { input: 'Case', hash: hex, algorithm: 'sha256' })
    assert.deepEqual([wrong.status, wrong.body.match], [200, false])
  })

  it('answers a hash malformed for its algorithm with 422', async () => {
    for (const body of [
      { input: 'a', hash: 'abcd', algorithm: 'sha256' },
      { input: 'a', hash: 'not hex at all!', algorithm: 'md5' },
      { input: 'a', hash: '$2b$10$tooShort', algorithm: 'bcrypt' },
      { input: 'a', hash: '$2b$10$tooShort' },
      { input: 'a', hash: '$argon2id$v=19$m=19456,t=2$abc' },
    ]) {
      const response = await server.post('/api/verify', body)
      assert.equal(response.status, 422, `${JSON.stringify(body)}: ${response.text}`)
      assert.match(response.headers.get('content-type') ?? '', /problem\+json/)
    }
  })

  it('refuses a cost above the cap inside a hash with 422, fast', async () => {
    const salt = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'.slice(0, 53)
    const cases = [
      `$2b$31$${salt}`,
      `$2b$15$${salt}`,
      '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG',
      '$scrypt$ln=24,r=8,p=1$c2FsdA$c2FsdHNhbHRzYWx0c2FsdHNhbHRzYWx0c2FsdHNhbHQ',
      '$pbkdf2-sha256$50000000$c2FsdA$c2FsdHNhbHRzYWx0c2FsdHNhbHRzYWx0c2FsdHNhbHQ',
    ]
    for (const hash of cases) {
      const tasksBefore = await tasksStarted(server)
      const response = await server.post('/api/verify', { input: 'pw', hash })
      assert.equal(response.status, 422, `${hash}: ${response.text}`)
      assert.equal(await tasksStarted(server), tasksBefore, `${hash}: work was started before the cap check`)
    }
  })
})

describe('contract: self-description', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('serves an OpenAPI 3.1 document with the five operations, /api/algorithms and /api/health', async () => {
    const response = await server.get('/api/openapi.json')
    assert.equal(response.status, 200)
    assert.match(response.body.openapi, /^3\.1\./)
    const paths = response.body.paths as Record<string, Record<string, unknown>>
    for (const path of ['/api/hash', '/api/verify', '/api/hmac', '/api/filehash', '/api/identify']) {
      assert.ok(paths[path]?.post, `POST ${path} missing`)
    }
    assert.ok(paths['/api/algorithms']?.get, 'GET /api/algorithms missing')
    assert.ok(paths['/api/health']?.get, 'GET /api/health missing')
    const filehash = paths['/api/filehash']?.post as { requestBody?: { content?: Record<string, unknown> } }
    assert.ok(filehash.requestBody?.content?.['multipart/form-data'], 'the upload is described as multipart')
  })

  it('serves the Swagger UI at /docs with every asset from this server', async () => {
    const response = await fetch(`${server.url}/docs`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type') ?? '', /text\/html/)
    const html = await response.text()
    assert.match(html, /swagger-ui/i)
    // Its Content-Security-Policy allows this server only, and does not force https on a plain-HTTP server.
    const policy = response.headers.get('content-security-policy') ?? ''
    assert.match(policy, /default-src 'self'/)
    assert.doesNotMatch(policy, /https:|validator\.swagger\.io|upgrade-insecure-requests/)
    const urls = [...html.matchAll(/(?:src|href)\s*=\s*["']([^"']+)["']/g)].map((match) => match[1] as string)
    assert.ok(urls.length > 0)
    for (const url of urls) {
      assert.ok(!/^(?:https?:)?\/\//i.test(url), `asset from another host: ${url}`)
      const asset = await fetch(new URL(url, response.url))
      assert.equal(asset.status, 200, url)
      await asset.arrayBuffer()
    }
  })

  it('lists every registry entry in /api/algorithms with name, aliases, kind, outputBits, operations and option bounds', async () => {
    const response = await server.get('/api/algorithms')
    assert.equal(response.status, 200)
    const listed = response.body.algorithms as Array<{ name: string, aliases: string[], kind: string, outputBits: number | null, operations: string[], options: Record<string, { default: number, min: number, max: number }> }>
    assert.deepEqual(listed.map((entry) => entry.name).sort(), algorithms.map((entry) => entry.name).sort())
    for (const entry of listed) {
      assert.ok(Array.isArray(entry.aliases), entry.name)
      assert.ok(['digest', 'xof', 'checksum', 'similarity', 'password'].includes(entry.kind), entry.name)
      if (entry.kind === 'password' || entry.kind === 'similarity') assert.equal(entry.outputBits, null)
      else assert.ok(Number.isInteger(entry.outputBits) && (entry.outputBits as number) > 0, entry.name)
      assert.ok(entry.operations.length > 0 && entry.operations.every((operation) => ['hash', 'verify', 'filehash', 'hmac'].includes(operation)), entry.name)
      for (const [option, bounds] of Object.entries(entry.options)) {
        assert.ok(bounds.min <= bounds.default && bounds.default <= bounds.max, `${entry.name}.${option}`)
      }
    }
    const byName = new Map(listed.map((entry) => [entry.name, entry]))
    assert.equal(byName.get('sha256')?.outputBits, 256)
    assert.equal(byName.get('shake128')?.outputBits, 256)
    assert.equal(byName.get('shake256')?.outputBits, 512)
    assert.equal(byName.get('bcrypt')?.options.cost?.max, 14, 'max includes the default MAX_BCRYPT_COST cap')
    assert.equal(byName.get('argon2id')?.options.memoryCost?.default, 19456)
    assert.ok(!byName.get('bcrypt')?.operations.includes('filehash'))
    assert.ok(!byName.get('shake128')?.operations.includes('hmac'))
    assert.deepEqual(byName.get('tlsh')?.operations, ['hash', 'filehash'])
    assert.deepEqual(byName.get('ssdeep')?.operations, ['hash', 'filehash'])
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
