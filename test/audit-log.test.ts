/**
 * The audit log (src/audit/) end to end, on the real server over loopback: keyed HMAC requests
 * write chained, MACed lines with no input in the clear; `audit:hash` finds a known message;
 * `audit:verify` passes a sound log and names the first line of every tampering (a changed byte, a
 * removed line, a swapped pair, a copied line, a line forged without the key, a tail cut before a
 * checkpoint saved from GET /api/audit/checkpoint). Then the faults: SIGKILL in mid-burst (and a
 * torn last line) leaves a log that verifies to its last whole line, with every answered request in
 * it; AUDIT_FAIL=closed answers 503 while the file cannot be written (its folder removed; a full
 * tmpfs when this machine lets root mount one) and recovers by itself; AUDIT_FAIL=open goes on;
 * logrotate's copytruncate and create keep one chain across the two files.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { auditKeyFromSecret, loadAuditKey } from '../src/audit/key.js'
import { makeLine, parseLine, sha256Hex, type ParsedLine } from '../src/audit/line.js'
import { AuditLog } from '../src/audit/index.js'
import { AuditWriter } from '../src/audit/writer.js'
import { ConfigError, loadConfig } from '../src/config.js'
import { hashSync } from '@node-rs/bcrypt'
import { killInMidBurst } from './helpers/audit-burst.js'
import { startHashd } from './helpers/process.js'
import { startServer } from './helpers/server.js'
import { skipBecause } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-audit-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const KEY_FILE = join(dir, 'audit.key')
writeFileSync(KEY_FILE, `# audit key\n${randomBytes(32).toString('base64')}\n`)
const HMAC_KEYS_FILE = join(dir, 'hmac.keys')
writeFileSync(HMAC_KEYS_FILE, `orders 1 ${randomBytes(32).toString('base64')}\n`)

const VERIFY = fileURLToPath(new URL('../scripts/audit-verify.js', import.meta.url))
const HASH = fileURLToPath(new URL('../scripts/audit-hash.js', import.meta.url))

function tool(script: string, args: string[], input?: string): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', AUDIT_KEY: KEY_FILE }, input, encoding: 'utf8', timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}
const verify = (...args: string[]) => tool(VERIFY, args)

function envFor(log: string, extra: Record<string, string> = {}): Record<string, string> {
  return { AUDIT_LOG: `file:${log}`, AUDIT_KEY: KEY_FILE, HMAC_KEYS_FILE, ...extra }
}

let logCount = 0
const newLog = (): string => join(dir, `audit-${logCount++}.log`)
const lines = (path: string): string[] => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '')
const parsed = (path: string): ParsedLine[] => lines(path).map((line) => parseLine(line) as ParsedLine)
/** The 1-based number of the first line matching. */
const lineNumberOf = (all: string[], test: (line: ParsedLine) => boolean): number => all.findIndex((line) => test(parseLine(line) as ParsedLine)) + 1
const write = (path: string, all: string[]): string => { writeFileSync(path, `${all.join('\n')}\n`); return path }

/** What logrotate does to `log` in each mode: copy then truncate in place, or move it to `old` and create a new one. */
function logrotate(mode: 'copytruncate' | 'create', log: string, old: string): void {
  if (mode === 'copytruncate') {
    copyFileSync(log, old)
    truncateSync(log, 0)
  } else {
    renameSync(log, old)
    writeFileSync(log, '')
  }
}

