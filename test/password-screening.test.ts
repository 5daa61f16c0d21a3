/**
 * Screening when hashing (PASSWORD_SCREENING=off|warn|reject) on /api/hash and on /api/verify with
 * upgrade, and Unicode normalization before hashing (PASSWORD_NORMALIZATION): new hashes are of
 * the NFKC form (checked with Python's unicodedata and bcrypt), hashes made of the form as typed
 * still verify and are upgraded to the NFKC form.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import { startServer, tasksStarted, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const BCRYPT = { algorithm: 'bcrypt', options: { cost: 4 } }
const GOOD = 'violet tractor humming under seven lanterns'
const codes = (screened: { reasons: Array<{ code: string }> }) => screened.reasons.map((reason) => reason.code)

async function withServer(env: Record<string, string>, body: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startServer(env)
  try { await body(server) } finally { await server.close() }
}

describe('PASSWORD_SCREENING on /api/hash', () => {
  it('warn (the default): hashes, and the answer says what screening found', async () => {
    await withServer({}, async (server) => {
      const weak = await server.post('/api/hash', { input: 'password', ...BCRYPT })
      assert.equal(weak.status, 200)
      assert.match(weak.body.hash, /^\$2b\$04\$/)
      assert.equal(weak.body.screening.acceptable, false)
      assert.deepEqual(codes(weak.body.screening), ['too-short', 'common'])
      const good = await server.post('/api/hash', { input: GOOD, ...BCRYPT })
      assert.deepEqual(good.body.screening, { acceptable: true, reasons: [], checked: ['length', 'common'], warnings: [] })
      // Digests are not passwords; bytes given as hex or base64 are not text: neither is screened.
      assert.equal((await server.post('/api/hash', { input: 'password', algorithm: 'sha256' })).body.screening, undefined)
      assert.equal((await server.post('/api/hash', { input: Buffer.from('password').toString('hex'), inputEncoding: 'hex', ...BCRYPT })).body.screening, undefined)
    })
  })

  it('reject: 422 password-rejected with the reasons, no hash made; context words count', async () => {
    await withServer({ PASSWORD_SCREENING: 'reject' }, async (server) => {
      const before = await tasksStarted(server)
      const refused = await server.post('/api/hash', { input: 'Password123456789', algorithm: 'argon2id' })
      assert.equal(refused.status, 422)
      assert.equal(refused.body.type, 'urn:hashd:problem:password-rejected')
      assert.deepEqual(codes(refused.body), ['common'])
      assert.match(refused.body.detail, /PASSWORD_SCREENING=reject.*: common\. Ask the user for another/)
      assert.ok(!refused.text.includes('Password123456789'))
      const context = await server.post('/api/hash', { input: 'alice.wonder.2024!', context: ['alice.wonder@example.org'], ...BCRYPT })
      assert.equal(context.status, 422)
      assert.deepEqual(codes(context.body), ['context'])
      assert.equal(await tasksStarted(server), before, 'no hashing work began')
      const good = await server.post('/api/hash', { input: GOOD, context: ['alice'], ...BCRYPT })
      assert.equal(good.status, 200)
      assert.equal(good.body.screening.acceptable, true)
      const digest = await server.post('/api/hash', { input: 'x', algorithm: 'sha256', context: ['alice'] })
      assert.equal(digest.status, 400)
      assert.equal(digest.body.errors[0].pointer, '/body/context')
    })
  })

  it('off: no screening at all', async () => {
    await withServer({ PASSWORD_SCREENING: 'off' }, async (server) => {
      const weak = await server.post('/api/hash', { input: 'password', ...BCRYPT })
      assert.equal(weak.status, 200)
      assert.equal(weak.body.screening, undefined)
    })
  })
})

describe('PASSWORD_SCREENING on /api/verify with upgrade', () => {
  const md5 = (text: string) => createHash('md5').update(text).digest('hex')

  it('warn: the match is upgraded and the answer carries the screening of the lists (not the length rules)', async () => {
    await withServer({}, async (server) => {
      const { body } = await server.post('/api/verify', { input: 'dragon', hash: md5('dragon'), upgrade: true })
      assert.equal(body.match, true)
      assert.ok(body.newHash)
      assert.deepEqual(codes(body.screening), ['common'])
      assert.deepEqual(body.screening.checked, ['common'])
      // Without upgrade, or on a mismatch, nothing is screened.
      assert.equal((await server.post('/api/verify', { input: 'dragon', hash: md5('dragon') })).body.screening, undefined)
      assert.equal((await server.post('/api/verify', { input: 'dragon', hash: md5('other'), upgrade: true })).body.screening, undefined)
    })
  })

  it('reject: the match stands, no newHash is made of an unacceptable password, and a warning says to ask for a new one', async () => {
    await withServer({ PASSWORD_SCREENING: 'reject' }, async (server) => {
      const { status, body } = await server.post('/api/verify', { input: 'dragon', hash: md5('dragon'), upgrade: true })
      assert.equal(status, 200)
      assert.equal(body.match, true)
      assert.equal(body.rehashRecommended, true)
      assert.equal(body.newHash, undefined)
      assert.match(body.warnings.at(-1), /^no newHash: this password is not acceptable \(common\) and PASSWORD_SCREENING=reject makes no new hash of it/)
      const good = await server.post('/api/verify', { input: GOOD, hash: md5(GOOD), upgrade: true })
      assert.ok(good.body.newHash)
      assert.equal(good.body.screening.acceptable, true)
    })
  })
})

describe('Unicode normalization before hashing (NFKC)', () => {
  // Full-width letters, a ligature and a decomposed accent: three passwords whose NFKC form differs.
  const typed = ['ｐａｓｓｗｏｒｄ　ｆｕｌｌ　ｗｉｄｔｈ　ｏｎｅ', 'ﬁne ﬂowers in the oﬃce today', 'cafe\u0301 au lait with sugar']

  it('hashes the NFKC form: Python\'s bcrypt verifies it with unicodedata\'s NFKC, not with the text as typed', { skip: skipUnless('python3', 'python3-bcrypt') }, async () => {
    await withServer({}, async (server) => {
      const hashes: string[] = []
      for (const password of typed) hashes.push((await server.post('/api/hash', { input: password, ...BCRYPT })).body.hash)
      const verdicts = JSON.parse(python(`import bcrypt, json, sys, unicodedata
pairs = json.loads(sys.stdin.read())
print(json.dumps([[bcrypt.checkpw(unicodedata.normalize("NFKC", p).encode(), h.encode()), bcrypt.checkpw(p.encode(), h.encode())] for p, h in pairs]))`, [], JSON.stringify(typed.map((password, index) => [password, hashes[index]])))) as Array<[boolean, boolean]>
      assert.deepEqual(verdicts, typed.map(() => [true, false]))
      // hashd verifies either form the user types.
      for (const [index, password] of typed.entries()) {
        assert.equal((await server.post('/api/verify', { input: password, hash: hashes[index] })).body.match, true)
        assert.equal((await server.post('/api/verify', { input: password.normalize('NFKC'), hash: hashes[index] })).body.match, true)
      }
    })
  })

  it('still verifies a hash made of the text as typed (PASSWORD_NORMALIZATION=none, or an older hashd), and upgrades it to the NFKC form', async () => {
    const legacy: string[] = []
    await withServer({ PASSWORD_NORMALIZATION: 'none' }, async (server) => {
      for (const password of typed) legacy.push((await server.post('/api/hash', { input: password, algorithm: 'bcrypt', options: { cost: 12 } })).body.hash)
      // With normalization off, the NFKC form is another password.
      assert.equal((await server.post('/api/verify', { input: typed[0]!.normalize('NFKC'), hash: legacy[0] })).body.match, false)
    })
    await withServer({ PASSWORD_ALGORITHM: 'bcrypt', PASSWORD_OPTIONS: 'cost=12' }, async (server) => {
      for (const [index, password] of typed.entries()) {
        const { body } = await server.post('/api/verify', { input: password, hash: legacy[index], upgrade: true })
        assert.equal(body.match, true)
        assert.equal(body.rehashRecommended, true)
        assert.match(body.reason, /made from the password as typed, not its NFKC form/)
        assert.ok(body.newHash)
        const again = await server.post('/api/verify', { input: password.normalize('NFKC'), hash: body.newHash, upgrade: true })
        assert.equal(again.body.match, true)
        assert.equal(again.body.rehashRecommended, false)
      }
    })
  })
})
