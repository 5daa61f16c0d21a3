/**
 * Named HMAC keys end to end, against Python's `hmac` both ways: HMACs Python makes under the
 * secrets of HMAC_KEYS_FILE verify in hashd (raw and tagged, every version state), and HMACs hashd
 * makes (hex, base64, base64url, tagged; sha256 and the key's other algorithms) verify in Python.
 * Then the rules: rotateRecommended, min-verify-version and retired versions (not valid, with a
 * reason), a version no longer configured (422), bad input (problem+json, never a 5xx), batches
 * (each item checked by Python, references, per-item problems, a key field wrong at the top failing
 * the whole batch before any item runs, the limits), scoped API keys (403
 * naming the scope), the audit (metrics by key, version and operation, with no series for an
 * unknown name; the access line names key and version, never the message), and identify's row for
 * the tagged form.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { hashKey } from '../src/keys/api-keys.js'
import { pythonHmac, type PyMade } from './helpers/hmac.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-hmac-keys-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const secret = (bytes = 32) => randomBytes(bytes).toString('base64')
let count = 0
const file = (text: string) => {
  const path = join(dir, `keys-${count++}`)
  writeFileSync(path, text)
  return path
}

/** orders: 1 below the floor, 2 previous, 3 current, 4 staged, 5 retired; users: one version. */
const S = { o1: secret(), o2: secret(), o3: secret(64), o4: secret(), o5: secret(), u9: secret() }
const HMAC_KEYS = [
  `orders 1 ${S.o1} algorithms=sha256,sha512,sha3-256 min-verify-version=2`,
  `orders 2 ${S.o2}`,
  `orders 3 ${S.o3}`,
  `orders 4 ${S.o4} state=staged`,
  `orders 5 ${S.o5} state=retired`,
  `users 9 ${S.u9}   # one version`,
].join('\n')

const problemJson = (response: { status: number, headers: Headers, body: { status: number } }, status: number) => {
  assert.equal(response.status, status, JSON.stringify(response.body))
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
  assert.equal(response.body.status, status)
}