describe('configuration', () => {
  it('wants a key with the log, a pkcs11: key only with PKCS11_MODULE, and keys of at least 32 bytes', () => {
    assert.throws(() => loadConfig({ AUDIT_LOG: 'file:/tmp/x.log' }), /AUDIT_LOG is set without AUDIT_KEY/)
    assert.throws(() => loadConfig({ AUDIT_LOG: 'file:/tmp/x.log', AUDIT_KEY: 'pkcs11:token=hashd;object=audit' }), (error: unknown) =>
      error instanceof ConfigError && /PKCS#11.*set PKCS11_MODULE and PKCS11_PIN_FILE too/.test(error.message))
    assert.throws(() => loadConfig({ AUDIT_LOG: 'syslog' }), /AUDIT_LOG must be file:PATH or stdout/)
    assert.throws(() => loadConfig({ AUDIT_LOG: 'stdout', AUDIT_KEY: KEY_FILE, AUDIT_FAIL: 'maybe' }), /AUDIT_FAIL must be one of closed, open/)
    assert.throws(() => loadConfig({ AUDIT_LOG: 'stdout', AUDIT_KEY: KEY_FILE, AUDIT_CHECKPOINT_SECONDS: '0' }), /between 1 and 86400/)
    assert.equal(loadConfig({}).audit, null)
    const short = join(dir, 'short.key')
    writeFileSync(short, randomBytes(16).toString('base64'))
    assert.throws(() => loadAuditKey(short), /16 bytes; an audit key must have at least 32/)
    assert.throws(() => loadAuditKey('pkcs11:object=audit'), /set PKCS11_MODULE and PKCS11_PIN_FILE too/)
    assert.equal(tool(VERIFY, ['--key', short, 'x.log']).status, 2)
  })

  it('GET /api/audit/checkpoint is 404 without an audit log', async () => {
    const server = await startServer()
    try {
      const response = await server.get('/api/audit/checkpoint')
      assert.equal(response.status, 404)
      assert.match(response.body.detail, /AUDIT_LOG is not set/)
    } finally {
      await server.close()
    }
  })
})

describe('a log of keyed operations', () => {
  const log = newLog()
  const checkpointFile = join(dir, 'checkpoint.json')
  const message = `the order of ${randomBytes(6).toString('hex')}`
  let checkpointCount = 0

  it('writes one chained line per keyed request, with its inputs only as HMACs', async () => {
    const server = await startServer(envFor(log, { AUDIT_CHECKPOINT_LINES: '4' }))
    const ids: string[] = []
    try {
      for (let i = 0; i < 3; i++) {
        const response = await server.post('/api/hmac', { message, keyName: 'orders' })
        assert.equal(response.status, 200)
        ids.push(response.headers.get('x-request-id')!)
      }
      const checked = await server.post('/api/hmac/verify', { message, keyName: 'orders', hmac: 'ab'.repeat(32) })
      assert.equal(checked.status, 200)
      const unknown = await server.post('/api/hmac', { message, keyName: 'nobody' })
      assert.equal(unknown.status, 422)
      const batch = await server.post('/api/hmac', { keyName: 'orders', items: [{ message }, { message: 'two' }] })
      assert.equal(batch.status, 200)
      // The caller's own key is no key the server holds: not audited.
      assert.equal((await server.post('/api/hmac', { message, key: 'c2VjcmV0' })).status, 200)
      const checkpoint = await server.get('/api/audit/checkpoint')
      assert.equal(checkpoint.status, 200)
      assert.match(checkpoint.body.mac, /^hmac-sha256:[0-9a-f]{64}$/)
      writeFileSync(checkpointFile, checkpoint.text)
      checkpointCount = checkpoint.body.count
      assert.ok(checkpointCount >= 4, `a checkpoint every 4 lines: ${checkpoint.text}`)
      assert.match(server.logs(), /"msg":"audit checkpoint"/)
      for (let i = 0; i < 4; i++) assert.equal((await server.post('/api/hmac', { message: `later ${i}`, keyName: 'orders' })).status, 200)
    } finally {
      await server.close()
    }
    const text = readFileSync(log, 'utf8')
    assert.ok(!text.includes(message), 'the message in the clear')
    assert.ok(!text.includes('c2VjcmV0'))
    const all = parsed(log)
    assert.deepEqual(all.map((line) => line.seq), all.map((_, i) => i + 1))
    assert.equal(all[0]!.type, 'start')
    const events = all.filter((line) => line.type === 'event')
    assert.deepEqual(events.slice(0, 3).map((line) => line.requestId), ids)
    assert.deepEqual(events.map((line) => line.operation), ['hmac', 'hmac', 'hmac', 'hmac.verify', 'hmac', 'hmac.batch', 'hmac', 'hmac', 'hmac', 'hmac'])
    assert.deepEqual(events[0], { ...events[0], keyName: 'orders', keyVersion: 1, outcome: 'ok' })
    assert.equal(events[3]!.outcome, 'invalid')
    assert.equal(events[4]!.outcome, 'unknown-key')
    assert.deepEqual([events[5]!.items, events[5]!.keyName, events[5]!.outcome], [2, 'orders', 'ok'])
    const raw = lines(log)
    for (let i = 1; i < all.length; i++) assert.equal(all[i]!.prev, sha256Hex(raw[i - 1]!))
    assert.equal(all.at(-1)!.type, 'checkpoint', 'a checkpoint at close')
  })

  it('audit:hash prints the form the message takes, which finds its lines', () => {
    const hashed = tool(HASH, [message])
    assert.equal(hashed.status, 0, hashed.stderr)
    const form = hashed.stdout.trim()
    assert.match(form, /^hmac-sha256:[0-9a-f]{64}$/)
    assert.equal(lines(log).filter((line) => line.includes(form)).length, 5)
    assert.equal(tool(HASH, [], `${message}\n`).stdout.trim(), form, 'from standard input, less its newline')
    assert.notEqual(tool(HASH, ['--exact'], `${message}\n`).stdout.trim(), form)
  })

  it('audit:verify passes the log, and with the checkpoint', () => {
    const plain = verify(log)
    assert.equal(plain.status, 0, plain.stderr)
    assert.match(plain.stdout, new RegExp(`verified: ${lines(log).length} lines, seq 1 to ${lines(log).length}`))
    const withCheckpoint = verify(log, '--checkpoint', checkpointFile)
    assert.equal(withCheckpoint.status, 0, withCheckpoint.stderr)
    assert.match(withCheckpoint.stderr, /reaches the checkpoint/)
  })

  it('names the line of a changed byte', () => {
    const all = lines(log)
    const target = lineNumberOf(all, (line) => line.type === 'event' && line.operation === 'hmac.verify')
    all[target - 1] = all[target - 1]!.replace('"outcome":"invalid"', '"outcome":"valid!!"')
    const result = verify(write(join(dir, 'edited.log'), all))
    assert.equal(result.status, 1)
    assert.match(result.stderr, new RegExp(`line ${target} \\(seq ${target}\\): its MAC does not match`))
  })

  it('names the place of a removed line', () => {
    const all = lines(log)
    all.splice(5, 1)
    const result = verify(write(join(dir, 'removed.log'), all))
    assert.equal(result.status, 1)
    assert.match(result.stderr, /line 6 \(seq 7\): seq 6 missing before it: 1 line removed/)
  })

  it('names a swapped pair', () => {
    const all = lines(log)
    ;[all[3], all[4]] = [all[4]!, all[3]!]
    const result = verify(write(join(dir, 'swapped.log'), all))
    assert.equal(result.status, 1)
    assert.match(result.stderr, /line 4 \(seq 5\): out of order: seq 5 comes before seq 4, which is at line 5/)
  })

  it('names a line copied in again', () => {
    const all = lines(log)
    all.splice(6, 0, all[2]!)
    const result = verify(write(join(dir, 'copied.log'), all))
    assert.equal(result.status, 1)
    assert.match(result.stderr, /line 7 \(seq 3\): seq 3 again \(already at line 3\)/)
  })

  it('names a line forged without the key', async () => {
    const all = lines(log)
    const previous = parseLine(all[4]!) as ParsedLine
    const forged = await makeLine(auditKeyFromSecret(randomBytes(32)), previous.seq + 1, previous.time, 'event',
      { requestId: 'forged', operation: 'hmac', keyName: 'orders', keyVersion: 1, outcome: 'ok' }, sha256Hex(all[4]!))
    all.splice(5, 1, forged)
    const result = verify(write(join(dir, 'forged.log'), all))
    assert.equal(result.status, 1)
    assert.match(result.stderr, /line 6 \(seq 6\): its MAC does not match: the line was edited, or written without the audit key/)
  })

  it('shows a cut tail only against a checkpoint kept outside the log', () => {
    const all = lines(log)
    const cut = write(join(dir, 'cut.log'), all.slice(0, checkpointCount - 1))
    assert.equal(verify(cut).status, 0, 'a cut at a line boundary leaves a sound chain')
    const result = verify(cut, '--checkpoint', checkpointFile)
    assert.equal(result.status, 1)
    assert.match(result.stderr, new RegExp(`cut short: the checkpoint of .* covers ${checkpointCount} lines, and the log ends at seq ${checkpointCount - 1}`))
    const edited = JSON.parse(readFileSync(checkpointFile, 'utf8')) as { count: number }
    edited.count -= 1
    const forgedCheckpoint = join(dir, 'forged-checkpoint.json')
    writeFileSync(forgedCheckpoint, JSON.stringify(edited))
    assert.match(verify(log, '--checkpoint', forgedCheckpoint).stderr, /the checkpoint's MAC does not match/)
  })

  it('a server refuses to go on with a log under another key', async () => {
    const other = join(dir, 'other-start.key')
    writeFileSync(other, randomBytes(32).toString('base64'))
    await assert.rejects(startServer(envFor(log, { AUDIT_KEY: other })), (error: unknown) =>
      error instanceof ConfigError && /its last line is not under AUDIT_KEY .*move the file away/.test(error.message))
    assert.equal(verify(log).status, 0, 'and writes nothing to it')
  })

  it('refuses the log under another key', () => {
    const other = join(dir, 'other.key')
    writeFileSync(other, randomBytes(32).toString('base64'))
    const result = verify('--key', other, log)
    assert.equal(result.status, 1)
    assert.match(result.stderr, /line 1 \(seq 1\): written under audit key sha256:[0-9a-f]{16}, but the key given is/)
  })
})

describe('other keyed operations', () => {
  it('webhooks signed and checked with a named key, and a pepper rewrap, are lines too', async () => {
    const log = newLog()
    const keysFile = join(dir, 'webhook.keys')
    writeFileSync(keysFile, `orders 1 ${randomBytes(32).toString('base64')}\nhooks 1 ${randomBytes(32).toString('base64')} purpose=webhooks\n`)
    const pepperFile = join(dir, 'pepper.keys')
    writeFileSync(pepperFile, `k1 ${randomBytes(32).toString('base64')}\n`)
    const payload = `{"event":"${randomBytes(6).toString('hex')}"}`
    const server = await startServer(envFor(log, { HMAC_KEYS_FILE: keysFile, PEPPER_KEYS_FILE: pepperFile }))
    try {
      const signed = await server.post('/api/webhooks/sign', { payload, keyName: 'hooks' })
      assert.equal(signed.status, 200, signed.text)
      const checked = await server.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload, headers: signed.body.headers, keyName: 'hooks' })
      assert.equal(checked.status, 200, checked.text)
      assert.equal(checked.body.valid, true)
      assert.equal((await server.post('/api/webhooks/sign', { payload, secret: `whsec_${randomBytes(24).toString('base64')}` })).status, 200, 'the caller\'s own secret: not audited')
      const rewrapped = await server.post('/api/pepper/rewrap', { hash: hashSync('a password', 4) })
      assert.equal(rewrapped.status, 200, rewrapped.text)
    } finally {
      await server.close()
    }
    const events = parsed(log).filter((line) => line.type === 'event')
    assert.deepEqual(events.map((line) => [line.operation, line.keyName, line.keyVersion, line.outcome]), [
      ['webhooks.sign', 'hooks', 1, 'ok'], ['webhooks.verify', 'hooks', 1, 'valid'], ['pepper.rewrap', 'pepper', 'k1', 'ok'],
    ])
    assert.ok(!readFileSync(log, 'utf8').includes(payload.slice(3, -3)))
    assert.equal((events[0]!.inputs as Record<string, string>).payload, tool(HASH, [payload]).stdout.trim())
    assert.equal(verify(log).status, 0)
  })
})

