/**
 * No input gives a 5xx: property-based tests (fast-check) against the real server. Random JSON in
 * every field of every operation, random algorithm names and option objects, random hashes for
 * verify and identify, multipart uploads with random boundaries, part orders, header sizes,
 * truncation points and aborts, and raw-body uploads cut short. Every answer must be 2xx, or 4xx
 * problem+json, and the server must answer the next request.
 *
 * The server runs with low cost caps so that random options stay cheap: anything above them is a
 * 422, which is itself one of the answers under test.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { assertAlive, assertCleanAnswer, fuzzParameters, rawExchange } from './helpers/fuzz.js'
import { startServer, type TestServer } from './helpers/server.js'

const CHEAP_CAPS = {
  MAX_BCRYPT_COST: '6', MAX_ARGON2_MEMORY_KIB: '1024', MAX_ARGON2_TIME_COST: '2', MAX_ARGON2_PARALLELISM: '2',
  MAX_SCRYPT_MEMORY_BYTES: String(1024 * 1024), MAX_SCRYPT_PARALLELISM: '2', MAX_PBKDF2_ITERATIONS: '2000', MAX_SHA_CRYPT_ROUNDS: '2000',
  MAX_WORK_MEMORY_BYTES: String(64 * 1024 * 1024),
}

const ENDPOINTS = ['/api/hash', '/api/verify', '/api/hmac', '/api/identify'] as const
const FIELDS = ['input', 'algorithm', 'encoding', 'inputEncoding', 'options', 'hash', 'hashes', 'key', 'message', 'keyEncoding'] as const
const ENCODINGS = ['hex', 'base64', 'base64url', 'utf8', 'standard', 'HEX', '']

let server: TestServer
let port = 0
let algorithmNames: string[] = []
let optionNames: string[] = []

before(async () => {
  server = await startServer(CHEAP_CAPS)
  port = Number(new URL(server.url).port)
  const catalogue = (await server.get('/api/algorithms')).body as { algorithms: Array<{ name: string, aliases: string[], options: Record<string, unknown> }> }
  algorithmNames = catalogue.algorithms.flatMap((algorithm) => [algorithm.name, ...algorithm.aliases])
  optionNames = [...new Set(catalogue.algorithms.flatMap((algorithm) => Object.keys(algorithm.options)))]
})
after(async () => { await server.close() })

/** Sends a JSON (or not-quite-JSON) body and checks the answer. */
async function postChecked(path: string, body: string, contentType = 'application/json'): Promise<void> {
  const response = await fetch(server.url + path, { method: 'POST', headers: { 'content-type': contentType }, body })
  assertCleanAnswer(response.status, response.headers.get('content-type'), await response.text(), `POST ${path} ${body.slice(0, 200)}`)
}

// Built lazily: the algorithm names come from the running server.
const algorithmName = () => fc.oneof(fc.constantFrom(...algorithmNames), fc.string({ maxLength: 40 }), fc.constantFrom('', ' sha256', 'SHA-256', 'sha3_256', 'argon2ID', 'x'.repeat(300)))
const anyValue = () => fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 2, arbitrary: algorithmName() },
  { weight: 1, arbitrary: fc.constantFrom(...ENCODINGS) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...optionNames, 'x', '__proto__'), fc.oneof(fc.integer(), fc.jsonValue({ maxDepth: 1 })), { maxKeys: 4 }) },
)
const optionsObject = () => fc.dictionary(
  fc.oneof(fc.constantFrom(...optionNames), fc.string({ maxLength: 40 })),
  fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -5, max: 70_000 }) }, { weight: 1, arbitrary: fc.integer() }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) }),
  { maxKeys: 5 },
)

/** Hash-looking text: the prefixes of the formats hashd reads, then random characters of their alphabets. */
const hashText = () => fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.tuple(
    fc.constantFrom('$2b$', '$2a$', '$2y$', '$2b$04$', '$argon2id$', '$argon2i$v=19$m=', '$argon2d$v=16$', '$scrypt$ln=', '$7$', '$y$', '$gy$', '$y$j9T$',
      '$6$', '$5$rounds=', '$1$', '$apr1$', '$P$', '$H$', '$S$', '{SSHA}', '{SSHA512}', '{SHA}', '{MD5}', '{CRYPT}', '$pbkdf2-sha256$', '$pbkdf2$',
      '$3$$', '_', '0x', '*', 'user:', 'root:$6$', ''),
    fc.string({ unit: fc.constantFrom(...'./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz$=,+:*'), maxLength: 120 }),
  ).map(([prefix, rest]) => prefix + rest),
  fc.uint8Array({ maxLength: 80 }).map((bytes) => Buffer.from(bytes).toString('hex')),
  fc.uint8Array({ maxLength: 80 }).map((bytes) => Buffer.from(bytes).toString('base64')),
)

