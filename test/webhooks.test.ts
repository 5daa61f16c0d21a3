/**
 * POST /api/webhooks/verify and /api/webhooks/sign against the providers' own libraries from npm,
 * both ways, and the Standard Webhooks spec's published vectors:
 *
 * - `standardwebhooks` (the spec's JavaScript library) signs and hashd verifies; hashd signs and it
 *   verifies;
 * - `@octokit/webhooks-methods` (GitHub's) signs, and it and hashd judge the same cases alike;
 * - `stripe`'s `webhooks.generateTestHeaderString` signs, and its `constructEvent` and hashd judge
 *   the same cases alike.
 *
 * Then every refusal with its reason (a changed byte, a stale or future timestamp, a wrong key,
 * malformed and missing headers), rotation, replays in memory, receivedAt, the 400s, and the logs.
 * Replays across two replicas sharing Redis are in webhooks-redis.test.ts.
 */
import assert from 'node:assert/strict'
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign as cryptoSign } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods'
import fc from 'fast-check'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { hashKey } from '../src/keys/api-keys.js'
import { MemoryReplayStore, ReplayStoreFull, WEBHOOK_REASONS } from '../src/webhooks/index.js'
import { assertCleanAnswer, fuzzParameters } from './helpers/fuzz.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

/** The spec's v1 vector (its libraries' tests: libraries/javascript/src/webhook.test.ts and the others). */
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}
/** The spec's v1a vector (libraries/go/webhook_asymmetric_test.go, TestAsymmetricWebhookSign): the Ed25519 seed, same id, time and payload. */
const V1A_SEED = 'VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk='
const V1A_SIGNATURE = 'v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=='

/** RFC 8410 PKCS #8 around a 32-byte Ed25519 seed, so node:crypto can load the vector's key. */
function ed25519FromSeed(seedBase64: string) {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seedBase64, 'base64')])
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x as string
  return { privateKey, whpk: `whpk_${Buffer.from(x, 'base64url').toString('base64')}` }
}