describe('peppered password hashes', () => {
  it('a hash sealed and a hash opened under a pepper key are lines, with the key version and the verdict but no trace of the password', async () => {
    const log = newLog()
    const pepperFile = join(dir, 'pepper-hash.keys')
    writeFileSync(pepperFile, `k7 ${randomBytes(32).toString('base64')}\n`)
    const password = `pw-${randomBytes(9).toString('hex')}`
    const server = await startServer(envFor(log, { PEPPER_KEYS_FILE: pepperFile }))
    try {
      const sealed = await server.post('/api/hash', { input: password, algorithm: 'bcrypt', options: { cost: 4 } })
      assert.equal(sealed.status, 200, sealed.text)
      assert.equal(sealed.body.pepperKey, 'k7')
      const right = await server.post('/api/verify', { input: password, hash: sealed.body.hash })
      assert.equal(right.body.match, true, right.text)
      const wrong = await server.post('/api/verify', { input: `${password}!`, hash: sealed.body.hash })
      assert.equal(wrong.body.match, false, wrong.text)
      // No pepper key used, no line: an opted-out password hash, its check, a digest.
      const plain = await server.post('/api/hash', { input: password, algorithm: 'bcrypt', options: { cost: 4 }, pepper: false })
      assert.equal(plain.status, 200, plain.text)
      assert.equal((await server.post('/api/verify', { input: password, hash: plain.body.hash })).body.match, true)
      assert.equal((await server.post('/api/hash', { input: password, algorithm: 'sha256' })).status, 200)
    } finally {
      await server.close()
    }
    const events = parsed(log).filter((line) => line.type === 'event')
    assert.deepEqual(events.map((line) => [line.operation, line.keyName, line.keyVersion, line.outcome, line.inputs]), [
      ['password.hash', 'pepper', 'k7', 'ok', undefined], ['password.verify', 'pepper', 'k7', 'match', undefined], ['password.verify', 'pepper', 'k7', 'mismatch', undefined],
    ])
    const text = readFileSync(log, 'utf8')
    assert.ok(!text.includes(password), 'the password is not in the log')
    assert.ok(!text.includes(tool(HASH, [password]).stdout.trim().slice('hmac-sha256:'.length)), 'nor its MAC')
    assert.equal(verify(log).status, 0)
  })
})

