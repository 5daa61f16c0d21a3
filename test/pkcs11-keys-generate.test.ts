/**
 * `npm run keys:generate -- --pkcs11 …` against SoftHSM2: it makes an HMAC key and a pepper key in
 * the token, pkcs11-tool shows each sensitive and never extractable, the lines it prints start a
 * hashd that uses them (the HMAC equal to PyKCS11's with the same object; a peppered hash that
 * verifies), and a label already in the token is refused.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { startHashd } from './helpers/process.js'
import { makeSoftToken, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { run, skipUnless } from './helpers/tools.js'

const SCRIPT = fileURLToPath(new URL('../scripts/keys-generate.js', import.meta.url))

describe('npm run keys:generate -- --pkcs11', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pykcs11', 'python3') }, () => {
  let token: SoftToken
  const generate = (args: string[]) => spawnSync(process.execPath, [SCRIPT, ...args], {
    encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile },
  })

  before(() => {
    token = makeSoftToken()
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
  })
  after(() => {
    token?.remove()
    delete process.env.SOFTHSM2_CONF
  })

  it('makes the keys in the token, sensitive and never extractable; hashd uses the lines it prints', async () => {
    const hmac = generate(['--pkcs11', 'orders', '7', '--token', 'hashd'])
    assert.equal(hmac.status, 0, hmac.stderr)
    assert.equal(hmac.stdout, 'orders 7 pkcs11:token=hashd;object=orders-v7;type=secret-key\n')
    const pepper = generate(['--pkcs11', 'k', '1', '--token', 'hashd', '--pepper'])
    assert.equal(pepper.status, 0, pepper.stderr)
    assert.equal(pepper.stdout, 'k1 pkcs11:token=hashd;object=pepper-k1;type=secret-key\n')
    for (const [label, kind] of [['orders-v7', 'Generic secret length 32'], ['pepper-k1', 'AES length 32']] as const) {
      const block = token.listObjects().split(/\n(?=Secret Key Object)/).find((each) => each.includes(`label:      ${label}`)) ?? ''
      assert.ok(block.includes(kind), label)
      const access = (/Access: *(.*)/.exec(block)?.[1] ?? '').split(', ')
      assert.ok(access.includes('sensitive') && access.includes('never extractable') && !access.includes('extractable'), `${label}: ${access.join(', ')}`)
    }
    const again = generate(['--pkcs11', 'orders', '7', '--token', 'hashd'])
    assert.equal(again.status, 1)
    assert.match(again.stderr, /already has a secret key labelled orders-v7/)

    writeFileSync(join(token.dir, 'hmac'), hmac.stdout)
    writeFileSync(join(token.dir, 'pepper'), pepper.stdout)
    const hashd = await startHashd({
      ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile,
      HMAC_KEYS_FILE: join(token.dir, 'hmac'), PEPPER_KEYS_FILE: join(token.dir, 'pepper'),
    })
    try {
      const made = await hashd.post('/api/hmac', { keyName: 'orders', message: 'generated' })
      assert.equal(made.status, 200, made.text)
      assert.equal(made.body.hmac, token.pyHmac('orders-v7', 'CKM_SHA256_HMAC', Buffer.from('generated')))
      const hashed = await hashd.post('/api/hash', { input: 'pw', algorithm: 'bcrypt', options: { cost: 4 } })
      assert.equal(hashed.status, 200, hashed.text)
      assert.match(hashed.body.hash as string, /^\$pepper\$v=1,k=k1,s=bcrypt\$/)
      assert.equal((await hashd.post('/api/verify', { input: 'pw', hash: hashed.body.hash })).body.match, true)
    } finally {
      await hashd.stop()
    }
  })

  it('--token picks one token of several and logs in on it alone, with its own PIN', () => {
    token.addToken('tenant', '86420864')
    const tenantPin = join(token.dir, 'tenant-pin')
    writeFileSync(tenantPin, '86420864\n')
    const made = spawnSync(process.execPath, [SCRIPT, '--pkcs11', 'tenant', '1', '--token', 'tenant'], {
      encoding: 'utf8', env: { PATH: process.env.PATH ?? '', ...token.env, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: tenantPin },
    })
    assert.equal(made.status, 0, made.stderr)
    assert.equal(made.stdout, 'tenant 1 pkcs11:token=tenant;object=tenant-v1;type=secret-key\n')
    // Without --token, a module with two tokens is refused: which one is not guessed.
    const unnamed = generate(['--pkcs11', 'orders', '9'])
    assert.equal(unnamed.status, 1)
    assert.match(unnamed.stderr, /several initialised tokens: name one .*--token/)
    // The key is in the tenant token (PyKCS11 signs with it there) and not in hashd's.
    assert.match(token.pyHmac('tenant-v1', 'CKM_SHA256_HMAC', Buffer.from('m'), 'tenant'), /^[0-9a-f]{64}$/)
    assert.throws(() => token.pyHmac('tenant-v1', 'CKM_SHA256_HMAC', Buffer.from('m')))
    // The other token was never sent the tenant's PIN: SoftHSM2 marks a token after a refused login.
    const slots = run('env', [`SOFTHSM2_CONF=${token.env.SOFTHSM2_CONF}`, 'pkcs11-tool', '--module', SOFTHSM_MODULE, '--list-token-slots'])
    const hashdSlot = slots.split(/\nSlot /).find((each) => each.includes('token label        : hashd\n')) ?? ''
    assert.match(hashdSlot, /token flags/)
    assert.doesNotMatch(hashdSlot, /count low|final try|locked/)
  })

  it('refuses wrong arguments with exit status 2', () => {
    for (const args of [[], ['--pkcs11', 'orders'], ['--pkcs11', 'bad name', '1'], ['--pkcs11', 'orders', '0'], ['--pkcs11', 'k', '1', '--pepper', '--bytes', '64'], ['--nope']]) {
      const result = generate(args)
      assert.equal(result.status, 2, args.join(' '))
      assert.match(result.stderr, /usage: npm run keys:generate/)
    }
  })
})