describe('named HMAC keys against Python\'s hmac', { skip: skipUnless('python3') }, () => {
  let server: TestServer
  before(async () => { server = await startServer({ HMAC_KEYS_FILE: file(HMAC_KEYS) }) })
  after(() => server.close())

  it('hashd\'s HMACs verify in Python: the current version by default, keyVersion, every encoding, tagged, other algorithms', async () => {
    const message = 'order #1234: 3 × widget, €12.50'
    const cases: Array<{ body: Record<string, unknown>, secret: string, algorithm: string, encoding: 'hex' | 'base64' | 'base64url', version: number }> = [
      { body: {}, secret: S.o3, algorithm: 'sha256', encoding: 'hex', version: 3 },
      { body: { keyVersion: 2, encoding: 'base64' }, secret: S.o2, algorithm: 'sha256', encoding: 'base64', version: 2 },
      { body: { keyVersion: 4, encoding: 'base64url' }, secret: S.o4, algorithm: 'sha256', encoding: 'base64url', version: 4 },
      { body: { algorithm: 'SHA-512' }, secret: S.o3, algorithm: 'sha512', encoding: 'hex', version: 3 },
      { body: { algorithm: 'sha3-256', keyVersion: 2 }, secret: S.o2, algorithm: 'sha3-256', encoding: 'hex', version: 2 },
      { body: { format: 'tagged' }, secret: S.o3, algorithm: 'sha256', encoding: 'base64', version: 3 },
      { body: { format: 'tagged', keyVersion: 4, algorithm: 'sha512' }, secret: S.o4, algorithm: 'sha512', encoding: 'base64', version: 4 },
    ]
    const answers: string[] = []
    for (const each of cases) {
      const answer = await server.post('/api/hmac', { message, keyName: 'orders', ...each.body })
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.keyName, 'orders')
      assert.equal(answer.body.keyVersion, each.version)
      assert.equal(answer.body.algorithm, each.algorithm)
      if (each.body.format === 'tagged') {
        assert.match(answer.body.hmac, new RegExp(`^hashd:v${each.version}:[A-Za-z0-9+/]+=*$`))
        assert.equal(answer.body.format, 'tagged')
      }
      answers.push(answer.body.hmac as string)
    }
    const checked = pythonHmac<boolean>(cases.map((each, index) => ({ op: 'check', secret: each.secret, message, algorithm: each.algorithm, hmac: answers[index]!, encoding: each.encoding })))
    assert.deepEqual(checked, cases.map(() => true))
    // And not under another version's secret.
    assert.deepEqual(pythonHmac<boolean>([{ op: 'check', secret: S.o2, message, hmac: answers[0]!, encoding: 'hex' }]), [false])
  })

  it('Python\'s HMACs verify in hashd: tagged and raw, rotateRecommended for older versions, not for staged ones', async () => {
    const message = 'user 42 <alice@example.org>'
    const [v2, v3, v4, u9] = pythonHmac<PyMade>([
      { op: 'make', secret: S.o2, message }, { op: 'make', secret: S.o3, message }, { op: 'make', secret: S.o4, message }, { op: 'make', secret: S.u9, message },
    ]) as [PyMade, PyMade, PyMade, PyMade]
    const check = (hmac: string, extra: Record<string, unknown> = {}) => server.post('/api/hmac/verify', { message, hmac, keyName: 'orders', ...extra })

    const current = await check(`hashd:v3:${v3.base64}`)
    assert.deepEqual([current.status, current.body.valid, current.body.keyVersion, current.body.rotateRecommended], [200, true, 3, false])
    const older = await check(`hashd:v2:${v2.base64}`)
    assert.deepEqual([older.body.valid, older.body.keyVersion, older.body.rotateRecommended], [true, 2, true])
    assert.match(older.body.reason, /valid under version 2; the current version is 3/)
    const staged = await check(`hashd:v4:${v4.base64}`)
    assert.deepEqual([staged.body.valid, staged.body.rotateRecommended], [true, false])
    // Untagged: every version that verifies, newest first; the one that matched is named.
    const raw = await check(v2.hex)
    assert.deepEqual([raw.body.valid, raw.body.keyVersion, raw.body.rotateRecommended], [true, 2, true])
    assert.deepEqual([(await check(v3.base64url)).body.keyVersion, (await check(v4.base64)).body.keyVersion], [3, 4])
    const pinned = await check(v3.hex, { keyVersion: 2 })
    assert.deepEqual([pinned.body.valid, pinned.body.keyVersion], [false, 2])
    // Another key's HMAC, the wrong message, a tag of the wrong version: not valid, with a reason.
    const foreign = await check(u9.hex)
    assert.deepEqual([foreign.body.valid, foreign.body.keyVersion], [false, null])
    assert.match(foreign.body.reason, /under any version of key orders that verifies \(4, 3, 2\)/)
    assert.equal((await server.post('/api/hmac/verify', { message: `${message}.`, hmac: `hashd:v3:${v3.base64}`, keyName: 'orders' })).body.valid, false)
    assert.equal((await check(`hashd:v2:${v3.base64}`)).body.valid, false)
    const users = await server.post('/api/hmac/verify', { message, hmac: u9.hex, keyName: 'users' })
    assert.deepEqual([users.body.valid, users.body.keyVersion], [true, 9])
    // The caller's own key, as before: Python's HMAC with the same key verifies.
    const own = pythonHmac<PyMade>([{ op: 'make', secret: Buffer.from('my own key').toString('base64'), message }])[0]!
    const withKey = await server.post('/api/hmac/verify', { message, hmac: own.hex, key: 'my own key' })
    assert.deepEqual([withKey.body.valid, withKey.body.rotateRecommended, withKey.body.keyName], [true, false, undefined])
  })

  it('a version below min-verify-version or retired is not valid and says why; one no longer configured is 422', async () => {
    const message = 'floor'
    const [v1, v5] = pythonHmac<PyMade>([{ op: 'make', secret: S.o1, message }, { op: 'make', secret: S.o5, message }]) as [PyMade, PyMade]
    const below = await server.post('/api/hmac/verify', { message, hmac: `hashd:v1:${v1.base64}`, keyName: 'orders' })
    assert.deepEqual([below.status, below.body.valid, below.body.keyVersion, below.body.rotateRecommended], [200, false, 1, false])
    assert.match(below.body.reason, /version 1 of key orders is below its min-verify-version 2/)
    const retired = await server.post('/api/hmac/verify', { message, hmac: `hashd:v5:${v5.base64}`, keyName: 'orders' })
    assert.deepEqual([retired.body.valid, retired.body.keyVersion], [false, 5])
    assert.match(retired.body.reason, /version 5 of key orders is retired/)
    // Untagged, they are not tried at all.
    assert.equal((await server.post('/api/hmac/verify', { message, hmac: v1.hex, keyName: 'orders' })).body.valid, false)
    const gone = await server.post('/api/hmac/verify', { message, hmac: `hashd:v6:${v1.base64}`, keyName: 'orders' })
    problemJson(gone, 422)
    assert.equal(gone.body.type, 'urn:hashd:problem:unknown-key-version')
    // The version, not the name: no problem repeats a key name (the client knows which it sent).
    assert.deepEqual([gone.body.keyName, gone.body.keyVersion], [undefined, 6])
    // Making new HMACs with them is refused.
    const make = await server.post('/api/hmac', { message, keyName: 'orders', keyVersion: 5 })
    problemJson(make, 422)
    assert.equal(make.body.type, 'urn:hashd:problem:key-version-retired')
  })

  it('bad input is a clear problem+json, never a 5xx', async () => {
    const cases: Array<[string, Record<string, unknown>, number, RegExp]> = [
      ['/api/hmac', { message: 'm', key: 'k', keyName: 'orders' }, 400, /either key .* or keyName .*, not both/],
      ['/api/hmac', { message: 'm' }, 400, /Send key .* or keyName/],
      ['/api/hmac', { message: 'm', keyName: 'nope' }, 422, /keyName names no key of this server/],
      ['/api/hmac', { message: 'm', keyName: 'orders', keyVersion: 8 }, 422, /^The key has no version 8 \(it has 1, 2, 3, 4, 5\)/],
      ['/api/hmac', { message: 'm', keyName: 'orders', algorithm: 'md5' }, 422, /^This key may be used with sha256, sha512, sha3-256 .*not md5/],
      ['/api/hmac', { message: 'm', keyName: 'orders', algorithm: 'bcrypt' }, 400, /bcrypt cannot be used with \/api\/hmac/],
      ['/api/hmac', { message: 'm', key: 'k', keyVersion: 2 }, 400, /keyVersion applies to keyName only/],
      ['/api/hmac', { message: 'm', key: 'k', format: 'tagged' }, 400, /format "tagged" needs a named key/],
      ['/api/hmac', { message: 'm', keyName: 'bad name!' }, 400, /does not match the schema/],
      ['/api/hmac/verify', { message: 'm', hmac: 'hashd:v3:***', keyName: 'orders' }, 400, /starts like a tag but is not/],
      ['/api/hmac/verify', { message: 'm', hmac: 'hashd:v3:AAAA', key: 'k' }, 400, /A tagged HMAC names a version of a key this server holds/],
      ['/api/hmac/verify', { message: 'm', hmac: 'hashd:v3:AAAA', keyName: 'orders', keyVersion: 2 }, 400, /keyVersion 2 disagrees with the tag's v3/],
      ['/api/hmac/verify', { message: 'm', hmac: 'not*hex', keyName: 'orders' }, 400, /neither hex, base64, base64url nor a hashd:v<version>: tag/],
      ['/api/hmac/verify', { message: 'm', hmac: 'aa', key: 'k', keyName: 'orders' }, 400, /not both/],
    ]
    for (const [path, body, status, detail] of cases) {
      const answer = await server.post(path, body)
      problemJson(answer, status)
      assert.match(answer.body.detail, detail, `${path} ${JSON.stringify(body)}`)
    }
    // A server without HMAC_KEYS_FILE: 422 no-hmac-keys, while `key` works as always.
    const bare = await startServer()
    try {
      const none = await bare.post('/api/hmac', { message: 'm', keyName: 'orders' })
      problemJson(none, 422)
      assert.equal(none.body.type, 'urn:hashd:problem:no-hmac-keys')
    } finally {
      await bare.close()
    }
  })

  it('identify recognises a tagged HMAC and says /api/verify does not check it', async () => {
    const tag = (await server.post('/api/hmac', { message: 'x', keyName: 'orders', format: 'tagged' })).body.hmac as string
    const identified = await server.post('/api/identify', { hash: tag })
    assert.equal(identified.status, 200)
    const best = identified.body.matches[0]
    assert.equal(best.algorithm, 'hashd-tagged-hmac')
    assert.equal(best.verifiable, false)
  })
})