describe('the key ring', () => {
  it('a reload that puts new keys in force is a keys.reload line, with names and versions only', async () => {
    const log = newLog()
    const keysFile = join(dir, 'reloaded.keys')
    const secrets = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')]
    writeFileSync(keysFile, `orders 1 ${secrets[0]}\n`)
    const server = await startServer(envFor(log, { HMAC_KEYS_FILE: keysFile }))
    try {
      writeFileSync(keysFile, `orders 1 ${secrets[0]}\norders 2 ${secrets[1]}\n`)
      process.kill(process.pid, 'SIGHUP')
      const deadline = Date.now() + 10_000
      while (!readFileSync(log, 'utf8').includes('keys.reload') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    } finally {
      await server.close()
    }
    const reload = parsed(log).find((line) => line.operation === 'keys.reload')
    assert.deepEqual(reload && [reload.outcome, reload.source, reload.currentVersions, reload.keys], ['ok', 'hmac-keys', 'orders:2', 1])
    const text = readFileSync(log, 'utf8')
    assert.ok(!secrets.some((secret) => text.includes(secret)))
    assert.equal(verify(log).status, 0)
  })
})

describe('the writer', () => {
  it('with a queue of 2, a burst of 200 lines waits for room, and every line is written, in order', async () => {
    const log = newLog()
    const messages: string[] = []
    const writer = new AuditWriter({
      sink: { kind: 'file', path: log }, key: loadAuditKey(KEY_FILE), queueMax: 2, checkpointLines: 50, checkpointSeconds: 60,
      log: { info: () => {}, error: (_fields, message) => { messages.push(message) } },
    })
    await writer.start()
    let most = 0
    await Promise.all(Array.from({ length: 200 }, async (_, i) => {
      most = Math.max(most, writer.status.queued)
      await writer.append('event', { operation: 'test', outcome: 'ok', n: i })
    }))
    await writer.close()
    assert.ok(most <= 2, `queued ${most}`)
    assert.deepEqual(messages, [])
    const events = parsed(log).filter((line) => line.type === 'event')
    assert.deepEqual(events.map((line) => line.n), Array.from({ length: 200 }, (_, i) => i))
    // At start, after each 50 or so of the 201 other lines (the start line counts; lines written
    // together are not split), and at close.
    const checkpoints = parsed(log).filter((line) => line.type === 'checkpoint').map((line) => line.count as number)
    assert.ok(checkpoints.length >= 1 + 3 + 1 && checkpoints.length <= 1 + 4 + 1, String(checkpoints))
    assert.equal(checkpoints.at(-1), parsed(log).length - 1)
    assert.equal(verify(log).status, 0)
  })
})

describe('the writer: groups and rotation', () => {
  const quiet = { info: () => {}, error: () => {} }
  const openWriter = async (log: string): Promise<AuditWriter> => {
    const writer = new AuditWriter({ sink: { kind: 'file', path: log }, key: loadAuditKey(KEY_FILE), queueMax: 1024, checkpointLines: 1000, checkpointSeconds: 60, log: quiet })
    await writer.start()
    await writer.append('event', { operation: 'test', outcome: 'ok', n: -1 })
    return writer
  }

  it('lines asked for in one callback are written and settled before the loop moves on (no turn added to the answers)', async () => {
    const log = newLog()
    const writer = await openWriter(log)
    const settled: number[] = []
    let asked: Promise<void>[] = []
    // The lines are asked for in a setImmediate callback, as plugins/batched-writes.ts lets a turn's
    // answers through the audit's hook; the next callback of the loop (set first, so it would run
    // before any write scheduled for the next turn) finds them written and settled.
    const seen = await new Promise<number[]>((resolve) => {
      setImmediate(() => {
        setImmediate(() => { resolve([...settled]) })
        asked = [0, 1, 2].map((n) => writer.append('event', { operation: 'test', outcome: 'ok', n }).then(() => { settled.push(n) }))
      })
    })
    assert.deepEqual(seen, [0, 1, 2])
    assert.deepEqual(parsed(log).filter((line) => line.type === 'event').map((line) => line.n), [-1, 0, 1, 2])
    await Promise.all(asked)
    await writer.close()
    assert.equal(verify(log).status, 0)
  })

  for (const mode of ['copytruncate', 'create'] as const) {
    it(`logrotate ${mode} between two lines of one group: both lines go to the new file, after its rotate line`, async () => {
      const log = newLog()
      const old = `${log}.1`
      const writer = await openWriter(log)
      const first = writer.append('event', { operation: 'test', outcome: 'ok', n: 0 })
      // In the same run, so the two lines are one group (one write): the rotation comes between them.
      logrotate(mode, log, old)
      const second = writer.append('event', { operation: 'test', outcome: 'ok', n: 1 })
      await Promise.all([first, second])
      await writer.close()
      assert.deepEqual(parsed(old).filter((line) => line.type === 'event').map((line) => line.n), [-1])
      const now = parsed(log)
      assert.deepEqual(now.slice(0, 3).map((line) => [line.type, line.reason ?? line.n]), [['rotate', mode === 'copytruncate' ? 'truncated' : 'replaced'], ['event', 0], ['event', 1]])
      assert.equal(now[0]!.prev, sha256Hex(lines(old).at(-1)!))
      const both = verify(old, log)
      assert.equal(both.status, 0, both.stderr)
    })
  }

  it('an event whose details take a line\'s own name is refused, and the log goes on', async () => {
    const log = newLog()
    const audit = new AuditLog({ sink: { kind: 'file', path: log }, key: loadAuditKey(KEY_FILE), fail: 'closed', queueMax: 16, checkpointLines: 1000, checkpointSeconds: 60, log: quiet })
    await audit.start()
    await assert.rejects(audit.record({ operation: 'test', outcome: 'ok', details: { seq: 1 } }), /may not use a line's own names/)
    await audit.record({ operation: 'test', outcome: 'ok', details: { items: 2 } })
    await audit.close()
    assert.deepEqual(parsed(log).filter((line) => line.type === 'event').map((line) => line.items), [2])
    assert.equal(verify(log).status, 0)
  })
})

describe('AUDIT_LOG=stdout', () => {
  it('writes whole audit lines beside the process log, which verify once split out', async () => {
    const hashd = await startHashd({ AUDIT_LOG: 'stdout', AUDIT_KEY: KEY_FILE, HMAC_KEYS_FILE })
    try {
      const statuses = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await hashd.post('/api/hmac', { message: `m${i}`, keyName: 'orders' })).status))
      assert.deepEqual(new Set(statuses), new Set([200]))
    } finally {
      await hashd.stop()
    }
    const output = hashd.stdout().split('\n')
    const audit = output.filter((line) => line.startsWith('{"v":1,"seq":'))
    assert.ok(output.some((line) => line.includes('"msg":"audit checkpoint"')), 'the process log is there too')
    assert.equal(audit.filter((line) => line.includes('"operation":"hmac"')).length, 30)
    const result = verify(write(join(dir, 'stdout.log'), audit))
    assert.equal(result.status, 0, result.stderr)
  })
})