describe('fuzz: every JSON operation answers 2xx or 4xx problem+json', () => {
  it('random JSON values and types in every field of every operation', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...ENDPOINTS),
      fc.oneof(
        { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS), anyValue(), { maxKeys: 6 }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
      ),
      async (path, body) => { await postChecked(path, JSON.stringify(body)) },
    ), fuzzParameters())
    await assertAlive(server.url)
  })

  it('bodies that are not JSON, or not declared as JSON', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...ENDPOINTS),
      fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.jsonValue().map((value) => JSON.stringify(value).slice(0, -1))),
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
      async (path, body, contentType) => { await postChecked(path, body, contentType) },
    ), fuzzParameters(0.5))
    await assertAlive(server.url)
  })

  it('random algorithm names and option objects for /api/hash and /api/hmac', async () => {
    await fc.assert(fc.asyncProperty(
      fc.boolean(), algorithmName(), optionsObject(), fc.string({ maxLength: 50 }),
      async (isHash, algorithm, options, input) => {
        if (isHash) await postChecked('/api/hash', JSON.stringify({ algorithm, input, options }))
        else await postChecked('/api/hmac', JSON.stringify({ algorithm, key: input || 'k', message: input }))
      },
    ), fuzzParameters())
    await assertAlive(server.url)
  })

  it('random hashes for /api/verify (with and without an algorithm) and /api/identify', async () => {
    await fc.assert(fc.asyncProperty(
      hashText(), fc.option(algorithmName(), { nil: undefined }), fc.string({ maxLength: 30 }), fc.boolean(),
      async (hash, algorithm, input, batch) => {
        await postChecked('/api/verify', JSON.stringify({ input, hash, ...(algorithm === undefined ? {} : { algorithm }) }))
        await postChecked('/api/identify', JSON.stringify(batch ? { hashes: [hash, hash.toUpperCase()] } : { hash }))
      },
    ), fuzzParameters())
    await assertAlive(server.url)
  })
})

/** RFC 2046 §5.1.1 bchars (without the space, which may not end a boundary). */
const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?"

interface Part { name: string, filename: string | null, contentType: string | null, padding: number, value: Uint8Array }

const part = (): fc.Arbitrary<Part> => fc.record({
  name: fc.constantFrom('file', 'file', 'algorithms', 'encoding', 'other', '', 'file"; x="'),
  filename: fc.option(fc.constantFrom('a.bin', '', '..\\..\\etc\\passwd', 'ü.txt', 'x'.repeat(300)), { nil: null }),
  contentType: fc.option(fc.constantFrom('application/octet-stream', 'text/plain; charset=utf-8', 'multipart/mixed; boundary=inner'), { nil: null }),
  // A long extra header line: header sizes up to and past the form reader's 8 KiB limit.
  padding: fc.oneof(fc.constant(0), fc.nat(200), fc.nat(100_000)),
  value: fc.oneof(
    fc.constantFrom('sha256', 'md5,sha1,blake3', 'crc32,nope', 'hex', 'base64url', 'bogus', '').map((text) => new TextEncoder().encode(text)),
    fc.uint8Array({ maxLength: 3000 }),
  ),
})

/** Mostly forms the route accepts (valid fields first, then the file), so that truncation and aborts hit every stage of a good upload. */
const form = (): fc.Arbitrary<Part[]> => fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(
      fc.subarray([
        { name: 'algorithms', filename: null, contentType: null, padding: 0, value: new TextEncoder().encode('sha256,md5,blake3') },
        { name: 'encoding', filename: null, contentType: null, padding: 0, value: new TextEncoder().encode('base64') },
      ]),
      fc.record({ name: fc.constant('file'), filename: fc.constantFrom('a.bin', 'data'), contentType: fc.constant('application/octet-stream'), padding: fc.nat(100), value: fc.uint8Array({ maxLength: 100_000 }) }),
    ).map(([fields, file]) => [...fields, file]),
  },
  { weight: 2, arbitrary: fc.array(part(), { maxLength: 5 }) },
)

