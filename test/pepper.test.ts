/**
 * Pepper keys (PEPPER_KEYS_FILE): the keys file refused at start with messages that never print a
 * secret; a full rotation k1 → k1+k2 → k2 through restarts and SIGHUP of the real process; the
 * `$pepper$v=1` strings checked by an independent implementation in Python (HKDF from RFC 5869,
 * pycryptodome's AES-GCM, argon2-cffi and passlib for the hashes inside) both ways; the opt-out;
 * no plain verifier accepting a peppered string; secrets absent from logs, metrics and OpenAPI.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'
import { spawnHashd, startHashd, type HashdProcess } from './helpers/process.js'
import { pythonCheck, pythonPepper } from './helpers/pepper.js'
import { skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-pepper-'))
after(() => rmSync(dir, { recursive: true, force: true }))

let fileCount = 0
function keysFile(text: string): string {
  const file = join(dir, `pepper-${fileCount++}`)
  writeFileSync(file, text)
  return file
}
const secret = (bytes = 32) => randomBytes(bytes).toString('base64')

async function post(server: { fetch(path: string, init?: RequestInit): Promise<Response> }, path: string, body: unknown) {
  return toTestResponse(await server.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }))
}

/** OWASP's argon2id minimum: no rehash for the parameters alone, so only the pepper decides. */
const ARGON2 = { algorithm: 'argon2id', options: { memoryCost: 19456, timeCost: 2, parallelism: 1 } }
const PYTHON_TOOLS = ['pycryptodome', 'argon2-cffi', 'passlib', 'python3-bcrypt'] as const

describe('PEPPER_KEYS_FILE refused at start', () => {
  const cases: Array<{ name: string, text: (s: string) => string, message: RegExp }> = [
    { name: 'a line with one field', text: (s) => `k1 ${s}\nk2\n`, message: /PEPPER_KEYS_FILE .* line 2: expected "<key id> <base64 secret>", got 1 field/ },
    { name: 'a line with three fields', text: (s) => `k1 ${s} extra\n`, message: /line 1, field 3: expected "<key id> <base64 secret>", then options state=; got 3 fields, and this one is neither/ },
    { name: 'a short secret', text: () => `# keys\nk1 ${secret(31)}\n`, message: /line 2, field 2: the secret must be base64 or base64url of at least 32 bytes \(openssl rand -base64 32\), on a line "<key id> <base64 secret>" \(this field decodes to fewer bytes\)/ },
    { name: 'a duplicate id', text: (s) => `k1 ${s}\nk1 ${secret()}\n`, message: /line 2, field 1: the key id is the same as on line 1/ },
    { name: 'a secret that is not base64', text: () => `k1 ${'*'.repeat(44)}\n`, message: /line 1, field 2: the secret must be base64 .* \(this field is not base64\)/ },
    { name: 'a bad key id', text: (s) => `k$1 ${s}\n`, message: /line 1, field 1: the key id must be 1 to 64 letters/ },
    { name: 'no keys at all', text: () => '# nothing yet\n\n', message: /holds no keys/ },
  ]
  for (const { name, text, message } of cases) {
    it(`refuses ${name}: exit 2, the line named, no secret printed`, async () => {
      const shown = secret()
      const content = text(shown)
      const hashd = spawnHashd({ PEPPER_KEYS_FILE: keysFile(content) })
      assert.equal((await hashd.exited).code, 2, hashd.stderr())
      assert.match(hashd.stderr(), message)
      // No field of the file that is not an id shows up anywhere in the output.
      for (const field of content.split(/\s+/).filter((part) => part.length >= 16)) {
        assert.ok(!hashd.stderr().includes(field) && !hashd.stdout().includes(field), 'a secret was printed')
      }
    })
  }

  it('refuses a file that cannot be read', async () => {
    const hashd = spawnHashd({ PEPPER_KEYS_FILE: join(dir, 'missing') })
    assert.equal((await hashd.exited).code, 2)
    assert.match(hashd.stderr(), /PEPPER_KEYS_FILE .*missing cannot be read \(ENOENT\)/)
  })
})

