/**
 * Cost caps for every password family, read from the hash (or the options) and refused with 422
 * before any work is queued; malformed hashes are 422 too. Default caps (src/config.ts): bcrypt
 * cost 14, argon2 256 MiB / t 10 / p 16, scrypt-family memory 256 MiB (128·N·r) and p 16, PBKDF2
 * 2,000,000 iterations, SHA-crypt rounds 10,000,000 (which also bounds phpass, Drupal 7 and BSDi).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, tasksStarted, type TestServer } from './helpers/server.js'

const H43 = 'kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D'
const H86 = 'svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1'

/** Each hash asks for far more work than the cap allows; computing any of them would take minutes. */
const overCap: Array<[family: string, hash: string]> = [
  ['bcrypt', '$2b$31$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
  ['argon2id', '$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4'],
  ['scrypt ($scrypt$)', '$scrypt$ln=30,r=8,p=1$U29kaXVtQ2hsb3JpZGU$cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofI'],
  // $7$: log2 N = 22 ('K'), r = 8: 4 GiB.
  ['scrypt ($7$)', `$7$K6..../....SodiumChloride$${H43}`],
  ['pbkdf2-sha256', '$pbkdf2-sha256$999999999$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ'],
  ['sha256-crypt', `$5$rounds=999999999$saltstring$${H43}`],
  ['sha512-crypt', `$6$rounds=999999999$saltstring$${H86}`],
  // yescrypt parameter field "jKT": flavor 47, log2 N = 23, r = 32: 32 GiB.
  ['yescrypt', `$y$jKT$LdJMENpBABJJ3hIHjB1Bi.$${H43}`],
  ['gost-yescrypt', `$gy$jKT$LdJMENpBABJJ3hIHjB1Bi.$${H43}`],
  // "j9T" = 16 MiB, then "have" = 1 ('.') announcing p, and p = 23 ('J' + the minimum of 2): above 16.
  ['yescrypt (p)', `$y$j9T.J$LdJMENpBABJJ3hIHjB1Bi.$${H43}`],
  // 'S' = 2^30 iterations.
  ['phpass', '$P$S12345678L6Lpt4BxNotVIMILOa9u81'],
  ['drupal7', '$S$S20340258nzjDWpoQthrdNTR02f0pmev0K/5/Nx80WSkOQcPEQRh'],
  // 'zzzz' = 2^24 - 1 rounds.
  ['bsdi-crypt', '_zzzzCCCCXBrJUJV154M'],
  ['ldap-crypt', `{CRYPT}$6$rounds=999999999$saltstring$${H86}`],
]

const overCapOptions: Array<[algorithm: string, options: Record<string, number>]> = [
  ['sha512-crypt', { rounds: 20_000_000 }],
  ['sha256-crypt', { rounds: 20_000_000 }],
  // cost 11: N = 2^18, r = 32: 1 GiB.
  ['yescrypt', { cost: 11 }],
  ['gost-yescrypt', { cost: 10 }],
  ['phpass', { rounds: 24 }],
  ['drupal7', { rounds: 30 }],
]

const malformed: Array<[algorithm: string, hash: string]> = [
  ['sha512-crypt', '$6$saltstring$tooShort'],
  ['sha256-crypt', `$5$rounds=010428$uy/jIAhCetNCTtb0$${H43}`],
  ['sha256-crypt', `$5$rounds=10428$uy/:jIAhCetNCTtb0$${H43}`],
  ['sha256-crypt', `$5$rounds=999$saltstring$${H43}`],
  ['md5-crypt', '$1$toolongsalt$ctlgjDdWJLMT.qwHsWhXR1'],
  ['apr1', '$apr1$r31.....$HqJZimcKQFAMYayBlzkrA!'],
  ['yescrypt', `$y$!9T$LdJMENpBABJJ3hIHjB1Bi.$${H43}`],
  ['yescrypt', `$y$j9T$LdJMENpBABJJ3hIHjB1Bi.$${H43}x`],
  ['gost-yescrypt', '$gy$j75$$'],
  ['scrypt', '$7$66..../....SodiumChloride$short'],
  ['des-crypt', 'OgAwTx2l6NAD'],
  ['bsdi-crypt', '_K1.!crsmZxOLzfJH8iw'],
  ['nt-crypt', '$3$$7f8fe03093cc84b267b109625f6bbfxb'],
  ['phpass', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r!L0'],
  // '1' stands for 2^3 iterations, below phpass's minimum of 2^7.
  ['phpass', '$P$1IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'],
  ['drupal7', '$S$C20340258nzjDWpoQthrdNTR02f0pmev0K'],
  ['ldap-ssha', '{SSHA}P90+qijSp8MJ1tN25j5o1PflUvlqjXHOGeOck'],
  ['ldap-ssha', '{SSHA}P90+qijSp8MJ1tN25j5o1Pf=UvlqjXHOGeOckw=='],
  ['ldap-sha', '{SHA}at+xg6SiyUovktq1redipHiJpa=='],
  ['ldap-ssha512', '{SSHA512}Tgx/uhHnlM9/GgQvI31dN7cheDXg7WypZwaaIkyRsgV/BKIzBG3G/wUd9o1dpi06p3SYzMedg0lvTc3b6CtdO0Xo/f9/L+U@'],
  ['ldap-crypt', '{CRYPT}not a crypt hash'],
  ['bcrypt', '$2b$03$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
  ['argon2id', '$argon2id$v=19$m=256,t=2$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4'],
]

describe('password hashes: caps and malformed hashes', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  for (const [family, hash] of overCap) {
    it(`${family}: a hash above the cap is 422 at once`, async () => {
      const tasksBefore = await tasksStarted(server)
      const response = await server.post('/api/verify', { input: 'password', hash })
      assert.equal(response.status, 422, response.text)
      assert.equal(response.body.type, 'urn:hashd:problem:cost-above-cap', response.text)
      assert.equal(await tasksStarted(server), tasksBefore, 'the work must not have started')
    })
  }

  for (const [algorithm, options] of overCapOptions) {
    it(`${algorithm}: options ${JSON.stringify(options)} above the cap are 422`, async () => {
      const tasksBefore = await tasksStarted(server)
      const response = await server.post('/api/hash', { input: 'password', algorithm, options })
      assert.equal(response.status, 422, response.text)
      assert.equal(response.body.type, 'urn:hashd:problem:cost-above-cap')
      assert.equal(await tasksStarted(server), tasksBefore, 'the work must not have started')
    })
  }

  it('a lower configured cap applies to SHA-crypt rounds in hashes and options', async () => {
    const strict = await startServer({ MAX_SHA_CRYPT_ROUNDS: '5000' })
    try {
      const verify = await strict.post('/api/verify', { input: 'Hello world!', hash: '$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA' })
      assert.equal(verify.status, 422)
      const hash = await strict.post('/api/hash', { input: 'x', algorithm: 'sha512-crypt', options: { rounds: 6000 } })
      assert.equal(hash.status, 422)
    } finally {
      await strict.close()
    }
  })

  for (const [algorithm, hash] of malformed) {
    it(`${algorithm}: a malformed hash is 422 (${hash.slice(0, 24)}…)`, async () => {
      const response = await server.post('/api/verify', { input: 'password', hash, algorithm })
      assert.equal(response.status, 422, response.text)
      assert.equal(response.body.type, 'urn:hashd:problem:malformed-hash', response.text)
    })
  }

  it('a damaged hash with a known prefix is reported malformed even without `algorithm`', async () => {
    const response = await server.post('/api/verify', { input: 'password', hash: '$6$saltstring$tooShort' })
    assert.equal(response.status, 422)
    assert.match(response.body.detail, /sha512-crypt/)
  })

  it('verify-only formats refuse to generate', async () => {
    for (const algorithm of ['des-crypt', 'bsdi-crypt', 'nt-crypt', 'ldap-crypt']) {
      const response = await server.post('/api/hash', { input: 'password', algorithm })
      assert.equal(response.status, 400, `${algorithm}: ${response.text}`)
    }
  })

  it('crypt(3) schemes refuse inputs they cannot represent (NUL bytes, over 511 bytes)', async () => {
    const nul = await server.post('/api/hash', { input: '610062', inputEncoding: 'hex', algorithm: 'sha512-crypt', options: { rounds: 1000 } })
    assert.equal(nul.status, 422, nul.text)
    const long = await server.post('/api/hash', { input: 'a'.repeat(512), algorithm: 'md5-crypt' })
    assert.equal(long.status, 422, long.text)
  })

  it('bcrypt refuses to hash more than 72 bytes', async () => {
    const response = await server.post('/api/hash', { input: 'a'.repeat(73), algorithm: 'bcrypt', options: { cost: 4 } })
    assert.equal(response.status, 422)
  })

  it('parameters the RFCs relate are checked together, never a 500: argon2 m ≥ 8·p (RFC 9106 §3.1), scrypt N < 2^(16·r) (RFC 7914 §2)', async () => {
    const before = await tasksStarted(server)
    for (const [options, algorithm, pointer] of [
      [{ memoryCost: 8, parallelism: 16 }, 'argon2id', 'memoryCost'], [{ memoryCost: 15, parallelism: 2 }, 'argon2i', 'memoryCost'],
      [{ N: 2 ** 16, r: 1, p: 1 }, 'scrypt', 'N'], [{ N: 2 ** 20, r: 1, p: 1 }, 'scrypt', 'N'],
    ] as const) {
      const response = await server.post('/api/hash', { input: 'x', algorithm, options })
      assert.equal(response.status, 400, `${algorithm} ${JSON.stringify(options)}: ${response.text}`)
      assert.deepEqual(response.body.errors.map((error: { pointer: string }) => error.pointer), [`/body/options/${pointer}`])
    }
    for (const hash of ['$scrypt$ln=16,r=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '$argon2id$v=19$m=8,t=1,p=2$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA']) {
      const response = await server.post('/api/verify', { input: 'x', hash })
      assert.equal(response.body.type, 'urn:hashd:problem:malformed-hash', `${hash}: ${response.text}`)
    }
    assert.equal(await tasksStarted(server), before, 'no work began')
    // At the limits themselves, the work is done: m = 8·p, N = 2^(16·r − 1).
    assert.equal((await server.post('/api/hash', { input: 'x', algorithm: 'argon2id', options: { memoryCost: 16, parallelism: 2, timeCost: 1 } })).status, 200)
    assert.equal((await server.post('/api/hash', { input: 'x', algorithm: 'scrypt', options: { N: 2 ** 15, r: 1, p: 1 } })).status, 200)
  })

  it('option bounds are 400', async () => {
    const response = await server.post('/api/hash', { input: 'x', algorithm: 'yescrypt', options: { cost: 12 } })
    assert.equal(response.status, 400)
    const rounds = await server.post('/api/hash', { input: 'x', algorithm: 'phpass', options: { rounds: 6 } })
    assert.equal(rounds.status, 400)
  })
})
