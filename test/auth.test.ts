/**
 * Optional API keys (plugins/auth.ts): 401 with the RFC 6750 challenge, the public paths, limits
 * per key, the key's name in the access line and never the key, SIGHUP reload, configuration
 * errors that name the line, and `npm run apikey`.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ConfigError } from '../src/config.js'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'
import { spawnHashd, startHashd } from './helpers/process.js'
import { run, skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-keys-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** A key as `npm run apikey` makes them, and its file line (sha256 by node:crypto, not hashd). */
function newKey(): string {
  return `hk_${randomBytes(32).toString('base64url')}`
}
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

let fileCount = 0
function keysFile(text: string): string {
  const file = join(dir, `keys-${fileCount++}`)
  writeFileSync(file, text)
  return file
}

async function call(server: { fetch(path: string, init?: RequestInit): Promise<Response> }, path: string, init: RequestInit & { key?: string, authorization?: string } = {}) {
  const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) }
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`
  if (init.authorization !== undefined) headers.authorization = init.authorization
  return toTestResponse(await server.fetch(path, { ...init, headers }))
}

const hashBody = (input = 'abc') => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input }) })

describe('API keys: 401 and the public paths', () => {
  const ciKey = newKey()
  const otherKey = newKey()
  let server: TestServer
  before(async () => {
    const file = keysFile(`# hashd API keys\n\nci-bot ${sha256Hex(ciKey)}   # the CI runner\nother ${sha256Hex(otherKey).toUpperCase()} 1000\n`)
    server = await startServer({ API_KEYS_FILE: file })
  })
  after(() => server.close())

  it('refuses a request without a key: 401 problem+json, WWW-Authenticate: Bearer realm="hashd" (RFC 6750 §3)', async () => {
    const response = await call(server, '/api/hash', hashBody())
    assert.equal(response.status, 401)
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="hashd"')
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
    assert.equal(response.body.status, 401)
    assert.equal(response.body.title, 'Unauthorized')
  })

  it('treats another scheme as no Bearer credentials (RFC 6750 §3.1: no error code)', async () => {
    const response = await call(server, '/api/hash', { ...hashBody(), authorization: `Basic ${Buffer.from(`ci-bot:${ciKey}`).toString('base64')}` })
    assert.equal(response.status, 401)
    assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="hashd"')
  })

  it('refuses an unknown or malformed key with error="invalid_token"', async () => {
    const wrong = [newKey(), ciKey.slice(0, -1), `${ciKey}x`, ciKey.toUpperCase(), '', 'a b', 'hk_short', `${ciKey} ${ciKey}`, sha256Hex(ciKey)]
    for (const key of wrong) {
      const response = await call(server, '/api/hash', { ...hashBody(), authorization: `Bearer ${key}` })
      assert.equal(response.status, 401, key)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="hashd", error="invalid_token"', key)
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
    }
  })

  it('lets valid keys through, with the scheme in any case (RFC 9110 §11.1)', async () => {
    for (const authorization of [`Bearer ${ciKey}`, `bearer ${ciKey}`, `BEARER  ${otherKey}`]) {
      const response = await call(server, '/api/hash', { ...hashBody('abc'), authorization })
      assert.equal(response.status, 200, response.text)
      // FIPS 180-4 example: SHA-256("abc").
      assert.equal(response.body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    }
    for (const path of ['/api/verify', '/api/hmac', '/api/identify']) {
      const body = path === '/api/hmac' ? { message: 'm', key: 'k' } : path === '/api/verify' ? { input: 'abc', hash: sha256Hex('abc') } : { hash: sha256Hex('abc') }
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
      assert.equal((await call(server, path, init)).status, 401, path)
      assert.equal((await call(server, path, { ...init, key: ciKey })).status, 200, path)
    }
    assert.equal((await call(server, '/api/algorithms')).status, 401)
    assert.equal((await call(server, '/api/algorithms', { key: ciKey })).status, 200)
  })

  it('needs a key for uploads', async () => {
    const form = new FormData()
    form.append('file', new Blob(['abc']), 'a.txt')
    assert.equal((await call(server, '/api/filehash', { method: 'POST', body: form })).status, 401)
    const ok = await call(server, '/api/filehash', { method: 'POST', body: form, key: ciKey })
    assert.equal(ok.status, 200, ok.text)
    assert.equal(ok.body.hashes.sha256, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('keeps health, the API description, /docs and the static pages public', async () => {
    assert.equal((await call(server, '/api/health')).status, 200)
    assert.equal((await call(server, '/api/health/')).status, 200)
    assert.equal((await call(server, '/api/openapi.json')).status, 200)
    const docs = await call(server, '/docs')
    assert.equal(docs.status, 200)
    assert.equal((await call(server, '/docs/static/swagger-ui.css')).status, 200)
    // Outside /api/ a GET is never refused for want of a key: an unknown page is 404, not 401.
    assert.equal((await call(server, '/no-such-page.html')).status, 404)
    assert.equal((await server.fetch('/api/health', { method: 'HEAD' })).status, 200)
  })

  it('needs a key for everything else: other methods on public paths, unknown API paths, /metrics', async () => {
    assert.equal((await call(server, '/api/health', { method: 'POST' })).status, 401)
    assert.equal((await call(server, '/api/no-such-thing')).status, 401)
    assert.equal((await call(server, '/api/no-such-thing', { key: ciKey })).status, 404)
    assert.equal((await call(server, '/metrics')).status, 401)
    assert.equal((await call(server, '/metrics', { key: ciKey })).status, 200)
    assert.equal((await call(server, '/no-such-page.html', { method: 'POST' })).status, 401)
  })

  it('names the key, never the key itself, in the access line', async () => {
    await call(server, '/api/hash', { ...hashBody('named'), key: ciKey })
    const lines = server.logs().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const access = lines.filter((line) => line.msg === 'request completed' && line.route === '/api/hash' && line.statusCode === 200)
    assert.ok(access.length > 0)
    assert.ok(access.every((line) => line.apiKey === 'ci-bot' || line.apiKey === 'other'))
    const refused = lines.filter((line) => line.msg === 'request completed' && line.statusCode === 401)
    assert.ok(refused.length > 0 && refused.every((line) => !('apiKey' in line)))
    assert.ok(!server.logs().includes(ciKey) && !server.logs().includes(otherKey))
  })

  it('documents the bearer scheme, the scope each operation needs, the 401 and the 403 in OpenAPI, only on operations that need a key', async () => {
    const spec = (await call(server, '/api/openapi.json')).body
    assert.deepEqual(spec.components.securitySchemes.apiKey, { ...spec.components.securitySchemes.apiKey, type: 'http', scheme: 'bearer' })
    const scopes: Record<string, string> = { '/api/hash': 'hash', '/api/verify': 'verify', '/api/hmac': 'hmac', '/api/filehash': 'filehash', '/api/identify': 'identify' }
    for (const [path, scope] of Object.entries(scopes)) {
      assert.deepEqual(spec.paths[path].post.security, [{ apiKey: [scope] }], path)
      assert.ok(spec.paths[path].post.responses['401'], path)
      assert.ok(spec.paths[path].post.responses['403'], path)
    }
    // A valid key is enough for the descriptions: no scope, no 403.
    assert.deepEqual(spec.paths['/api/algorithms'].get.security, [{ apiKey: [] }])
    assert.equal(spec.paths['/api/algorithms'].get.responses['403'], undefined)
    // Public: an explicit empty requirement (OpenAPI 3.1 §4.8.10.1: no security needed); health's
    // is optional, and a key with health or metrics sees its details.
    assert.deepEqual(spec.paths['/api/ready'].get.security, [])
    assert.deepEqual(spec.paths['/api/health'].get.security, [{}, { apiKey: ['health'] }, { apiKey: ['metrics'] }])
    assert.equal(spec.paths['/api/health'].get.responses['401'], undefined)
  })
})

describe('API keys: logs never carry a key or the Authorization header', () => {
  for (const level of ['trace', 'debug']) {
    it(`at LOG_LEVEL=${level}, through success, refusal and rate limiting`, async () => {
      const valid = newKey()
      const unknown = newKey()
      const server = await startServer({ LOG_LEVEL: level, RATE_LIMIT_MAX: '3', API_KEYS_FILE: keysFile(`leak ${sha256Hex(valid)} 2\n`) })
      try {
        for (let i = 0; i < 4; i++) await call(server, '/api/hash', { ...hashBody(), key: valid })
        for (let i = 0; i < 4; i++) await call(server, '/api/hash', { ...hashBody(), key: unknown })
        await call(server, '/api/hash', { ...hashBody(), authorization: `Basic ${Buffer.from(`u:${unknown}`).toString('base64')}` })
        await call(server, '/metrics', { key: valid })
        await call(server, '/api/health', { key: unknown })
      } finally {
        await server.close()
      }
      const logs = server.logs()
      assert.ok(logs.includes('"apiKey":"leak"'), 'the access lines name the key')
      for (const secret of [valid, unknown, valid.slice(3), unknown.slice(3), Buffer.from(`u:${unknown}`).toString('base64')]) {
        assert.ok(!logs.includes(secret), 'a key reached the log')
      }
      assert.ok(!/authorization/i.test(logs), 'the Authorization header reached the log')
    })
  }
})

describe('API keys: rate limits per key', () => {
  it('limits a key by its own number and keeps keys and addresses apart', async () => {
    const limited = newKey()
    const plain = newKey()
    const server = await startServer({ RATE_LIMIT_MAX: '4', API_KEYS_FILE: keysFile(`limited ${sha256Hex(limited)} 2\nplain ${sha256Hex(plain)}\n`) })
    try {
      const statuses = async (count: number, init: Parameters<typeof call>[2]) => {
        const seen: number[] = []
        for (let i = 0; i < count; i++) seen.push((await call(server, '/api/hash', { ...hashBody(), ...init })).status)
        return seen
      }
      // The per-key number (2) overrides RATE_LIMIT_MAX (4) for that key.
      const first = await call(server, '/api/hash', { ...hashBody(), key: limited })
      assert.equal(first.headers.get('ratelimit-policy'), '"default";q=2;w=60')
      assert.deepEqual([first.status, ...await statuses(2, { key: limited })], [200, 200, 429])
      // A key without a number gets RATE_LIMIT_MAX, in its own bucket: the other key's use does not count.
      assert.deepEqual(await statuses(5, { key: plain }), [200, 200, 200, 200, 429])
      // Requests without a valid key are counted per address, so floods of bad keys are limited too.
      assert.deepEqual(await statuses(5, { key: newKey() }), [401, 401, 401, 401, 429])
      // And the keys' buckets are not the address's.
      assert.equal((await call(server, '/api/hash', { ...hashBody(), key: limited })).status, 429)
    } finally {
      await server.close()
    }
  })
})

describe('API keys: the file', () => {
  it('refuses to start on a bad file, naming the file and the line', async () => {
    const good = `ok ${sha256Hex(newKey())}`
    const cases: Array<[string, number, RegExp]> = [
      [`${good}\n# comment\nbroken\n`, 3, /expected "<name> <sha256/],
      [`${good}\nsecond ${newKey()}\n`, 2, /field 2: the key's sha256 must be here as 64 hex digits/],
      [`${good}\nsecond ${sha256Hex('x')} many\n`, 2, /field 3: requests per window/],
      [`${good}\nok ${sha256Hex('y')}\n`, 2, /field 1: this name is already used on line 1/],
      [`bad/name ${sha256Hex('z')}\n`, 1, /field 1: the name must be/],
      [`a ${sha256Hex('z')} 5 extra\n`, 1, /field 4: .*got 4 fields/],
    ]
    for (const [text, line, reason] of cases) {
      const file = keysFile(text)
      await assert.rejects(startServer({ API_KEYS_FILE: file }), (error: Error) => {
        assert.ok(error instanceof ConfigError)
        assert.match(error.message, new RegExp(`API_KEYS_FILE ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line ${line}(?:, field \\d+)?: `))
        assert.match(error.message, reason)
        return true
      })
    }
    // A pasted key is described, never quoted.
    const key = newKey()
    await assert.rejects(startServer({ API_KEYS_FILE: keysFile(`x ${key}\n`) }), (error: Error) => !error.message.includes(key))
  })

  it('exits with status 2 and the line on stderr from the real process; a missing file is named too', async () => {
    const file = keysFile(`ok ${sha256Hex('a')}\n\nbroken line here too\n`)
    const bad = spawnHashd({ API_KEYS_FILE: file })
    assert.equal((await bad.exited).code, 2)
    assert.match(bad.stderr(), new RegExp(`^hashd: API_KEYS_FILE .*line 3, field 4: `))
    const missing = spawnHashd({ API_KEYS_FILE: join(dir, 'no-such-file') })
    assert.equal((await missing.exited).code, 2)
    assert.match(missing.stderr(), /API_KEYS_FILE .*no-such-file cannot be read \(ENOENT\)/)
  })

  it('reloads on SIGHUP; a bad file on reload keeps the keys in force and logs a warning', async () => {
    const first = newKey()
    const second = newKey()
    const file = keysFile(`first ${sha256Hex(first)}\n`)
    const hashd = await startHashd({ API_KEYS_FILE: file })
    try {
      assert.equal((await call(hashd, '/api/hash', { ...hashBody(), key: first })).status, 200)
      assert.equal((await call(hashd, '/api/hash', { ...hashBody(), key: second })).status, 401)

      writeFileSync(file, `# rotated\nsecond ${sha256Hex(second)}\n`)
      let mark = hashd.lines()
      hashd.child.kill('SIGHUP')
      await hashd.logged(/API keys reloaded/, mark)
      assert.equal((await call(hashd, '/api/hash', { ...hashBody(), key: second })).status, 200)
      assert.equal((await call(hashd, '/api/hash', { ...hashBody(), key: first })).status, 401)

      writeFileSync(file, `second ${sha256Hex(second)}\noops\n`)
      mark = hashd.lines()
      hashd.child.kill('SIGHUP')
      await hashd.logged(/API keys not reloaded/, mark)
      const warning = hashd.stdout().split('\n').slice(mark).find((line) => line.includes('not reloaded')) ?? ''
      assert.equal(JSON.parse(warning).level, 40)
      assert.match(JSON.parse(warning).reason, /line 2: /)
      assert.equal((await call(hashd, '/api/hash', { ...hashBody(), key: second })).status, 200)
    } finally {
      hashd.child.kill('SIGTERM')
      await hashd.exited
    }
  })
})

describe('npm run apikey', () => {
  const script = fileURLToPath(new URL('../scripts/apikey.js', import.meta.url))

  it('prints a fresh hk_ key of 256 bits and its file line, which the server accepts', { skip: skipUnless('sha256sum') }, async () => {
    const outputs = [0, 1].map(() => execFileSync(process.execPath, [script, 'deploy-bot', '50'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
    // stdout is exactly the key and the line, so it can be piped.
    const parsed = outputs.map((output) => {
      const lines = output.split('\n')
      assert.equal(lines.length, 3, output)
      assert.equal(lines[2], '', output)
      return { key: lines[0] ?? '', line: lines[1] ?? '' }
    })
    const [a, b] = parsed as [{ key: string, line: string }, { key: string, line: string }]
    assert.match(a.key, /^hk_[A-Za-z0-9_-]{43}$/)
    assert.notEqual(a.key, b.key)
    // The line's hash, checked against coreutils' sha256sum.
    const digest = run('sha256sum', [], a.key).split(/\s/)[0]
    assert.equal(a.line, `deploy-bot ${digest} 50`)

    const server = await startServer({ API_KEYS_FILE: keysFile(`${a.line}\n`) })
    try {
      assert.equal((await call(server, '/api/hash', { ...hashBody(), key: a.key })).status, 200)
      assert.equal((await call(server, '/api/hash', { ...hashBody(), key: b.key })).status, 401)
    } finally {
      await server.close()
    }
  })

  it('refuses a name the file would refuse', () => {
    assert.throws(() => execFileSync(process.execPath, [script, 'bad name!'], { encoding: 'utf8', stdio: 'pipe' }), (error: { status?: number }) => error.status === 2)
    assert.throws(() => execFileSync(process.execPath, [script], { encoding: 'utf8', stdio: 'pipe' }), (error: { status?: number }) => error.status === 2)
  })
})
