/**
 * Keys in several tokens of one PKCS#11 module, with SoftHSM2: two tokens in one SOFTHSM2_CONF,
 * `hashd` logged in with PKCS11_PIN_FILE and `tenant-b` with a PIN of its own, named by the
 * `pin-source` of its URIs (RFC 7512 §2.3).
 *
 * - HMAC keys in each token answer, each equal to PyKCS11's C_Sign with the same object; a pepper
 *   key in `tenant-b` seals hashes beside them.
 * - `tenant-b`'s directory taken away: only its keys answer 503, `hashd`'s keep answering, and
 *   health names the token that is degraded; put back, it serves again with no restart.
 * - A wrong PIN in `tenant-b`'s file: its keys answer 503 reason pin, `hashd`'s keep answering;
 *   pkcs11-spy (between hashd and SoftHSM2) counts one C_Login per token however many requests,
 *   and SoftHSM2's own token flags show a failed login on `tenant-b` only.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { hashKey } from '../src/keys/api-keys.js'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { makeSoftToken, PKCS11_SPY, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { run, skipUnless } from './helpers/tools.js'

const TENANT = 'tenant-b'
const TENANT_PIN = '97531864'

/** Polls `check` until it holds, for at most 30 s (a deadline, not a figure). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

interface HealthToken { token: string, state: string, reason?: string }

describe('keys in several tokens of one PKCS#11 module', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pkcs11-spy', 'pykcs11', 'python3') }, () => {
  let soft: SoftToken
  let hmacKeys: string
  let pepperKeys: string
  let apiKeys: string
  let tenantPin: string
  const admin = `hk_${randomBytes(32).toString('base64url')}`
  const auth = { authorization: `Bearer ${admin}` }
  const message = (text: string) => Buffer.from(text)

  before(() => {
    soft = makeSoftToken()
    soft.addToken(TENANT, TENANT_PIN)
    soft.importKey('orders-v1', randomBytes(32), 'generic')
    soft.importKey('tenant-v1', randomBytes(32), 'generic', TENANT)
    soft.keygen('spare-v1', 'GENERIC:32')
    soft.importKey('pepper-t1', randomBytes(32), 'aes', TENANT)
    tenantPin = join(soft.dir, 'tenant pin')
    writeFileSync(tenantPin, `${TENANT_PIN}\n`, { mode: 0o600 })
    const pinSource = `pin-source=file://${tenantPin.replaceAll(' ', '%20')}`
    hmacKeys = join(soft.dir, 'hmac-keys')
    writeFileSync(hmacKeys, [
      'orders 1 pkcs11:token=hashd;object=orders-v1',
      `tenant 1 pkcs11:token=${TENANT};object=tenant-v1?${pinSource}`,
      '',
    ].join('\n'))
    pepperKeys = join(soft.dir, 'pepper-keys')
    writeFileSync(pepperKeys, `t1 pkcs11:token=${TENANT};object=pepper-t1;type=secret-key?${pinSource}\n`)
    apiKeys = join(soft.dir, 'api-keys')
    writeFileSync(apiKeys, `admin ${hashKey(admin)}\n`)
  })
  after(() => {
    soft?.remove()
  })

  const start = (extra: Record<string, string> = {}) => startHashd({
    ...soft.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: soft.pinFile,
    HMAC_KEYS_FILE: hmacKeys, PEPPER_KEYS_FILE: pepperKeys, API_KEYS_FILE: apiKeys, ...extra,
  })
  const hmac = (hashd: HashdProcess, keyName: string, text: string) => hashd.post('/api/hmac', { keyName, message: text }, auth)
  const tokens = async (hashd: HashdProcess): Promise<Record<string, HealthToken>> => {
    const health = await hashd.get('/api/health', auth)
    const list = (health.body.hsm as { tokens: HealthToken[] }).tokens
    return Object.fromEntries(list.map((each) => [each.token, each]))
  }

  it('HMAC keys in two tokens, each with its own PIN, equal to PyKCS11 on the same objects; a pepper key in the second', async () => {
    const hashd = await start()
    try {
      for (const [keyName, token, label] of [['orders', 'hashd', 'orders-v1'], ['tenant', TENANT, 'tenant-v1']] as const) {
        const answer = await hmac(hashd, keyName, 'two tokens')
        assert.equal(answer.status, 200, answer.text)
        assert.equal(answer.body.hmac, soft.pyHmac(label, 'CKM_SHA256_HMAC', message('two tokens'), token))
      }
      const hashed = await hashd.post('/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } }, auth)
      assert.equal(hashed.status, 200, hashed.text)
      assert.match(hashed.body.hash as string, /^\$pepper\$v=1,k=t1,s=bcrypt\$/)
      assert.equal((await hashd.post('/api/verify', { input: 'pw', hash: hashed.body.hash }, auth)).body.match, true)
      const health = await hashd.get('/api/health', auth)
      assert.deepEqual([health.body.keySource, health.body.degraded], ['hsm', false])
      const listed = await tokens(hashd)
      assert.deepEqual(Object.keys(listed).sort(), ['token=hashd', `token=${TENANT}`])
      assert.ok(Object.values(listed).every((each) => each.state === 'ready'))
      assert.ok(!hashd.stderr().includes(TENANT_PIN) && !hashd.stdout().includes(TENANT_PIN), 'the PIN is never logged')
    } finally {
      await hashd.stop()
    }
  })

  it('one token\'s directory taken away: only its keys answer 503, the other\'s keep answering, health names it; put back, it serves again', async () => {
    const hashd = await start()
    const tenantDir = soft.tokenDirOf(TENANT)
    // Out of the token directory: SoftHSM2 reads every folder in it as a token at C_Initialize.
    const away = join(soft.dir, 'tenant-away')
    try {
      assert.equal((await hmac(hashd, 'tenant', 'before')).status, 200)
      renameSync(tenantDir, away)
      const gone = await hmac(hashd, 'tenant', 'while away')
      assert.equal(gone.status, 503, gone.text)
      assert.equal(gone.body.type, 'urn:hashd:problem:key-source-unavailable')
      assert.equal(gone.body.reason, 'token-missing')
      const peppered = await hashd.post('/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } }, auth)
      assert.equal(peppered.status, 503, peppered.text)
      // The other token is not disturbed, also while the module is initialised afresh to look for the missing one.
      for (let round = 0; round < 15; round++) {
        const answer = await hmac(hashd, 'orders', `round ${round}`)
        assert.equal(answer.status, 200, answer.text)
        assert.equal(answer.body.hmac, soft.pyHmac('orders-v1', 'CKM_SHA256_HMAC', message(`round ${round}`)))
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const health = await hashd.get('/api/health', auth)
      assert.deepEqual([health.body.keySource, health.body.degraded], ['degraded', true])
      const listed = await tokens(hashd)
      assert.equal(listed['token=hashd']?.state, 'ready')
      assert.deepEqual([listed[`token=${TENANT}`]?.state, listed[`token=${TENANT}`]?.reason], ['degraded', 'token-missing'])

      renameSync(away, tenantDir)
      await until('the tenant token is back', async () => (await hmac(hashd, 'tenant', 'after')).status === 200)
      assert.equal((await hmac(hashd, 'tenant', 'after')).body.hmac, soft.pyHmac('tenant-v1', 'CKM_SHA256_HMAC', message('after'), TENANT))
      assert.equal((await hmac(hashd, 'orders', 'after')).body.hmac, soft.pyHmac('orders-v1', 'CKM_SHA256_HMAC', message('after')))
      await until('health is back', async () => (await hashd.get('/api/health', auth)).body.keySource === 'hsm')
    } finally {
      await hashd.stop()
    }
  })

  it('a wrong PIN for one token: its keys 503 reason pin, one C_Login per token (pkcs11-spy); the other token never sees a wrong PIN', async () => {
    const spyLog = join(soft.dir, 'spy.log')
    writeFileSync(tenantPin, '00000000\n')
    // The OpenAPI document is built in this process from the same variables: its spy logs elsewhere.
    process.env.PKCS11SPY = SOFTHSM_MODULE
    process.env.PKCS11SPY_OUTPUT = join(soft.dir, 'spy-document.log')
    const hashd = await start({ PKCS11SPY: SOFTHSM_MODULE, PKCS11SPY_OUTPUT: spyLog, PKCS11_MODULE: PKCS11_SPY })
    try {
      for (let round = 0; round < 3; round++) {
        const refused = await hmac(hashd, 'tenant', 'm')
        assert.equal(refused.status, 503, refused.text)
        assert.equal(refused.body.reason, 'pin')
        const served = await hmac(hashd, 'orders', 'm')
        assert.equal(served.body.hmac, soft.pyHmac('orders-v1', 'CKM_SHA256_HMAC', message('m')))
        await new Promise((resolve) => setTimeout(resolve, 600))
      }
      assert.equal((readFileSync(spyLog, 'utf8').match(/^\d+: C_Login$/gm) ?? []).length, 2)
      const listed = await tokens(hashd)
      assert.deepEqual([listed[`token=${TENANT}`]?.state, listed[`token=${TENANT}`]?.reason], ['degraded', 'pin'])
      assert.equal(listed['token=hashd']?.state, 'ready')
      // SoftHSM2 marks a token whose user PIN was refused (CKF_USER_PIN_COUNT_LOW): the tenant's only.
      const slots = run('env', [`SOFTHSM2_CONF=${soft.env.SOFTHSM2_CONF}`, 'pkcs11-tool', '--module', SOFTHSM_MODULE, '--list-token-slots'])
      const flags = (label: string) => /token flags\s*:\s*(.*)/.exec(slots.split(/\nSlot /).find((each) => each.includes(`token label        : ${label}\n`)) ?? '')?.[1] ?? ''
      assert.match(flags(TENANT), /user PIN count low/)
      assert.doesNotMatch(flags('hashd'), /count low|final try|locked/)
    } finally {
      delete process.env.PKCS11SPY
      delete process.env.PKCS11SPY_OUTPUT
      writeFileSync(tenantPin, `${TENANT_PIN}\n`)
      await hashd.stop()
    }
  })
})
