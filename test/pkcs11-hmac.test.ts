/**
 * HMAC keys in a PKCS#11 token (SoftHSM2) end to end: a hashd process whose HMAC_KEYS_FILE names
 * token objects by RFC 7512 URI. A key of a known value (put in by PyKCS11) gives HMACs equal to
 * Python's `hmac` on that value, for SHA-256/384/512; a key made by `pkcs11-tool --keygen` (value
 * unknown to anyone) gives the HMAC PyKCS11 computes with the same object, verifies round trip and
 * differs from another key. Tags, verify without a version (file and token versions of one key),
 * batches and webhooks work as with file keys; pkcs11-tool shows the keys sensitive and never
 * extractable; /api/health says the key source is the HSM. And the session pool on its own: one
 * call per session, a bounded queue, 503 busy beyond it.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { CKM } from '../src/keys/pkcs11/binding.js'
import { Pkcs11Token, Pkcs11Unavailable } from '../src/keys/pkcs11/token.js'
import { parsePkcs11Uri } from '../src/keys/pkcs11/uri.js'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { makeSoftToken, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { python, skipUnless } from './helpers/tools.js'

const PY_HMAC = 'import sys, hmac, hashlib; print(hmac.new(bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3]).hexdigest())'
const pyHmac = (key: Buffer, message: string, digest = 'sha256') => python(PY_HMAC, [key.toString('hex'), Buffer.from(message).toString('hex'), digest])

describe('HMAC keys in a PKCS#11 token', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pykcs11', 'python3') }, () => {
  let token: SoftToken
  let hashd: HashdProcess
  /** A known value: 64 bytes, since SoftHSM2 takes an HMAC key no shorter than the digest (SHA-512: 64). */
  const known = randomBytes(64)
  const fileSecret = randomBytes(32)

  before(async () => {
    token = makeSoftToken()
    // documentFor builds the app in this process too: the same token.
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    token.importKey('orders-v3', known, 'generic')
    token.keygen('made-v1', 'GENERIC:32')
    token.keygen('other-v1', 'GENERIC:32')
    token.keygen('hooks-v1', 'GENERIC:32')
    const keys = join(token.dir, 'hmac-keys')
    writeFileSync(keys, [
      `orders 2 ${fileSecret.toString('base64')} algorithms=sha256,sha384,sha512`,
      'orders 3 pkcs11:token=hashd;object=orders-v3',
      'made 1 pkcs11:token=hashd;object=made-v1;type=secret-key',
      'other 1 pkcs11:object=other%2Dv1',
      'hooks 1 pkcs11:token=hashd;object=hooks-v1 purpose=webhooks',
    ].join('\n'))
    hashd = await startHashd({ ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile, HMAC_KEYS_FILE: keys, PKCS11_SESSIONS: '2' })
  })
  after(async () => {
    await hashd?.stop()
    token?.remove()
    delete process.env.SOFTHSM2_CONF
  })

  it('a key of known value: hashd\'s HMAC equals Python\'s hmac on that value, for SHA-256, SHA-384 and SHA-512', async () => {
    const message = 'order #1234: 3 × widget, €12.50'
    for (const algorithm of ['sha256', 'sha384', 'sha512']) {
      const answer = await hashd.post('/api/hmac', { keyName: 'orders', message, algorithm })
      assert.equal(answer.status, 200, answer.text)
      assert.equal(answer.body.hmac, pyHmac(known, message, algorithm), algorithm)
      assert.equal(answer.body.keyVersion, 3)
    }
    // The previous version, in the file, beside it.
    const older = await hashd.post('/api/hmac', { keyName: 'orders', message, keyVersion: 2 })
    assert.equal(older.body.hmac, pyHmac(fileSecret, message))
  })

  it('tags and verify: the token version, the file version, and a version-less verify that finds each', async () => {
    const message = 'tagged'
    const tagged = await hashd.post('/api/hmac', { keyName: 'orders', message, format: 'tagged' })
    assert.match(tagged.body.hmac as string, /^hashd:v3:/)
    const valid = await hashd.post('/api/hmac/verify', { keyName: 'orders', message, hmac: tagged.body.hmac })
    assert.deepEqual([valid.body.valid, valid.body.keyVersion, valid.body.rotateRecommended], [true, 3, false])
    const untagged = await hashd.post('/api/hmac/verify', { keyName: 'orders', message, hmac: pyHmac(fileSecret, message) })
    assert.deepEqual([untagged.body.valid, untagged.body.keyVersion, untagged.body.rotateRecommended], [true, 2, true])
    const wrong = await hashd.post('/api/hmac/verify', { keyName: 'orders', message: 'other', hmac: tagged.body.hmac })
    assert.equal(wrong.body.valid, false)
  })

  it('a key made with pkcs11-tool --keygen: the HMAC PyKCS11 makes with the same object, a verify round trip, unlike another key', async () => {
    const message = 'made in the token'
    const made = await hashd.post('/api/hmac', { keyName: 'made', message })
    assert.equal(made.status, 200, made.text)
    assert.equal(made.body.hmac, token.pyHmac('made-v1', 'CKM_SHA256_HMAC', Buffer.from(message)))
    const verified = await hashd.post('/api/hmac/verify', { keyName: 'made', message, hmac: made.body.hmac })
    assert.equal(verified.body.valid, true)
    const other = await hashd.post('/api/hmac', { keyName: 'other', message })
    assert.equal(other.status, 200, other.text)
    assert.notEqual(other.body.hmac, made.body.hmac)
    assert.equal(other.body.hmac, token.pyHmac('other-v1', 'CKM_SHA256_HMAC', Buffer.from(message)))
  })

  it('a batch of 500 items under the token key, each equal to Python\'s; verified back in a batch', async () => {
    const items = Array.from({ length: 500 }, (_, index) => ({ message: `row ${index}`, reference: `r${index}` }))
    const answer = await hashd.post('/api/hmac', { keyName: 'orders', items })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<{ hmac: string, keyVersion: number }>
    const expected = python('import sys, hmac, hashlib\nkey = bytes.fromhex(sys.argv[1])\nfor i in range(500): print(hmac.new(key, b"row %d" % i, hashlib.sha256).hexdigest())', [known.toString('hex')]).split('\n')
    assert.deepEqual(results.map((result) => result.hmac), expected)
    const back = await hashd.post('/api/hmac/verify', { keyName: 'orders', items: results.slice(0, 100).map((result, index) => ({ message: `row ${index}`, hmac: result.hmac })) })
    assert.ok((back.body.results as Array<{ valid: boolean }>).every((result) => result.valid))
  })

  it('items in flight together (groups made by the token) keep their order: problems, file-key items and token items interleaved; 1,200 items in several groups', async () => {
    const items = Array.from({ length: 1200 }, (_, index) => index % 7 === 3 ? { message: `row ${index}`, keyVersion: 9 }
      : index % 5 === 1 ? { message: `row ${index}`, keyVersion: 2 }
        : { message: `row ${index}` })
    const answer = await hashd.post('/api/hmac', { keyName: 'orders', items })
    assert.equal(answer.status, 200, answer.text)
    const results = answer.body.results as Array<{ hmac?: string, keyVersion?: number, problem?: { type: string } }>
    assert.equal(results.length, items.length)
    // Item i is under the file version when i % 5 == 1, else under the token's.
    const expected = python('import sys, hmac, hashlib\ntoken, file = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])\n'
      + 'for i in range(int(sys.argv[3])): print(hmac.new(file if i % 5 == 1 else token, b"row %d" % i, hashlib.sha256).hexdigest())',
    [known.toString('hex'), fileSecret.toString('hex'), String(items.length)]).split('\n')
    results.forEach((result, index) => {
      if (index % 7 === 3) assert.equal(result.problem?.type, 'urn:hashd:problem:unknown-key-version', `item ${index}`)
      else {
        assert.equal(result.hmac, expected[index], `item ${index}`)
        assert.equal(result.keyVersion, index % 5 === 1 ? 2 : 3, `item ${index}`)
      }
    })
  })

  it('single requests answered in the same turn share a call to the token, and each gets its own HMAC', async () => {
    const messages = Array.from({ length: 60 }, (_, index) => `single ${index} ${'x'.repeat(index)}`)
    const answers = await Promise.all(messages.map((message) => hashd.post('/api/hmac', { keyName: 'orders', message })))
    const expected = python('import sys, hmac, hashlib, json\nkey = bytes.fromhex(sys.argv[1])\nfor m in json.loads(sys.argv[2]): print(hmac.new(key, m.encode(), hashlib.sha256).hexdigest())',
      [known.toString('hex'), JSON.stringify(messages)]).split('\n')
    assert.deepEqual(answers.map((answer) => answer.body.hmac), expected)
  })

  it('webhooks: a token key signs, and what it signs verifies; PyKCS11 makes the same signature', async () => {
    const payload = '{"type":"invoice.paid"}'
    const signed = await hashd.post('/api/webhooks/sign', { payload, keyName: 'hooks', id: 'msg_1', timestamp: 1_700_000_000 })
    assert.equal(signed.status, 200, signed.text)
    const headers = (signed.body as { headers: Record<string, string> }).headers
    const expected = Buffer.from(token.pyHmac('hooks-v1', 'CKM_SHA256_HMAC', Buffer.from(`msg_1.1700000000.${payload}`)), 'hex').toString('base64')
    assert.equal(headers['webhook-signature'], `v1,${expected}`)
    const verified = await hashd.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload, keyName: 'hooks', headers, receivedAt: 1_700_000_000, remember: false })
    assert.equal(verified.body.valid, true, verified.text)
  })

  it('pkcs11-tool shows each key sensitive and not extractable (never, for those made in the token); health says the key source is the HSM', async () => {
    const listing = token.listObjects()
    for (const label of ['orders-v3', 'made-v1', 'other-v1', 'hooks-v1']) {
      const access = /Access: *(.*)/.exec(listing.split(/\n(?=Secret Key Object)/).find((each) => each.includes(`label:      ${label}`)) ?? '')?.[1]
      assert.ok(access, label)
      const flags = access.split(', ')
      assert.ok(flags.includes('sensitive'), label)
      assert.ok(!flags.includes('extractable'), label)
      // A key put in from outside was extractable once, in a way: only one made inside is "never extractable".
      if (label !== 'orders-v3') assert.ok(flags.includes('never extractable'), label)
    }
    const health = await hashd.get('/api/health')
    assert.equal(health.body.keySource, 'hsm')
    assert.equal(health.body.degraded, false)
  })

  it('the session pool: one call per session, a bounded queue, and 503 busy beyond it (in this process, on the same token)', async () => {
    const pool = new Pkcs11Token({ modulePath: SOFTHSM_MODULE, pinFile: token.pinFile, sessions: 1, queueMax: 5 })
    try {
      const uri = parsePkcs11Uri('pkcs11:token=hashd;object=orders-v3')
      await pool.start()
      // Twenty calls at once: each reaches the pool before any token call ends (that takes a thread).
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, index) =>
        pool.withKey(uri, (module, session, key) => module.sign(session, CKM.SHA256_HMAC, key, Buffer.from(`m${index}`), 32))))
      const made = outcomes.filter((outcome) => outcome.status === 'fulfilled') as PromiseFulfilledResult<Buffer>[]
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[]
      assert.equal(made.length, 6, 'one on the session, five waiting')
      assert.ok(refused.every((outcome) => outcome.reason instanceof Pkcs11Unavailable && outcome.reason.reason === 'busy'))
      assert.equal(made[0]!.value.toString('hex'), pyHmac(known, 'm0'))
      assert.deepEqual(pool.state.sessions, { open: 1, busy: 0, waiting: 0, max: 1 })
    } finally {
      await pool.close()
    }
  })
})