describe('a crash', () => {
  it('SIGKILL in mid-burst: every answered request is in the log, which verifies to its last whole line', async () => {
    const log = newLog()
    const hashd = await startHashd(envFor(log))
    const answered = await killInMidBurst(hashd, 'orders')
    const recorded = new Set(parsed(log).map((line) => line.requestId))
    assert.deepEqual(answered.filter((id) => !recorded.has(id)), [], 'answered without a line')
    assert.equal(verify(log).status, 0)

    // A power cut can leave half a line: the log still verifies up to the line before, with a note.
    const whole = lines(log)
    appendFileSync(log, whole.at(-1)!.slice(0, 40))
    const torn = verify(log)
    assert.equal(torn.status, 0, torn.stderr)
    assert.match(torn.stderr, new RegExp(`line ${whole.length + 1} is torn \\(40 bytes without a newline`))
    // The next start ends the fragment and declares it; the chain goes on from the last whole line.
    const again = await startHashd(envFor(log))
    assert.equal((await again.post('/api/hmac', { message: 'after', keyName: 'orders' })).status, 200)
    await again.stop()
    const after = verify(log)
    assert.equal(after.status, 0, after.stderr)
    assert.match(after.stderr, new RegExp(`line ${whole.length + 1} is torn \\(40 bytes: a write cut by a crash, declared by the start line after it\\)`))
    const start = parseLine(lines(log)[whole.length + 1]!) as ParsedLine
    assert.deepEqual([start.type, start.torn, start.prev], ['start', { bytes: 40 }, sha256Hex(whole.at(-1)!)])
  })
})

