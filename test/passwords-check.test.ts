/**
 * POST /api/passwords/check (NIST SP 800-63B-4 §3.1.1.2): the length policy in code points after
 * NFKC (counted by Python's unicodedata as the reference), no composition rules, the built-in
 * common list read from @zxcvbn-ts/language-common itself, context words and their derivatives,
 * the organization's blocklist reloaded while running, the breached-password store, what happens
 * when the store cannot be read (PASSWORD_SCREENING_FAIL), bad input, and the password never in
 * an answer or a log line.
 */
import assert from 'node:assert/strict'
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { dictionary } from '@zxcvbn-ts/language-common'
import { count } from '../src/screening/screen.js'
import { corpus, store } from './helpers/pwned.js'
import { metricValue, startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-check-'))
const cleanups = [dir]
after(() => { for (const path of cleanups) rmSync(path, { recursive: true, force: true }) })

const codes = (body: { reasons: Array<{ code: string }> }) => body.reasons.map((reason) => reason.code)
/** A passphrase of the corpora's known passwords (scripts/pwned-corpus.ts), in the store with the count 384. */
const KNOWN = 'correct horse battery staple'
/** A long passphrase in no list. */
const GOOD = 'violet tractor humming under seven lanterns'

describe('POST /api/passwords/check', () => {
  let server: TestServer
  let storeFile: string
  let blocklist: string
  before(async () => {
    const source = await corpus({ hashes: 3000, seed: 41 })
    cleanups.push(source.dir)
    storeFile = join(dir, 'check.store')
    store(source.dir, storeFile)
    blocklist = join(dir, 'blocklist.txt')
    writeFileSync(blocklist, '# words of our own\nAcmeCorp\n  roadrunner  \n\n')
    server = await startServer({ PWNED_STORE: storeFile, PASSWORD_BLOCKLIST_FILE: blocklist })
  })
  after(async () => { await server?.close() })

  const check = (password: string, context?: string[]) => server.post('/api/passwords/check', { password, ...(context ? { context } : {}) })

  it('accepts a long passphrase with no composition rules, and says what it compared', async () => {
    for (const password of [GOOD, 'x'.repeat(15) + 'qzv', 'só minúsculas e espaços aqui']) {
      const { status, body } = await check(password)
      assert.equal(status, 200)
      assert.equal(body.acceptable, true, password)
      assert.deepEqual(body.reasons, [])
      assert.deepEqual(body.checked, ['length', 'common', 'blocklist', 'breached'])
      assert.equal(body.breachCount, 0)
      assert.deepEqual(body.warnings, [])
    }
  })

  it('needs 15 characters and allows 256 by default, counted in code points after NFKC as Python counts them', { skip: skipUnless('python3') }, async () => {
    const samples = ['ab', 'ﬁﬁﬁﬁﬁﬁﬁ', '𝒜𝒷𝒸𝒹𝑒𝒻ℊ𝒽𝒾𝒿𝓀𝓁', '😀😀😀😀😀😀😀😀😀😀😀😀😀😀', 'e\u0301'.repeat(14), 'ᄀ'.repeat(14) + 'ᅡ', 'ｆｕｌｌ', 'z'.repeat(257)]
    const lengths = JSON.parse(python('import json, sys, unicodedata\nprint(json.dumps([len(unicodedata.normalize("NFKC", s)) for s in json.loads(sys.stdin.read())]))', [], JSON.stringify(samples))) as number[]
    for (const [index, password] of samples.entries()) {
      const length = lengths[index] as number
      const { body } = await check(password)
      const short = body.reasons.find((reason: { code: string }) => reason.code === 'too-short')
      const long = body.reasons.find((reason: { code: string }) => reason.code === 'too-long')
      assert.equal(short !== undefined, length < 15, `${password}: ${length}`)
      assert.equal(long !== undefined, length > 256, `${password}: ${length}`)
      if (short) assert.match(short.message, new RegExp(`^Use at least 15 characters; this password has ${length}\\.`))
      if (long) assert.match(long.message, new RegExp(`^Use at most 256 characters; this password has ${length}\\.`))
    }
    assert.equal((await check('y'.repeat(64) + ' and more')).body.acceptable, true, 'at least 64 allowed')
  })

  it('refuses every entry of @zxcvbn-ts/language-common\'s list, in any case, in compatibility forms, and with digits or symbols added', async () => {
    const list = dictionary['passwords-common']
    // Every entry long enough to pass the length rule, and a spread of the others.
    const samples = [...list.filter((entry) => entry.length >= 15), ...list.filter((_, index) => index % 2500 === 0)]
    for (const entry of samples) {
      assert.ok(codes((await check(entry)).body).includes('common'), entry)
    }
    for (const dressed of ['PASSWORD', 'Password2024!!!!', '!!!iloveyou123456', 'ｐａｓｓｗｏｒｄ１２３４５６７８', 'Dragon_1234567890']) {
      const { body } = await check(dressed)
      assert.ok(codes(body).includes('common'), dressed)
      assert.match(body.reasons.find((reason: { code: string }) => reason.code === 'common').message, /one of the most common passwords/)
    }
    // Whole-password comparison: a passphrase containing a listed word is not refused.
    assert.equal((await check('dragon monkey football sunshine')).body.acceptable, true)
  })

  it('refuses the user\'s own words and their derivatives, not passwords that merely contain them', async () => {
    const context = ['alice.smith', 'alice.smith@example-mail.org', 'Example Mail']
    for (const password of ['alice.smith@example-mail.org', 'AliceSmith2024!!', '2024alicesmith!!!', 'Alice.Smith.1999', 'example-mail1234567', 'smith123456789012']) {
      const { body } = await check(password, context)
      assert.ok(codes(body).includes('context'), password)
      assert.match(body.reasons.find((reason: { code: string }) => reason.code === 'context').message, /user name, e-mail address or the name of this service/)
    }
    const { body } = await check('smith family vacation photos', context)
    assert.equal(body.acceptable, true)
    assert.ok(body.checked.includes('context'))
  })

  it('refuses the organization\'s words, and picks up a change to PASSWORD_BLOCKLIST_FILE', async () => {
    for (const password of ['acmecorp', 'AcmeCorp2024!!!!!', 'ROADRUNNER!!!!!!!!']) {
      const reason = (await check(password)).body.reasons.find((each: { code: string }) => each.code === 'context')
      assert.ok(reason, password)
      assert.match(reason.message, /a word this organization asks you not to use/)
    }
    assert.equal((await check('Widgetmaster2024!!')).body.acceptable, true)
    appendFileSync(blocklist, 'widgetmaster\n')
    const deadline = Date.now() + 15_000
    while (!codes((await check('Widgetmaster2024!!')).body).includes('context')) {
      if (Date.now() > deadline) assert.fail('the blocklist was not reloaded')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.ok(await metricValue(server, 'hashd_file_loads_total{source="password-blocklist",outcome="ok"}') >= 2)
  })

  it('reports breached passwords with their count, never echoing the password in the answer or the logs', async () => {
    const password = 'correct horse battery staple'
    const { text, body } = await check(password)
    assert.deepEqual(codes(body), ['breached'])
    assert.equal(body.breachCount, 384)
    assert.match(body.reasons[0].message, /has appeared 384 times in data breaches \(Pwned Passwords\)/)
    for (const part of [password, 'horse', 'correct horse']) {
      assert.ok(!text.includes(part))
      assert.ok(!server.logs().includes(part), `logs hold "${part}"`)
    }
  })

  it('refuses a password over 4,096 characters, a lone surrogate, and too many context words, with 400 problems', async () => {
    const long = await check('a'.repeat(4097))
    assert.equal(long.status, 400)
    assert.equal(long.body.errors[0].pointer, '/body/password')
    assert.ok(!long.text.includes('aaaaaaaa'))
    const surrogate = await server.post('/api/passwords/check', '{"password":"abc\\ud800def-long-enough"}')
    assert.equal(surrogate.status, 400)
    assert.equal(surrogate.body.errors[0].pointer, '/body/password')
    const words = await check(GOOD, Array.from({ length: 17 }, (_, index) => `w${index}`))
    assert.equal(words.status, 400)
    assert.equal(words.body.errors[0].pointer, '/body/context')
    assert.equal((await server.post('/api/passwords/check', { password: GOOD, extra: 1 })).status, 400)
  })
})

describe('PASSWORD_MIN_LENGTH and PASSWORD_MAX_LENGTH', () => {
  it('take NIST\'s bounds: 8 for a password that is one factor of several, at least 64 allowed', async () => {
    const server = await startServer({ PASSWORD_MIN_LENGTH: '8', PASSWORD_MAX_LENGTH: '64' })
    try {
      assert.equal((await server.post('/api/passwords/check', { password: 'zq7-vbnx' })).body.acceptable, true)
      assert.deepEqual(codes((await server.post('/api/passwords/check', { password: 'k'.repeat(65) })).body), ['too-long'])
    } finally {
      await server.close()
    }
    await assert.rejects(startServer({ PASSWORD_MIN_LENGTH: '6' }), /PASSWORD_MIN_LENGTH must be between 8 and 64, got 6/)
    await assert.rejects(startServer({ PASSWORD_MAX_LENGTH: '32' }), /PASSWORD_MAX_LENGTH must be between 64 and 4096, got 32/)
    await assert.rejects(startServer({ PASSWORD_SCREENING: 'strict' }), /PASSWORD_SCREENING must be one of off, warn, reject/)
    await assert.rejects(startServer({ PASSWORD_BLOCKLIST_FILE: join(dir, 'missing.txt') }), /PASSWORD_BLOCKLIST_FILE .*missing\.txt cannot be read \(ENOENT\)/)
  })
})

describe('a store that cannot be read (PASSWORD_SCREENING_FAIL)', () => {
  let storeFile: string
  before(async () => {
    const source = await corpus({ hashes: 1000, seed: 51 })
    cleanups.push(source.dir)
    storeFile = join(dir, 'failing.store')
    store(source.dir, storeFile)
  })

  /** A server whose store is truncated in place after it opened it: every read then fails. */
  async function failing(env: Record<string, string>): Promise<TestServer> {
    const file = join(dir, `failing-${env.PASSWORD_SCREENING_FAIL ?? 'default'}.store`)
    writeFileSync(file, (await import('node:fs')).readFileSync(storeFile))
    const server = await startServer({ PWNED_STORE: file, ...env })
    truncateSync(file, 300)
    return server
  }

  it('open (the default): answers from the lists it has, says the store was not compared, and logs the failure', async () => {
    const server = await failing({})
    try {
      // A password in the corpus: its prefix has records to read (an empty prefix needs no read).
      const { status, body } = await server.post('/api/passwords/check', { password: KNOWN })
      assert.equal(status, 200)
      assert.equal(body.acceptable, true)
      assert.equal(body.breachCount, undefined)
      assert.deepEqual(body.checked, ['length', 'common'])
      assert.match(body.warnings[0], /the breached-password store could not be read, so the password was not compared with it \(PASSWORD_SCREENING_FAIL=open\)/)
      assert.deepEqual(codes((await server.post('/api/passwords/check', { password: 'password' })).body), ['too-short', 'common'])
      assert.match(server.logs(), /breached-password store read failed/)
      assert.match(await (await server.fetch('/metrics')).text(), /hashd_pwned_store_reads_total\{kind="sha1",outcome="failed"\} [1-9]/)
      assert.equal((await server.get('/range/5BAA6')).status, 503)
    } finally {
      await server.close()
    }
  })

  it('closed: 503 screening-unavailable with Retry-After', async () => {
    const server = await failing({ PASSWORD_SCREENING_FAIL: 'closed' })
    try {
      const { status, headers, body } = await server.post('/api/passwords/check', { password: KNOWN })
      assert.equal(status, 503)
      assert.equal(body.type, 'urn:hashd:problem:screening-unavailable')
      assert.equal(headers.get('retry-after'), '5')
    } finally {
      await server.close()
    }
  })
})

describe('breach counts in messages', () => {
  it('are grouped by thousands as Intl writes them in English, without loading ICU in the server', () => {
    for (const value of [0, 1, 999, 1_000, 12_345, 999_999, 1_000_000, 3_861_493, 52_256_179, 2_147_483_648, Number.MAX_SAFE_INTEGER]) {
      assert.equal(count(value), new Intl.NumberFormat('en').format(value))
    }
  })
})
