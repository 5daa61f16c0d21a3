/**
 * Batches of digests and of digest checks (domain/batch.ts, routes/batch.ts): POST /api/hash and
 * POST /api/verify with `items`, each result checked against Python's hashlib; results in order with
 * their references, top-level fields as defaults that an item may override, one problem per failed
 * item (an unknown algorithm, a bad encoding, a password scheme: password-in-batch), one problem for
 * the whole batch when the top asks for password work, and the same answer shape a single request
 * gets.
 */
import assert from 'node:assert/strict'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { FastifyRequest } from 'fastify'
import { installObserver } from '../src/observe.js'
import { parseMetrics, valueOf } from './helpers/metrics.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

/** hashlib's digests of each input (utf-8), hex. */
function hashlib(algorithm: string, inputs: string[]): string[] {
  return JSON.parse(python(`import sys, json, hashlib; print(json.dumps([hashlib.new(sys.argv[1], s.encode()).hexdigest() for s in json.load(sys.stdin)]))`, [algorithm], JSON.stringify(inputs))) as string[]
}

describe('batches of digests and checks', { skip: skipUnless('python3') }, () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(() => server.close())

  it('POST /api/hash: one result per item in order, references echoed, top-level fields as defaults, per-item problems', async () => {
    const inputs = Array.from({ length: 500 }, (_, index) => `input ${index} ${'ü'.repeat(index % 5)}`)
    const items: Array<Record<string, unknown>> = inputs.map((input, index) => ({ input, reference: `row-${index}` }))
    items[3] = { input: 'x', algorithm: 'sha512', reference: 'override' }
    items[4] = { input: 'zz', inputEncoding: 'hex', reference: 'bad-hex' }
    items[5] = { input: 'pw', algorithm: 'argon2id', reference: 'password' }
    items[6] = { input: 'x', algorithm: 'sha-265' }
    const answer = await server.post('/api/hash', { algorithm: 'sha3-256', items })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<Record<string, unknown> & { problem?: Record<string, unknown> }>
    assert.equal(results.length, 500)
    assert.equal(typeof answer.body.processingTimeMs, 'number')
    const expected = hashlib('sha3_256', inputs)
    for (const [index, result] of results.entries()) {
      if (index >= 3 && index <= 6) continue
      // An item has no time of its own: the batch's processingTimeMs counts them all.
      assert.deepEqual(result, { reference: `row-${index}`, hash: expected[index], length: 64, algorithm: 'sha3-256', encoding: 'hex' })
    }
    assert.equal(results[3]!.hash, hashlib('sha512', ['x'])[0])
    assert.equal(results[3]!.reference, 'override')
    assert.deepEqual([results[4]!.reference, results[4]!.problem?.status, (results[4]!.problem?.errors as Array<{ pointer: string }>)[0]?.pointer], ['bad-hex', 400, '/body/items/4/input'])
    assert.deepEqual([results[5]!.problem?.status, results[5]!.problem?.type], [422, 'urn:hashd:problem:password-in-batch'])
    assert.deepEqual([results[6]!.reference, results[6]!.problem?.type, results[6]!.problem?.suggestions], [undefined, 'urn:hashd:problem:unknown-algorithm', ['sha256']])
    // `reference` first, in a result as in a problem: {reference, problem}, as documented.
    assert.deepEqual([0, 4, 5, 6].map((index) => Object.keys(results[index]!)), [
      ['reference', 'hash', 'length', 'algorithm', 'encoding'], ['reference', 'problem'], ['reference', 'problem'], ['problem']])
  })

  it('POST /api/verify: matches, mismatches and problems per item; password hashes and upgrade refused in a batch', async () => {
    const [md5, sha1] = [hashlib('md5', ['abc'])[0]!, hashlib('sha1', ['abc'])[0]!]
    const answer = await server.post('/api/verify', {
      items: [
        { input: 'abc', hash: md5, reference: 'a' },
        { input: 'abd', hash: md5, reference: 'b' },
        { input: 'abc', hash: sha1, algorithm: 'sha1', reference: 'c' },
        { input: 'abc', hash: '$2b$04$abcdefghijklmnopqrstuu5Ctvlsxh9f2Y5OHnoQ5LCVL8BR3ddyK', reference: 'bcrypt' },
        { input: 'abc', hash: md5, upgrade: true, reference: 'upgrade' },
        { input: 'abc', hash: 'not a hash at all', reference: 'junk' },
      ],
    })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<Record<string, unknown> & { problem?: Record<string, unknown> }>
    assert.deepEqual(results.map((result) => result.reference), ['a', 'b', 'c', 'bcrypt', 'upgrade', 'junk'])
    assert.deepEqual(results.slice(0, 3).map((result) => [result.match, result.algorithm]), [[true, 'md5'], [false, null], [true, 'sha1']])
    assert.equal(results[3]!.problem?.type, 'urn:hashd:problem:password-in-batch')
    assert.equal(results[4]!.problem?.type, 'urn:hashd:problem:password-in-batch')
    assert.equal(results[5]!.problem?.type, 'urn:hashd:problem:unrecognized-hash')
  })

  it('a field at the top that is wrong fails the whole batch, with its own pointer', async () => {
    const answer = await server.post('/api/hash', { algorithm: 'sha-265', items: [{ input: 'a' }, { input: 'b', algorithm: 'md5' }] })
    assert.equal(answer.status, 400)
    assert.equal(answer.body.type, 'urn:hashd:problem:unknown-algorithm')
    assert.deepEqual(answer.body.errors, [{ pointer: '/body/algorithm', message: 'unknown algorithm' }])
  })

  it('password work asked for at the top fails the whole batch (422 password-in-batch), before any item runs', async () => {
    const cases: Array<[path: string, top: Record<string, unknown>, pointer: string]> = [
      ['/api/hash', { algorithm: 'argon2id' }, '/body/algorithm'],
      ['/api/hash', { algorithm: 'bcrypt' }, '/body/algorithm'],
      ['/api/hash', { pepper: true }, '/body/pepper'],
      ['/api/hash', { context: ['alice'] }, '/body/context'],
      ['/api/verify', { upgrade: true }, '/body/upgrade'],
      ['/api/verify', { algorithm: 'bcrypt' }, '/body/algorithm'],
    ]
    const md5 = hashlib('md5', ['abc'])[0]!
    for (const [path, top, pointer] of cases) {
      // Each item names a digest of its own: still, the top asks every other item for password work.
      const items = path === '/api/hash' ? [{ input: 'abc', algorithm: 'md5' }, { input: 'abc' }] : [{ input: 'abc', hash: md5, algorithm: 'md5' }, { input: 'abc', hash: md5 }]
      const answer = await server.post(path, { ...top, items })
      assert.equal(answer.status, 422, `${path} ${JSON.stringify(top)}: ${answer.text}`)
      assert.equal(answer.body.type, 'urn:hashd:problem:password-in-batch')
      assert.equal(answer.body.results, undefined)
      assert.deepEqual(answer.body.errors, [{ pointer, message: 'password work is not batched' }])
    }
    // Options are read against each item's algorithm (an item may name its own): a wrong one is the item's.
    const options = await server.post('/api/hash', { algorithm: 'shake128', options: { outputLength: 16 }, items: [{ input: 'a' }, { input: 'b', algorithm: 'md5' }] })
    assert.equal(options.status, 200, options.text)
    assert.equal(options.body.results[0].hash, python('import hashlib; print(hashlib.shake_128(b"a").hexdigest(16))'))
    assert.equal(options.body.results[1].problem.errors[0].pointer, '/body/items/1/options/outputLength')
  })

  it('a single request is answered as before, and a single with items is refused', async () => {
    const single = await server.post('/api/hash', { input: 'abc' })
    assert.equal(single.body.hash, hashlib('sha256', ['abc'])[0])
    assert.equal(single.body.results, undefined)
    const both = await server.post('/api/hash', { input: 'abc', items: [{ input: 'abc' }] })
    assert.equal(both.status, 400)
    assert.match(both.body.detail, /must match exactly one of the alternatives|send only one/)
    const neither = await server.post('/api/verify', { algorithm: 'md5' })
    assert.equal(neither.status, 400)
    assert.match(neither.body.detail, /must have exactly one of input, hash, items|exactly one/)
  })
})

