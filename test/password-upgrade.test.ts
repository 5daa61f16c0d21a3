/**
 * Verify-and-upgrade (`"upgrade": true`, passlib's verify_and_update): legacy hashes made by
 * independent tools (Python's hashlib for md5, sha1 and mysql41, pycryptodome's MD4 for NTLM, python3-bcrypt, passlib's PBKDF2,
 * a `$pepper$` string sealed in Python under an old key) match and come back with a `newHash` under
 * the server's password policy, which argon2-cffi, python3-bcrypt and the Python `$pepper$`
 * implementation verify. No newHash on a mismatch or when nothing needs upgrading; the policy is
 * configurable, shown by GET /api/password-policy and checked at start.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { spawnHashd } from './helpers/process.js'
import { pythonPepper } from './helpers/pepper.js'
import { python, skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-upgrade-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const PASSWORD = 'Tr0ub4dor&3 ✓'

/** Legacy hashes of PASSWORD from Python: hashlib digests, python3-bcrypt at cost 4, passlib PBKDF2 at 1000 rounds. */
const LEGACY = String.raw`
import sys, json, hashlib
pw = sys.argv[1].encode()
out = {
  'md5': hashlib.md5(pw).hexdigest(),
  'sha1': hashlib.sha1(pw).hexdigest(),
  'mysql41': '*' + hashlib.sha1(hashlib.sha1(pw).digest()).hexdigest().upper(),
}
if sys.argv[2] == 'all':
    import bcrypt
    from passlib.hash import pbkdf2_sha256
    out['bcrypt'] = bcrypt.hashpw(pw, bcrypt.gensalt(4)).decode()
    out['pbkdf2-sha256'] = pbkdf2_sha256.using(rounds=1000).hash(pw)
    from argon2 import PasswordHasher
    out['argon2id'] = PasswordHasher().hash(pw)
    from Cryptodome.Hash import MD4
    out['ntlm'] = MD4.new(pw.decode().encode('utf-16-le')).hexdigest()
print(json.dumps(out))
`