const nowSeconds = () => Math.floor(Date.now() / 1000)
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`
const newId = () => `msg_${randomBytes(12).toString('hex')}`
const body = (extra: Record<string, unknown> = {}) => JSON.stringify({ type: 'invoice.paid', data: { id: randomBytes(8).toString('hex'), amount: 4200 }, ...extra })

/** Headers as the spec's library signs them. */
function standardHeaders(secret: string, payload: string, id = newId(), timestamp = nowSeconds()) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secret).sign(id, new Date(timestamp * 1000), payload) }
}

/** Whether the spec's library accepts it (it throws WebhookVerificationError otherwise). */
function standardAccepts(secret: string, payload: string, headers: Record<string, string>): boolean {
  try {
    new Webhook(secret).verify(payload, headers)
    return true
  } catch {
    return false
  }
}

const stripe = new Stripe('sk_test_hashd_never_used')
const stripeHeader = (secret: string, payload: string, timestamp = nowSeconds()) => stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp })
function stripeAccepts(secret: string, payload: string, header: string): boolean {
  try {
    stripe.webhooks.constructEvent(payload, header, secret)
    return true
  } catch {
    return false
  }
}

describe('POST /api/webhooks/verify and /sign', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const verify = async (request: Record<string, unknown>) => {
    const response = await server.post('/api/webhooks/verify', request)
    assert.equal(response.status, 200, response.text)
    return response.body as { valid: boolean, reason?: string, detail?: string, keyName?: string, keyVersion?: number, timestamp?: number, replayed: boolean }
  }

  describe('the published Standard Webhooks vectors', () => {
    it('v1: the spec\'s vector verifies (receivedAt at its time), once; its sign reproduces it', async () => {
      const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature }
      const request = { profile: 'standard-webhooks', payload: VECTOR.payload, secret: VECTOR.secret, headers, receivedAt: VECTOR.timestamp + 10, remember: false }
      assert.deepEqual(await verify(request), { valid: true, timestamp: VECTOR.timestamp, replayed: false })
      // The base64 alone, without whsec_, is the same secret (the spec's libraries take both).
      assert.equal((await verify({ ...request, secret: VECTOR.secret.slice('whsec_'.length) })).valid, true)
      const signed = await server.post('/api/webhooks/sign', { payload: VECTOR.payload, secret: VECTOR.secret, id: VECTOR.id, timestamp: VECTOR.timestamp })
      assert.equal(signed.status, 200)
      assert.deepEqual(signed.body, { headers })
    })

    it('v1a: the spec\'s Ed25519 vector verifies with its public key (whpk_ and PEM); v1 entries beside it are skipped', async () => {
      const { privateKey, whpk } = ed25519FromSeed(V1A_SEED)
      const pem = createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }) as string
      const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': `${VECTOR.signature} ${V1A_SIGNATURE}` }
      for (const publicKey of [whpk, pem]) {
        assert.deepEqual(await verify({ profile: 'standard-webhooks', payload: VECTOR.payload, publicKey, headers, receivedAt: VECTOR.timestamp, remember: false }),
          { valid: true, timestamp: VECTOR.timestamp, replayed: false })
      }
      // A secret checks the v1 entry of the same header.
      assert.equal((await verify({ profile: 'standard-webhooks', payload: VECTOR.payload, secret: VECTOR.secret, headers, receivedAt: VECTOR.timestamp, remember: false })).valid, true)
      const changed = await verify({ profile: 'standard-webhooks', payload: VECTOR.payload.replace('4', '5'), publicKey: whpk, headers, receivedAt: VECTOR.timestamp, remember: false })
      assert.equal(changed.reason, 'signature-mismatch')
    })

    it('v1a made by PyNaCl (libsodium, an independent Ed25519) verifies; a changed byte does not', { skip: skipUnless('pynacl') }, async () => {
      const id = newId()
      const timestamp = nowSeconds()
      const payload = body()
      const [publicKey, signature] = python([
        'import sys, base64, nacl.signing',
        'key = nacl.signing.SigningKey.generate()',
        'message = sys.argv[1].encode() + b"." + sys.argv[2].encode() + b"." + sys.stdin.buffer.read()',
        'print(base64.b64encode(bytes(key.verify_key)).decode())',
        'print(base64.b64encode(key.sign(message).signature).decode())',
      ].join('\n'), [id, String(timestamp)], payload).trim().split('\n') as [string, string]
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1a,${signature}` }
      assert.equal((await verify({ profile: 'standard-webhooks', payload, publicKey: `whpk_${publicKey}`, headers })).valid, true)
      const tampered = await verify({ profile: 'standard-webhooks', payload: payload.replace('4200', '4201'), publicKey: `whpk_${publicKey}`, headers })
      assert.equal(tampered.reason, 'signature-mismatch')
    })
  })

  describe('standard-webhooks with the spec\'s library (standardwebhooks on npm)', () => {
    it('what the library signs, hashd verifies; what hashd signs, the library verifies', async () => {
      for (let round = 0; round < 20; round++) {
        const secret = newSecret()
        const payload = body({ round, text: 'naïve ☃ \u{1F600}' })
        assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers: standardHeaders(secret, payload) })).valid, true)
        const signed = await server.post('/api/webhooks/sign', { payload, secret })
        assert.equal(signed.status, 200)
        assert.match(signed.body.headers['webhook-id'], /^msg_[A-Za-z0-9_-]{22}$/)
        assert.ok(Math.abs(Number(signed.body.headers['webhook-timestamp']) - nowSeconds()) <= 2)
        assert.equal(standardAccepts(secret, payload, signed.body.headers), true, 'standardwebhooks accepts hashd\'s headers')
      }
    })

    it('refuses each tampered case with its reason, as the library refuses it', async () => {
      const secret = newSecret()
      const payload = body()
      const good = standardHeaders(secret, payload)
      const stale = standardHeaders(secret, payload, newId(), nowSeconds() - 301)
      const future = standardHeaders(secret, payload, newId(), nowSeconds() + 360)
      const cases: Array<[string, { payload: string, secret: string, headers: Record<string, string> }, string]> = [
        ['one changed byte of the body', { payload: payload.replace('4200', '4201'), secret, headers: good }, 'signature-mismatch'],
        ['one byte more (a trailing newline)', { payload: `${payload}\n`, secret, headers: good }, 'signature-mismatch'],
        ['another id', { payload, secret, headers: { ...good, 'webhook-id': newId() } }, 'signature-mismatch'],
        ['another timestamp', { payload, secret, headers: { ...good, 'webhook-timestamp': String(Number(good['webhook-timestamp']) - 1) } }, 'signature-mismatch'],
        ['a wrong key', { payload, secret: newSecret(), headers: good }, 'signature-mismatch'],
        ['a timestamp 301 s old', { payload, secret, headers: stale }, 'timestamp-too-old'],
        ['a timestamp 6 minutes ahead', { payload, secret, headers: future }, 'timestamp-too-new'],
      ]
      for (const [label, request, reason] of cases) {
        const answer = await verify({ profile: 'standard-webhooks', ...request })
        assert.equal(answer.valid, false, label)
        assert.equal(answer.reason, reason, label)
        assert.equal(answer.replayed, false, label)
        assert.ok(answer.detail && !answer.detail.includes(request.secret) && !answer.detail.includes('4200'), `${label}: the detail quotes nothing`)
        assert.equal(standardAccepts(request.secret, request.payload, request.headers), false, `${label}: the library refuses it too`)
      }
      // The stale one is authentic: its signature matched, so the answer has its time.
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers: stale })).timestamp, Number(stale['webhook-timestamp']))
    })

    it('refuses malformed and missing headers with their reasons, never a 5xx', async () => {
      const secret = newSecret()
      const payload = body()
      const good = standardHeaders(secret, payload)
      const { 'webhook-id': _id, ...withoutId } = good
      const { 'webhook-signature': _signature, ...withoutSignature } = good
      const v1 = good['webhook-signature']
      const cases: Array<[string, Record<string, string | string[]>, string]> = [
        ['no webhook-id', withoutId, 'missing-header'],
        ['no webhook-signature', withoutSignature, 'missing-header'],
        ['an empty webhook-timestamp', { ...good, 'webhook-timestamp': '  ' }, 'missing-header'],
        ['a timestamp in milliseconds', { ...good, 'webhook-timestamp': `${good['webhook-timestamp']}000` }, 'malformed-header'],
        ['a timestamp with a fraction', { ...good, 'webhook-timestamp': `${good['webhook-timestamp']}.5` }, 'malformed-header'],
        ['a negative timestamp', { ...good, 'webhook-timestamp': '-1' }, 'malformed-header'],
        ['a timestamp with a leading zero', { ...good, 'webhook-timestamp': `0${good['webhook-timestamp']}` }, 'malformed-header'],
        ['a signature without its version', { ...good, 'webhook-signature': v1.slice(3) }, 'malformed-header'],
        ['a v1 signature that is not base64', { ...good, 'webhook-signature': 'v1,not*base64' }, 'malformed-header'],
        ['a v1 signature of 31 bytes', { ...good, 'webhook-signature': `v1,${randomBytes(31).toString('base64')}` }, 'malformed-header'],
        ['seventeen signatures', { ...good, 'webhook-signature': Array(17).fill(v1).join(' ') }, 'malformed-header'],
        ['webhook-id given twice under two spellings', { ...good, 'Webhook-Id': newId() }, 'malformed-header'],
        ['webhook-signature as two values', { ...good, 'webhook-signature': [v1, v1] }, 'malformed-header'],
        ['only a v1a signature, checked with a secret', { ...good, 'webhook-signature': `v1a,${randomBytes(64).toString('base64')}` }, 'unsupported-signature'],
        ['only a v2 signature', { ...good, 'webhook-signature': `v2,${randomBytes(32).toString('base64')}` }, 'unsupported-signature'],
      ]
      for (const [label, headers, reason] of cases) {
        const answer = await verify({ profile: 'standard-webhooks', payload, secret, headers })
        assert.deepEqual([answer.valid, answer.reason], [false, reason], label)
      }
    })

    it('reads header names in any case, a one-value array, and other headers beside them', async () => {
      const secret = newSecret()
      const payload = body()
      const good = standardHeaders(secret, payload)
      const headers = {
        'WEBHOOK-ID': good['webhook-id'], 'Webhook-Timestamp': [good['webhook-timestamp']], 'webhook-Signature': `  ${good['webhook-signature']} `,
        'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], host: 'example.test',
      }
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers })).valid, true)
    })

    it('rotation: a header signed with the old and the new secret verifies with either; unknown entries are skipped', async () => {
      const [oldSecret, newSecretText] = [newSecret(), newSecret()]
      const payload = body()
      const id = newId()
      const timestamp = nowSeconds()
      const signatures = [oldSecret, newSecretText].map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), payload))
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v2,abc ${signatures.join(' ')} v1a,${randomBytes(64).toString('base64')}` }
      for (const secret of [oldSecret, newSecretText]) {
        assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers, remember: false })).valid, true)
        assert.equal(standardAccepts(secret, payload, headers), true)
      }
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret: newSecret(), headers })).reason, 'signature-mismatch')
    })

    it('payloadBase64 carries bytes that are not UTF-8, signed over the raw bytes (Python\'s hmac)', { skip: skipUnless('python3') }, async () => {
      const secret = newSecret()
      const payload = Buffer.concat([Buffer.from('{"bin":"'), Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from('"}')])
      const id = newId()
      const timestamp = nowSeconds()
      const signature = python('import sys, hmac, hashlib, base64; key = base64.b64decode(sys.argv[1][6:]); '
        + 'print(base64.b64encode(hmac.new(key, sys.argv[2].encode() + b"." + sys.argv[3].encode() + b"." + sys.stdin.buffer.read(), hashlib.sha256).digest()).decode())',
      [secret, id, String(timestamp)], payload).trim()
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` }
      assert.equal((await verify({ profile: 'standard-webhooks', payloadBase64: payload.toString('base64'), secret, headers, remember: false })).valid, true)
      // The same bytes through a JSON string are not the same bytes: 0xff is not UTF-8.
      assert.equal((await verify({ profile: 'standard-webhooks', payload: payload.toString('latin1'), secret, headers })).reason, 'signature-mismatch')
      // And hashd signs the raw bytes too.
      const signed = await server.post('/api/webhooks/sign', { payloadBase64: payload.toString('base64'), secret, id, timestamp })
      assert.equal(signed.body.headers['webhook-signature'], `v1,${signature}`)
    })
  })

  describe('github with @octokit/webhooks-methods', () => {
    it('what octokit signs, hashd verifies; octokit and hashd judge every case alike', async () => {
      const secret = `It's a Secret to Everybody ${randomBytes(4).toString('hex')}`
      const payload = body({ action: 'opened', text: 'naïve ☃' })
      const signature = await octokitSign(secret, payload)
      const cases: Array<[string, string, string, string, string | undefined]> = [
        ['as signed', secret, payload, signature, undefined],
        ['one changed byte', secret, payload.replace('4200', '4201'), signature, 'signature-mismatch'],
        ['a wrong key', `${secret}!`, payload, signature, 'signature-mismatch'],
      ]
      for (const [label, key, content, header, reason] of cases) {
        const answer = await verify({ profile: 'github', payload: content, secret: key, headers: { 'X-Hub-Signature-256': header }, remember: false })
        assert.equal(answer.valid, reason === undefined, label)
        assert.equal(answer.reason, reason, label)
        assert.equal(answer.timestamp, undefined, 'GitHub signs no timestamp')
        assert.equal(await octokitVerify(key, content, header), reason === undefined, `${label}: octokit agrees`)
      }
    })

    it('refuses malformed and missing headers', async () => {
      const secret = 'github-secret'
      const payload = body()
      const hex = (await octokitSign(secret, payload)).slice('sha256='.length)
      const cases: Array<[string, Record<string, string>, string]> = [
        ['no header', {}, 'missing-header'],
        ['only the SHA-1 header', { 'x-hub-signature': `sha1=${'a'.repeat(40)}` }, 'missing-header'],
        ['no sha256= prefix', { 'x-hub-signature-256': hex }, 'malformed-header'],
        ['sha1= prefix', { 'x-hub-signature-256': `sha1=${hex}` }, 'malformed-header'],
        ['63 hex digits', { 'x-hub-signature-256': `sha256=${hex.slice(1)}` }, 'malformed-header'],
        ['not hex', { 'x-hub-signature-256': `sha256=${'z'.repeat(64)}` }, 'malformed-header'],
      ]
      for (const [label, headers, reason] of cases) {
        const answer = await verify({ profile: 'github', payload, secret, headers })
        assert.deepEqual([answer.valid, answer.reason], [false, reason], label)
      }
    })
  })

  describe('stripe with stripe-node (generateTestHeaderString, constructEvent)', () => {
    it('what Stripe\'s library signs, hashd verifies; constructEvent and hashd judge every case alike', async () => {
      const secret = `whsec_${randomBytes(24).toString('hex')}`
      const payload = body({ object: 'event' })
      const now = nowSeconds()
      const header = stripeHeader(secret, payload, now)
      const second = stripeHeader(`whsec_${randomBytes(24).toString('hex')}`, payload, now).split(',')[1] as string
      const cases: Array<[string, string, string, string, string | undefined]> = [
        ['as signed', secret, payload, header, undefined],
        ['two v1 signatures (a secret being rolled), ours second', secret, payload, `t=${now},${second},${header.split(',')[1]}`, undefined],
        ['with a v0 entry', secret, payload, `${header},v0=${'0'.repeat(64)}`, undefined],
        ['one changed byte', secret, payload.replace('4200', '4201'), header, 'signature-mismatch'],
        ['a wrong key', `${secret}x`, payload, header, 'signature-mismatch'],
        ['301 s old', secret, payload, stripeHeader(secret, payload, now - 301), 'timestamp-too-old'],
        ['another t', secret, payload, header.replace(`t=${now}`, `t=${now - 1}`), 'signature-mismatch'],
        ['no t', secret, payload, header.split(',')[1] as string, 'malformed-header'],
        ['no v1', secret, payload, `t=${now},v0=${'0'.repeat(64)}`, 'unsupported-signature'],
      ]
      for (const [label, key, content, signatureHeader, reason] of cases) {
        const answer = await verify({ profile: 'stripe', payload: content, secret: key, headers: { 'Stripe-Signature': signatureHeader }, remember: false })
        assert.deepEqual([answer.valid, answer.reason], [reason === undefined, reason], label)
        assert.equal(stripeAccepts(key, content, signatureHeader), reason === undefined, `${label}: constructEvent agrees`)
      }
    })

    it('receivedAt: an event read from a queue an hour late verifies against when it arrived, as constructEvent\'s receivedAt', async () => {
      const secret = `whsec_${randomBytes(24).toString('hex')}`
      const payload = body()
      const signedAt = nowSeconds() - 3600
      const header = stripeHeader(secret, payload, signedAt)
      const request = { profile: 'stripe', payload, secret, headers: { 'stripe-signature': header }, remember: false }
      assert.equal((await verify(request)).reason, 'timestamp-too-old')
      assert.deepEqual(await verify({ ...request, receivedAt: signedAt + 20 }), { valid: true, timestamp: signedAt, replayed: false })
      assert.equal((await verify({ ...request, receivedAt: signedAt + 301 })).reason, 'timestamp-too-old')
      assert.equal((await verify({ ...request, receivedAt: signedAt + 301, toleranceSeconds: 600 })).valid, true)
      assert.doesNotThrow(() => stripe.webhooks.constructEvent(payload, header, secret, 300, undefined, (signedAt + 20) * 1000))
      const late = await server.post('/api/webhooks/verify', { ...request, receivedAt: nowSeconds() + 400 })
      assert.equal(late.status, 400)
      assert.equal(late.body.errors[0].pointer, '/body/receivedAt')
    })
  })

  /**
   * A timestamp exactly the tolerance away is accepted, one second more is not, in the past and in
   * the future: the libraries compare with `>` (standardwebhooks: `now - timestamp > tolerance`,
   * `timestamp > now + tolerance`; stripe-node: `timestampAge > tolerance`, and no rule for the
   * future). The reference time is pinned with receivedAt, so no second turns between signing and
   * checking; the libraries are run at the same instant (Stripe's receivedAt, a stopped Date.now).
   */
  describe('the tolerance boundary, where the providers\' libraries draw it', () => {
    const reference = nowSeconds() - 1000
    const OFFSETS = [-301, -300, 300, 301]
    /** The spec's library at `reference`: its clock is read once, synchronously, by verify. */
    const standardAcceptsAt = (secret: string, payload: string, headers: Record<string, string>) => {
      const realNow = Date.now
      Date.now = () => reference * 1000
      try {
        return standardAccepts(secret, payload, headers)
      } finally {
        Date.now = realNow
      }
    }
    const judged = (answer: { valid: boolean, reason?: string }) => answer.valid ? 'valid' : answer.reason

    for (const toleranceSeconds of [300, 5]) {
      const offsets = OFFSETS.map((offset) => Math.sign(offset) * (toleranceSeconds + Math.abs(offset) - 300))
      it(`standard-webhooks, a tolerance of ${toleranceSeconds} s: ${offsets.join(', ')} s from the reference`, async () => {
        const secret = newSecret()
        const payload = body()
        const answers = []
        for (const offset of offsets) {
          const headers = standardHeaders(secret, payload, newId(), reference + offset)
          answers.push(judged(await verify({ profile: 'standard-webhooks', payload, secret, headers, receivedAt: reference, toleranceSeconds, remember: false })))
          if (toleranceSeconds === 300) assert.equal(standardAcceptsAt(secret, payload, headers), answers.at(-1) === 'valid', `standardwebhooks at ${offset} s`)
        }
        assert.deepEqual(answers, ['timestamp-too-old', 'valid', 'valid', 'timestamp-too-new'])
      })

      it(`stripe, a tolerance of ${toleranceSeconds} s: ${offsets.join(', ')} s from the reference`, async () => {
        const secret = `whsec_${randomBytes(24).toString('hex')}`
        const payload = body()
        const answers = []
        for (const offset of offsets) {
          const header = stripeHeader(secret, payload, reference + offset)
          answers.push(judged(await verify({ profile: 'stripe', payload, secret, headers: { 'stripe-signature': header }, receivedAt: reference, toleranceSeconds, remember: false })))
          // stripe-node has no rule for a timestamp ahead of the clock: compared on the past side only.
          if (offset < 0) {
            let accepted = true
            try { stripe.webhooks.constructEvent(payload, header, secret, toleranceSeconds, undefined, reference * 1000) } catch { accepted = false }
            assert.equal(accepted, answers.at(-1) === 'valid', `constructEvent at ${offset} s`)
          }
        }
        assert.deepEqual(answers, ['timestamp-too-old', 'valid', 'valid', 'timestamp-too-new'])
      })
    }

    it('github signs no time, so it has no boundary: a delivery verifies against any reference', async () => {
      const secret = 'github-boundary-secret'
      const payload = body()
      const headers = { 'x-hub-signature-256': await octokitSign(secret, payload) }
      for (const receivedAt of [0, reference]) {
        assert.deepEqual(await verify({ profile: 'github', payload, secret, headers, receivedAt, toleranceSeconds: 1, remember: false }), { valid: true, replayed: false })
      }
    })
  })

  describe('replays (this process\'s memory; across replicas: webhooks-redis.test.ts)', () => {
    it('a second delivery with the same id is replayed, whatever its timestamp and signature', async () => {
      const secret = newSecret()
      const payload = body()
      const id = newId()
      const first = standardHeaders(secret, payload, id)
      assert.deepEqual(await verify({ profile: 'standard-webhooks', payload, secret, headers: first }), { valid: true, timestamp: Number(first['webhook-timestamp']), replayed: false })
      const again = await verify({ profile: 'standard-webhooks', payload, secret, headers: first })
      assert.deepEqual([again.valid, again.reason, again.replayed], [false, 'replayed', true])
      // The sender's retry of the same event has a new timestamp and signature but the same id.
      const retry = standardHeaders(secret, payload, id, nowSeconds() - 5)
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers: retry })).replayed, true)
      // Another key's webhook with the same id is another webhook.
      const otherSecret = newSecret()
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret: otherSecret, headers: standardHeaders(otherSecret, payload, id) })).valid, true)
    })

    it('a forgery is not remembered, so it cannot spend the real webhook\'s id', async () => {
      const secret = newSecret()
      const payload = body()
      const id = newId()
      const forged = standardHeaders(newSecret(), payload, id)
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers: forged })).reason, 'signature-mismatch')
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers: standardHeaders(secret, payload, id) })).valid, true)
    })

    it('remember: false looks without remembering', async () => {
      const secret = newSecret()
      const payload = body()
      const headers = standardHeaders(secret, payload)
      for (let index = 0; index < 3; index++) assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers, remember: false })).valid, true)
      assert.equal((await verify({ profile: 'standard-webhooks', payload, secret, headers })).valid, true)
      const seen = await verify({ profile: 'standard-webhooks', payload, secret, headers, remember: false })
      assert.deepEqual([seen.valid, seen.reason, seen.replayed], [false, 'replayed', true])
    })

    it('github and stripe, which sign no id, are remembered by the signed content: a replay carrying only one of two signatures is still caught', async () => {
      const secret = 'github-replay-secret'
      const payload = body()
      const headers = { 'x-hub-signature-256': await octokitSign(secret, payload) }
      assert.equal((await verify({ profile: 'github', payload, secret, headers })).valid, true)
      assert.equal((await verify({ profile: 'github', payload, secret, headers })).reason, 'replayed')

      const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`
      const otherSecret = `whsec_${randomBytes(24).toString('hex')}`
      const now = nowSeconds()
      const mine = stripeHeader(stripeSecret, payload, now).split(',')[1] as string
      const theirs = stripeHeader(otherSecret, payload, now).split(',')[1] as string
      assert.equal((await verify({ profile: 'stripe', payload, secret: stripeSecret, headers: { 'stripe-signature': `t=${now},${theirs},${mine}` } })).valid, true)
      assert.equal((await verify({ profile: 'stripe', payload, secret: stripeSecret, headers: { 'stripe-signature': `t=${now},${mine}` } })).reason, 'replayed')
    })

    it('concurrent deliveries of one webhook: exactly one is valid', async () => {
      const secret = newSecret()
      const payload = body()
      const headers = standardHeaders(secret, payload)
      const answers = await Promise.all(Array.from({ length: 8 }, () => verify({ profile: 'standard-webhooks', payload, secret, headers })))
      assert.equal(answers.filter((answer) => answer.valid).length, 1)
      assert.equal(answers.filter((answer) => answer.replayed).length, 7)
    })
  })

  describe('requests hashd refuses (400 or 422 problem+json, never a 5xx)', () => {
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' }
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['no payload', { profile: 'standard-webhooks', secret: VECTOR.secret, headers }, 400, '/body/payload'],
      ['payload and payloadBase64', { profile: 'standard-webhooks', payload: 'a', payloadBase64: 'YQ==', secret: VECTOR.secret, headers }, 400, '/body/payload'],
      ['payloadBase64 that is not base64', { profile: 'standard-webhooks', payloadBase64: 'YQ=x', secret: VECTOR.secret, headers }, 400, '/body/payloadBase64'],
      ['no key', { profile: 'standard-webhooks', payload: 'a', headers }, 400, '/body/keyName'],
      ['secret and publicKey', { profile: 'standard-webhooks', payload: 'a', secret: VECTOR.secret, publicKey: 'whpk_x', headers }, 400, '/body/secret'],
      ['a publicKey for github', { profile: 'github', payload: 'a', publicKey: ed25519FromSeed(V1A_SEED).whpk, headers }, 400, '/body/publicKey'],
      ['a publicKey that is not Ed25519', { profile: 'standard-webhooks', payload: 'a', publicKey: `whpk_${randomBytes(31).toString('base64')}`, headers }, 400, '/body/publicKey'],
      ['a Standard Webhooks secret that is not base64', { profile: 'standard-webhooks', payload: 'a', secret: 'whsec_not base64!', headers }, 400, '/body/secret'],
      ['an unknown profile', { profile: 'svix', payload: 'a', secret: VECTOR.secret, headers }, 400, '/body/profile'],
      ['a tolerance of 0', { profile: 'stripe', payload: 'a', secret: 'x', headers, toleranceSeconds: 0 }, 400, '/body/toleranceSeconds'],
      ['receivedAt in milliseconds', { profile: 'stripe', payload: 'a', secret: 'x', headers, receivedAt: Date.now() }, 400, '/body/receivedAt'],
      ['a header value that is a number', { profile: 'stripe', payload: 'a', secret: 'x', headers: { 'stripe-signature': 1 } }, 400, '/body/headers/stripe-signature'],
      ['a keyName on a server without HMAC_KEYS_FILE (no-hmac-keys)', { profile: 'github', payload: 'a', keyName: 'nothing-here', headers }, 422, '/body/keyName'],
      ['a keyName that is no key name (a secret pasted in it)', { profile: 'github', payload: 'a', keyName: `${VECTOR.secret.slice(6)}+/=`, headers }, 400, '/body/keyName'],
    ]
    for (const [label, request, status, pointer] of cases) {
      it(`${label}: ${status} naming ${pointer}`, async () => {
        const response = await server.post('/api/webhooks/verify', request)
        assert.equal(response.status, status, response.text)
        assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8')
        assert.ok((response.body.errors as Array<{ pointer: string }>).some((error) => error.pointer === pointer), JSON.stringify(response.body.errors))
        assert.ok(!response.text.includes(VECTOR.secret.slice(6)), 'no secret in the problem')
      })
    }

    it('sign: an id with a "." or a space, a secret that is no whsec_, a publicKey: 400', async () => {
      for (const [request, pointer] of [
        [{ payload: 'a', secret: VECTOR.secret, id: 'msg.1' }, '/body/id'],
        [{ payload: 'a', secret: VECTOR.secret, id: 'msg 1' }, '/body/id'],
        [{ payload: 'a', secret: '%%%' }, '/body/secret'],
        [{ payload: 'a', publicKey: ed25519FromSeed(V1A_SEED).whpk }, '/body/publicKey'],
        [{ payload: 'a' }, '/body/keyName'],
      ] as const) {
        const response = await server.post('/api/webhooks/sign', request)
        assert.equal(response.status, 400, JSON.stringify(request))
        assert.ok((response.body.errors as Array<{ pointer: string }>).some((error) => error.pointer === pointer), `${JSON.stringify(request)}: ${response.text}`)
      }
    })
  })

  it('no secret, payload or signature reaches the logs, even at debug', async () => {
    const debug = await startServer({ LOG_LEVEL: 'trace' })
    try {
      const secret = newSecret()
      const payload = body({ marker: 'payload-marker-4f1c' })
      const headers = standardHeaders(secret, payload)
      await debug.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload, secret, headers })
      await debug.post('/api/webhooks/verify', { profile: 'standard-webhooks', payloadBase64: Buffer.from(payload).toString('base64'), secret, headers })
      await debug.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload, publicKey: 'whpk_bad', headers })
      await debug.post('/api/webhooks/sign', { payload, secret })
      await debug.post('/api/webhooks/verify', `{"profile":"github","payload":"payload-marker-4f1c","secret":"${secret}"`)
      const logs = debug.logs()
      assert.match(logs, /\/api\/webhooks\/verify/)
      for (const needle of [secret, secret.slice(6), 'payload-marker-4f1c', Buffer.from(payload).toString('base64').slice(0, 40), headers['webhook-signature'].slice(3), headers['webhook-id']]) {
        assert.ok(!logs.includes(needle), `the logs hold ${needle.slice(0, 12)}…`)
      }
    } finally {
      await debug.close()
    }
  })

  it('is in the document with its profiles and reasons', async () => {
    const document = (await server.get('/api/openapi.json')).body
    const verifyBody = document.paths['/api/webhooks/verify'].post.requestBody.content['application/json'].schema
    assert.deepEqual(verifyBody.properties.profile.enum, ['standard-webhooks', 'github', 'stripe'])
    const answer = document.paths['/api/webhooks/verify'].post.responses['200'].content['application/json'].schema
    assert.ok(answer.properties.reason.enum.includes('replayed'))
    assert.ok(document.paths['/api/webhooks/sign'].post)
  })

  it('docs/webhooks.md lists every reason, and no other', () => {
    const page = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8')
    const listed = [...page.matchAll(/^\| `([a-z-]+)` \| /gm)].map((match) => match[1]).filter((name) => name !== 'reason' && !['standard-webhooks', 'github', 'stripe'].includes(name as string))
    assert.deepEqual(listed, Object.keys(WEBHOOK_REASONS))
  })

  it('health says where replays are remembered', async () => {
    assert.equal((await server.get('/api/health')).body.replayStore, 'memory')
  })
})

/** The signing side needs no server for this: a key pair made here signs, hashd's v1a check reads it. */
describe('v1a with a fresh key pair', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('verifies, and refuses another key\'s signature and a v1a of 63 bytes', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    const other = generateKeyPairSync('ed25519')
    const whpk = `whpk_${Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('base64')}`
    const id = newId()
    const timestamp = nowSeconds()
    const payload = body()
    const message = Buffer.from(`${id}.${timestamp}.${payload}`)
    const headers = (signature: Buffer) => ({ 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1a,${signature.toString('base64')}` })
    const post = async (signature: Buffer) => (await server.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload, publicKey: whpk, headers: headers(signature), remember: false })).body
    assert.equal((await post(cryptoSign(null, message, privateKey))).valid, true)
    assert.equal((await post(cryptoSign(null, message, other.privateKey))).reason, 'signature-mismatch')
    assert.equal((await post(cryptoSign(null, message, privateKey).subarray(1))).reason, 'malformed-header')
  })
})