describe('when the log cannot be written', () => {
  it('AUDIT_FAIL=closed: keyed operations answer 503 audit-unavailable while the folder is gone, and recover', async () => {
    const folder = join(dir, 'gone')
    mkdirSync(folder)
    const log = join(folder, 'audit.log')
    const server = await startServer(envFor(log))
    try {
      assert.equal((await server.post('/api/hmac', { message: 'one', keyName: 'orders' })).status, 200)
      rmSync(folder, { recursive: true })
      const refused = await server.post('/api/hmac', { message: 'two', keyName: 'orders' })
      assert.equal(refused.status, 503)
      assert.equal(refused.body.type, 'urn:hashd:problem:audit-unavailable')
      assert.equal(refused.headers.get('retry-after'), '1')
      assert.ok(!refused.text.includes('hmac"'), 'no result with the refusal')
      assert.equal((await server.post('/api/hmac/verify', { message: 'two', keyName: 'orders', hmac: 'ab'.repeat(32) })).status, 503)
      const batch = await server.post('/api/hmac', { keyName: 'orders', items: [{ message: 'two' }] })
      assert.equal(batch.status, 503, 'a batch, whose answer is written as it is made, waits for its line too')
      assert.ok(!batch.text.includes('results'))
      assert.equal((await server.post('/api/hmac', { message: 'two', key: 'c2VjcmV0' })).status, 200, 'no server key, no audit')
      assert.equal(server.app.audit?.failing, true)
      assert.deepEqual((await server.get('/api/health')).body, { status: 'ok', degraded: true, rateLimitStore: 'off', replayStore: 'memory', auditLog: 'failing' })
      assert.match(server.logs(), /audit log: a line could not be written \(ENOENT\)/)
      mkdirSync(folder)
      assert.equal((await server.post('/api/hmac', { message: 'three', keyName: 'orders' })).status, 200)
      assert.equal(server.app.audit?.failing, false)
      assert.deepEqual((await server.get('/api/health')).body, { status: 'ok', degraded: false, rateLimitStore: 'off', replayStore: 'memory', auditLog: 'ok' })
      assert.match(server.logs(), /audit log: writing again/)
    } finally {
      await server.close()
    }
    const [rotate, event] = parsed(log)
    assert.deepEqual([rotate!.type, rotate!.reason, event!.outcome], ['rotate', 'missing', 'ok'])
    const result = verify(log)
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stderr, /begins at seq 4: lines 1 to 3 are in an earlier \(rotated\) file/)
  })

  it('AUDIT_FAIL=open: keyed operations go on, and the failure is logged', async () => {
    const folder = join(dir, 'open')
    mkdirSync(folder)
    const server = await startServer(envFor(join(folder, 'audit.log'), { AUDIT_FAIL: 'open' }))
    try {
      rmSync(folder, { recursive: true })
      assert.equal((await server.post('/api/hmac', { message: 'two', keyName: 'orders' })).status, 200)
      assert.match(server.logs(), /audit log: a line could not be written/)
    } finally {
      await server.close()
    }
  })

  const mountPoint = join(dir, 'tmpfs')
  mkdirSync(mountPoint)
  const mounted = process.getuid?.() === 0 && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint], { stdio: 'ignore' }).status === 0
  after(() => { if (mounted) spawnSync('umount', [mountPoint], { stdio: 'ignore' }) })
  it('AUDIT_FAIL=closed on a full filesystem: 503 until there is room, and the log keeps whole lines', {
    skip: mounted ? false : skipBecause('cannot mount a 64 KiB tmpfs here (needs root and mount(8) in this container)'),
  }, async () => {
    const log = join(mountPoint, 'audit.log')
    const filler = join(mountPoint, 'filler')
    const server = await startServer(envFor(log))
    try {
      assert.equal((await server.post('/api/hmac', { message: 'one', keyName: 'orders' })).status, 200)
      // Fill the filesystem; the log's own last page still has room for a few lines, which fill it.
      try { writeFileSync(filler, Buffer.alloc(64 * 1024)) } catch { /* ENOSPC: full, as wanted */ }
      const statuses: number[] = []
      for (let i = 0; i < 100 && !statuses.includes(503); i++) statuses.push((await server.post('/api/hmac', { message: `two ${i}`, keyName: 'orders' })).status)
      assert.equal(statuses.at(-1), 503, `never refused: ${statuses.join(' ')}`)
      assert.match(server.logs(), /audit log: a line could not be written \(ENOSPC\)/)
      rmSync(filler)
      assert.equal((await server.post('/api/hmac', { message: 'three', keyName: 'orders' })).status, 200)
    } finally {
      await server.close()
    }
    const result = verify(log)
    assert.equal(result.status, 0, result.stderr)
    assert.doesNotMatch(result.stderr, /torn/)
  })
})

