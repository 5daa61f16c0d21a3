/**
 * bcrypt-sha256 (passlib.hash.bcrypt_sha256 v2) with passlib both ways: hashes hashd writes verify
 * in passlib, and passlib's (v2 and the older v1) verify in hashd, for empty, text, emoji, long
 * (over bcrypt's 72 bytes) and binary inputs with NUL bytes, which plain bcrypt cannot take. Also the
 * format's edges and the 422 for bcrypt over 72 bytes that points to bcrypt-sha256.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const INPUTS = {
  empty: '',
  text: Buffer.from('héllo wörld ✓').toString('hex'),
  emoji: Buffer.from('🔑🦀 pass').toString('hex'),
  long: Buffer.from('x'.repeat(100) + 'the end differs').toString('hex'),
  binary: '00ff80c3a900017f20',
}

/** passlib: hash (settings) or verify each job; passwords as hex. */
const PASSLIB = String.raw`
import sys, json
from passlib.hash import bcrypt_sha256
out = []
for job in json.load(sys.stdin):
    pw = bytes.fromhex(job['pw'])
    if job['op'] == 'hash':
        out.append(bcrypt_sha256.using(**job['settings']).hash(pw))
    else:
        out.append(bcrypt_sha256.verify(pw, job['hash']))
print(json.dumps(out))
`
const passlib = (jobs: unknown[]) => JSON.parse(python(PASSLIB, [], JSON.stringify(jobs))) as unknown[]

describe('bcrypt-sha256', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(() => server.close())

  it('writes $bcrypt-sha256$v=2,t=2b,r=<cost>$ that passlib verifies, for every input', { skip: skipUnless('passlib') }, async () => {
    const hashes: Record<string, string> = {}
    for (const [name, hex] of Object.entries(INPUTS)) {
      const response = await server.post('/api/hash', { input: hex, inputEncoding: 'hex', algorithm: 'bcrypt_sha256', options: { cost: 4 } })
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.algorithm, 'bcrypt-sha256')
      assert.match(response.body.hash, /^\$bcrypt-sha256\$v=2,t=2b,r=4\$[./A-Za-z0-9]{21}[.Oeu]\$[./A-Za-z0-9]{31}$/, name)
      hashes[name] = response.body.hash
    }
    const jobs = Object.entries(INPUTS).flatMap(([name, hex]) => [
      { op: 'verify', pw: hex, hash: hashes[name] },
      { op: 'verify', pw: `${hex}00`, hash: hashes[name] },
    ])
    assert.deepEqual(passlib(jobs), Object.keys(INPUTS).flatMap(() => [true, false]))
  })

  it('verifies passlib\'s v2 hashes without being told the algorithm, and v1 hashes with a rehash reason', { skip: skipUnless('passlib') }, async () => {
    const entries = Object.entries(INPUTS)
    const made = passlib([
      ...entries.map(([, hex]) => ({ op: 'hash', pw: hex, settings: { rounds: 4 } })),
      { op: 'hash', pw: INPUTS.text, settings: { rounds: 4, version: 1 } },
      { op: 'hash', pw: INPUTS.text, settings: { rounds: 10 } },
    ]) as string[]
    for (const [index, [name, hex]] of entries.entries()) {
      const hash = made[index] as string
      const good = await server.post('/api/verify', { input: hex, inputEncoding: 'hex', hash })
      assert.equal(good.status, 200, good.text)
      assert.deepEqual([good.body.match, good.body.algorithm, good.body.format], [true, 'bcrypt-sha256', '$bcrypt-sha256$v=2'], name)
      // Cost 4 is below OWASP's 10.
      assert.match(good.body.reason, /cost 4 is below the OWASP minimum/)
      const bad = await server.post('/api/verify', { input: `${hex}01`, inputEncoding: 'hex', hash, algorithm: 'bcrypt-sha256' })
      assert.equal(bad.body.match, false, name)
    }
    const v1 = await server.post('/api/verify', { input: INPUTS.text, inputEncoding: 'hex', hash: made[entries.length] })
    assert.equal(v1.body.match, true)
    assert.match(v1.body.reason, /v1 .* superseded by v2/)
    assert.equal(v1.body.format, '$bcrypt-sha256$2b', 'the v1 prefix as the string writes it')
    const strong = await server.post('/api/verify', { input: INPUTS.text, inputEncoding: 'hex', hash: made[entries.length + 1] })
    assert.deepEqual([strong.body.match, strong.body.rehashRecommended], [true, false])
  })

  it('refuses bcrypt over 72 bytes with a 422 that points to bcrypt-sha256', async () => {
    const response = await server.post('/api/hash', { input: 'x'.repeat(73), algorithm: 'bcrypt', options: { cost: 4 } })
    assert.equal(response.status, 422)
    assert.equal(response.body.type, 'urn:hashd:problem:input-too-long')
    assert.match(response.body.detail, /bcrypt-sha256/)
    assert.deepEqual(response.body.alternatives, ['bcrypt-sha256', 'argon2id'])
    const long = await server.post('/api/hash', { input: 'x'.repeat(500), algorithm: 'bcrypt-sha256', options: { cost: 4 } })
    assert.equal(long.status, 200)
  })

  it('reads the format strictly: zero-padded cost, salts with padding bits, other versions and costs above the cap are 422', async () => {
    const salt = 'abcdefghijklmnopqrstuO'
    const digest = 'a'.repeat(31)
    const cases: Array<[string, string]> = [
      [`$bcrypt-sha256$v=2,t=2b,r=04$${salt}$${digest}`, 'malformed-hash'],
      [`$bcrypt-sha256$v=2,t=2b,r=4$abcdefghijklmnopqrstuv$${digest}`, 'malformed-hash'],
      [`$bcrypt-sha256$v=3,t=2b,r=4$${salt}$${digest}`, 'malformed-hash'],
      [`$bcrypt-sha256$v=2,t=2a,r=4$${salt}$${digest}`, 'malformed-hash'],
      [`$bcrypt-sha256$v=2,t=2b,r=31$${salt}$${digest}`, 'cost-above-cap'],
    ]
    for (const [hash, type] of cases) {
      const response = await server.post('/api/verify', { input: 'x', hash })
      assert.equal(response.status, 422, hash)
      assert.equal(response.body.type, `urn:hashd:problem:${type}`, hash)
    }
  })
})