describe('a full rotation k1 → k1+k2 → k2, through SIGHUP and restarts', { skip: skipUnless(...PYTHON_TOOLS) }, () => {
  const k1 = secret()
  const k2 = secret()
  const password = 'correct horse battery staple ✓'
  const file = keysFile(`# hashd pepper keys; the last line is current\nk1 ${k1}\n`)
  const outputs: string[] = []
  let hashd: HashdProcess
  const restart = async () => {
    if (hashd) {
      await hashd.stop()
      outputs.push(hashd.stdout() + hashd.stderr())
    }
    hashd = await startHashd({ PEPPER_KEYS_FILE: file })
  }
  const hangup = async (expect: RegExp) => {
    const mark = hashd.lines()
    hashd.child.kill('SIGHUP')
    await hashd.logged(expect, mark)
  }
  after(async () => {
    await hashd?.stop()
    if (hashd) outputs.push(hashd.stdout() + hashd.stderr())
  })

  let underK1 = ''
  let underK2 = ''
  let upgraded = ''
  let rewrapped = ''

  it('k1: hashes are peppered with k1 by default; Python opens them with k1 and argon2-cffi verifies the inside', async () => {
    await restart()
    const made = await post(hashd, '/api/hash', { input: password, ...ARGON2 })
    assert.equal(made.status, 200, made.text)
    assert.equal(made.body.pepperKey, 'k1')
    assert.match(made.body.hash, /^\$pepper\$v=1,k=k1,s=argon2id\$/)
    underK1 = made.body.hash
    const checked = pythonCheck(k1, underK1, 'argon2id', password)
    assert.equal(checked.match, true)
    assert.match(checked.inner, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    assert.equal(pythonCheck(k1, underK1, 'argon2id', 'wrong').match, false)
    const verified = await post(hashd, '/api/verify', { input: password, hash: underK1 })
    assert.equal(verified.status, 200)
    assert.deepEqual([verified.body.match, verified.body.rehashRecommended, verified.body.pepperKey], [true, false, 'k1'])
    assert.equal((await post(hashd, '/api/verify', { input: 'wrong', hash: underK1 })).body.match, false)
  })

  it('k1+k2 by SIGHUP: new hashes use k2; k1 hashes still match, with rehashRecommended naming k1; upgrade moves them to k2', async () => {
    writeFileSync(file, `# hashd pepper keys; the last line is current\nk1 ${k1}\nk2 ${k2}\n`)
    await hangup(/pepper keys reloaded/)
    const made = await post(hashd, '/api/hash', { input: password, ...ARGON2 })
    assert.equal(made.body.pepperKey, 'k2')
    underK2 = made.body.hash
    assert.equal(pythonCheck(k2, underK2, 'argon2id', password).match, true)

    const old = await post(hashd, '/api/verify', { input: password, hash: underK1 })
    assert.equal(old.body.match, true)
    assert.equal(old.body.rehashRecommended, true)
    assert.match(old.body.reason, /key k1/)
    assert.equal(old.body.newHash, undefined, 'no newHash without upgrade')

    const up = await post(hashd, '/api/verify', { input: password, hash: underK1, upgrade: true })
    assert.equal(up.body.match, true)
    assert.match(up.body.newHash, /^\$pepper\$v=1,k=k2,s=argon2id\$/)
    upgraded = up.body.newHash
    assert.equal(pythonCheck(k2, upgraded, 'argon2id', password).match, true)

    const current = await post(hashd, '/api/verify', { input: password, hash: underK2, upgrade: true })
    assert.deepEqual([current.body.match, current.body.rehashRecommended, current.body.newHash], [true, false, undefined])
    const wrong = await post(hashd, '/api/verify', { input: 'wrong', hash: underK1, upgrade: true })
    assert.deepEqual([wrong.body.match, wrong.body.newHash], [false, undefined])
    // Without the password: the k1 hash re-encrypted under k2.
    const moved = await post(hashd, '/api/pepper/rewrap', { hash: underK1 })
    assert.deepEqual([moved.body.previousPepperKey, moved.body.pepperKey], ['k1', 'k2'])
    rewrapped = moved.body.hash
    assert.equal(pythonCheck(k2, rewrapped, 'argon2id', password).match, true)
    const policy = await hashd.get('/api/password-policy')
    assert.deepEqual([policy.body.pepperKey, policy.body.pepperKeys], ['k2', ['k1', 'k2']])
  })

  it('k1+k2 after a restart: both still verify', async () => {
    await restart()
    assert.equal((await post(hashd, '/api/verify', { input: password, hash: underK1 })).body.rehashRecommended, true)
    assert.equal((await post(hashd, '/api/verify', { input: password, hash: underK2 })).body.rehashRecommended, false)
  })

  it('a bad reload keeps the keys in force and logs why, without the secret', async () => {
    const short = secret(16)
    writeFileSync(file, `k1 ${k1}\nk2 ${k2}\nk3 ${short}\n`)
    const mark = hashd.lines()
    hashd.child.kill('SIGHUP')
    await hashd.logged(/pepper keys not reloaded/, mark)
    const warning = hashd.stdout().split('\n').slice(mark).find((line) => line.includes('not reloaded')) ?? ''
    assert.equal(JSON.parse(warning).level, 40)
    assert.match(JSON.parse(warning).reason, /line 3, field 2: the secret must be base64 or base64url of at least 32 bytes/)
    assert.ok(!hashd.stdout().includes(short))
    assert.equal((await post(hashd, '/api/hash', { input: password, ...ARGON2 })).body.pepperKey, 'k2')
  })

  it('k2 by SIGHUP: a k1 hash is 422 unknown-pepper-key naming k1, never a silent false; k2 and upgraded hashes verify', async () => {
    writeFileSync(file, `k2 ${k2}\n`)
    await hangup(/pepper keys reloaded/)
    const gone = await post(hashd, '/api/verify', { input: password, hash: underK1 })
    assert.equal(gone.status, 422)
    assert.match(gone.headers.get('content-type') ?? '', /^application\/problem\+json/)
    assert.equal(gone.body.type, 'urn:hashd:problem:unknown-pepper-key')
    assert.equal(gone.body.pepperKey, 'k1')
    assert.match(gone.body.detail, /"k1"/)
    const rewrap = await post(hashd, '/api/pepper/rewrap', { hash: underK1 })
    assert.deepEqual([rewrap.status, rewrap.body.pepperKey], [422, 'k1'])
    for (const hash of [underK2, upgraded, rewrapped]) {
      const ok = await post(hashd, '/api/verify', { input: password, hash })
      assert.deepEqual([ok.body.match, ok.body.rehashRecommended], [true, false])
    }
  })

  it('k2 after a restart: the same', async () => {
    await restart()
    assert.equal((await post(hashd, '/api/verify', { input: password, hash: underK1 })).status, 422)
    assert.equal((await post(hashd, '/api/verify', { input: password, hash: upgraded })).body.match, true)
  })

  it('no secret appeared in any process output', () => {
    const all = outputs.join('\n') + hashd.stdout() + hashd.stderr()
    assert.match(all, /pepper keys loaded/)
    for (const text of [k1, k2, Buffer.from(k1, 'base64').toString('hex'), Buffer.from(k2, 'base64').toString('hex')]) assert.ok(!all.includes(text))
  })
})

describe('peppered hashes made elsewhere, the opt-out, and what never leaks', () => {
  const k1 = secret()
  const k2 = secret(48)
  let server: TestServer
  let plain: TestServer
  before(async () => {
    server = await startServer({ PEPPER_KEYS_FILE: keysFile(`old ${k1}\ncurrent ${k2}\n`), METRICS: 'on' })
    plain = await startServer()
  })
  after(async () => {
    await server.close()
    await plain.close()
  })

  it('verifies $pepper$ strings sealed by Python around passlib, argon2-cffi and python3-bcrypt hashes', { skip: skipUnless(...PYTHON_TOOLS) }, async () => {
    const jobs = [
      { scheme: 'argon2id', settings: { time_cost: 2, memory_cost: 19456, parallelism: 1 } },
      { scheme: 'bcrypt', settings: { rounds: 10 } },
      { scheme: 'bcrypt-sha256', settings: { rounds: 10 } },
      { scheme: 'pbkdf2-sha256', settings: { rounds: 600000 } },
    ]
    const sealed = pythonPepper<string>(jobs.map((job) => ({ op: 'seal', secret: k2, keyId: 'current', pw: 'pässword', ...job })))
    for (const [index, hash] of sealed.entries()) {
      const scheme = (jobs[index] as { scheme: string }).scheme
      const good = await post(server, '/api/verify', { input: 'pässword', hash })
      assert.equal(good.status, 200, good.text)
      assert.deepEqual([good.body.match, good.body.algorithm, good.body.pepperKey, good.body.rehashRecommended], [true, scheme, 'current', false], scheme)
      assert.equal((await post(server, '/api/verify', { input: 'password', hash })).body.match, false, scheme)
    }
    // Under the old key: matches, rehash recommended, the reason names the key.
    const [old] = pythonPepper<string>([{ op: 'seal', secret: k1, keyId: 'old', scheme: 'bcrypt', pw: 'pässword', settings: { rounds: 10 } }])
    const verified = await post(server, '/api/verify', { input: 'pässword', hash: old })
    assert.deepEqual([verified.body.match, verified.body.rehashRecommended], [true, true])
    assert.match(verified.body.reason, /key old/)
  })

  it('refuses a string whose header was changed, or sealed under another secret with the same id: 422, not a mismatch', { skip: skipUnless('pycryptodome', 'python3-bcrypt') }, async () => {
    const [hash] = pythonPepper<string>([{ op: 'seal', secret: k2, keyId: 'current', scheme: 'bcrypt', pw: 'pw', settings: { rounds: 4 } }]) as [string]
    const renamed = hash.replace(',s=bcrypt$', ',s=bcrypt-sha256$')
    const forged = pythonPepper<string>([{ op: 'seal', secret: secret(), keyId: 'current', scheme: 'bcrypt', pw: 'pw', settings: { rounds: 4 } }])[0]
    for (const bad of [renamed, forged]) {
      const response = await post(server, '/api/verify', { input: 'pw', hash: bad })
      assert.equal(response.status, 422)
      assert.equal(response.body.type, 'urn:hashd:problem:pepper-key-mismatch')
      assert.equal(response.body.pepperKey, 'current')
    }
  })

  it('rewraps without the password: an old key\'s hash moves to the current key with the same hash inside; a plain one is peppered', { skip: skipUnless(...PYTHON_TOOLS) }, async () => {
    const [underOld, plainHash] = pythonPepper<string>([
      { op: 'seal', secret: k1, keyId: 'old', scheme: 'bcrypt', pw: 'pw', settings: { rounds: 10 } },
      { op: 'make', scheme: 'argon2id', pw: 'pw', settings: {} },
    ]) as [string, string]
    const moved = await post(server, '/api/pepper/rewrap', { hash: underOld })
    assert.equal(moved.status, 200, moved.text)
    assert.deepEqual([moved.body.pepperKey, moved.body.previousPepperKey, moved.body.changed], ['current', 'old', true])
    assert.match(moved.body.hash, /^\$pepper\$v=1,k=current,s=bcrypt\$/)
    const [before, after] = pythonPepper<string>([{ op: 'unseal', secret: k1, hash: underOld }, { op: 'unseal', secret: k2, hash: moved.body.hash }])
    assert.equal(after, before, 'the same bcrypt hash inside, re-encrypted')
    const again = await post(server, '/api/pepper/rewrap', { hash: moved.body.hash })
    assert.deepEqual([again.body.hash, again.body.changed], [moved.body.hash, false])

    const peppered = await post(server, '/api/pepper/rewrap', { hash: plainHash })
    assert.deepEqual([peppered.body.previousPepperKey, peppered.body.changed], [null, true])
    assert.deepEqual(pythonCheck(k2, peppered.body.hash, 'argon2id', 'pw'), { inner: plainHash, match: true })
    const verified = await post(server, '/api/verify', { input: 'pw', hash: peppered.body.hash })
    assert.deepEqual([verified.body.match, verified.body.pepperKey], [true, 'current'])
  })

  it('refuses to rewrap a bare digest, a damaged string and anything on a server without keys', async () => {
    const digest = await post(server, '/api/pepper/rewrap', { hash: '900150983cd24fb0d6963f7d28e17f72' })
    assert.equal(digest.status, 422)
    assert.equal(digest.body.type, 'urn:hashd:problem:not-a-password-hash')
    const damaged = await post(server, '/api/pepper/rewrap', { hash: '$pepper$v=1,k=current,s=nosuch$AAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
    assert.equal(damaged.status, 422)
    const none = await post(plain, '/api/pepper/rewrap', { hash: '$2b$04$abcdefghijklmnopqrstuuYb0BBu5xQ3lTYvp5mDY1FWbb4tb8SLu' })
    assert.equal(none.body.type, 'urn:hashd:problem:no-pepper-keys')
  })

  it('"pepper": false makes a plain hash that argon2-cffi verifies; verify then recommends peppering it', { skip: skipUnless('argon2-cffi') }, async () => {
    const made = await post(server, '/api/hash', { input: 'pw', ...ARGON2, pepper: false })
    assert.equal(made.status, 200)
    assert.equal(made.body.pepperKey, undefined)
    assert.match(made.body.hash, /^\$argon2id\$/)
    assert.deepEqual(pythonPepper([{ op: 'verify', scheme: 'argon2id', pw: 'pw', hash: made.body.hash }]), [true])
    const verified = await post(server, '/api/verify', { input: 'pw', hash: made.body.hash })
    assert.equal(verified.body.rehashRecommended, true)
    assert.match(verified.body.reason, /not peppered; .* key current/)
  })

  it('digests are never peppered; "pepper": true on a digest is 400 and on a server without keys 422', async () => {
    const digest = await post(server, '/api/hash', { input: 'abc' })
    assert.equal(digest.body.hash, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    assert.equal(digest.body.pepperKey, undefined)
    assert.equal((await post(server, '/api/hash', { input: 'abc', pepper: true })).status, 400)
    const none = await post(plain, '/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 }, pepper: true })
    assert.equal(none.status, 422)
    assert.equal(none.body.type, 'urn:hashd:problem:no-pepper-keys')
    const unpeppered = await post(plain, '/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } })
    assert.equal(unpeppered.body.pepperKey, undefined)
  })

  it('no plain scheme accepts a peppered string: a server without the key answers 422 for every password algorithm named', async () => {
    const made = await post(server, '/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } })
    const peppered = made.body.hash as string
    const algorithms = (await plain.get('/api/algorithms')).body.algorithms as Array<{ name: string, kind: string }>
    const passwordSchemes = algorithms.filter((algorithm) => algorithm.kind === 'password')
    assert.ok(passwordSchemes.length >= 27)
    for (const { name } of [...passwordSchemes, { name: undefined }]) {
      const response = await post(plain, '/api/verify', { input: 'pw', hash: peppered, ...(name ? { algorithm: name } : {}) })
      assert.notEqual(response.body.match, true, name)
      assert.equal(response.status, 422, `${name}: ${response.text}`)
    }
  })

  it('keeps secrets out of logs, metrics and the OpenAPI document', async () => {
    await post(server, '/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } })
    const metrics = (await server.get('/metrics')).text
    const openapi = (await server.get('/api/openapi.json')).text
    const policy = (await server.get('/api/password-policy')).text
    const texts = [server.logs(), metrics, openapi, policy]
    for (const key of [k1, k2]) {
      const forms = [key, Buffer.from(key, 'base64').toString('hex'), Buffer.from(key, 'base64').toString('base64url')]
      for (const text of texts) for (const form of forms) assert.ok(!text.includes(form))
    }
    assert.match(server.logs(), /"currentKey":"current"/)
    assert.match(openapi, /pepperKey/)
  })
})