describe('rotation', () => {
  for (const mode of ['copytruncate', 'create'] as const) {
    it(`logrotate ${mode}: the new file begins with a rotate line chained to the old file's head`, async () => {
      const log = newLog()
      const old = `${log}.1`
      const server = await startServer(envFor(log))
      try {
        for (let i = 0; i < 3; i++) assert.equal((await server.post('/api/hmac', { message: `before ${i}`, keyName: 'orders' })).status, 200)
        logrotate(mode, log, old)
        if (mode === 'create') process.kill(process.pid, 'SIGHUP')
        for (let i = 0; i < 3; i++) assert.equal((await server.post('/api/hmac', { message: `after ${i}`, keyName: 'orders' })).status, 200)
      } finally {
        await server.close()
      }
      const first = parsed(log)[0]!
      assert.deepEqual([first.type, first.reason], ['rotate', mode === 'copytruncate' ? 'truncated' : 'replaced'])
      assert.equal(first.prev, sha256Hex(lines(old).at(-1)!))
      const both = verify(old, log)
      assert.equal(both.status, 0, both.stderr)
      assert.match(both.stdout, /verified: \d+ lines, seq 1 to/)
      assert.match(verify(log).stderr, /the log begins at seq/)
      const reversed = verify(log, old)
      assert.equal(reversed.status, 1)
    })
  }
})
