/**
 * The OpenAPI document describes the server exactly (issue 20): error content types, algorithm
 * enums, identify's "exactly one of", empty and white-space strings, caps, methods it does not
 * list, pointers, and the response checker (helpers/openapi.ts) that every other test relies on.
 * Expected values come from the registry's own data and RFCs, not from the document itself.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { BaseResolver, createConfig, lintDocument, makeDocumentFromString } from '@redocly/openapi-core'
import fc from 'fast-check'
import { contentHashes } from '../src/content-hashes/index.js'
import { fuzzParameters } from './helpers/fuzz.js'
import { OpenApiChecker, type OpenApiDocument } from './helpers/openapi.js'
import { documentFor, rawResponse, startHashd } from './helpers/process.js'
import { startServer, type TestServer } from './helpers/server.js'

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

let server: TestServer
let document: OpenApiDocument & { info: { title: string, version: string }, components: { schemas: Record<string, unknown> } }
type Schema = { enum?: string[], pattern?: string, minLength?: number, minimum?: number, oneOf?: unknown[], properties?: Record<string, Schema> }
const jsonBody = (path: string): Schema => (document.paths[path]?.post as unknown as { requestBody: { content: Record<string, { schema: Schema }> } }).requestBody.content['application/json']!.schema
/**
 * The rules a body's allOf states beyond its properties. A body that takes batches states them on
 * its single request's branch of the oneOf (a batch item that breaks one fails alone, in a 200).
 */
const bodyRules = (path: string): unknown[] => {
  const body = jsonBody(path) as Schema & { allOf?: unknown[], oneOf?: Array<{ allOf?: unknown[] }> }
  return [...body.allOf ?? [], ...body.oneOf?.[0]?.allOf ?? []]
}