describe('verify-and-upgrade under the default policy (argon2id), without pepper keys', { skip: skipUnless('passlib', 'python3-bcrypt', 'argon2-cffi', 'pycryptodome') }, () => {
  let server: TestServer
  let legacy: Record<string, string>
  before(async () => {
    server = await startServer()
    legacy = JSON.parse(python(LEGACY, [PASSWORD, 'all'])) as Record<string, string>
  })
  after(() => server.close())

  const upgrades: Array<{ from: string, algorithm?: string, expect: string, reason: RegExp }> = [
    { from: 'md5', expect: 'md5', reason: /MD5 is broken/ },
    { from: 'sha1', expect: 'sha1', reason: /SHA-1 is broken/ },
    { from: 'sha1', algorithm: 'SHA-1', expect: 'sha1', reason: /SHA-1 is broken/ },
    { from: 'mysql41', expect: 'mysql41', reason: /unsalted double SHA-1/ },
    { from: 'ntlm', algorithm: 'NTLM', expect: 'ntlm', reason: /unsalted MD4/ },
    { from: 'bcrypt', expect: 'bcrypt', reason: /cost 4 is below the OWASP minimum/ },
    { from: 'pbkdf2-sha256', expect: 'pbkdf2-sha256', reason: /1000 iterations is below the OWASP minimum/ },
  ]
  for (const { from, algorithm, expect, reason } of upgrades) {
    it(`upgrades a ${from} hash${algorithm ? ` named ${algorithm}` : ' found by detection'} to argon2id that argon2-cffi verifies`, async () => {
      const hash = legacy[from] as string
      const response = await server.post('/api/verify', { input: PASSWORD, hash, upgrade: true, ...(algorithm ? { algorithm } : {}) })
      assert.equal(response.status, 200, response.text)
      assert.deepEqual([response.body.match, response.body.algorithm, response.body.rehashRecommended], [true, expect, true])
      assert.match(response.body.reason, reason)
      assert.match(response.body.newHash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      assert.deepEqual(pythonPepper([
        { op: 'verify', scheme: 'argon2id', pw: PASSWORD, hash: response.body.newHash },
        { op: 'verify', scheme: 'argon2id', pw: `${PASSWORD}!`, hash: response.body.newHash },
      ]), [true, false])
      const mismatch = await server.post('/api/verify', { input: `${PASSWORD}!`, hash, upgrade: true, ...(algorithm ? { algorithm } : {}) })
      assert.equal(mismatch.body.match, false)
      assert.equal(mismatch.body.newHash, undefined)
    })
  }

  it('upgrades a bare sha256 digest too, since a fast unsalted digest is no password hash; without upgrade it is not flagged', async () => {
    const sha256 = python('import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())', [PASSWORD])
    const plain = await server.post('/api/verify', { input: PASSWORD, hash: sha256 })
    assert.deepEqual([plain.body.match, plain.body.rehashRecommended], [true, false])
    const up = await server.post('/api/verify', { input: PASSWORD, hash: sha256, upgrade: true })
    assert.deepEqual([up.body.match, up.body.rehashRecommended], [true, true])
    assert.match(up.body.reason, /fast unsalted digest/)
    assert.match(up.body.newHash, /^\$argon2id\$/)
  })

  it('gives no newHash when nothing needs upgrading (argon2-cffi\'s defaults exceed the policy)', async () => {
    const response = await server.post('/api/verify', { input: PASSWORD, hash: legacy.argon2id, upgrade: true })
    assert.deepEqual([response.body.match, response.body.rehashRecommended, response.body.newHash], [true, false, undefined])
  })

  it('shows the policy at GET /api/password-policy', async () => {
    const policy = await server.get('/api/password-policy')
    assert.equal(policy.status, 200)
    assert.deepEqual(policy.body, {
      algorithm: 'argon2id', options: { memoryCost: 19456, timeCost: 2, parallelism: 1, hashLength: 32, saltLength: 16 },
      format: '$argon2id$v=19$', pepperKey: null, pepperKeys: [],
    })
  })
})

describe('verify-and-upgrade with pepper keys and a bcrypt policy', { skip: skipUnless('python3-bcrypt', 'pycryptodome', 'passlib') }, () => {
  const old = randomBytes(32).toString('base64')
  const current = randomBytes(32).toString('base64')
  let server: TestServer
  let legacy: Record<string, string>
  before(async () => {
    const file = join(dir, 'keys')
    writeFileSync(file, `old ${old}\ncurrent ${current}\n`)
    server = await startServer({ PEPPER_KEYS_FILE: file, PASSWORD_ALGORITHM: 'bcrypt', PASSWORD_OPTIONS: 'cost=11' })
    legacy = JSON.parse(python(LEGACY, [PASSWORD, 'digests'])) as Record<string, string>
  })
  after(() => server.close())

  it('moves a hash peppered under an old key to the current key, bcrypt cost 11 inside (python3-bcrypt verifies)', async () => {
    const [underOld] = pythonPepper<string>([{ op: 'seal', secret: old, keyId: 'old', scheme: 'bcrypt', pw: PASSWORD, settings: { rounds: 12 } }])
    const response = await server.post('/api/verify', { input: PASSWORD, hash: underOld, upgrade: true })
    assert.equal(response.status, 200, response.text)
    assert.deepEqual([response.body.match, response.body.pepperKey, response.body.rehashRecommended], [true, 'old', true])
    assert.match(response.body.reason, /key old/)
    assert.match(response.body.newHash, /^\$pepper\$v=1,k=current,s=bcrypt\$/)
    const inner = pythonPepper<string>([{ op: 'unseal', secret: current, hash: response.body.newHash }])[0] as string
    assert.match(inner, /^\$2b\$11\$/)
    assert.deepEqual(pythonPepper([{ op: 'verify', scheme: 'bcrypt', pw: PASSWORD, hash: inner }]), [true])
  })

  it('moves an md5 digest to a peppered bcrypt hash', async () => {
    const response = await server.post('/api/verify', { input: PASSWORD, hash: legacy.md5, upgrade: true })
    assert.match(response.body.newHash, /^\$pepper\$v=1,k=current,s=bcrypt\$/)
    const checked = pythonPepper<string>([{ op: 'unseal', secret: current, hash: response.body.newHash }])[0] as string
    assert.deepEqual(pythonPepper([{ op: 'verify', scheme: 'bcrypt', pw: PASSWORD, hash: checked }]), [true])
  })

  it('flags a peppered bcrypt hash of cost 10 as below the policy, and leaves cost 11 alone', async () => {
    const [low, ok] = pythonPepper<string>([
      { op: 'seal', secret: current, keyId: 'current', scheme: 'bcrypt', pw: PASSWORD, settings: { rounds: 10 } },
      { op: 'seal', secret: current, keyId: 'current', scheme: 'bcrypt', pw: PASSWORD, settings: { rounds: 11 } },
    ])
    const below = await server.post('/api/verify', { input: PASSWORD, hash: low, upgrade: true })
    assert.deepEqual([below.body.match, below.body.rehashRecommended], [true, true])
    assert.match(below.body.reason, /cost 10 is below this server's password policy \(cost 11\)/)
    assert.match(below.body.newHash, /^\$pepper\$v=1,k=current,s=bcrypt\$/)
    const same = await server.post('/api/verify', { input: PASSWORD, hash: ok, upgrade: true })
    assert.deepEqual([same.body.match, same.body.rehashRecommended, same.body.newHash], [true, false, undefined])
  })

  it('keeps the match but gives no newHash when the policy cannot take the input (bcrypt, over 72 bytes)', async () => {
    const long = 'p'.repeat(80)
    const md5 = python('import hashlib,sys; print(hashlib.md5(sys.argv[1].encode()).hexdigest())', [long])
    const response = await server.post('/api/verify', { input: long, hash: md5, upgrade: true })
    assert.deepEqual([response.body.match, response.body.rehashRecommended, response.body.newHash], [true, true, undefined])
    assert.match(response.body.warnings.join(' '), /no newHash: bcrypt uses only the first 72 bytes/)
  })

  it('shows the policy and the key ids, never the secrets', async () => {
    const policy = await server.get('/api/password-policy')
    assert.deepEqual(policy.body, { algorithm: 'bcrypt', options: { cost: 11 }, format: '$2b$', pepperKey: 'current', pepperKeys: ['old', 'current'] })
  })
})

describe('the policy is checked at start', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PASSWORD_ALGORITHM: 'md5' }, /PASSWORD_ALGORITHM must name a password scheme/],
    [{ PASSWORD_ALGORITHM: 'des-crypt' }, /legacy format/],
    [{ PASSWORD_ALGORITHM: 'bcrypt', PASSWORD_OPTIONS: 'cost=4' }, /recommend replacing: bcrypt cost 4 is below the OWASP minimum/],
    [{ PASSWORD_ALGORITHM: 'bcrypt', PASSWORD_OPTIONS: 'cost=20' }, /PASSWORD_OPTIONS: bcrypt cost 20 is above this server's cap of 14/],
    [{ PASSWORD_OPTIONS: 'rounds=5' }, /PASSWORD_OPTIONS: argon2id has no option "rounds"/],
    [{ PASSWORD_OPTIONS: 'memoryCost=lots' }, /PASSWORD_OPTIONS must be name=value pairs/],
  ]
  it('does not force the built-in default on a server whose caps are below it: it starts, and upgrades say why there is no newHash', async () => {
    const server = await startServer({ MAX_ARGON2_MEMORY_KIB: '1024' })
    try {
      const policy = await server.get('/api/password-policy')
      assert.match(policy.body.unusable, /exceeds this server's caps/)
      // RFC 1321 §A.5: MD5("abc").
      const response = await server.post('/api/verify', { input: 'abc', hash: '900150983cd24fb0d6963f7d28e17f72', upgrade: true })
      assert.deepEqual([response.body.match, response.body.rehashRecommended, response.body.newHash], [true, true, undefined])
      assert.match(response.body.warnings.join(' '), /no newHash: the default password policy .* set PASSWORD_ALGORITHM and PASSWORD_OPTIONS/)
      assert.match(server.logs(), /verify-and-upgrade disabled/)
    } finally {
      await server.close()
    }
  })

  for (const [env, message] of cases) {
    it(`refuses ${JSON.stringify(env)} with exit 2`, async () => {
      const hashd = spawnHashd(env)
      assert.equal((await hashd.exited).code, 2, hashd.stdout())
      assert.match(hashd.stderr(), message)
    })
  }
})
