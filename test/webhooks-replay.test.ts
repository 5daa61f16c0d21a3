/**
 * Replay memory that cannot be made to forget (this process's memory; through Redis:
 * webhooks-redis.test.ts), over HTTP to the real server:
 *
 * - a full store refuses to remember more (503 replay-store-full, with Retry-After, counted in
 *   hashd_webhook_replay_refused_total) rather than forget a webhook that could still be accepted,
 *   so webhooks signed with a secret of the sender's own cannot push a verified one out;
 * - each caller (here: clients on 127.0.0.2, 127.0.0.3, … as hosts of their own) has a share, and
 *   one that fills its share takes nothing from another's;
 * - a webhook is remembered for as long as the time rule could accept it again, measured the way
 *   the rule measures it: a webhook signed ahead of the clock, or checked against a receivedAt an
 *   hour old, is `replayed` until it is too old, never `valid` again;
 * - a receivedAt further back than WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS cannot be remembered (400),
 *   and may still be looked at (remember: false).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { parseMetrics, valueOf } from './helpers/metrics.js'
import { postFrom } from './helpers/send.js'
import { startServer, type TestServer } from './helpers/server.js'

const nowSeconds = () => Math.floor(Date.now() / 1000)
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

/** A Standard Webhooks delivery as the spec's library signs it, ready for /api/webhooks/verify. */
function webhook(secret: string, timestamp = nowSeconds(), id = `msg_${randomBytes(12).toString('hex')}`) {
  const payload = JSON.stringify({ type: 'invoice.paid', data: { id: randomBytes(8).toString('hex') } })
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secret).sign(id, new Date(timestamp * 1000), payload) }
  return { profile: 'standard-webhooks', payload, secret, headers }
}

async function withServer(env: Record<string, string>, body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServer(env)
  try {
    await body(server)
  } finally {
    await server.close()
  }
}

const refused = async (server: TestServer) => {
  const samples = parseMetrics((await server.get('/metrics')).text)
  return { store: valueOf(samples, 'hashd_webhook_replay_refused_total', { limit: 'store' }), caller: valueOf(samples, 'hashd_webhook_replay_refused_total', { limit: 'caller' }) }
}

/** A 503 replay-store-full as documented: problem+json, the bound named, a Retry-After in whole seconds. */
function assertFull(answer: { status: number, headers: Headers, body: Record<string, unknown> }, bound: RegExp): void {
  assert.equal(answer.status, 503)
  assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  assert.equal(answer.body.type, 'urn:hashd:problem:replay-store-full')
  assert.match(String(answer.body.detail), bound)
  assert.match(String(answer.headers.get('retry-after')), /^[1-9]\d*$/)
}

describe('a full replay store refuses rather than forgets', () => {
  it('sixty webhooks under a secret of the sender\'s own cannot push a verified one out (WEBHOOK_REPLAY_MEMORY_MAX=50)', async () => {
    await withServer({ WEBHOOK_REPLAY_MEMORY_MAX: '50' }, async (server) => {
      const verify = (request: object) => server.post('/api/webhooks/verify', request)
      const victim = webhook(newSecret())
      assert.equal((await verify(victim)).body.valid, true)
      assert.equal((await verify(victim)).body.reason, 'replayed')
      const own = newSecret()
      const answers = []
      for (let index = 0; index < 60; index++) answers.push(await verify(webhook(own)))
      const replayed = await verify(victim)
      assert.deepEqual([replayed.status, replayed.body.valid, replayed.body.reason], [200, false, 'replayed'], 'the verified webhook is still remembered')
      const valid = answers.filter((answer) => answer.status === 200 && answer.body.valid === true).length
      const full = answers.filter((answer) => answer.status === 503)
      assert.equal(valid + full.length, 60, 'every answer is valid or 503')
      // One client, one share: a quarter of the store (13), the victim's webhook among them.
      assert.equal(valid, 12)
      for (const answer of full) assertFull(answer, /WEBHOOK_REPLAY_CALLER_MAX/)
      assert.deepEqual(await refused(server), { store: 0, caller: full.length })
    })
    // Without shares, the whole store is the bound: 50 remembered, then 503s, and still no forgetting.
    await withServer({ WEBHOOK_REPLAY_MEMORY_MAX: '50', WEBHOOK_REPLAY_CALLER_MAX: '0' }, async (server) => {
      const verify = (request: object) => server.post('/api/webhooks/verify', request)
      const victim = webhook(newSecret())
      assert.equal((await verify(victim)).body.valid, true)
      const own = newSecret()
      const statuses = []
      for (let index = 0; index < 60; index++) statuses.push((await verify(webhook(own))).status)
      assert.deepEqual(statuses, [...Array(49).fill(200), ...Array(11).fill(503)])
      assertFull(await verify(webhook(own)), /WEBHOOK_REPLAY_MEMORY_MAX/)
      assert.equal((await verify(victim)).body.reason, 'replayed')
      // A webhook that fails before the store is asked (a forgery) is answered as ever.
      assert.equal((await verify({ ...webhook(own), secret: newSecret() })).body.reason, 'signature-mismatch')
      assert.deepEqual(await refused(server), { store: 12, caller: 0 })
      assert.equal(valueOf(parseMetrics((await server.get('/metrics')).text), 'hashd_webhook_replay_entries'), 50)
    })
  })

  it('one caller cannot fill another\'s share; past the store\'s own bound every caller is refused', async () => {
    await withServer({ WEBHOOK_REPLAY_MEMORY_MAX: '40', WEBHOOK_REPLAY_CALLER_MAX: '10' }, async (server) => {
      const url = `${server.url}/api/webhooks/verify`
      const from = (address: string, request: object) => postFrom(address, url, request)
      const mallory = newSecret()
      const mallorys = []
      for (let index = 0; index < 15; index++) mallorys.push(await from('127.0.0.3', webhook(mallory)))
      assert.deepEqual(mallorys.map((answer) => answer.status), [...Array(10).fill(200), ...Array(5).fill(503)])
      assertFull(mallorys[14]!, /this client/)
      // Another client's share is untouched: all ten of Alice's are remembered, the eleventh is hers to wait for.
      const alice = newSecret()
      const alices = []
      for (let index = 0; index < 10; index++) alices.push(webhook(alice))
      for (const request of alices) assert.equal((await from('127.0.0.2', request)).body.valid, true)
      assert.equal((await from('127.0.0.2', webhook(alice))).status, 503)
      // A replay is answered whatever the share: the store is asked whether it holds it, not to add it.
      assert.deepEqual([(await from('127.0.0.2', alices[3]!)).status, (await from('127.0.0.2', alices[3]!)).body.reason], [200, 'replayed'])
      assert.deepEqual([(await from('127.0.0.3', alices[4]!)).status, (await from('127.0.0.3', alices[4]!)).body.reason], [200, 'replayed'])
      // Two more clients fill the store's 40; a fifth finds the store full, not its share.
      for (const address of ['127.0.0.4', '127.0.0.5']) {
        for (let index = 0; index < 10; index++) assert.equal((await from(address, webhook(newSecret()))).status, 200)
      }
      assertFull(await from('127.0.0.6', webhook(newSecret())), /WEBHOOK_REPLAY_MEMORY_MAX/)
      assert.deepEqual(await refused(server), { store: 1, caller: 6 })
    })
  })
})

