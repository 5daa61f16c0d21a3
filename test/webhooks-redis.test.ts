/**
 * Webhook replay protection shared through a real redis-server: two hashd processes, one Redis. A
 * webhook verified by one replica is a replay at the other; with Redis stopped or hung a webhook
 * whose signature is valid gets 503 (fail closed) while bad ones are still refused with their
 * reasons; a check that timed out on a hung Redis does not turn the sender's next delivery into a
 * "replay" when Redis wakes. A key lives as long as the time rule could accept its webhook again
 * (receivedAt included); each caller's share is counted across replicas and frees as its keys
 * expire; a Redis at its maxmemory is a full store (503 replay-store-full), and one whose policy
 * would evict keys is warned about.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { parseMetrics, valueOf } from './helpers/metrics.js'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { startRedis, type TestRedis } from './helpers/redis.js'
import { postFrom } from './helpers/send.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const nowSeconds = () => Math.floor(Date.now() / 1000)
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

function signed(secret: string, id = `msg_${randomBytes(12).toString('hex')}`, timestamp = nowSeconds()) {
  const payload = JSON.stringify({ type: 'user.created', data: { id: randomBytes(8).toString('hex') } })
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secret).sign(id, new Date(timestamp * 1000), payload) }
  return { profile: 'standard-webhooks', payload, secret, headers }
}

/** PTTL of the one replay key under `prefix`, in milliseconds. */
async function replayKeyTtl(redis: TestRedis, prefix: string): Promise<number> {
  const keys = await redis.command(`KEYS ${prefix}replay:*`)
  assert.match(keys, /^\*1\r\n/, keys)
  return Number(/^:(\d+)/.exec(await redis.command(`PTTL ${keys.split('\r\n')[2]}`))?.[1])
}

async function replayStore(server: HashdProcess): Promise<string> {
  return ((await server.get('/api/health')).body as { replayStore: string }).replayStore
}

