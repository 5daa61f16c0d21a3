/**
 * The key ring (src/keys/): the keys files' formats and the states of their versions, through the
 * real server: what each file accepts (today's formats unchanged, then states and options), what
 * it refuses at start (the line and field named, the field described, never quoted: every field
 * position is covered in keys-file-messages.test.ts), a key's purpose= (the same on each of its
 * lines), the pepper's states (a hash under a staged key verifies without a rehash and is not
 * rewrapped back; a retired key is 422 retired-pepper-key), API keys' scopes= and hmac-keys=, and
 * GET /api/keys, which lists names, purposes, versions and states and never a secret.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ConfigError } from '../src/config.js'
import { hashKey, parseKeysFile } from '../src/keys/api-keys.js'
import { metricValue, startServer, type TestServer } from './helpers/server.js'
import { pythonPepper } from './helpers/pepper.js'
import { skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-ring-'))
after(() => rmSync(dir, { recursive: true, force: true }))
let count = 0
const file = (text: string) => {
  const path = join(dir, `keys-${count++}`)
  writeFileSync(path, text)
  return path
}
const secret = (bytes = 32) => randomBytes(bytes).toString('base64')

/** Starting refuses the file: a ConfigError naming the variable, file and line, matching `reason`, quoting no secret. */
async function refused(variable: string, text: string, line: number, reason: RegExp): Promise<void> {
  const path = file(text)
  await assert.rejects(startServer({ [variable]: path }), (error: Error) => {
    assert.ok(error instanceof ConfigError, String(error))
    assert.match(error.message, new RegExp(`^${variable} ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line ${line}(?:, field \\d+)?: `), error.message)
    assert.match(error.message, reason)
    for (const field of text.split(/\s+/).filter((part) => part.length >= 40)) assert.ok(!error.message.includes(field), `a secret in: ${error.message}`)
    return true
  })
}

describe('HMAC_KEYS_FILE refused at start', () => {
  const s = secret()
  const cases: Array<[string, string, number, RegExp]> = [
    ['too few fields', `orders 1\n`, 1, /expected "<name> <version> <base64 secret>", got 2 field/],
    ['a short secret', `orders 1 ${secret(31)}\n`, 1, /field 3: the secret must be base64 or base64url of at least 32 bytes .*\(this field decodes to fewer bytes\)/],
    ['a secret that is not base64', `orders 1 ${'*'.repeat(44)}\n`, 1, /field 3: the secret must be base64 .*\(this field is not base64\)/],
    ['a version that is not a whole number', `orders v1 ${s}\n`, 1, /line 1, field 2: the key.s version must be a whole number from 1 to 999999999/],
    // Found by the keys-file fuzzer: a secret written where the name goes (name and version left out) was quoted as the key's name.
    ['a secret where the name goes, the version left out', `${'5e'.repeat(32)} ${s} x\n`, 1, /line 1, field 2: the key.s version must be a whole number/],
    ['a repeated version', `orders 1 ${s}\norders 1 ${secret()}\n`, 2, /field 2: this version of the same key is already on line 1/],
    ['a bad name', `ord$ers 1 ${s}\n`, 1, /field 1: the key name must be 1 to 64 letters/],
    ['an unknown option', `orders 1 ${s} colour=blue\n`, 1, /field 4: not an option this file takes; it takes purpose=, algorithms=, min-verify-version=, state=/],
    ['an option given twice', `orders 1 ${s} state=staged state=staged\n`, 1, /field 5: the option state= is already given as field 4/],
    ['a bad state', `orders 1 ${s} state=active\n`, 1, /field 4: state= must be staged, current, retired/],
    ['an algorithm without an HMAC', `orders 1 ${s} algorithms=sha256,bcrypt\n`, 1, /field 4: algorithms= must list digests with an HMAC/],
    ['algorithms that differ between lines', `orders 1 ${s} algorithms=sha256\norders 2 ${secret()} algorithms=sha512\n`, 2, /field 4: algorithms= differs from the one on line 1 for the same key/],
    ['a floor above the current version', `orders 1 ${s}\norders 2 ${secret()} state=staged min-verify-version=2\n`, 2, /field 5: min-verify-version is above the key.s current version \(line 1\)/],
    ['two versions marked current', `orders 1 ${s} state=current\norders 2 ${secret()} state=current\n`, 2, /field 4: state=current is written for another version of the same key too \(line 1\)/],
    ['no version that can be current', `orders 1 ${s} state=retired\norders 2 ${secret()} state=staged\n`, 2, /the key on lines 1, 2 has no version that can be current/],
    ['a purpose that is neither hmac nor webhooks', `orders 1 ${s} purpose=both\n`, 1, /field 4: purpose= must be hmac or webhooks/],
    // A version added without the word is refused, rather than a secret changing purpose.
    ['a version without the purpose= of the others', `hooks 1 ${s} purpose=webhooks\nhooks 2 ${secret()}\n`, 2, /line 2: the purpose differs from line 1 of the same key \(a line without purpose= is purpose=hmac\)/],
    ['purpose= that differs between versions', `orders 1 ${s}\norders 2 ${secret()} state=staged purpose=webhooks\n`, 2, /field 5: the purpose differs from line 1 of the same key/],
  ]
  for (const [name, text, line, reason] of cases) it(`refuses ${name}`, () => refused('HMAC_KEYS_FILE', text, line, reason))
})