describe('remembered while the time rule could accept it again', () => {
  it('a webhook signed ahead of the clock is replayed until it is too old, never valid again', async () => {
    // A tolerance of 1 s and no receivedAt age, so the webhook's whole life is a few seconds.
    await withServer({ WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS: '0' }, async (server) => {
      const ahead = webhook(newSecret(), nowSeconds() + 1)
      const request = { ...ahead, toleranceSeconds: 1 }
      assert.equal((await server.post('/api/webhooks/verify', request)).body.valid, true)
      // Accepted while now ≤ timestamp + 1 s, whole seconds: the replay must be refused all that time.
      const reasons: string[] = []
      const deadline = Date.now() + 8_000
      while (reasons.at(-1) !== 'timestamp-too-old' && Date.now() < deadline) {
        const answer = await server.post('/api/webhooks/verify', request)
        assert.equal(answer.body.valid, false, `the replay was accepted after ${reasons.length} refusals`)
        reasons.push(answer.body.reason)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.equal(reasons.at(-1), 'timestamp-too-old')
      assert.ok(reasons.slice(0, -1).every((reason) => reason === 'replayed'), reasons.join(' '))
    })
  })

  it('receivedAt: an event an hour old, checked against when it arrived with a 1 s tolerance, is not valid again seconds later', async () => {
    await withServer({ WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS: '7200' }, async (server) => {
      const signedAt = nowSeconds() - 3600
      const request = { ...webhook(newSecret(), signedAt), receivedAt: signedAt, toleranceSeconds: 1 }
      assert.equal((await server.post('/api/webhooks/verify', request)).body.valid, true)
      assert.equal((await server.post('/api/webhooks/verify', request)).body.reason, 'replayed')
      // Past twice the tolerance from now, which is all the memory such a webhook used to get.
      await new Promise((resolve) => setTimeout(resolve, 3_100))
      const later = await server.post('/api/webhooks/verify', request)
      assert.deepEqual([later.status, later.body.valid, later.body.reason], [200, false, 'replayed'])
    })
  })

  it('a receivedAt further back than WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS (300 by default) is 400 when remembering, and may be looked at', async () => {
    await withServer({}, async (server) => {
      const signedAt = nowSeconds() - 3600
      const request = { ...webhook(newSecret(), signedAt), receivedAt: signedAt, toleranceSeconds: 5 }
      const refusedOld = await server.post('/api/webhooks/verify', request)
      assert.equal(refusedOld.status, 400)
      assert.equal(refusedOld.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.deepEqual(refusedOld.body.errors, [{ pointer: '/body/receivedAt', message: 'too far in the past to remember' }])
      assert.match(refusedOld.body.detail, /WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS/)
      assert.equal((await server.post('/api/webhooks/verify', { ...request, remember: false })).body.valid, true)
      // Within the bound, it is remembered.
      const atBound = { ...webhook(newSecret(), nowSeconds() - 300), receivedAt: nowSeconds() - 299 }
      assert.equal((await server.post('/api/webhooks/verify', atBound)).body.valid, true)
      assert.equal((await server.post('/api/webhooks/verify', atBound)).body.reason, 'replayed')
    })
  })
})