/**
 * The server runs in this process, so the test watches it on the event loop itself, with no clock:
 * Fastify's tracing channel (`tracing:fastify.request.handler`) says when each handler starts and
 * ends, and an observer put in place of the metrics' one (src/observe.ts, where every hashed item is
 * counted) says when the batch's first and last items are hashed. Items are counted, not timed.
 */
describe('the batch runner lets other requests in, and stops for a client that went away', () => {
  let server: TestServer
  // 40,000 items of ten bytes: tens of milliseconds of hashing at the least, many slices of SLICE_MS (4 ms).
  const ITEMS = 40_000
  const INPUT_BYTES = 10
  const batchBody = (algorithm: string) => JSON.stringify({ algorithm, items: Array.from({ length: ITEMS }, (_, index) => ({ input: String(index).padStart(INPUT_BYTES, '0') })) })
  before(async () => { server = await startServer({ MAX_BATCH_ITEMS: String(ITEMS) }) })
  after(() => server.close())

  const CHANNEL = 'tracing:fastify.request.handler'
  type Store = { request: FastifyRequest, error?: unknown }
  const isBatch = (store: Store) => (store.request.body as { items?: unknown } | undefined)?.items !== undefined

  /** Calls `listener` with the store of every handler event `event` (start, asyncEnd…) until the returned function is called. */
  function onHandler(event: string, listener: (store: Store) => void): () => void {
    const channel = `${CHANNEL}:${event}`
    const untyped = (message: unknown) => listener(message as Store)
    subscribe(channel, untyped)
    return () => unsubscribe(channel, untyped)
  }

  it('a large batch does not hold the event loop: other requests are handled between its first and last items', async () => {
    let othersStarted = 0
    const stopCounting = onHandler('start', (store) => { if (!isBatch(store)) othersStarted++ })
    // Other handlers begun by the time the batch's first item was hashed, and by its last.
    let hashedItems = 0
    let atFirst = -1
    let atLast = -1
    const uninstall = installObserver({
      hashedBytes(operation, algorithm) {
        if (operation !== 'hash' || algorithm !== 'sha256') return
        hashedItems++
        if (hashedItems === 1) atFirst = othersStarted
        if (hashedItems === ITEMS) atLast = othersStarted
      },
      passwordOperation() {},
      keyUse() {},
    })
    let finished = false
    try {
      // Requests one after another on their own connection, for as long as the batch runs.
      const others = (async () => {
        while (!finished) await (await fetch(`${server.url}/api/health`)).arrayBuffer()
      })()
      const batch = await server.post('/api/hash', batchBody('sha256'))
      finished = true
      await others
      assert.equal(batch.status, 200)
      assert.equal(batch.body.results.length, ITEMS)
    } finally {
      finished = true
      uninstall()
      stopCounting()
    }
    assert.equal(hashedItems, ITEMS)
    // Had the batch run its items in one go, no other handler could have begun between its first and last.
    assert.ok(atLast - atFirst >= 1, `${atLast - atFirst} other requests handled between the batch's first and last items`)
  })

  it('a client that disconnects mid-batch stops the work: fewer items are hashed than it sent', async () => {
    const hashed = async () => valueOf(parseMetrics((await server.get('/metrics')).text), 'hashd_hashed_bytes_total', { operation: 'hash', algorithm: 'sha384' })
    const before = await hashed()
    const body = batchBody('sha384')
    const { port } = new URL(server.url)
    const socket = connect(Number(port), '127.0.0.1')
    socket.on('error', () => {})
    // The client hangs up as soon as the batch's handler begins: every item is still to run.
    const stopWatching = onHandler('start', (store) => { if (isBatch(store)) socket.destroy() })
    const ended = new Promise<Store>((resolve) => {
      const stop = onHandler('asyncEnd', (store) => { if (isBatch(store)) { stop(); resolve(store) } })
    })
    try {
      socket.write(`POST /api/hash HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      const store = await ended
      assert.equal((store.error as { status?: number } | undefined)?.status, 499, 'the batch ended as Client Closed Request')
    } finally {
      stopWatching()
    }
    const bytes = (await hashed()) - before
    assert.ok(bytes > 0 && bytes < ITEMS * INPUT_BYTES, `${bytes / INPUT_BYTES} of ${ITEMS} items hashed after the client left`)
  })
})
