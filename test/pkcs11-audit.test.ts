/**
 * The audit key in a PKCS#11 token (AUDIT_KEY=pkcs11:…, SoftHSM2): hashd writes its audit log with
 * MACs the token makes, and the audit tools read the same variable. The key's value is known to
 * the test (put in by PyKCS11), so the log also verifies with that value in a file: the token's
 * C_Sign is the HMAC-SHA-256 the file key makes in memory. audit:hash gives the same form both ways.
 * The faults of test/audit-log.test.ts again with every MAC made in the token (the HMAC key and the
 * audit key both `pkcs11:`): SIGKILL in mid-burst, and a full filesystem under AUDIT_FAIL=closed.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { killInMidBurst } from './helpers/audit-burst.js'
import { startHashd } from './helpers/process.js'
import { makeSoftToken, SOFTHSM_MODULE, type SoftToken } from './helpers/softhsm.js'
import { skipBecause, skipUnless } from './helpers/tools.js'

const VERIFY = fileURLToPath(new URL('../scripts/audit-verify.js', import.meta.url))
const HASH = fileURLToPath(new URL('../scripts/audit-hash.js', import.meta.url))
const AUDIT_URI = 'pkcs11:token=hashd;object=audit-key'

describe('the audit key in a PKCS#11 token', { skip: skipUnless('softhsm2', 'pkcs11-tool', 'pykcs11', 'python3') }, () => {
  let token: SoftToken
  const auditValue = randomBytes(32)
  let keyFile: string
  const tool = (script: string, args: string[], env: Record<string, string>) => {
    const result = spawnSync(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...token.env, ...env }, encoding: 'utf8', timeout: 60_000 })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }
  const tokenEnv = () => ({ AUDIT_KEY: AUDIT_URI, PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile })

  before(() => {
    token = makeSoftToken()
    process.env.SOFTHSM2_CONF = token.env.SOFTHSM2_CONF
    token.importKey('audit-key', auditValue, 'generic')
    token.keygen('orders-v1', 'GENERIC:32')
    keyFile = join(token.dir, 'audit.key')
    writeFileSync(keyFile, `${auditValue.toString('base64')}\n`)
  })
  after(() => {
    token?.remove()
    delete process.env.SOFTHSM2_CONF
  })

  it('hashd writes the log with the token\'s MACs; audit:verify checks it through the token and with the key\'s value alike', async () => {
    const log = join(token.dir, 'audit.log')
    const keys = join(token.dir, 'hmac-keys')
    writeFileSync(keys, 'orders 1 pkcs11:token=hashd;object=orders-v1\n')
    const hashd = await startHashd({ ...token.env, ...tokenEnv(), AUDIT_LOG: `file:${log}`, HMAC_KEYS_FILE: keys })
    try {
      for (let index = 0; index < 5; index++) assert.equal((await hashd.post('/api/hmac', { keyName: 'orders', message: `m${index}` })).status, 200)
    } finally {
      await hashd.stop()
    }
    const lines = readFileSync(log, 'utf8').trim().split('\n')
    assert.ok(lines.filter((line) => line.includes('"operation":"hmac"')).length === 5, lines.join('\n'))

    const throughToken = tool(VERIFY, [log], tokenEnv())
    assert.equal(throughToken.status, 0, throughToken.stderr)
    assert.match(throughToken.stdout, /^verified: \d+ lines/)
    const withValue = tool(VERIFY, [log, '--key', keyFile], {})
    assert.equal(withValue.status, 0, withValue.stderr)
    assert.equal(withValue.stdout, throughToken.stdout)

    // A changed byte is named through the token too.
    writeFileSync(log, readFileSync(log, 'utf8').replace('"m', '"M'))
    const changed = tool(VERIFY, [log], tokenEnv())
    assert.equal(changed.status, 1)

    const hashed = tool(HASH, ['m1'], tokenEnv())
    assert.equal(hashed.status, 0, hashed.stderr)
    assert.equal(hashed.stdout, tool(HASH, ['--key', keyFile, 'm1'], {}).stdout)
    assert.match(hashed.stdout, /^hmac-sha256:[0-9a-f]{64}\n$/)
  })

  const tokenKeysEnv = (log: string) => {
    const keys = join(token.dir, 'hmac-keys')
    writeFileSync(keys, 'orders 1 pkcs11:token=hashd;object=orders-v1\n')
    return { ...token.env, ...tokenEnv(), AUDIT_LOG: `file:${log}`, HMAC_KEYS_FILE: keys }
  }
  const requestIds = (log: string) => new Set(readFileSync(log, 'utf8').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { requestId?: string }).requestId))

  it('SIGKILL in mid-burst with both keys in the token: every answered request is in the log, which verifies to its last whole line', async () => {
    const log = join(token.dir, 'killed.log')
    const hashd = await startHashd(tokenKeysEnv(log))
    const answered = await killInMidBurst(hashd, 'orders')
    const recorded = requestIds(log)
    assert.deepEqual(answered.filter((id) => !recorded.has(id)), [], 'answered without a line')
    const result = tool(VERIFY, [log], tokenEnv())
    assert.equal(result.status, 0, result.stderr)
    assert.equal(tool(VERIFY, [log, '--key', keyFile], {}).stdout, result.stdout, 'the token\'s MACs are the key\'s HMACs')
  })

  it('AUDIT_FAIL=closed on a full filesystem with both keys in the token: 503 until there is room, and the log keeps whole lines', async (t) => {
    const mountPoint = join(token.dir, 'tmpfs')
    mkdirSync(mountPoint)
    const mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint], { stdio: 'ignore' }).status === 0
    if (!mounted) { t.skip(skipBecause('cannot mount a 64 KiB tmpfs here (needs root and mount(8) in this container)')); return }
    try {
      const log = join(mountPoint, 'audit.log')
      const filler = join(mountPoint, 'filler')
      const hashd = await startHashd(tokenKeysEnv(log))
      try {
        assert.equal((await hashd.post('/api/hmac', { message: 'one', keyName: 'orders' })).status, 200)
        try { writeFileSync(filler, Buffer.alloc(64 * 1024)) } catch { /* ENOSPC: full, as wanted */ }
        const statuses: number[] = []
        for (let i = 0; i < 100 && !statuses.includes(503); i++) statuses.push((await hashd.post('/api/hmac', { message: `two ${i}`, keyName: 'orders' })).status)
        assert.equal(statuses.at(-1), 503, `never refused: ${statuses.join(' ')}`)
        const health = await hashd.get('/api/health')
        assert.equal((health.body as { auditLog?: string }).auditLog, 'failing')
        rmSync(filler)
        assert.equal((await hashd.post('/api/hmac', { message: 'three', keyName: 'orders' })).status, 200)
      } finally {
        await hashd.stop()
      }
      const result = tool(VERIFY, [log], tokenEnv())
      assert.equal(result.status, 0, result.stderr)
      assert.doesNotMatch(result.stderr, /torn/)
    } finally {
      spawnSync('umount', [mountPoint], { stdio: 'ignore' })
    }
  })

  it('without PKCS11_MODULE a pkcs11: AUDIT_KEY is refused, by hashd and by the tools', () => {
    const refused = tool(HASH, ['m'], { AUDIT_KEY: AUDIT_URI })
    assert.equal(refused.status, 2)
    assert.match(refused.stderr, /set PKCS11_MODULE and PKCS11_PIN_FILE too/)
  })
})