before(async () => {
  server = await startServer({ MAX_ARGON2_MEMORY_KIB: '65536' })
  document = (await server.get('/api/openapi.json')).body
})
after(async () => { await server.close() })

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 by an independent linter (Redocly, recommended rules), with API keys off and on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-openapi-'))
    const keys = join(dir, 'keys')
    writeFileSync(keys, `lint ${'0'.repeat(64)}\n`)
    const secured = await startServer({ API_KEYS_FILE: keys })
    try {
      for (const served of [document, (await secured.get('/api/openapi.json')).body]) {
        const config = await createConfig({ extends: ['recommended'] })
        const results = await lintDocument({ document: makeDocumentFromString(JSON.stringify(served), '/api/openapi.json'), config: config.styleguide, externalRefResolver: new BaseResolver() })
        // GET /api/health and GET /api/ready have no 4xx by design: they are public (no API key, so
        // no 401) and not rate-limited (no 429), take no parameters, and a GET's body is not read
        // (a malformed JSON body or an oversized Content-Length still gets 200). Another method is
        // 405, which the document describes once for all paths. Inventing a 4xx would be false.
        const no4xx = new Set(['#/paths/~1api~1health/get/responses', '#/paths/~1api~1ready/get/responses'])
        const findings = results.filter((result) => !(result.ruleId === 'operation-4xx-response' && no4xx.has(result.location[0]?.pointer ?? '')))
        assert.deepEqual(findings.map((result) => `${result.severity} ${result.ruleId} ${result.message} ${result.location[0]?.pointer}`), [])
      }
    } finally {
      await secured.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('follows package.json in info.version and is titled hashd API', () => {
    assert.equal(document.info.version, packageVersion)
    assert.equal(document.info.title, 'hashd API')
  })

  it('gives every error status of every operation application/problem+json with the Problem schema, and Retry-After on 429 and 503', () => {
    // /api/checksums answers its own refusals, and a check that did not pass, as text when asked (Accept: text/plain).
    const textToo = new Set(['post /api/checksums 400', 'post /api/checksums 413', 'post /api/checksums 415', 'post /api/checksums 422'])
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const responses = operation.responses ?? {}
        assert.ok(responses['503'], `${method} ${path} documents 503`)
        for (const [status, response] of Object.entries(responses)) {
          if (Number(status) < 400) continue
          const types = textToo.has(`${method} ${path} ${status}`) ? ['application/problem+json', 'text/plain'] : ['application/problem+json']
          assert.deepEqual(Object.keys(response.content ?? {}), types, `${method} ${path} ${status}`)
          assert.deepEqual(response.content?.['application/problem+json']?.schema, { $ref: '#/components/schemas/Problem' })
          if (status === '429' || status === '503') assert.equal(response.headers?.['Retry-After']?.required, true, `${method} ${path} ${status} Retry-After`)
        }
      }
    }
  })

  it('lists for each operation exactly the canonical names it accepts', async () => {
    const catalogue = (await server.get('/api/algorithms')).body as { algorithms: Array<{ name: string, operations: string[] }> }
    const accepted = (operation: string) => catalogue.algorithms.filter((algorithm) => algorithm.operations.includes(operation)).map((algorithm) => algorithm.name).sort()
    // /api/hash also takes the content hashes (src/content-hashes), which /api/algorithms does not list.
    assert.deepEqual([...jsonBody('/api/hash').properties!.algorithm!.enum!].sort(), [...accepted('hash'), ...contentHashes.map((entry) => entry.name)].sort())
    assert.deepEqual([...jsonBody('/api/verify').properties!.algorithm!.enum!].sort(), accepted('verify'))
    assert.deepEqual([...jsonBody('/api/hmac').properties!.algorithm!.enum!].sort(), accepted('hmac'))
    const query = (document.paths['/api/filehash']!.put as unknown as { parameters: Array<{ name: string, schema: Schema }> }).parameters
    const pattern = new RegExp(query.find((parameter) => parameter.name === 'algorithms')!.schema.pattern!)
    for (const name of accepted('filehash')) assert.match(`${name}, sha256`, pattern)
    assert.doesNotMatch('argon2id', pattern, 'a password hash is not a filehash algorithm')
    assert.doesNotMatch('', pattern)
  })

  it('says identify takes exactly one of hash and hashes, and the server agrees', async () => {
    assert.equal(jsonBody('/api/identify').oneOf?.length, 2)
    for (const body of [{}, { hash: '0', hashes: ['00'] }]) {
      const response = await server.post('/api/identify', body)
      assert.equal(response.status, 400)
      assert.equal(response.body.errors[0].pointer, '/body')
    }
  })

  it('treats a white-space-only hash as it does an empty one', async () => {
    for (const hash of ['', '   ', '\t\n']) {
      const response = await server.post('/api/identify', { hash })
      assert.equal(response.status, 400, JSON.stringify(hash))
      assert.equal(response.body.errors[0].pointer, '/body/hash')
    }
  })

  it('states empty `expected` and `algorithms` as invalid, and the raw form points into the query string', async () => {
    for (const query of ['algorithms=', 'expected=', 'algorithms=nope', 'expected=%20']) {
      const response = await server.fetch(`/api/filehash?${query}`, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })
      const problem = await response.json() as { errors: Array<{ pointer: string }> }
      assert.equal(response.status, 400, query)
      assert.equal(problem.errors[0]?.pointer, `/querystring/${query.split('=')[0]}`, query)
    }
  })

  it('names a wrong upload field in `errors`, as it does a missing file part', async () => {
    const form = new FormData()
    form.append('upload', new Blob(['hello']), 'a.txt')
    const response = await server.fetch(`/api/filehash`, { method: 'POST', body: form })
    const problem = await response.json() as { errors: Array<{ pointer: string }> }
    assert.equal(response.status, 400)
    assert.deepEqual(problem.errors.map((error) => error.pointer), ['/body/upload'])
  })

  it('warns when `expected` has a length no requested digest has', async () => {
    const form = new FormData()
    form.append('algorithms', 'sha256')
    // A SHA-1 digest (20 bytes) checked against sha256 (32 bytes).
    form.append('expected', 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d')
    form.append('file', new Blob(['hello']), 'a.txt')
    const response = await server.fetch(`/api/filehash`, { method: 'POST', body: form })
    const result = await response.json() as { matches: Record<string, boolean>, warnings?: string[] }
    assert.equal(response.status, 200)
    assert.deepEqual(result.matches, { sha256: false })
    assert.match(result.warnings?.[0] ?? '', /20-byte digest.*sha256: 32/)
  })

  it('suggests the canonical name for a near miss', async () => {
    const response = await server.post('/api/hash', { input: 'x', algorithm: 'sha-265' })
    assert.equal(response.status, 400)
    assert.equal(response.body.type, 'urn:hashd:problem:unknown-algorithm')
    assert.deepEqual(response.body.suggestions, ['sha256'])
    assert.match(response.body.detail, /did you mean sha256\?/)
  })

  it('lists the allowed encodings when one is wrong', async () => {
    const response = await server.post('/api/hash', { input: 'x', encoding: 'HEX' })
    assert.equal(response.status, 400)
    assert.deepEqual(response.body.errors, [{ pointer: '/body/encoding', message: 'must be one of hex, base64, base64url' }])
  })

  it('states the server\'s own cap in the range of an option, and in the document', async () => {
    const outOfRange = await server.post('/api/hash', { input: 'x', algorithm: 'argon2id', options: { memoryCost: 1e12 } })
    assert.equal(outOfRange.status, 400)
    assert.match(outOfRange.body.detail, /from 8 to 65536 \(this server's cap/)
    const aboveCap = await server.post('/api/hash', { input: 'x', algorithm: 'argon2id', options: { memoryCost: 65537 } })
    assert.equal(aboveCap.status, 422)
    assert.match(aboveCap.body.detail, /cap of 65536/)
    assert.match(String((jsonBody('/api/hash').properties!.options as { description?: string }).description), /argon2id[^;]*memoryCost 8–65536/)
    // One anyOf, a branch per group of algorithms with the same options (no if/then: Schemathesis cannot generate from many).
    type Branch = { required?: string[], properties: { algorithm: { enum: string[] }, options: { properties?: Record<string, { minimum: number, maximum: number }>, maxProperties?: number } } }
    const branches = bodyRules('/api/hash').flatMap((rule) => (rule as { anyOf?: Branch[] }).anyOf ?? []).filter((branch) => branch.properties.options)
    const argon2id = branches.find((branch) => branch.properties.algorithm.enum.includes('argon2id'))
    assert.deepEqual(argon2id?.required, ['algorithm'])
    assert.deepEqual(argon2id?.properties.options.properties?.memoryCost && { ...argon2id.properties.options.properties.memoryCost }, { ...argon2id?.properties.options.properties?.memoryCost, minimum: 8, maximum: 65536 })
    const sha1 = branches.find((branch) => branch.properties.algorithm.enum.includes('sha1'))
    assert.equal(sha1?.properties.options.maxProperties, 0, 'sha1 takes no options')
    assert.equal(sha1?.required, undefined, 'the branch of the algorithms without options also holds without an algorithm (sha256)')
    assert.ok(sha1?.properties.algorithm.enum.includes('sha256'))
    assert.equal(JSON.stringify(jsonBody('/api/hash')).includes('"if"'), false, 'no if/then in the body')
  })

  it('answers QUERY, with or without a body, like any other method a path does not list: 405 with Allow', async () => {
    for (const [path, init] of [['/api/algorithms', {}], ['/api/hash', { headers: { 'content-type': 'application/json' }, body: '{}' }]] as const) {
      const response = await server.fetch(path, { method: 'QUERY', ...init })
      assert.equal(response.status, 405, path)
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
      assert.ok(response.headers.get('allow'), path)
      await response.text()
    }
  })

  it('names the unstated 400 and 422 rules in each operation\'s description', () => {
    const description = (path: string) => String((document.paths[path]?.post as unknown as { description: string }).description)
    assert.match(description('/api/hmac'), /not valid in its encoding/)
    assert.match(description('/api/hash'), /options to an algorithm that takes none/)
    assert.match(description('/api/verify'), /malformed for the named/)
    assert.match(description('/api/calibrate'), /below-minimum/)
  })


  /** The `then` of the body's if/then rule whose `if` names `field` = `value`. */
  const thenFor = (path: string, field: string, value: unknown): Schema & { required?: string[] } | undefined => {
    type Rule = { if?: { properties?: Record<string, { const?: unknown, enum?: unknown[] }> }, then: Schema & { required?: string[] } }
    const names = (condition: { const?: unknown, enum?: unknown[] } | undefined) => condition?.const === value || (condition?.enum?.length === 1 && condition.enum[0] === value)
    return (bodyRules(path) as Rule[]).find((rule) => names(rule.if?.properties?.[field]))?.then
  }

  /** The pattern the body's allOf gives `field` when `encodingField` names `encoding` (an anyOf with a branch per encoding). */
  const patternFor = (path: string, field: string, encodingField: string, encoding: string): string | undefined => {
    type Branch = { required?: string[], properties?: Record<string, { enum?: unknown[], pattern?: string }> }
    const rules = (bodyRules(path) as Array<{ anyOf?: Branch[] }>).flatMap((rule) => rule.anyOf ?? [])
    const branch = rules.find((each) => each.required?.includes(encodingField) && each.properties?.[encodingField]?.enum?.[0] === encoding && each.properties[field])
    return branch?.properties?.[field]?.pattern
  }

  it('states each input encoding as a pattern (allOf), and the server refuses exactly the strings the pattern refuses', async () => {
    // Strings over the characters that matter (both base64 alphabets, padding, hex digits, a stray one), of every length mod 4.
    const strings = fc.array(fc.constantFrom(...'AZaz09+/_-=fF g'), { maxLength: 9 }).map((chars) => chars.join(''))
    for (const [path, field, encodingField, base] of [
      ['/api/hash', 'input', 'inputEncoding', {}],
      ['/api/verify', 'input', 'inputEncoding', { hash: 'd41d8cd98f00b204e9800998ecf8427e' }],
      ['/api/hmac', 'message', 'inputEncoding', { key: 'k' }],
      ['/api/hmac', 'key', 'keyEncoding', { message: 'm' }],
    ] as const) {
      for (const encoding of ['hex', 'base64']) {
        const pattern = patternFor(path, field, encodingField, encoding)
        assert.ok(pattern, `${path}: no pattern for ${field} under ${encodingField} ${encoding}`)
        await fc.assert(fc.asyncProperty(strings, async (value) => {
          // hmac's key has minLength 1: the empty key is another rule.
          if (field === 'key' && value === '') return
          const response = await server.post(path, { ...base, [field]: value, [encodingField]: encoding })
          const stated = new RegExp(pattern).test(value)
          assert.equal(response.status === 200, stated, `${path} ${field}=${JSON.stringify(value)} (${encoding}): ${response.status} ${response.text}`)
          if (!stated) assert.deepEqual(response.body.errors?.map((error: { pointer: string }) => error.pointer), [`/body/${field}`])
        }), { ...fuzzParameters(0.5), examples: [['AA'], ['AA='], ['AA=='], ['AAA'], ['AAA='], ['A'], ['AAAAA'], ['-_'], ['+_'], ['ff'], ['f']] })
      }
    }
  })

  it('states that "pepper": true and context take a password hash (pepper false or absent and no context, or a password algorithm), as the server answers', async () => {
    type Branch = { required?: string[], properties?: Record<string, { const?: unknown, enum?: string[] }> }
    const rule = (bodyRules('/api/hash') as Array<{ anyOf?: Branch[] }>).find((each) => each.anyOf?.[0]?.properties?.pepper)
    assert.deepEqual(rule?.anyOf?.[0], { properties: { pepper: { enum: [false] }, context: false } })
    const then = rule?.anyOf?.[1]
    assert.deepEqual(then?.required, ['algorithm'])
    const stated = then?.properties?.algorithm?.enum ?? []
    const passwordNames = ((await server.get('/api/algorithms')).body.algorithms as Array<{ name: string, kind: string, operations: string[] }>)
      .filter((entry) => entry.kind === 'password' && entry.operations.includes('hash')).map((entry) => entry.name)
    assert.deepEqual([...stated].sort(), [...passwordNames].sort())
    for (const body of [{ input: 'x', pepper: true }, { input: 'x', algorithm: 'shake256', pepper: true }, { input: 'x', algorithm: 'sha256', pepper: true }]) {
      const response = await server.post('/api/hash', body)
      assert.equal(response.status, 400, JSON.stringify(body))
      assert.equal(response.body.type, 'urn:hashd:problem:algorithm-not-allowed')
    }
  })

  it('states /api/calibrate\'s schemes as an enum, and each memory-hard scheme\'s floor for maxMemoryKiB', () => {
    const body = jsonBody('/api/calibrate')
    assert.deepEqual(body.properties?.algorithm?.enum, ['argon2id', 'bcrypt', 'bcrypt-sha256', 'scrypt', 'pbkdf2-sha256', 'pbkdf2-sha512', 'yescrypt'])
    // OWASP: argon2id m=7168 KiB with t=5; scrypt N=2^17, r=8 is 128·N·r bytes; yescrypt cost 5 is 16 MiB (libxcrypt).
    const floors = Object.fromEntries(['argon2id', 'scrypt', 'yescrypt'].map((name) => [name, (thenFor('/api/calibrate', 'algorithm', name)?.properties?.maxMemoryKiB as { minimum?: number } | undefined)?.minimum]))
    assert.deepEqual(floors, { argon2id: 7168, scrypt: (128 * 2 ** 17 * 8) / 1024, yescrypt: 16 * 1024 })
  })

  it('shows /docs as hashd API with a logo of its own', async () => {
    const html = await (await server.fetch(`/docs/`)).text()
    assert.match(html, /<title>hashd API<\/title>/)
    const initializer = await (await server.fetch(`/docs/static/swagger-initializer.js`)).text()
    assert.match(initializer, /data:image\/svg\+xml;base64,/)
  })
})

describe('the response checker', () => {
  const checker = () => new OpenApiChecker(document)
  const problem = JSON.stringify({ type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'slow down' })

  it('accepts a described response', () => {
    assert.deepEqual(checker().check({ method: 'POST', url: '/api/hash', status: 429, headers: { 'content-type': 'application/problem+json; charset=utf-8', 'retry-after': '3' }, body: problem }), [])
  })

  it('refuses an undocumented status, a wrong content type, a body outside the schema and a missing required header', () => {
    const check = checker()
    assert.match(check.check({ method: 'POST', url: '/api/hash', status: 418, headers: {}, body: '' }).join(), /not documented/)
    assert.match(check.check({ method: 'POST', url: '/api/hash', status: 400, headers: { 'content-type': 'application/json' }, body: problem }).join(), /content-type/)
    assert.match(check.check({ method: 'POST', url: '/api/hash', status: 200, headers: { 'content-type': 'application/json' }, body: '{"hash":1}' }).join(), /does not match/)
    assert.match(check.check({ method: 'POST', url: '/api/hash', status: 429, headers: { 'content-type': 'application/problem+json' }, body: problem }).join(), /Retry-After is missing/)
    assert.match(check.check({ method: 'DELETE', url: '/api/hash', status: 405, headers: { 'content-type': 'application/problem+json' }, body: problem }).join(), /Allow/)
  })
})

describe('the response checker for child processes (helpers/process.ts)', () => {
  it('checks what the test receives from a child: fetch, post, get and raw responses; stop fails after an undescribed one', async () => {
    const hashd = await startHashd({ RATE_LIMIT_MAX: '2' })
    const hash = await hashd.post('/api/hash', { input: 'abc' })
    // SHA-256("abc"), FIPS 180-2 appendix B.1.
    assert.equal(hash.body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.equal((await hashd.fetch('/api/hash', { method: 'DELETE' })).status, 405)
    assert.equal((await hashd.post('/api/hash', { input: 'abc' })).status, 429)
    assert.equal((await hashd.get('/api/health')).status, 200)
    assert.throws(() => hashd.check(rawResponse('POST', '/api/hash', 'HTTP/1.1 418 I\'m a teapot\r\ncontent-type: application/json\r\n\r\n{}')), /418: status not documented/)
    assert.throws(() => hashd.check(rawResponse('POST', '/api/hash', 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"hash":1}')), /does not match/)
    await assert.rejects(hashd.stop(), /responses not described[\s\S]*418[\s\S]*does not match/)
  })

  it('builds in this process the very document the child serves, with API keys and pepper keys set', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-openapi-'))
    const env = { API_KEYS_FILE: join(dir, 'keys'), PEPPER_KEYS_FILE: join(dir, 'pepper'), RATE_LIMIT_MAX: '5', MAX_ARGON2_MEMORY_KIB: '65536' }
    writeFileSync(env.API_KEYS_FILE, `doc ${'0'.repeat(64)}\n`)
    writeFileSync(env.PEPPER_KEYS_FILE, `k1 ${Buffer.alloc(32, 7).toString('base64')}\n`)
    const hashd = await startHashd(env)
    try {
      assert.deepEqual(await (await hashd.fetch('/api/openapi.json')).json(), await documentFor(env))
    } finally {
      await hashd.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reads a raw chunked response (RFC 9112 §7.1)', () => {
    const response = rawResponse('GET', '/api/ready', 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"st\r\na\r\natus":503}\r\n0\r\n\r\n')
    assert.deepEqual(response, { method: 'GET', url: '/api/ready', status: 503, headers: { 'content-type': 'application/problem+json', 'transfer-encoding': 'chunked' }, body: '{"status":503}' })
  })

  it('is not bypassed: no test fetches from a child process with a bare fetch', () => {
    const directory = new URL('../../test/', import.meta.url)
    for (const name of readdirSync(directory).filter((each) => each.endsWith('.test.ts'))) {
      const source = readFileSync(new URL(name, directory), 'utf8')
      if (!source.includes('startHashd(')) continue
      // A bare fetch of a template or sum built on some `url`, not through the server's own
      // checked fetch (HashdProcess and TestServer both have one).
      const bare = /(?<![.\w])fetch\(\s*(`\$\{[\w.]*url\}|[\w.]*url\s*\+)[^\n]*/.exec(source)?.[0]
      assert.equal(bare, undefined, `${name} fetches without the response check; use hashd.fetch/post/get`)
    }
  })
})