describe('batches of HMACs', { skip: skipUnless('python3') }, () => {
  let server: TestServer
  before(async () => { server = await startServer({ HMAC_KEYS_FILE: file(HMAC_KEYS), MAX_BATCH_ITEMS: '300', MAX_BATCH_BODY_BYTES: String(64 * 1024), BODY_LIMIT: '8192' }) })
  after(() => server.close())

  it('one result per item, in order, with references; top-level fields as defaults; a failed item does not fail the batch; all checked by Python', async () => {
    const items = Array.from({ length: 250 }, (_, index) => ({ message: `row ${index} ${'é'.repeat(index % 7)}`, reference: `r${index}`, ...(index % 50 === 7 ? { keyVersion: 2 } : {}) }))
    items[100] = { message: 'x', reference: 'bad', keyName: 'nope' } as typeof items[0]
    const answer = await server.post('/api/hmac', { keyName: 'orders', items })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<{ reference?: string, hmac?: string, keyVersion?: number, problem?: { status: number, type: string } }>
    assert.equal(results.length, 250)
    assert.deepEqual(results.map((result) => result.reference), items.map((item) => item.reference))
    assert.deepEqual([results[100]!.problem?.status, results[100]!.problem?.type], [422, 'urn:hashd:problem:unknown-key'])
    const good = items.map((item, index) => ({ item, result: results[index]! })).filter(({ result }) => result.hmac !== undefined)
    assert.equal(good.length, 249)
    const checked = pythonHmac<boolean>(good.map(({ item, result }) => ({
      op: 'check', secret: item.keyVersion === 2 ? S.o2 : S.o3, message: item.message, hmac: result.hmac!, encoding: 'hex',
    })))
    assert.ok(checked.every(Boolean))
    assert.ok(good.every(({ item, result }) => result.keyVersion === (item.keyVersion ?? 3)))
    // Each item as the single answer less its processingTimeMs, `reference` first; the batch has its own time.
    assert.deepEqual(Object.keys(results[0]!), ['reference', 'hmac', 'algorithm', 'encoding', 'keyName', 'keyVersion'])
    assert.equal(typeof answer.body.processingTimeMs, 'number')

    // Verify them back in one batch, tagged and raw mixed.
    const verify = await server.post('/api/hmac/verify', { keyName: 'orders', items: good.slice(0, 50).map(({ item, result }, index) => ({ message: item.message, hmac: result.hmac, reference: String(index) })) })
    assert.ok((verify.body.results as Array<{ valid: boolean }>).every((result) => result.valid))
    assert.ok((verify.body.results as Array<Record<string, unknown>>).every((result) => !('processingTimeMs' in result)))
  })

  it('an item\'s own key or keyName replaces the batch\'s key choice; a key field at the top that is wrong fails the whole batch, before any item runs', async () => {
    const mine = Buffer.from('an item\'s own key').toString('base64')
    const answer = await server.post('/api/hmac', {
      keyName: 'orders', keyVersion: 2,
      items: [{ message: 'a' }, { message: 'b', key: mine, keyEncoding: 'base64' }, { message: 'c', keyName: 'orders' }, { message: 'd', keyVersion: 3 }],
    })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<{ hmac?: string, keyName?: string, keyVersion?: number, problem?: unknown }>
    const [a, b, c, d] = pythonHmac<PyMade>([
      { op: 'make', secret: S.o2, message: 'a' }, { op: 'make', secret: mine, message: 'b' }, { op: 'make', secret: S.o3, message: 'c' }, { op: 'make', secret: S.o3, message: 'd' },
    ])
    assert.deepEqual(results.map((result) => [result.hmac, result.keyName, result.keyVersion]), [
      [a!.hex, 'orders', 2], // the batch's key and version
      [b!.hex, undefined, undefined], // its own key: neither the batch's keyName nor its keyVersion
      [c!.hex, 'orders', 3], // its own keyName: the current version, not the batch's keyVersion
      [d!.hex, 'orders', 3], // its own version of the batch's key
    ])
    // An item's own unknown keyName is that item's problem; the others are answered.
    const own = await server.post('/api/hmac', { keyName: 'orders', items: [{ message: 'a' }, { message: 'b', keyName: 'no-such-key' }] })
    assert.equal(own.status, 200, own.text)
    const [fine, failed] = own.body.results as Array<{ hmac?: string, problem?: { type: string, errors?: Array<{ pointer: string }> } }>
    assert.equal(fine!.hmac, pythonHmac<PyMade>([{ op: 'make', secret: S.o3, message: 'a' }])[0]!.hex)
    assert.equal(failed!.problem?.type, 'urn:hashd:problem:unknown-key')
    assert.deepEqual(failed!.problem?.errors?.map((error) => error.pointer), ['/body/items/1/keyName'])
    assert.ok(!own.text.includes('no-such-key'), 'an unknown key name came back')

    // The same mistake at the top would fail every item that takes it: one 4xx for the batch, its
    // pointer at the top, the name not echoed, whatever the items carry (an item with its own key too).
    const cases: Array<[path: string, top: Record<string, unknown>, status: number, type: string, pointers: string[]]> = [
      ['/api/hmac', { keyName: 'no-such-key' }, 422, 'unknown-key', ['/body/keyName']],
      ['/api/hmac/verify', { keyName: 'no-such-key' }, 422, 'unknown-key', ['/body/keyName']],
      ['/api/hmac', { keyName: 'orders', keyVersion: 7 }, 422, 'unknown-key-version', []],
      ['/api/hmac/verify', { keyName: 'orders', keyVersion: 7 }, 422, 'unknown-key-version', []],
      ['/api/hmac', { keyName: 'orders', keyVersion: 5 }, 422, 'key-version-retired', ['/body/keyVersion']],
      ['/api/hmac', { keyName: 'orders', key: mine }, 400, 'validation', ['/body/key', '/body/keyName']],
      ['/api/hmac', { keyVersion: 2 }, 400, 'validation', ['/body/keyVersion']],
    ]
    for (const [path, top, status, type, pointers] of cases) {
      const items = [{ message: 'a', ...(path.endsWith('verify') ? { hmac: 'ab'.repeat(32) } : {}) }, { message: 'b', key: mine, keyEncoding: 'base64', ...(path.endsWith('verify') ? { hmac: 'ab'.repeat(32) } : {}) }]
      const answer = await server.post(path, { ...top, items })
      problemJson(answer, status)
      assert.equal(answer.body.type, `urn:hashd:problem:${type}`, `${path} ${JSON.stringify(top)}`)
      assert.equal(answer.body.results, undefined)
      assert.deepEqual((answer.body.errors as Array<{ pointer: string }> | undefined ?? []).map((error) => error.pointer), pointers, `${path} ${JSON.stringify(top)}`)
      assert.ok(!answer.text.includes('no-such-key'), 'an unknown key name came back')
    }
    // An algorithm or a format at the top is taken with each item's key, which an item may choose
    // itself: what the top's key does not allow is the item's problem.
    const algorithm = await server.post('/api/hmac', { keyName: 'orders', algorithm: 'sha384', items: [{ message: 'a' }, { message: 'b', key: mine, keyEncoding: 'base64' }] })
    assert.equal(algorithm.status, 200, algorithm.text)
    assert.deepEqual([algorithm.body.results[0].problem?.type, algorithm.body.results[0].problem?.errors[0].pointer], ['urn:hashd:problem:algorithm-not-allowed-for-key', '/body/items/0/algorithm'])
    assert.equal(algorithm.body.results[1].hmac, pythonHmac<PyMade>([{ op: 'make', secret: mine, message: 'b', algorithm: 'sha384' }])[0]!.hex)
    const tagged = await server.post('/api/hmac', { key: mine, keyEncoding: 'base64', format: 'tagged', items: [{ message: 'a' }, { message: 'b', keyName: 'orders' }] })
    assert.equal(tagged.status, 200, tagged.text)
    assert.equal(tagged.body.results[0].problem?.errors[0].pointer, '/body/items/0/format')
    assert.match(tagged.body.results[1].hmac, /^hashd:v3:/)
    // Checking HMACs under a retired version is not a mistake: each is `valid: false`, with the reason.
    const retired = await server.post('/api/hmac/verify', { keyName: 'orders', keyVersion: 5, items: [{ message: 'a', hmac: 'ab'.repeat(32) }] })
    assert.equal(retired.status, 200, retired.text)
    assert.deepEqual([retired.body.results[0].valid, retired.body.results[0].keyVersion], [false, 5])
  })

  it('a batch refused at the top runs no item: no key use is counted', async () => {
    const uses = async () => {
      const metrics = (await server.get('/metrics')).text
      return [...metrics.matchAll(/^hashd_key_uses_total\{ring="hmac",key="orders",version="3",operation="hmac"\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0)
    }
    const before = await uses()
    const refused = await server.post('/api/hmac', { keyName: 'orders', keyVersion: 7, items: [{ message: 'a' }, { message: 'b', keyName: 'orders' }] })
    problemJson(refused, 422)
    assert.equal(await uses(), before)
    // The same items under a top the key allows are made, and counted.
    const made = await server.post('/api/hmac', { keyName: 'orders', items: [{ message: 'a' }, { message: 'b', keyName: 'orders' }] })
    assert.equal(made.status, 200, made.text)
    assert.equal(await uses(), before + 2)
  })

  it('every item\'s HMAC equals Python\'s: hex, base64, base64url and tagged, sha256 and sha512, messages of 1 to 200 bytes, text and binary (inputEncoding); references echoed exactly', async () => {
    const encodings = ['hex', 'base64', 'base64url', 'tagged'] as const
    type Item = { message: string, inputEncoding?: string, encoding?: 'hex' | 'base64' | 'base64url', format?: 'tagged', algorithm?: string, reference: string, bytes: Buffer | null }
    const items = Array.from({ length: 200 }, (_, index): Item => {
      const length = index + 1
      const binary = index % 3 === 1 ? randomBytes(length) : null
      const encoding = encodings[index % 4]!
      return {
        // Text of every length (across the 55- and 64-byte block edges), some of it beyond ASCII; binary as base64 or hex.
        message: binary ? binary.toString(index % 2 ? 'base64' : 'hex') : `${'é€'.repeat(index % 5)}m${'x'.repeat(length)}`.slice(0, length),
        ...(binary ? { inputEncoding: index % 2 ? 'base64' : 'hex' } : {}),
        ...(encoding === 'tagged' ? { format: 'tagged' as const } : { encoding }),
        ...(index % 5 === 4 ? { algorithm: 'sha512' } : {}),
        // References with what JSON must escape (quotes, backslashes, control characters) and beyond ASCII.
        reference: index % 10 === 3 ? `${index} "q" \\ \n\u0001 é ☃` : String(index),
        bytes: binary,
      }
    })
    const answer = await server.post('/api/hmac', { keyName: 'orders', items: items.map(({ bytes: _bytes, ...item }) => item) })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<{ reference: string, hmac: string, encoding: string, format?: string, algorithm: string, keyVersion: number }>
    assert.deepEqual(results.map((result) => result.reference), items.map((item) => item.reference))
    assert.ok(results.every((result, index) => result.algorithm === (items[index]!.algorithm ?? 'sha256') && result.keyVersion === 3))
    assert.ok(results.every((result, index) => items[index]!.format === 'tagged' ? result.format === 'tagged' && result.hmac.startsWith('hashd:v3:') : result.encoding === items[index]!.encoding))
    const checked = pythonHmac<boolean>(items.map((item, index) => ({
      op: 'check' as const, secret: S.o3, hmac: results[index]!.hmac, algorithm: item.algorithm ?? 'sha256',
      encoding: item.format === 'tagged' ? 'base64' as const : item.encoding!,
      ...(item.bytes ? { messageBase64: item.bytes.toString('base64') } : { message: item.message }),
    })))
    assert.deepEqual(checked.map((ok, index) => ok ? null : index).filter((index) => index !== null), [])
  })

  it('limits: more items than MAX_BATCH_ITEMS is 400, a body over MAX_BATCH_BODY_BYTES 413, a single request over BODY_LIMIT 413', async () => {
    const tooMany = await server.post('/api/hmac', { keyName: 'orders', items: Array.from({ length: 301 }, () => ({ message: 'm' })) })
    problemJson(tooMany, 400)
    assert.match(tooMany.body.detail, /\/body\/items must NOT have more than 300 items/)
    const tooLarge = await server.post('/api/hmac', { keyName: 'orders', items: Array.from({ length: 200 }, () => ({ message: 'm'.repeat(400) })) })
    problemJson(tooLarge, 413)
    const bigSingle = await server.post('/api/hmac', { keyName: 'orders', message: 'm'.repeat(9000) })
    problemJson(bigSingle, 413)
    assert.match(bigSingle.body.detail, /larger than BODY_LIMIT .*only a batch/)
    const both = await server.post('/api/hmac', { keyName: 'orders', message: 'm', items: [{ message: 'n' }] })
    problemJson(both, 400)
    const empty = await server.post('/api/hmac', { keyName: 'orders', items: [] })
    problemJson(empty, 400)
  })
})

describe('batches against the rate limit: a budget of items beside the one of requests', () => {
  it('counts a batch as one request and its items in the items budget, refuses one that does not fit whole and charges it nothing, and says which budget refused', async () => {
    const [one, two] = [`hk_${randomBytes(32).toString('base64url')}`, `hk_${randomBytes(32).toString('base64url')}`]
    const server = await startServer({
      RATE_LIMIT_MAX: '30', RATE_LIMIT_ITEMS_MAX: '30', HMAC_KEYS_FILE: file(HMAC_KEYS),
      API_KEYS_FILE: file(`one ${hashKey(one)}\ntwo ${hashKey(two)} 5 items=12\n`),
    })
    const as = (key: string, path: string, body: unknown) => server.post(path, body, { authorization: `Bearer ${key}` })
    const batch = (length: number) => ({ keyName: 'orders', items: Array.from({ length }, (_, i) => ({ message: String(i) })) })
    try {
      const first = await as(one, '/api/hmac', batch(10))
      assert.equal(first.status, 200)
      assert.equal(first.headers.get('ratelimit-policy'), '"default";q=30;w=60, "items";q=30;w=60')
      assert.match(first.headers.get('ratelimit') ?? '', /^"default";r=29;t=\d+, "items";r=20;t=\d+$/)
      const single = await as(one, '/api/hash', { input: 'a' })
      assert.equal(single.headers.get('ratelimit-policy'), '"default";q=30;w=60')
      assert.match(single.headers.get('ratelimit') ?? '', /^"default";r=28;t=\d+$/)

      const over = await as(one, '/api/hmac', batch(25))
      problemJson(over, 429)
      assert.ok(Number(over.headers.get('retry-after')) >= 1)
      // The RateLimit field names only the budget that refused.
      assert.match(over.headers.get('ratelimit') ?? '', /^"items";r=20;t=\d+$/)
      assert.equal(over.body.policy, 'items')
      assert.match(over.body.detail, /this batch's 25 items go over the items budget \(20 of 30 per 60 s left; RATE_LIMIT_ITEMS_MAX\)\. A refused batch costs nothing/)
      // It cost nothing: not its items, not its request.
      const after = await as(one, '/api/hash', { input: 'a' })
      assert.equal(after.status, 200)
      assert.match(after.headers.get('ratelimit') ?? '', /^"default";r=27;t=\d+$/)
      const exact = await as(one, '/api/hmac', batch(20))
      assert.equal(exact.status, 200, exact.text)
      assert.match(exact.headers.get('ratelimit') ?? '', /^"default";r=26;t=\d+, "items";r=0;t=\d+$/)

      // A key's own budgets: 5 requests, 12 items (items=); a batch larger than its budget can never fit.
      const never = await as(two, '/api/hash', { items: Array.from({ length: 13 }, () => ({ input: 'a' })) })
      problemJson(never, 429)
      assert.match(never.body.detail, /13 items go over the items budget \(12 of 12 per 60 s left; RATE_LIMIT_ITEMS_MAX\); it can never fit/)
      const fits = await as(two, '/api/hash', { items: Array.from({ length: 12 }, () => ({ input: 'a' })) })
      assert.equal(fits.status, 200)
      assert.equal(fits.headers.get('ratelimit-policy'), '"default";q=5;w=60, "items";q=12;w=60')
      const requests = await as(two, '/api/hash', { input: 'a' })
      // Four requests so far: the refused batch gave its request back.
      assert.match(requests.headers.get('ratelimit') ?? '', /^"default";r=3;t=\d+$/)
    } finally {
      await server.close()
    }
  })

  it('with the default budgets, a batch of MAX_BATCH_ITEMS (10,000) HMACs goes through, and so does the next request', async () => {
    const key = `hk_${randomBytes(32).toString('base64url')}`
    const server = await startServer({ RATE_LIMIT_MAX: '600', HMAC_KEYS_FILE: file(HMAC_KEYS), API_KEYS_FILE: file(`runbook ${hashKey(key)}\n`) })
    try {
      const headers = { authorization: `Bearer ${key}` }
      const items = Array.from({ length: 10_000 }, (_, index) => ({ message: `user-${index}` }))
      const answer = await server.post('/api/hmac', { keyName: 'orders', items }, headers)
      assert.equal(answer.status, 200, answer.text)
      assert.equal((answer.body.results as unknown[]).length, 10_000)
      assert.equal(answer.headers.get('ratelimit-policy'), '"default";q=600;w=60, "items";q=100000;w=60')
      assert.match(answer.headers.get('ratelimit') ?? '', /^"default";r=599;t=\d+, "items";r=90000;t=\d+$/)
      const next = await server.post('/api/hash', { input: 'a' }, headers)
      assert.equal(next.status, 200)
    } finally {
      await server.close()
    }
  })
})

describe('scoped API keys with named HMAC keys', () => {
  const front = `hk_${randomBytes(32).toString('base64url')}`
  const backend = `hk_${randomBytes(32).toString('base64url')}`
  /** Every HMAC and webhook scope, and only the keys users (for HMACs) and hooks (for webhooks). */
  const signer = `hk_${randomBytes(32).toString('base64url')}`
  const hooksSecret = secret()
  let server: TestServer
  before(async () => {
    server = await startServer({
      HMAC_KEYS_FILE: file(`${HMAC_KEYS}\nhooks 1 ${hooksSecret} purpose=webhooks`),
      API_KEYS_FILE: file([
        `front ${hashKey(front)} scopes=hmac:verify,verify hmac-keys=users`,
        `backend ${hashKey(backend)} scopes=-pepper:rewrap,-metrics`,
        `signer ${hashKey(signer)} scopes=hmac,hmac:verify,webhooks:sign,webhooks:verify hmac-keys=users,hooks`,
      ].join('\n')),
    })
  })
  after(() => server.close())
  const as = (key: string, path: string, body: unknown) => server.post(path, body, { authorization: `Bearer ${key}` })
  /** A 403 for a named key outside hmac-keys=: scope hmac-keys, the field at fault, and neither the name nor whether it exists. */
  const outsideHmacKeys = (answer: { status: number, headers: Headers, body: { status: number, type: string, scope: string, errors?: Array<{ pointer: string }> } }, pointer = '/body/keyName') => {
    problemJson(answer, 403)
    assert.equal(answer.body.type, 'urn:hashd:problem:insufficient-scope')
    assert.equal(answer.body.scope, 'hmac-keys')
    assert.deepEqual(answer.body.errors?.map((error) => error.pointer), [pointer])
    assert.equal(answer.headers.get('www-authenticate'), 'Bearer realm="hashd", error="insufficient_scope", scope="hmac-keys"')
  }

  it('a call outside the key\'s scopes is 403 insufficient-scope naming the scope (RFC 6750 §3.1), before its body is read', async () => {
    const hmac = await as(front, '/api/hmac', { message: 'm', keyName: 'users' })
    problemJson(hmac, 403)
    assert.equal(hmac.body.type, 'urn:hashd:problem:insufficient-scope')
    assert.equal(hmac.body.scope, 'hmac')
    assert.equal(hmac.headers.get('www-authenticate'), 'Bearer realm="hashd", error="insufficient_scope", scope="hmac"')
    assert.match(hmac.body.detail, /The API key front may not call POST \/api\/hmac: it lacks the scope hmac/)
    const rewrap = await as(backend, '/api/pepper/rewrap', { hash: 'x' })
    assert.deepEqual([rewrap.status, rewrap.body.scope], [403, 'pepper:rewrap'])
    const metrics = await server.fetch('/metrics', { headers: { authorization: `Bearer ${backend}` } })
    assert.equal(metrics.status, 403)
    await metrics.text()
    // In scope: a 200.
    assert.equal((await as(backend, '/api/hmac', { message: 'm', keyName: 'orders' })).status, 200)
    assert.equal((await as(front, '/api/verify', { input: 'abc', hash: '900150983cd24fb0d6963f7d28e17f72' })).status, 200)
  })

  it('a named key outside hmac-keys= is 403 scope hmac-keys when checking an HMAC, whether or not it exists; in a batch, for that item only, or the whole batch when named at the top', async () => {
    const made = await as(backend, '/api/hmac', { message: 'm', keyName: 'users' })
    outsideHmacKeys(await as(front, '/api/hmac/verify', { message: 'm', hmac: made.body.hmac, keyName: 'orders' }))
    // A name the server does not have is refused the same way: no telling which names exist.
    outsideHmacKeys(await as(front, '/api/hmac/verify', { message: 'm', hmac: made.body.hmac, keyName: 'no-such-key' }))
    const batch = await as(front, '/api/hmac/verify', { items: [{ message: 'm', hmac: made.body.hmac, keyName: 'users' }, { message: 'm', hmac: made.body.hmac, keyName: 'orders' }] })
    assert.equal(batch.status, 200)
    assert.equal(batch.body.results[0].valid, true)
    assert.deepEqual([batch.body.results[1].problem.status, batch.body.results[1].problem.scope], [403, 'hmac-keys'])
    // Named at the top, the key is every item's: the whole batch is 403, whether or not the key exists.
    for (const keyName of ['orders', 'no-such-key']) {
      const whole = await as(front, '/api/hmac/verify', { keyName, items: [{ message: 'm', hmac: made.body.hmac, keyName: 'users' }, { message: 'm', hmac: made.body.hmac }] })
      outsideHmacKeys(whole)
    }
  })

  it('a named key outside hmac-keys= is 403 when making an HMAC: single, batch items, and a batch\'s own keyName', { skip: skipUnless('python3') }, async () => {
    // Python makes the HMAC that users' current version must give, so the allowed calls are checked too.
    const expected = pythonHmac<PyMade>([{ op: 'make', secret: S.u9, message: 'm' }])[0]!.hex
    const allowed = await as(signer, '/api/hmac', { message: 'm', keyName: 'users' })
    assert.deepEqual([allowed.status, allowed.body.hmac], [200, expected])
    outsideHmacKeys(await as(signer, '/api/hmac', { message: 'm', keyName: 'orders' }))
    outsideHmacKeys(await as(signer, '/api/hmac', { message: 'm', keyName: 'orders', format: 'tagged', keyVersion: 3 }))
    outsideHmacKeys(await as(signer, '/api/hmac', { message: 'm', keyName: 'no-such-key' }))
    // Items naming users, then orders, then users again: the allowed key's answer is not reused for the other name.
    const batch = await as(signer, '/api/hmac', { items: [{ message: 'm', keyName: 'users' }, { message: 'm', keyName: 'orders' }, { message: 'm', keyName: 'users' }, { message: 'm', keyName: 'orders', keyVersion: 2 }] })
    assert.equal(batch.status, 200, batch.text)
    const results = batch.body.results as Array<{ hmac?: string, problem?: { status: number, scope: string, errors: Array<{ pointer: string }> } }>
    assert.deepEqual(results.map((result) => result.hmac ?? result.problem?.status), [expected, 403, expected, 403])
    assert.deepEqual(results.map((result) => result.problem?.errors[0]?.pointer), [undefined, '/body/items/1/keyName', undefined, '/body/items/3/keyName'])
    // The batch's own keyName is every item's: the whole batch is refused, none made.
    outsideHmacKeys(await as(signer, '/api/hmac', { keyName: 'orders', items: [{ message: 'a' }, { message: 'b' }] }))
  })

  it('a named key outside hmac-keys= is 403 when signing or verifying a webhook', async () => {
    const payload = '{"type":"order.paid"}'
    const signed = await as(signer, '/api/webhooks/sign', { payload, keyName: 'hooks' })
    assert.equal(signed.status, 200, signed.text)
    const headers = signed.body.headers as Record<string, string>
    assert.equal((await as(signer, '/api/webhooks/verify', { profile: 'standard-webhooks', payload, headers, keyName: 'hooks' })).body.valid, true)
    outsideHmacKeys(await as(signer, '/api/webhooks/sign', { payload, keyName: 'orders' }))
    outsideHmacKeys(await as(signer, '/api/webhooks/sign', { payload, keyName: 'no-such-key' }))
    outsideHmacKeys(await as(signer, '/api/webhooks/verify', { profile: 'standard-webhooks', payload, headers, keyName: 'orders' }))
    outsideHmacKeys(await as(signer, '/api/webhooks/verify', { profile: 'github', payload, headers: { 'x-hub-signature-256': 'sha256=00' }, keyName: 'no-such-key' }))
  })

  it('no refusal repeats a key name the client sent: not in the problem, its headers or the log', async () => {
    // Names as a secret pasted into the wrong field would look (the schema takes 1 to 64 of [A-Za-z0-9._-]).
    const pasted = [`whsec-${randomBytes(12).toString('hex')}`, `hk_${randomBytes(24).toString('base64url').replace(/[^A-Za-z0-9._-]/g, 'x')}`]
    const answers = []
    for (const name of pasted) {
      answers.push(
        await as(signer, '/api/hmac', { message: 'm', keyName: name }),
        await as(signer, '/api/hmac', { items: [{ message: 'm', keyName: name }] }),
        await as(signer, '/api/hmac/verify', { message: 'm', hmac: 'aa'.repeat(32), keyName: name }),
        await as(signer, '/api/webhooks/sign', { payload: 'p', keyName: name }),
        await as(signer, '/api/webhooks/verify', { profile: 'standard-webhooks', payload: 'p', headers: {}, keyName: name }),
        // And a key this API key may use but not as asked (422s): the name, though found, is not repeated either.
        await as(backend, '/api/hmac', { message: 'm', keyName: 'orders', algorithm: 'md5' }),
        await as(backend, '/api/hmac', { message: 'm', keyName: 'orders', keyVersion: 8 }),
        await as(backend, '/api/hmac', { message: 'm', keyName: 'orders', keyVersion: 5 }),
      )
    }
    for (const answer of answers) {
      assert.ok([200, 403, 422].includes(answer.status), answer.text)
      const everything = `${answer.text}\n${[...answer.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}`
      for (const name of [...pasted, 'orders']) assert.ok(!everything.includes(name), `${name} in ${everything}`)
    }
    for (const name of pasted) assert.ok(!server.logs().includes(name), `${name} reached the log`)
  })
})

describe('audit: metrics by key, version and operation; the access line names key and version, never the message', () => {
  it('counts uses from the file\'s names only, and logs no message', async () => {
    const server = await startServer({ HMAC_KEYS_FILE: file(HMAC_KEYS) })
    try {
      const message = `secret-message-${randomBytes(8).toString('hex')}`
      const made = await server.post('/api/hmac', { message, keyName: 'orders', format: 'tagged' })
      await server.post('/api/hmac', { keyName: 'orders', keyVersion: 2, items: [{ message }, { message }, { message }] })
      await server.post('/api/hmac/verify', { message, hmac: made.body.hmac, keyName: 'orders' })
      await server.post('/api/hmac/verify', { message, hmac: 'ab'.repeat(32), keyName: 'orders' })
      await server.post('/api/hmac', { message, keyName: 'unknown-name' })
      await server.post('/api/hmac/verify', { message, hmac: 'hashd:v77:AAAA', keyName: 'orders' })
      const metrics = (await server.get('/metrics')).text
      assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="orders",version="3",operation="hmac"\} 1$/m)
      assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="orders",version="2",operation="hmac"\} 3$/m)
      assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="orders",version="3",operation="verify"\} 1$/m)
      assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="orders",version="any",operation="verify"\} 1$/m)
      assert.doesNotMatch(metrics, /unknown-name|version="77"/)
      const lines = server.logs().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      const access = lines.filter((line) => line.msg === 'request completed' && String(line.route).startsWith('/api/hmac'))
      assert.deepEqual(access.slice(0, 3).map((line) => line.keys), [['hmac:orders:v3'], ['hmac:orders:v2'], ['hmac:orders:v3']])
      assert.ok(!server.logs().includes(message), 'a message reached the log')
    } finally {
      await server.close()
    }
  })
})
