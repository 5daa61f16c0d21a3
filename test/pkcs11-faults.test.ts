/**
 * A PKCS#11 token that fails, with SoftHSM2: hashd fails closed and recovers by itself.
 *
 * - A module path that does not exist: keyed work under a token key answers 503
 *   key-source-unavailable, a file key of the same ring and unkeyed work keep working, health says
 *   the key source is degraded.
 * - A wrong PIN: 503, and the token is asked to log in once, however many requests come (counted
 *   by pkcs11-spy between hashd and SoftHSM2, not by hashd); the right PIN written to the file
 *   brings the token back with no restart, after one more login.
 * - The token's directory taken away while serving: 503 and degraded; put back, answers again.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startHashd } from './helpers/process.js'
import { makeSoftToken, PKCS11_SPY, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { python, skipUnless } from './helpers/tools.js'

const PY_HMAC = 'import sys, hmac, hashlib; print(hmac.new(bytes.fromhex(sys.argv[1]), sys.argv[2].encode(), hashlib.sha256).hexdigest())'

/** Polls `check` until it holds, for at most 20 s (a deadline, not a figure). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const unavailable = (answer: { status: number, headers: Headers, body: Record<string, unknown> }, reason?: string) => {
  assert.equal(answer.status, 503, JSON.stringify(answer.body))
  assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/)
  assert.equal(answer.body.type, 'urn:hashd:problem:key-source-unavailable')
  if (reason !== undefined) assert.equal(answer.body.reason, reason)
}

describe('a PKCS#11 token that fails', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pkcs11-spy', 'pykcs11', 'python3') }, () => {
  let token: SoftToken
  let keys: string
  const known = randomBytes(32)
  const fileSecret = randomBytes(32)
  const expected = (secret: Buffer, message: string) => python(PY_HMAC, [secret.toString('hex'), message])

  before(() => {
    token = makeSoftToken()
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    token.importKey('orders-v1', known, 'generic')
    keys = join(token.dir, 'hmac-keys')
    writeFileSync(keys, `orders 1 pkcs11:token=hashd;object=orders-v1\nlocal 1 ${fileSecret.toString('base64')}\n`)
  })
  after(() => {
    token?.remove()
    delete process.env.SOFTHSM2_CONF
  })

  it('a module path that does not exist: 503 for the token key; the file key and unkeyed work go on; health degraded', async () => {
    const hashd = await startHashd({ ...token.env, PKCS11_MODULE: join(token.dir, 'no-such-module.so'), PKCS11_PIN_FILE: token.pinFile, HMAC_KEYS_FILE: keys })
    try {
      unavailable(await hashd.post('/api/hmac', { keyName: 'orders', message: 'm' }), 'module')
      unavailable(await hashd.post('/api/hmac/verify', { keyName: 'orders', message: 'm', hmac: '00'.repeat(32) }), 'module')
      const local = await hashd.post('/api/hmac', { keyName: 'local', message: 'm' })
      assert.equal(local.body.hmac, expected(fileSecret, 'm'))
      assert.equal((await hashd.post('/api/hash', { algorithm: 'sha256', input: 'm' })).status, 200)
      const health = await hashd.get('/api/health')
      assert.deepEqual([health.status, health.body.degraded, health.body.keySource], [200, true, 'degraded'])
    } finally {
      await hashd.stop()
    }
  })

  it('a wrong PIN: 503, one C_Login however many requests; the right PIN in the file recovers with one more', async () => {
    const spyLog = join(token.dir, 'spy.log')
    const pinFile = join(token.dir, 'wrong-pin')
    writeFileSync(pinFile, '000000\n')
    const logins = () => (readFileSync(spyLog, 'utf8').match(/^\d+: C_Login$/gm) ?? []).length
    // The OpenAPI document is built in this process from the same variables: its spy logs elsewhere.
    process.env.PKCS11SPY = SOFTHSM_MODULE
    process.env.PKCS11SPY_OUTPUT = join(token.dir, 'spy-document.log')
    const hashd = await startHashd({
      ...token.env, PKCS11SPY: SOFTHSM_MODULE, PKCS11SPY_OUTPUT: spyLog,
      PKCS11_MODULE: PKCS11_SPY, PKCS11_PIN_FILE: pinFile, HMAC_KEYS_FILE: keys,
    })
    try {
      for (let round = 0; round < 3; round++) {
        unavailable(await hashd.post('/api/hmac', { keyName: 'orders', message: 'm' }), 'pin')
        await new Promise((resolve) => setTimeout(resolve, 600))
      }
      assert.equal(logins(), 1)
      // Replaced in one step, as an operator (or a mounted Secret) changes it.
      writeFileSync(`${pinFile}.new`, `${readFileSync(token.pinFile, 'utf8')}`)
      renameSync(`${pinFile}.new`, pinFile)
      await until('the right PIN is used', async () => (await hashd.post('/api/hmac', { keyName: 'orders', message: 'm' })).status === 200)
      assert.equal((await hashd.post('/api/hmac', { keyName: 'orders', message: 'm' })).body.hmac, expected(known, 'm'))
      assert.equal(logins(), 2)
      assert.equal((await hashd.get('/api/health')).body.degraded, false)
    } finally {
      delete process.env.PKCS11SPY
      delete process.env.PKCS11SPY_OUTPUT
      await hashd.stop()
    }
  })

  it('the token directory taken away while serving: 503 and degraded; put back: answers again, with no restart', async () => {
    const hashd = await startHashd({ ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile, HMAC_KEYS_FILE: keys })
    const away = `${token.tokenDir}.away`
    try {
      assert.equal((await hashd.post('/api/hmac', { keyName: 'orders', message: 'before' })).body.hmac, expected(known, 'before'))
      renameSync(token.tokenDir, away)
      unavailable(await hashd.post('/api/hmac', { keyName: 'orders', message: 'while away' }))
      assert.equal((await hashd.get('/api/health')).body.keySource, 'degraded')
      assert.equal((await hashd.post('/api/hmac', { keyName: 'local', message: 'm' })).status, 200)
      renameSync(away, token.tokenDir)
      await until('the token is back', async () => (await hashd.post('/api/hmac', { keyName: 'orders', message: 'after' })).status === 200)
      assert.equal((await hashd.post('/api/hmac', { keyName: 'orders', message: 'after' })).body.hmac, expected(known, 'after'))
      await until('health is back', async () => (await hashd.get('/api/health')).body.keySource === 'hsm')
    } finally {
      await hashd.stop()
    }
  })
})