describe('the in-memory replay store', () => {
  it('remembers each key until its expiry, forgets expired keys, and when full refuses rather than forgets', () => {
    let now = 0
    const store = new MemoryReplayStore(3, 0, () => now)
    assert.equal(store.seen('a', 1000, true, 'x'), false)
    assert.equal(store.seen('a', 1000, true, 'x'), true)
    now = 999
    assert.equal(store.seen('a', 1000, false, 'x'), true)
    now = 1000
    assert.equal(store.seen('a', 1000, false, 'x'), false, 'expired at its expiry')
    assert.equal(store.seen('a', 6000, true, 'x'), false, 'remembered again once expired')
    store.seen('b', 6000, true, 'x')
    store.seen('c', 6000, true, 'x')
    assert.equal(store.size(), 3)
    // Full, and nothing has expired: the fourth is refused, with the time until the soonest expiry, and no key is forgotten.
    assert.throws(() => store.seen('d', 6000, true, 'x'), (error: unknown) => error instanceof ReplayStoreFull && error.limit === 'store' && error.retryAfterSeconds === 5)
    assert.deepEqual(['a', 'b', 'c', 'd'].map((key) => store.seen(key, 1, false, 'x')), [true, true, true, false])
    assert.deepEqual(store.refusals(), { store: 1, caller: 0 })
    // A look (remember: false) is answered even when full, and a replay of a remembered key is still a replay.
    assert.equal(store.seen('b', 6000, true, 'x'), true)
    now = 6000
    store.seen('e', 7000, true, 'x')
    assert.equal(store.size(), 1, 'expired keys leave when a new one needs the room')
  })

  it('expiries in any order: the soonest leaves first, however the keys came in', () => {
    let now = 0
    const store = new MemoryReplayStore(1000, 0, () => now)
    const expiries = Array.from({ length: 500 }, (_, index) => ((index * 7919) % 500) + 1)
    expiries.forEach((expiry, index) => store.seen(`k${index}`, expiry, true, 'x'))
    for (const at of [0, 100, 250, 499]) {
      now = at
      assert.deepEqual(expiries.map((_, index) => store.seen(`k${index}`, 1, false, 'x')), expiries.map((expiry) => expiry > at), `at ${at}`)
    }
    now = 250
    store.seen('new', 10_000, true, 'x')
    for (let index = 0; index < 40; index++) store.seen(`more${index}`, 10_000, true, 'x')
    // 250 had expired; eight leave at each insert, so 41 inserts have let all of them go.
    assert.equal(store.size(), 250 + 41, 'a few expired keys leave at each insert')
    assert.deepEqual(expiries.map((_, index) => store.seen(`k${index}`, 1, false, 'x')), expiries.map((expiry) => expiry > 250))
  })

  it('a caller\'s share: one caller cannot take another\'s room; its Retry-After is its own soonest expiry', () => {
    let now = 0
    const store = new MemoryReplayStore(10, 4, () => now)
    for (let index = 0; index < 4; index++) assert.equal(store.seen(`m${index}`, 1000 * (index + 2), true, 'mallory'), false)
    assert.throws(() => store.seen('m4', 9000, true, 'mallory'), (error: unknown) => error instanceof ReplayStoreFull && error.limit === 'caller' && error.retryAfterSeconds === 2)
    for (let index = 0; index < 4; index++) assert.equal(store.seen(`a${index}`, 9000, true, 'alice'), false)
    assert.deepEqual(store.refusals(), { store: 0, caller: 1 })
    // Mallory's soonest expires: one place comes back to Mallory, and to no one else.
    now = 2000
    assert.equal(store.seen('m4', 9000, true, 'mallory'), false)
    assert.throws(() => store.seen('m5', 9000, true, 'mallory'), ReplayStoreFull)
    assert.throws(() => store.seen('a4', 9000, true, 'alice'), ReplayStoreFull)
    // Past the store's own bound (10), a third caller is refused for the store, not for its share.
    store.seen('b0', 9000, true, 'bob')
    store.seen('b1', 9000, true, 'bob')
    assert.throws(() => store.seen('b2', 9000, true, 'bob'), (error: unknown) => error instanceof ReplayStoreFull && error.limit === 'store' && error.retryAfterSeconds === 1)
  })
})