describe('PEPPER_KEYS_FILE states and refusals', () => {
  it('refuses a bad state, an unknown option and a file whose every key is staged', async () => {
    await refused('PEPPER_KEYS_FILE', `k1 ${secret()} state=gone\n`, 1, /state= must be staged, current, retired/)
    await refused('PEPPER_KEYS_FILE', `k1 ${secret()} algorithms=sha256\n`, 1, /field 3: not an option this file takes; it takes state=$/)
    await refused('PEPPER_KEYS_FILE', `k1 ${secret()} state=staged\n`, 1, /the key on line 1 has no version that can be current/)
  })
})

describe('API_KEYS_FILE scopes=, hmac-keys= and banks=', () => {
  const hash = hashKey('hk_some-key-for-the-file-tests')
  it('reads them: names, * and -name, a line without options may do everything', () => {
    const keys = [...parseKeysFile([
      `all ${hashKey('a')}`,
      `verifier ${hashKey('b')} 50 scopes=verify,hmac:verify hmac-keys=orders,users`,
      `no-rewrap ${hashKey('c')} scopes=-pepper:rewrap,-calibrate`,
      `star ${hashKey('d')} scopes=*,-metrics hmac-keys=* banks=*`,
      `moderator ${hashKey('e')} scopes=similarity:match banks=csam,photo.dna-v2`,
    ].join('\n'), 'f').values()]
    const [all, verifier, noRewrap, star] = keys as [typeof keys[0], typeof keys[0], typeof keys[0], typeof keys[0]]
    assert.ok(all.scopes.has('hash') && all.scopes.has('pepper:rewrap') && all.scopes.has('metrics'))
    assert.equal(all.hmacKeys, null)
    assert.deepEqual([...verifier.scopes].sort(), ['hmac:verify', 'verify'])
    assert.deepEqual([...verifier.hmacKeys ?? []].sort(), ['orders', 'users'])
    assert.equal(verifier.max, 50)
    assert.ok(noRewrap.scopes.has('hash') && !noRewrap.scopes.has('pepper:rewrap') && !noRewrap.scopes.has('calibrate'))
    assert.ok(star.scopes.has('keys') && !star.scopes.has('metrics'))
    assert.equal(star.hmacKeys, null)
    assert.equal(star.banks, null)
    assert.equal(all.banks, null)
    const moderator = keys[4]!
    assert.deepEqual([...moderator.scopes], ['similarity:match'])
    assert.deepEqual([...moderator.banks ?? []].sort(), ['csam', 'photo.dna-v2'])
  })

  it('refuses an unknown scope or a bad key name, naming the line', async () => {
    await refused('API_KEYS_FILE', `a ${hash} scopes=hash,delete\n`, 1, /scopes= takes hash, verify, hmac, hmac:verify, filehash, checksums, identify, similarity, similarity:match, passwords:check, passwords:range, pepper:rewrap, calibrate, webhooks:verify, webhooks:sign, keys, audit, metrics, health or \*/)
    await refused('API_KEYS_FILE', `a ${hash} 10 hmac-keys=orders,\n`, 1, /hmac-keys= takes \* or HMAC key names/)
    await refused('API_KEYS_FILE', `a ${hash} banks=photos,.hidden\n`, 1, /field 3: banks= takes \* or bank names separated by commas/)
    await refused('API_KEYS_FILE', `a ${hash} scopes=hash 10\n`, 1, /field 4: expected "<name> <sha256 of the key, 64 hex> \[<requests per window>\]", then options scopes=, hmac-keys=, items=, banks=; got 4 fields/)
  })
})