async function waitForReplayStore(server: HashdProcess, state: string): Promise<void> {
  const deadline = Date.now() + 15_000
  let last = ''
  while (Date.now() < deadline) {
    last = await replayStore(server)
    if (last === state) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail(`replayStore stayed "${last}", expected "${state}"`)
}

describe('webhook replays shared through Redis', { skip: skipUnless('redis-server') }, () => {
  let redis: TestRedis
  const processes: HashdProcess[] = []
  const prefix = `hashd-test-${randomBytes(4).toString('hex')}:`
  const start = async (env: Record<string, string> = {}) => {
    // RATE_LIMIT_MAX=0 (the helpers' default): Redis keeps replays even with the limits off.
    // A command timeout well above a loaded machine's delays: only the hung-Redis test is about it
    // (it sets its own), and at the default 50 ms a busy CI answers 503 where a replay is meant.
    const started = await startHashd({ REDIS_URL: redis.url, REDIS_PREFIX: prefix, REDIS_COMMAND_TIMEOUT_MS: '2000', ...env })
    processes.push(started)
    return started
  }
  const verify = async (server: HashdProcess, request: object) => server.post('/api/webhooks/verify', request)

  before(async () => { redis = await startRedis() })
  after(async () => {
    await Promise.all(processes.map((process) => process.stop()))
    await redis.destroy()
  })

  it('a webhook verified by one replica is a replay at the other (Standard Webhooks by id, Stripe by signed content)', async () => {
    const [a, b] = await Promise.all([start(), start()])
    await Promise.all([waitForReplayStore(a, 'redis'), waitForReplayStore(b, 'redis')])
    const secret = newSecret()
    const webhook = signed(secret)
    const first = await verify(a, webhook)
    assert.equal(first.status, 200)
    assert.deepEqual(first.body, { valid: true, timestamp: Number(webhook.headers['webhook-timestamp']), replayed: false })
    const second = await verify(b, webhook)
    assert.deepEqual([second.status, second.body.valid, second.body.reason, second.body.replayed], [200, false, 'replayed', true])
    // The sender's retry: same id, new timestamp and signature, at the other replica.
    const retry = signed(secret, webhook.headers['webhook-id'])
    assert.equal((await verify(b, retry)).body.replayed, true)

    const stripe = new Stripe('sk_test_hashd_never_used')
    const stripeSecret = `whsec_${randomBytes(24).toString('hex')}`
    const payload = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, object: 'event' })
    const request = { profile: 'stripe', payload, secret: stripeSecret, headers: { 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret }) } }
    assert.equal((await verify(b, request)).body.valid, true)
    assert.equal((await verify(a, request)).body.reason, 'replayed')

    // One webhook delivered to both replicas at once, four times each: exactly one answer is valid.
    const raced = signed(secret)
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => verify(index % 2 === 0 ? a : b, raced)))
    assert.deepEqual(answers.map((answer) => answer.status), Array(8).fill(200))
    assert.equal(answers.filter((answer) => answer.body.valid === true).length, 1)
    assert.equal(answers.filter((answer) => answer.body.replayed === true).length, 7)

    // What Redis holds: a hash under <prefix>replay:, never the id, kept until the webhook's timestamp
    // + the 300 s tolerance + WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS (300 s), and the rest of that second.
    const keys = await redis.command(`KEYS ${prefix}replay:*`)
    assert.match(keys, /^\*3\r\n/, keys)
    assert.ok(!keys.includes(webhook.headers['webhook-id']))
    const ttl = Number(/^:(\d+)/.exec(await redis.command(`PTTL ${/\r\n(hashd-test-[^\r]+)\r\n/.exec(keys)?.[1]}`))?.[1])
    assert.ok(ttl > 590_000 && ttl <= 601_000, `PTTL ${ttl}: about 600 s from the webhooks' timestamps`)
    await Promise.all([a.stop(), b.stop()])
  })

  it('with Redis stopped: a valid signature gets 503 with Retry-After (fail closed), bad ones are refused with their reasons; with Redis back, it verifies', async () => {
    const server = await start({ REDIS_PREFIX: `${prefix}outage:` })
    await waitForReplayStore(server, 'redis')
    const secret = newSecret()
    await redis.stop()
    try {
      await waitForReplayStore(server, 'degraded')
      const webhook = signed(secret)
      const refused = await verify(server, webhook)
      assert.equal(refused.status, 503)
      assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.equal(refused.body.type, 'urn:hashd:problem:replay-store-unavailable')
      assert.equal(refused.headers.get('retry-after'), '1')
      const forged = await verify(server, { ...webhook, secret: newSecret() })
      assert.deepEqual([forged.status, forged.body.reason], [200, 'signature-mismatch'])
      const malformed = await verify(server, { ...webhook, headers: { ...webhook.headers, 'webhook-timestamp': 'soon' } })
      assert.deepEqual([malformed.status, malformed.body.reason], [200, 'malformed-header'])
      const health = await server.get('/api/health')
      assert.deepEqual([health.status, health.body.status, health.body.degraded, health.body.replayStore, health.body.rateLimitStore], [200, 'ok', true, 'degraded', 'off'])
      assert.equal(server.stdout().split('\n').filter((line) => line.includes('Redis unavailable')).length, 1, 'one warning')
    } finally {
      await redis.start()
    }
    await waitForReplayStore(server, 'redis')
    const webhook = signed(secret)
    assert.equal((await verify(server, webhook)).body.valid, true)
    assert.equal((await verify(server, webhook)).body.reason, 'replayed')
    await server.stop()
  })

  it('with Redis hung (SIGSTOP): 503 within the command timeout; the check that timed out is undone, so the sender\'s next delivery verifies', async () => {
    const server = await start({ REDIS_PREFIX: `${prefix}hung:`, REDIS_COMMAND_TIMEOUT_MS: '100' })
    await waitForReplayStore(server, 'redis')
    const webhook = signed(newSecret())
    redis.pause()
    try {
      const started = Date.now()
      const refused = await verify(server, webhook)
      assert.equal(refused.status, 503)
      assert.ok(Date.now() - started < 2_000, `answered in ${Date.now() - started} ms`)
    } finally {
      redis.resume()
    }
    // Redis runs the queued SET when it thaws, and the undo right after it: no key is left.
    const deadline = Date.now() + 5_000
    let keys = ''
    while (Date.now() < deadline && (keys = await redis.command(`KEYS ${prefix}hung:replay:*`)) !== '*0\r\n') await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(keys, '*0\r\n')
    const again = await verify(server, webhook)
    assert.deepEqual([again.status, again.body.valid, again.body.replayed], [200, true, false])
    assert.equal((await verify(server, webhook)).body.reason, 'replayed')
    await server.stop()
  })

  // The tests below run their replicas in this process (each its own app and Redis connection), which start in a fraction of a child's time.
  const inProcess: TestServer[] = []
  const startHere = async (env: Record<string, string>) => {
    const server = await startServer({ REDIS_URL: redis.url, REDIS_COMMAND_TIMEOUT_MS: '2000', ...env })
    inProcess.push(server)
    const deadline = Date.now() + 15_000
    while ((await server.get('/api/health')).body.replayStore !== 'redis') {
      if (Date.now() > deadline) assert.fail('the replay store did not reach Redis')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return server
  }
  after(async () => { await Promise.all(inProcess.splice(0).map((server) => server.close())) })
  const refusedHere = async (server: TestServer, limit: 'store' | 'caller') =>
    valueOf(parseMetrics((await server.get('/metrics')).text), 'hashd_webhook_replay_refused_total', { limit })

  it('a key lives until the webhook\'s timestamp + tolerance + WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS: one checked against a receivedAt an hour old is replayed seconds later', async () => {
    const keys = `${prefix}received:`
    const server = await startHere({ REDIS_PREFIX: keys, WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS: '7200' })
    const signedAt = nowSeconds() - 3600
    const request = { ...signed(newSecret(), undefined, signedAt), receivedAt: signedAt, toleranceSeconds: 1 }
    assert.equal((await server.post('/api/webhooks/verify', request)).body.valid, true)
    // Accepted again while a receivedAt up to 7200 s old could be given: until signedAt + 1 + 7200 (and the rest of that second).
    const ttl = await replayKeyTtl(redis, keys)
    const expected = (signedAt + 1 + 7200 + 1) * 1000 - Date.now()
    assert.ok(ttl > expected - 5_000 && ttl <= expected + 1_000, `PTTL ${ttl} ms, expected about ${expected}`)
    await new Promise((resolve) => setTimeout(resolve, 3_100))
    const later = await server.post('/api/webhooks/verify', request)
    assert.deepEqual([later.status, later.body.valid, later.body.reason], [200, false, 'replayed'])
  })

  it('a caller\'s share is counted across replicas and comes back as its keys expire; another caller keeps its own', async () => {
    const env = { REDIS_PREFIX: `${prefix}share:`, WEBHOOK_REPLAY_CALLER_MAX: '5', WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS: '0' }
    const [a, b] = await Promise.all([startHere(env), startHere(env)])
    const from = (address: string, server: TestServer, request: object) => postFrom(address, `${server.url}/api/webhooks/verify`, request)
    const mallory = newSecret()
    for (let index = 0; index < 5; index++) assert.equal((await from('127.0.0.3', a, signed(mallory))).status, 200)
    const refused = await from('127.0.0.3', b, signed(mallory))
    assert.equal(refused.status, 503)
    assert.equal(refused.body.type, 'urn:hashd:problem:replay-store-full')
    assert.match(refused.body.detail, /WEBHOOK_REPLAY_CALLER_MAX/)
    // Until the soonest of Mallory's keys expires: its timestamp + the 300 s tolerance + 1 s.
    assert.ok(Number(refused.headers.get('retry-after')) > 290 && Number(refused.headers.get('retry-after')) <= 302, `Retry-After ${refused.headers.get('retry-after')}`)
    assert.equal((await from('127.0.0.2', b, signed(newSecret()))).status, 200)
    assert.deepEqual([await refusedHere(a, 'caller'), await refusedHere(b, 'caller')], [0, 1])
    // Keys that live a few seconds (a tolerance of 2 s, signed 2 s ahead): once they expire, the share is free again.
    const shortLived = () => ({ ...signed(newSecret(), undefined, nowSeconds() + 2), toleranceSeconds: 2 })
    for (let index = 0; index < 5; index++) assert.equal((await from('127.0.0.4', a, shortLived())).status, 200)
    assert.equal((await from('127.0.0.4', b, shortLived())).status, 503)
    const deadline = Date.now() + 15_000
    let again = await from('127.0.0.4', b, shortLived())
    while (again.status === 503 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      again = await from('127.0.0.4', b, shortLived())
    }
    assert.equal(again.body.valid, true, 'the share came back as its keys expired')
  })

  it('a Redis at its maxmemory (noeviction) is a full store: 503 replay-store-full, counted; a remembered webhook is still a replay', async () => {
    const server = await startHere({ REDIS_PREFIX: `${prefix}oom:` })
    const verifyHere = (request: object) => server.post('/api/webhooks/verify', request)
    const secret = newSecret()
    const remembered = signed(secret)
    assert.equal((await verifyHere(remembered)).body.valid, true)
    assert.match(await redis.command('CONFIG SET maxmemory 1'), /^\+OK/)
    try {
      const refused = await verifyHere(signed(secret))
      assert.equal(refused.status, 503)
      assert.equal(refused.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.equal(refused.body.type, 'urn:hashd:problem:replay-store-full')
      assert.match(refused.body.detail, /Redis's maxmemory/)
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/)
      assert.equal((await verifyHere(remembered)).body.reason, 'replayed')
      assert.equal(await refusedHere(server, 'store'), 1)
      assert.equal((await server.get('/api/health')).body.replayStore, 'redis', 'a full Redis is not an unreachable one')
    } finally {
      await redis.command('CONFIG SET maxmemory 0')
    }
    assert.equal((await verifyHere(signed(secret))).body.valid, true)
  })

  it('a maxmemory-policy that evicts keys is warned about: evicted replay keys would let replays through', async () => {
    assert.match(await redis.command('CONFIG SET maxmemory-policy allkeys-lru'), /^\+OK/)
    try {
      const server = await startHere({ REDIS_PREFIX: `${prefix}evict:` })
      const deadline = Date.now() + 10_000
      while (!server.logs().includes('may evict webhook replay keys before they expire') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      assert.match(server.logs(), /"maxmemoryPolicy":"allkeys-lru".*may evict webhook replay keys before they expire/)
    } finally {
      await redis.command('CONFIG SET maxmemory-policy noeviction')
    }
  })
})