describe('malformed headers, generated (fast-check)', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  /** Header text near the real forms: pieces of them, cut and joined at random, with stray characters. */
  const near = (pieces: string[]) => fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 12 }), fc.base64String({ maxLength: 90 })), { maxLength: 8 })
    .map((parts) => parts.join(''))

  it('every profile answers 200 with a known reason, or a 4xx problem, for any headers', async () => {
    const reasons = new Set(Object.keys(WEBHOOK_REASONS))
    const secret = VECTOR.secret
    await fc.assert(fc.asyncProperty(
      fc.constantFrom('standard-webhooks', 'github', 'stripe'),
      near(['v1,', 'v1a,', ' ', ',', 'v2,', 'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=', 'sha256=', 't=', 'v1=', '1614265330', 'a'.repeat(64), '=', '-']),
      near(['1614265330', '0', '-', '.', ' ', '99999999999999']),
      fc.option(fc.constantFrom('msg_p5jXN8AQM9LWM0D4loKWxJek', '', ' ', 'x'.repeat(300)), { nil: undefined }),
      fc.boolean(),
      async (profile, signature, timestamp, id, asArray) => {
        const headers: Record<string, string | string[]> = {
          'webhook-signature': signature, 'Webhook-Timestamp': timestamp, 'x-hub-signature-256': signature, 'STRIPE-SIGNATURE': asArray ? [signature] : signature,
          ...(id === undefined ? {} : { 'webhook-id': id }),
        }
        const response = await server.fetch('/api/webhooks/verify', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ profile, payload: VECTOR.payload, secret, headers, receivedAt: VECTOR.timestamp, remember: false }),
        })
        const text = await response.text()
        assertCleanAnswer(response.status, response.headers.get('content-type'), text, `${profile} ${JSON.stringify(headers)}`)
        if (response.status === 200) {
          const answer = JSON.parse(text) as { valid: boolean, reason?: string }
          assert.ok(answer.valid || reasons.has(answer.reason ?? ''), text)
        }
      },
    ), fuzzParameters(0.5))
  })
})