describe('GET /api/keys and the pepper\'s states', { skip: skipUnless('python3', 'pycryptodome', 'python3-bcrypt') }, () => {
  const hmac = { v1: secret(), v2: secret(), v3: secret(48), u1: secret(), w1: secret(), w2: secret() }
  const pepper = { k1: secret(), k2: secret(), k0: secret() }
  let server: TestServer
  before(async () => {
    server = await startServer({
      HMAC_KEYS_FILE: file([
        `# orders: 1 is below the floor, 2 current, 3 staged`,
        `orders 1 ${hmac.v1} algorithms=sha256,sha512 min-verify-version=2`,
        `orders 2 ${hmac.v2}`,
        `orders 3 ${hmac.v3} state=staged`,
        `users 7 ${hmac.u1}`,
        `# billing: kept for webhooks, on each of its lines`,
        `billing 1 ${hmac.w1} purpose=webhooks`,
        `billing 2 ${hmac.w2} purpose=webhooks state=staged`,
      ].join('\n')),
      // Today's format, then a staged key after the current one, and a retired one before.
      PEPPER_KEYS_FILE: file(`k0 ${pepper.k0} state=retired\nk1 ${pepper.k1}\nk2 ${pepper.k2} state=staged\n`),
    })
  })
  after(() => server.close())

  it('lists names, purposes, versions, states, current versions and algorithms, never a secret', async () => {
    const listed = await server.get('/api/keys')
    assert.equal(listed.status, 200)
    assert.deepEqual(listed.body, {
      hmac: [
        {
          name: 'orders', purpose: 'hmac', algorithms: ['sha256', 'sha512'], currentVersion: 2, minVerifyVersion: 2,
          versions: [
            { version: 1, state: 'previous', verifies: false },
            { version: 2, state: 'current', verifies: true },
            { version: 3, state: 'staged', verifies: true },
          ],
        },
        { name: 'users', purpose: 'hmac', algorithms: ['sha256'], currentVersion: 7, minVerifyVersion: null, versions: [{ version: 7, state: 'current', verifies: true }] },
        {
          name: 'billing', purpose: 'webhooks', algorithms: ['sha256'], currentVersion: 1, minVerifyVersion: null,
          versions: [{ version: 1, state: 'current', verifies: true }, { version: 2, state: 'staged', verifies: true }],
        },
      ],
      pepper: {
        currentKey: 'k1',
        keys: [{ id: 'k0', state: 'retired', verifies: false }, { id: 'k1', state: 'current', verifies: true }, { id: 'k2', state: 'staged', verifies: true }],
      },
    })
    for (const value of [...Object.values(hmac), ...Object.values(pepper)]) {
      for (const form of [value, Buffer.from(value, 'base64').toString('hex')]) {
        assert.ok(!listed.text.includes(form) && !server.logs().includes(form), 'a secret was shown or logged')
      }
    }
    const policy = await server.get('/api/password-policy')
    assert.deepEqual([policy.body.pepperKey, policy.body.pepperKeys], ['k1', ['k1', 'k2']])
  })

  it('peppers with the current key; a hash under the staged key verifies without a rehash and is not rewrapped back', async () => {
    const made = await server.post('/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } })
    assert.equal(made.body.pepperKey, 'k1')
    // Made where k2 is already current (another replica), by an independent implementation.
    const [underK2, underK0] = pythonPepper<string>([
      { op: 'seal', secret: pepper.k2, keyId: 'k2', scheme: 'bcrypt', pw: 'pw', settings: { rounds: 4 } },
      { op: 'seal', secret: pepper.k0, keyId: 'k0', scheme: 'bcrypt', pw: 'pw', settings: { rounds: 4 } },
    ]) as [string, string]
    const verified = await server.post('/api/verify', { input: 'pw', hash: underK2 })
    assert.deepEqual([verified.status, verified.body.match, verified.body.pepperKey], [200, true, 'k2'])
    // bcrypt cost 4 is below OWASP's minimum, which is a reason of its own; the key is not one.
    assert.doesNotMatch(verified.body.reason ?? '', /pepper|key k/)
    const rewrapped = await server.post('/api/pepper/rewrap', { hash: underK2 })
    assert.deepEqual([rewrapped.body.changed, rewrapped.body.pepperKey, rewrapped.body.hash], [false, 'k2', underK2])
    // k0 is retired: a 422 that says so, never a silent mismatch.
    const retired = await server.post('/api/verify', { input: 'pw', hash: underK0 })
    assert.equal(retired.status, 422)
    assert.equal(retired.body.type, 'urn:hashd:problem:retired-pepper-key')
    assert.equal(retired.body.pepperKey, 'k0')
  })
})

describe('GET /api/keys for a key limited by hmac-keys=, and without a keys file', () => {
  it('shows only the keys the API key may use; an empty ring without files', async () => {
    const key = `hk_${randomBytes(32).toString('base64url')}`
    const server = await startServer({
      HMAC_KEYS_FILE: file(`orders 1 ${secret()}\nusers 1 ${secret()}\n`),
      API_KEYS_FILE: file(`front ${hashKey(key)} scopes=keys,hmac:verify hmac-keys=users\n`),
    })
    try {
      const listed = await server.fetch('/api/keys', { headers: { authorization: `Bearer ${key}` } })
      const body = await listed.json() as { hmac: Array<{ name: string }>, pepper: unknown }
      assert.deepEqual(body.hmac.map((each) => each.name), ['users'])
      assert.equal(body.pepper, null)
    } finally {
      await server.close()
    }
    const bare = await startServer()
    try {
      assert.deepEqual((await bare.get('/api/keys')).body, { hmac: [], pepper: null })
    } finally {
      await bare.close()
    }
  })
})

describe('HMAC_KEYS_FILE reloaded when it changes; a bad version keeps the keys in force', () => {
  it('takes a new version from disk, refuses a bad file without a secret in the log, and shows it in /api/health', async () => {
    const [v1, v2, short] = [secret(), secret(), secret(20)]
    const path = file(`orders 1 ${v1}\n`)
    const server = await startServer({ HMAC_KEYS_FILE: path })
    const current = async () => (await server.get('/api/keys')).body.hmac[0]?.currentVersion as number
    const until = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000
      while (!await check()) {
        assert.ok(Date.now() < deadline, 'no reload')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    try {
      writeFileSync(path, `orders 1 ${v1}\norders 2 ${v2}\n`)
      await until(async () => await current() === 2)
      writeFileSync(path, `orders 1 ${v1}\norders 2 ${v2}\norders 3 ${short}\n`)
      await until(async () => (await server.get('/api/health')).body.degraded === true)
      assert.equal(await metricValue(server, 'hashd_file_reload_failing{source="hmac-keys"}'), 1)
      const warning = server.logs().split('\n').find((line) => line.includes('"source":"hmac-keys"') && line.includes('not reloaded')) ?? '{}'
      assert.match((JSON.parse(warning) as { reason: string }).reason, /HMAC_KEYS_FILE .* line 3, field 3: the secret must be base64 or base64url of at least 32 bytes/)
      assert.equal(await current(), 2, 'the keys in force stay')
      assert.equal((await server.post('/api/hmac', { message: 'm', keyName: 'orders' })).body.keyVersion, 2)
      for (const value of [v1, v2, short]) assert.ok(!server.logs().includes(value), 'a secret in the log')
      assert.match(server.logs(), /HMAC keys not reloaded \(changed on disk\): keeping the value in force/)
    } finally {
      await server.close()
    }
  })
})