function multipartBody(boundary: string, parts: Part[], close: boolean): Buffer {
  const chunks: Buffer[] = []
  for (const { name, filename, contentType, padding, value } of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename === null ? '' : `; filename="${filename}"`}\r\n`
    if (contentType !== null) head += `Content-Type: ${contentType}\r\n`
    if (padding > 0) head += `X-Padding: ${'p'.repeat(padding)}\r\n`
    chunks.push(Buffer.from(`${head}\r\n`, 'utf8'), Buffer.from(value), Buffer.from('\r\n'))
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

/**
 * How the upload is delivered: `exact` declares the (possibly truncated) body's true length;
 * `short-end` declares more than it sends, then half-closes; `short-abort` resets mid-body;
 * `chunked` sends it with chunked transfer coding, complete at the HTTP level.
 */
type Delivery = 'exact' | 'short-end' | 'short-abort' | 'chunked'

function request(path: string, contentType: string, body: Buffer, declared: number, delivery: Delivery): Buffer {
  const framing = delivery === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`
  const head = Buffer.from(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\n${framing}\r\nConnection: close\r\n\r\n`, 'latin1')
  const payload = delivery === 'chunked' && body.length > 0
    ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
    : delivery === 'chunked' ? Buffer.from('0\r\n\r\n') : body
  return Buffer.concat([head, payload])
}

async function deliver(path: string, contentType: string, full: Buffer, cut: number, delivery: Delivery, context: string): Promise<void> {
  const sent = full.subarray(0, cut)
  const declared = delivery === 'exact' || delivery === 'chunked' ? sent.length : full.length + 1
  const finish = delivery === 'short-abort' ? 'destroy' : delivery === 'short-end' ? 'end' : 'keep'
  const answer = await rawExchange(port, request(path, contentType, sent, declared, delivery), finish)
  // A complete request must get an answer; an incomplete one may get one early or none.
  if (delivery === 'exact' || delivery === 'chunked') {
    if (answer === null) throw new Error(`${context}: no answer to a complete request`)
  }
  if (answer) assertCleanAnswer(answer.status, answer.contentType, answer.body, context)
  await assertAlive(server.url)
}

describe('fuzz: uploads answer 2xx or 4xx problem+json and leave the server serving', () => {
  it('multipart streams with random boundaries, part orders, header sizes, truncation points and aborts', async () => {
    await fc.assert(fc.asyncProperty(
      fc.oneof({ weight: 5, arbitrary: fc.string({ unit: fc.constantFrom(...BCHARS), minLength: 1, maxLength: 70 }) }, { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 90 }) }),
      form(),
      fc.boolean(),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom<Delivery>('exact', 'exact', 'short-end', 'short-abort', 'chunked'),
      fc.boolean(),
      async (boundary, parts, close, fraction, delivery, truncate) => {
        const full = multipartBody(boundary, parts, close)
        const cut = truncate ? Math.floor(full.length * fraction) : full.length
        const contentType = `multipart/form-data; boundary=${/[^A-Za-z0-9'()+_,\-./:=?]/.test(boundary) ? `"${boundary.replace(/["\\\r\n]/g, '')}"` : boundary}`
        await deliver('/api/filehash', contentType, full, cut, delivery,
          `multipart boundary=${JSON.stringify(boundary)} parts=${parts.map((each) => `${each.name}:${each.value.length}`).join(',')} close=${close} cut=${cut}/${full.length} ${delivery}`)
      },
    ), fuzzParameters(0.75))
  })

  it('raw-body uploads (application/octet-stream) cut short', async () => {
    // A route that refused the raw body (415) would make every case below a refusal, and pass.
    const probe = await fetch(`${server.url}/api/filehash?algorithms=sha256`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'abc' })
    await probe.text()
    assert.equal(probe.status, 200, '/api/filehash takes application/octet-stream')
    await fc.assert(fc.asyncProperty(
      fc.uint8Array({ maxLength: 200_000 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom<Delivery>('exact', 'short-end', 'short-abort', 'chunked'),
      fc.constantFrom('?algorithms=sha256', '?algorithms=md5,sha1,blake3&encoding=base64', '?algorithms=nope', ''),
      async (bytes, fraction, delivery, query) => {
        const full = Buffer.from(bytes)
        const cut = Math.floor(full.length * fraction)
        await deliver(`/api/filehash${query}`, 'application/octet-stream', full, cut, delivery, `raw ${cut}/${full.length} ${delivery} ${query}`)
      },
    ), fuzzParameters(0.5))
  })
})