/**
 * keyName: the key ring's named keys kept for webhooks (HMAC_KEYS_FILE, purpose=webhooks). Each
 * version's secret is written as the base64 of printable text, so that all three providers'
 * libraries sign with the very bytes the file holds: Standard Webhooks with `whsec_` + that base64
 * (the library decodes it), GitHub and Stripe with the text itself (their libraries use its UTF-8
 * bytes).
 */
describe('keyName: the key ring\'s named keys, with the providers\' libraries signing under the same bytes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-webhook-keys-'))
  after(() => rmSync(dir, { recursive: true, force: true }))
  let files = 0
  const file = (text: string) => {
    const path = join(dir, `keys-${files++}`)
    writeFileSync(path, text)
    return path
  }
  /** A version's secret: printable text (for GitHub and Stripe), its base64 (for the keys file), and whsec_ (for Standard Webhooks). */
  const versionSecret = () => {
    const text = randomBytes(32).toString('hex')
    const base64 = Buffer.from(text).toString('base64')
    return { text, base64, whsec: `whsec_${base64}` }
  }
  /** hooks: 1 below the floor, 2 previous, 3 current, 4 staged, 5 retired; wide: sha512 only; other: one version. */
  const S = { h1: versionSecret(), h2: versionSecret(), h3: versionSecret(), h4: versionSecret(), h5: versionSecret(), wide: versionSecret(), other: versionSecret() }
  const HMAC_KEYS = [
    `hooks 1 ${S.h1.base64} purpose=webhooks min-verify-version=2`,
    `hooks 2 ${S.h2.base64} purpose=webhooks`,
    `hooks 3 ${S.h3.base64} purpose=webhooks`,
    `hooks 4 ${S.h4.base64} purpose=webhooks state=staged`,
    `hooks 5 ${S.h5.base64} purpose=webhooks state=retired`,
    `wide 1 ${S.wide.base64} purpose=webhooks algorithms=sha512`,
    `other 1 ${S.other.base64} purpose=webhooks`,
  ].join('\n')

  let server: TestServer
  before(async () => { server = await startServer({ HMAC_KEYS_FILE: file(HMAC_KEYS) }) })
  after(async () => { await server.close() })

  const verify = async (request: Record<string, unknown>, via = server, headers: Record<string, string> = {}) => {
    const response = await via.post('/api/webhooks/verify', request, headers)
    assert.equal(response.status, 200, response.text)
    return response.body as { valid: boolean, reason?: string, keyName?: string, keyVersion?: number, replayed: boolean }
  }
  const judged = (answer: { valid: boolean, reason?: string, keyName?: string, keyVersion?: number }) => [answer.valid, answer.reason, answer.keyName, answer.keyVersion]

  it('each version as its state says, the same for a webhook signed by standardwebhooks, octokit and stripe', async () => {
    const expected: Array<[keyof typeof S, unknown[]]> = [
      ['h3', [true, undefined, 'hooks', 3]],
      ['h2', [true, undefined, 'hooks', 2]],
      ['h4', [true, undefined, 'hooks', 4]],
      ['h5', [false, 'key-version-retired', 'hooks', 5]],
      ['h1', [false, 'key-version-below-minimum', 'hooks', 1]],
      ['other', [false, 'signature-mismatch', 'hooks', undefined]],
    ]
    for (const [version, outcome] of expected) {
      const secret = S[version]
      const payload = body()
      const standard = await verify({ profile: 'standard-webhooks', payload, keyName: 'hooks', headers: standardHeaders(secret.whsec, payload) })
      const github = await verify({ profile: 'github', payload, keyName: 'hooks', headers: { 'X-Hub-Signature-256': await octokitSign(secret.text, payload) } })
      const stripeAnswer = await verify({ profile: 'stripe', payload, keyName: 'hooks', headers: { 'Stripe-Signature': stripeHeader(secret.text, payload) } })
      for (const [profile, answer] of [['standard-webhooks', standard], ['github', github], ['stripe', stripeAnswer]] as const) {
        assert.deepEqual(judged(answer), outcome, `${profile}, version ${version}`)
      }
      // The peers agree that these are the bytes they signed with: each accepts its own under the same secret.
      assert.equal(standardAccepts(secret.whsec, payload, standardHeaders(secret.whsec, payload)), true)
      assert.equal(await octokitVerify(secret.text, payload, await octokitSign(secret.text, payload)), true)
    }
  })

  it('sign: the current version first and the previous one beside it, never the staged, retired or below-floor ones; standardwebhooks verifies it', async () => {
    const payload = body()
    const signed = await server.post('/api/webhooks/sign', { payload, keyName: 'hooks' })
    assert.equal(signed.status, 200, signed.text)
    assert.equal(signed.body.keyName, 'hooks')
    assert.equal(signed.body.keyVersion, 3)
    const headers = signed.body.headers as Record<string, string>
    const signatures = (headers['webhook-signature'] ?? '').split(' ')
    assert.equal(signatures.length, 2, 'versions 3 and 2')
    const first = { ...headers, 'webhook-signature': signatures[0] as string }
    assert.equal(standardAccepts(S.h3.whsec, payload, first), true, 'the first signature is the current version\'s')
    assert.equal(standardAccepts(S.h2.whsec, payload, headers), true, 'a receiver still on version 2 accepts it')
    for (const version of ['h4', 'h5', 'h1'] as const) assert.equal(standardAccepts(S[version].whsec, payload, headers), false, `${version} signed`)
    assert.deepEqual(judged(await verify({ profile: 'standard-webhooks', payload, keyName: 'hooks', headers })), [true, undefined, 'hooks', 3])
  })

  it('payloads hashed off the event loop (INLINE_DIGEST_MAX_BYTES and over) are judged as inline ones, version after version, with replays', async () => {
    const pooled = await startServer({ HMAC_KEYS_FILE: file(HMAC_KEYS), INLINE_DIGEST_MAX_BYTES: '1024' })
    try {
      const large = () => body({ text: 'x'.repeat(8192) })
      // Versions are tried newest first (4, 3, 2, then those that do not verify), each HMAC on the pool.
      const expected: Array<[keyof typeof S, unknown[]]> = [
        ['h2', [true, undefined, 'hooks', 2]],
        ['h1', [false, 'key-version-below-minimum', 'hooks', 1]],
        ['other', [false, 'signature-mismatch', 'hooks', undefined]],
      ]
      for (const [version, outcome] of expected) {
        const payload = large()
        const headers = standardHeaders(S[version].whsec, payload)
        assert.deepEqual(judged(await verify({ profile: 'standard-webhooks', payload, keyName: 'hooks', headers }, pooled)), outcome, `version ${version}`)
      }
      const payload = large()
      const headers = standardHeaders(S.h3.whsec, payload)
      const changed = payload.replace('xxxx', 'xxxy')
      assert.deepEqual(judged(await verify({ profile: 'standard-webhooks', payload: changed, keyName: 'hooks', headers }, pooled)), [false, 'signature-mismatch', 'hooks', undefined])
      assert.deepEqual(judged(await verify({ profile: 'standard-webhooks', payload, keyName: 'hooks', headers }, pooled)), [true, undefined, 'hooks', 3])
      const again = await verify({ profile: 'standard-webhooks', payload, keyName: 'hooks', headers }, pooled)
      assert.deepEqual([again.valid, again.reason, again.replayed], [false, 'replayed', true])
      // Stripe's own library signs a large event; the secret in the request, not the ring.
      const event = large()
      const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`
      assert.equal((await verify({ profile: 'stripe', payload: event, secret: stripeSecret, headers: { 'Stripe-Signature': stripeHeader(stripeSecret, event) } }, pooled)).valid, true)
      // Ed25519 over a large payload runs on libuv's threads: a valid signature, then another key's.
      const { privateKey, publicKey } = generateKeyPairSync('ed25519')
      const whpk = `whpk_${Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url').toString('base64')}`
      const id = newId()
      const timestamp = nowSeconds()
      const message = Buffer.from(`${id}.${timestamp}.${event}`)
      const signed = (key: typeof privateKey) => ({ 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1a,${cryptoSign(null, message, key).toString('base64')}` })
      const other = generateKeyPairSync('ed25519').privateKey
      assert.equal((await verify({ profile: 'standard-webhooks', payload: event, publicKey: whpk, headers: signed(other), remember: false }, pooled)).reason, 'signature-mismatch')
      assert.equal((await verify({ profile: 'standard-webhooks', payload: event, publicKey: whpk, headers: signed(privateKey) }, pooled)).valid, true)
    } finally {
      await pooled.close()
    }
  })

  it('a key whose algorithms= leaves out sha256 is 422 algorithm-not-allowed-for-key; an unknown name is 422 unknown-key and is not echoed', async () => {
    const payload = body()
    const headers = standardHeaders(S.wide.whsec, payload)
    for (const [path, request] of [
      ['/api/webhooks/verify', { profile: 'standard-webhooks', payload, keyName: 'wide', headers }],
      ['/api/webhooks/sign', { payload, keyName: 'wide' }],
    ] as const) {
      const refused = await server.post(path, request)
      assert.equal(refused.status, 422, refused.text)
      assert.equal(refused.body.type, 'urn:hashd:problem:algorithm-not-allowed-for-key')
      assert.deepEqual(refused.body.algorithms, ['sha512'])
      assert.deepEqual(refused.body.errors, [{ pointer: '/body/keyName', message: 'not allowed for this key' }])
    }
    const name = `whsec_${randomBytes(16).toString('hex')}`
    for (const [path, request] of [
      ['/api/webhooks/verify', { profile: 'github', payload, keyName: name, headers }],
      ['/api/webhooks/sign', { payload, keyName: name }],
    ] as const) {
      const unknown = await server.post(path, request)
      assert.equal(unknown.status, 422, unknown.text)
      assert.equal(unknown.body.type, 'urn:hashd:problem:unknown-key')
      assert.ok(!unknown.text.includes(name.slice(6)), 'the name is echoed')
    }
    assert.ok(!server.logs().includes(name.slice(6)), 'the name is in the log')
  })

  it('audit: key uses in hashd_key_uses_total (webhook-verify, webhook-sign) and the access line, never a secret', async () => {
    const payload = body()
    await verify({ profile: 'standard-webhooks', payload, keyName: 'other', headers: standardHeaders(S.other.whsec, payload) })
    await verify({ profile: 'github', payload, keyName: 'other', headers: { 'x-hub-signature-256': await octokitSign(S.h3.text, payload) } })
    await server.post('/api/webhooks/sign', { payload, keyName: 'other' })
    const metrics = (await server.get('/metrics')).text
    assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="other",version="1",operation="webhook-verify"\} 1$/m)
    assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="other",version="any",operation="webhook-verify"\} 1$/m)
    assert.match(metrics, /^hashd_key_uses_total\{ring="hmac",key="other",version="1",operation="webhook-sign"\} 1$/m)
    const lines = server.logs().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const access = lines.filter((line) => line.msg === 'request completed' && String(line.route).startsWith('/api/webhooks/') && JSON.stringify(line.keys ?? []).includes('other'))
    assert.deepEqual(access.map((line) => line.keys), [['hmac:other:v1'], ['hmac:other:v1']])
    for (const secret of Object.values(S)) assert.ok(!server.logs().includes(secret.base64) && !server.logs().includes(secret.text), 'a secret in the log')
  })

  it('API keys: outside the route scopes (webhooks:verify, webhooks:sign) or hmac-keys= is 403 insufficient-scope, before the key is looked up', async () => {
    const [all, limited, hmacOnly] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex'), randomBytes(16).toString('hex')]
    const scoped = await startServer({
      HMAC_KEYS_FILE: file(HMAC_KEYS),
      API_KEYS_FILE: file(`all ${hashKey(all)}\nlimited ${hashKey(limited)} scopes=webhooks:verify hmac-keys=other\nhmaconly ${hashKey(hmacOnly)} scopes=hmac\n`),
    })
    try {
      const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
      const payload = body()
      const request = { profile: 'standard-webhooks', payload, keyName: 'hooks', headers: standardHeaders(S.h3.whsec, payload), remember: false }
      assert.deepEqual(judged(await verify(request, scoped, bearer(all))), [true, undefined, 'hooks', 3])
      const outside = await scoped.post('/api/webhooks/verify', request, bearer(limited))
      assert.equal(outside.status, 403, outside.text)
      // The option at fault, never the name asked for.
      assert.deepEqual([outside.body.type, outside.body.scope], ['urn:hashd:problem:insufficient-scope', 'hmac-keys'])
      assert.match(outside.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="hmac-keys"/)
      assert.ok(!outside.text.includes('hooks'))
      // The same 403 for a name no key has: it tells nothing of which names exist.
      const unknown = await scoped.post('/api/webhooks/verify', { ...request, keyName: 'nothing-here' }, bearer(limited))
      assert.deepEqual([unknown.status, unknown.body.scope, unknown.body.detail], [403, 'hmac-keys', outside.body.detail])
      const inside = { ...request, keyName: 'other', headers: standardHeaders(S.other.whsec, payload) }
      assert.deepEqual(judged(await verify(inside, scoped, bearer(limited))), [true, undefined, 'other', 1])
      // A secret of the caller's own needs no hmac-keys=.
      assert.equal((await verify({ ...request, keyName: undefined, secret: S.h3.whsec }, scoped, bearer(limited))).valid, true)
      const sign = await scoped.post('/api/webhooks/sign', { payload, keyName: 'other' }, bearer(limited))
      assert.deepEqual([sign.status, sign.body.scope], [403, 'webhooks:sign'])
      const routeScope = await scoped.post('/api/webhooks/verify', inside, bearer(hmacOnly))
      assert.deepEqual([routeScope.status, routeScope.body.scope], [403, 'webhooks:verify'])
    } finally {
      await scoped.close()
    }
  })

  it('a rotation in HMAC_KEYS_FILE is followed without a restart: stage, promote, floor, retire', async () => {
    const [v1, v2, v3] = [versionSecret(), versionSecret(), versionSecret()]
    const path = file(`rot 1 ${v1.base64} purpose=webhooks\n`)
    const rotating = await startServer({ HMAC_KEYS_FILE: path })
    const rewrite = async (lines: string[], check: (key: { currentVersion: number, minVerifyVersion: number | null, versions: Array<{ version: number, state: string }> }) => boolean) => {
      writeFileSync(path, `${lines.join('\n')}\n`)
      const deadline = Date.now() + 15_000
      while (!check((await rotating.get('/api/keys')).body.hmac[0])) {
        assert.ok(Date.now() < deadline, 'no reload')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    /** A webhook the spec's library signs under `secret`, as hashd judges it with keyName rot. */
    const judge = async (secret: { whsec: string }) => {
      const payload = body()
      return judged(await verify({ profile: 'standard-webhooks', payload, keyName: 'rot', headers: standardHeaders(secret.whsec, payload) }, rotating))
    }
    const signer = async () => {
      const payload = body()
      const signed = (await rotating.post('/api/webhooks/sign', { payload, keyName: 'rot' })).body as { keyVersion: number, headers: Record<string, string> }
      return { keyVersion: signed.keyVersion, accepts: [v1, v2, v3].map((secret) => standardAccepts(secret.whsec, payload, signed.headers)) }
    }
    try {
      assert.deepEqual(await judge(v1), [true, undefined, 'rot', 1])
      assert.deepEqual(await judge(v2), [false, 'signature-mismatch', 'rot', undefined])

      // 1. Stage version 2: it verifies at once; version 1 still signs.
      await rewrite([`rot 1 ${v1.base64} purpose=webhooks`, `rot 2 ${v2.base64} purpose=webhooks state=staged`], (key) => key.versions.length === 2)
      assert.deepEqual(await judge(v2), [true, undefined, 'rot', 2])
      assert.deepEqual(await signer(), { keyVersion: 1, accepts: [true, false, false] })

      // 2. Promote it: version 2 signs first, version 1 beside it; a webhook signed under 1 still verifies and says so.
      await rewrite([`rot 1 ${v1.base64} purpose=webhooks`, `rot 2 ${v2.base64} purpose=webhooks`, `rot 3 ${v3.base64} purpose=webhooks state=staged`], (key) => key.currentVersion === 2 && key.versions.length === 3)
      assert.deepEqual(await judge(v1), [true, undefined, 'rot', 1])
      assert.deepEqual(await judge(v2), [true, undefined, 'rot', 2])
      assert.deepEqual(await judge(v3), [true, undefined, 'rot', 3])
      assert.deepEqual(await signer(), { keyVersion: 2, accepts: [true, true, false] })

      // 3. Raise the floor: version 1 is below it, and signs no more.
      await rewrite([`rot 1 ${v1.base64} purpose=webhooks min-verify-version=2`, `rot 2 ${v2.base64} purpose=webhooks`, `rot 3 ${v3.base64} purpose=webhooks state=staged`], (key) => key.minVerifyVersion === 2)
      assert.deepEqual(await judge(v1), [false, 'key-version-below-minimum', 'rot', 1])
      assert.deepEqual(await signer(), { keyVersion: 2, accepts: [false, true, false] })

      // 4. Retire it instead of the floor: key-version-retired.
      await rewrite([`rot 1 ${v1.base64} purpose=webhooks state=retired`, `rot 2 ${v2.base64} purpose=webhooks`, `rot 3 ${v3.base64} purpose=webhooks state=staged`], (key) => key.minVerifyVersion === null && key.versions[0]?.state === 'retired')
      assert.deepEqual(await judge(v1), [false, 'key-version-retired', 'rot', 1])

      // 5. Removed from the file: its webhooks are a mismatch, as for any key hashd does not hold.
      await rewrite([`rot 2 ${v2.base64} purpose=webhooks`, `rot 3 ${v3.base64} purpose=webhooks`], (key) => key.currentVersion === 3)
      assert.deepEqual(await judge(v1), [false, 'signature-mismatch', 'rot', undefined])
      assert.deepEqual(await signer(), { keyVersion: 3, accepts: [false, true, true] })
    } finally {
      await rotating.close()
    }
  })

  /**
   * One key, one purpose. A Standard Webhooks signature is the HMAC-SHA256 of
   * `<id>.<timestamp>.<body>`, so one secret serving /api/hmac and the webhooks would let an API key
   * with the scope `hmac` sign any webhook, and one with `webhooks:sign` make HMACs that
   * /api/hmac/verify accepts. Each forgery is tried over HTTP as an attacker would, and refused.
   */
  describe('purpose=: a key for HMACs and a key for webhooks, neither scope forging the other', () => {
    const O = { o1: versionSecret(), o2: versionSecret() }
    const B = { b1: versionSecret(), b2: versionSecret() }
    const [hmacOnly, signer, all] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex'), randomBytes(16).toString('hex')]
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
    let separated: TestServer
    before(async () => {
      separated = await startServer({
        HMAC_KEYS_FILE: file([
          `orders 1 ${O.o1.base64}`,
          `orders 2 ${O.o2.base64} purpose=hmac`,
          `billing 1 ${B.b1.base64} purpose=webhooks`,
          `billing 2 ${B.b2.base64} purpose=webhooks`,
        ].join('\n')),
        API_KEYS_FILE: file(`hmaconly ${hashKey(hmacOnly)} scopes=hmac hmac-keys=orders\nsigner ${hashKey(signer)} scopes=webhooks:sign\nall ${hashKey(all)}\n`),
      })
    })
    after(async () => { await separated.close() })

    /** A 422 key-purpose naming the purpose needed and pointing at keyName (`pointer`), without the name given. */
    const assertPurposeRefusal = (problem: { status: number, type: string, purpose?: string, errors?: unknown }, text: string, needed: string, pointer = '/body/keyName') => {
      assert.equal(problem.status, 422, text)
      assert.equal(problem.type, 'urn:hashd:problem:key-purpose', text)
      assert.equal(problem.purpose, needed)
      assert.deepEqual(problem.errors, [{ pointer, message: `not a purpose=${needed} key` }])
      assert.doesNotMatch(text, /orders|billing/, 'the key name is echoed')
    }

    it('the scope hmac cannot forge a webhook: an HMAC key is refused by /api/webhooks/verify and /sign, and a webhooks key by /api/hmac', async () => {
      const timestamp = nowSeconds()
      const evil = '{"evil":1}'
      // The HMAC of the message a webhook signs, made under the HMAC key: what standardwebhooks signs with that secret (the forgery's makings).
      const made = await separated.post('/api/hmac', { message: `msg_evil.${timestamp}.${evil}`, keyName: 'orders', encoding: 'base64' }, bearer(hmacOnly))
      assert.equal(made.status, 200, made.text)
      const headers = { 'webhook-id': 'msg_evil', 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${made.body.hmac as string}` }
      assert.equal(standardAccepts(O.o2.whsec, evil, headers), true, 'the HMAC is a Standard Webhooks signature under the same secret')
      // …but no webhook route takes that key.
      const forged = await separated.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload: evil, keyName: 'orders', headers }, bearer(all))
      assertPurposeRefusal(forged.body, forged.text, 'webhooks')
      const signed = await separated.post('/api/webhooks/sign', { payload: evil, keyName: 'orders' }, bearer(all))
      assertPurposeRefusal(signed.body, signed.text, 'webhooks')
      // And no HMAC route takes the webhooks key, single or in a batch.
      const underWebhookKey = await separated.post('/api/hmac', { message: `msg_evil.${timestamp}.${evil}`, keyName: 'billing', encoding: 'base64' }, bearer(all))
      assertPurposeRefusal(underWebhookKey.body, underWebhookKey.text, 'hmac')
      const batch = await separated.post('/api/hmac', { items: [{ message: 'a', keyName: 'orders' }, { message: `msg_evil.${timestamp}.${evil}`, keyName: 'billing', reference: 'r' }] }, bearer(all))
      assert.equal(batch.status, 200, batch.text)
      assert.equal(batch.body.results[0].keyName, 'orders')
      assertPurposeRefusal(batch.body.results[1].problem, JSON.stringify(batch.body.results[1]), 'hmac', '/body/items/1/keyName')
    })

    it('the scope webhooks:sign cannot make HMACs: its signatures, under the current and the previous version, are refused by /api/hmac/verify', async () => {
      const [payload, id, timestamp] = [body(), newId(), nowSeconds()]
      const signed = await separated.post('/api/webhooks/sign', { payload, keyName: 'billing', id, timestamp }, bearer(signer))
      assert.equal(signed.status, 200, signed.text)
      const signatures = (signed.body.headers['webhook-signature'] as string).split(' ').map((entry) => entry.slice('v1,'.length))
      assert.equal(signatures.length, 2, 'versions 2 and 1')
      const message = `${id}.${timestamp}.${payload}`
      for (const [index, signature] of signatures.entries()) {
        for (const request of [{ message, hmac: signature, keyName: 'billing' }, { message, hmac: signature, keyName: 'billing', keyVersion: 2 - index }]) {
          const checked = await separated.post('/api/hmac/verify', request, bearer(all))
          assertPurposeRefusal(checked.body, checked.text, 'hmac')
        }
      }
      const batch = await separated.post('/api/hmac/verify', { items: signatures.map((hmac) => ({ message, hmac, keyName: 'billing' })) }, bearer(all))
      assert.equal(batch.status, 200, batch.text)
      for (const [index, result] of (batch.body.results as Array<{ problem: { status: number, type: string, purpose?: string } }>).entries()) {
        assertPurposeRefusal(result.problem, JSON.stringify(result), 'hmac', `/body/items/${index}/keyName`)
      }
    })

    it('each key does its own work: the webhooks key verifies what standardwebhooks, octokit and stripe sign and signs what they accept; the HMAC key makes and checks HMACs', async () => {
      for (const [version, secret] of [[2, B.b2], [1, B.b1]] as const) {
        const payload = body()
        const answers = [
          await verify({ profile: 'standard-webhooks', payload, keyName: 'billing', headers: standardHeaders(secret.whsec, payload) }, separated, bearer(all)),
          await verify({ profile: 'github', payload, keyName: 'billing', headers: { 'X-Hub-Signature-256': await octokitSign(secret.text, payload) } }, separated, bearer(all)),
          await verify({ profile: 'stripe', payload, keyName: 'billing', headers: { 'Stripe-Signature': stripeHeader(secret.text, payload) } }, separated, bearer(all)),
        ]
        for (const answer of answers) assert.deepEqual(judged(answer), [true, undefined, 'billing', version])
      }
      const payload = body()
      const signed = await separated.post('/api/webhooks/sign', { payload, keyName: 'billing' }, bearer(signer))
      assert.equal(standardAccepts(B.b2.whsec, payload, signed.body.headers as Record<string, string>), true)
      assert.equal(standardAccepts(B.b1.whsec, payload, signed.body.headers as Record<string, string>), true)

      // HMACs under orders: what standardwebhooks computes under the same bytes (an independent HMAC-SHA256), and checked back.
      const [id, timestamp] = [newId(), nowSeconds()]
      const expected = (standardHeaders(O.o2.whsec, payload, id, timestamp)['webhook-signature']).slice('v1,'.length)
      const made = await separated.post('/api/hmac', { message: `${id}.${timestamp}.${payload}`, keyName: 'orders', encoding: 'base64' }, bearer(hmacOnly))
      assert.deepEqual([made.status, made.body.hmac, made.body.keyVersion], [200, expected, 2])
      const checked = await separated.post('/api/hmac/verify', { message: `${id}.${timestamp}.${payload}`, keyName: 'orders', hmac: expected }, bearer(all))
      assert.deepEqual([checked.body.valid, checked.body.keyVersion], [true, 2])
      const listed = await separated.fetch('/api/keys', { headers: bearer(all) })
      const keys = (await listed.json() as { hmac: Array<{ name: string, purpose: string }> }).hmac.map(({ name, purpose }) => [name, purpose])
      assert.deepEqual(keys, [['orders', 'hmac'], ['billing', 'webhooks']])
    })
  })
})
