/**
 * Every published password-hash vector (test/vectors/password-*.ts, each citing its source) is
 * verified over HTTP without naming the algorithm: detection must pick the right scheme, the
 * password must match, and a different password must not.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { argon2Vectors } from './vectors/password-argon2.js'
import { bcryptVectors } from './vectors/password-bcrypt.js'
import { apr1Vectors, bsdiCryptVectors, desCryptVectors, gostYescryptVectors, md5CryptVectors, ntCryptVectors, yescryptVectors } from './vectors/password-crypt.js'
import { ldapVectors } from './vectors/password-ldap.js'
import { pbkdf2Vectors } from './vectors/password-pbkdf2.js'
import { drupal7Vectors, phpassVectors } from './vectors/password-phpass.js'
import { scryptVectors } from './vectors/password-scrypt.js'
import { sha256CryptVectors, sha512CryptVectors } from './vectors/password-sha-crypt.js'
import type { PasswordVector } from './vectors/password-types.js'

const families: Record<string, PasswordVector[]> = {
  bcrypt: bcryptVectors,
  argon2: argon2Vectors,
  scrypt: scryptVectors,
  pbkdf2: pbkdf2Vectors,
  'sha256-crypt': sha256CryptVectors,
  'sha512-crypt': sha512CryptVectors,
  'md5-crypt': md5CryptVectors,
  apr1: apr1Vectors,
  yescrypt: yescryptVectors,
  'gost-yescrypt': gostYescryptVectors,
  'des-crypt': desCryptVectors,
  'bsdi-crypt': bsdiCryptVectors,
  'nt-crypt': ntCryptVectors,
  phpass: phpassVectors,
  drupal7: drupal7Vectors,
  ldap: ldapVectors,
}

/** A password that differs in its first byte, so even DES (8 characters) and bcrypt (72 bytes) see it. */
function wrongInput(vector: PasswordVector): { input: string, inputEncoding?: 'hex' } {
  return vector.inputEncoding === 'hex' ? { input: `78${vector.input}`, inputEncoding: 'hex' } : { input: `x${vector.input}` }
}

describe('password hashes: published vectors verify, detected without naming the algorithm', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  for (const [family, vectors] of Object.entries(families)) {
    it(`${family}: ${vectors.length} vectors match, and a different password does not`, async () => {
      await Promise.all(vectors.map(async (vector) => {
        const right = await server.post('/api/verify', { input: vector.input, hash: vector.hash, ...(vector.inputEncoding ? { inputEncoding: vector.inputEncoding } : {}) })
        assert.equal(right.status, 200, `${vector.hash} (${vector.source}): ${right.text}`)
        assert.equal(right.body.match, true, `${vector.hash} (${vector.source}) should match`)
        assert.equal(right.body.algorithm, vector.algorithm, vector.hash)
        assert.equal(typeof right.body.format, 'string')
        // The prefix as the hash writes it, then at most a note in parentheses: no space inside the
        // prefix (`$argon2id$ v=19` had one).
        assert.doesNotMatch(right.body.format.replace(/ \([^()]*\)$/, ''), /\s/, `${vector.hash}: format ${right.body.format}`)
        const named = await server.post('/api/verify', { input: vector.input, hash: vector.hash, algorithm: vector.algorithm, ...(vector.inputEncoding ? { inputEncoding: vector.inputEncoding } : {}) })
        assert.equal(named.body.match, true, `${vector.hash} with algorithm named`)
        const wrong = await server.post('/api/verify', { ...wrongInput(vector), hash: vector.hash })
        assert.equal(wrong.status, 200, wrong.text)
        assert.equal(wrong.body.match, false, `${vector.hash} must not match another password`)
      }))
    })
  }

  it('reports the variant read from the hash in `format`', async () => {
    const cases: Array<[string, string, string]> = [
      ['$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq', 'a3', '$2y$'],
      ['$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA', Buffer.from('Hello world!').toString('hex'), '$5$rounds='],
      ['$7$66..../....SodiumChloride$WpfVhZgVj63.RiL2fAQZsLyYNROrrN67Wlo8QJ5bI/A', Buffer.from('abc').toString('hex'), '$7$ (libxcrypt)'],
      ['$H$9aaaaaSXBjgypwqm.JsMssPLiS8YQ00', Buffer.from('test1').toString('hex'), '$H$'],
      ['{CRYPT}$1$dXc3I7Rw$ctlgjDdWJLMT.qwHsWhXR1', Buffer.from('U*U*U*U*').toString('hex'), '{CRYPT}$1$'],
      ['pbkdf2_sha256$10000$kjVJaVz6qsnJ$5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs=', Buffer.from('not a password').toString('hex'), 'Django'],
      // The argon2 reference's vectors (test/vectors/password-argon2.ts): the prefix as the string
      // writes it and as GET /api/password-policy's `format` does, `$argon2id$v=19$`; no version
      // field (0x10) is `$argon2i$`.
      ['$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4', Buffer.from('password').toString('hex'), '$argon2id$v=19$'],
      ['$argon2i$m=256,t=2,p=1$c29tZXNhbHQ$/U3YPXYsSb3q9XxHvc0MLxur+GP960kN9j7emXX8zwY', Buffer.from('password').toString('hex'), '$argon2i$'],
    ]
    for (const [hash, input, format] of cases) {
      const response = await server.post('/api/verify', { input, inputEncoding: 'hex', hash })
      assert.equal(response.body.match, true, hash)
      assert.equal(response.body.format, format, hash)
    }
  })

  it('recommends rehashing legacy schemes with one sentence naming argon2id', async () => {
    for (const vector of [md5CryptVectors[0], apr1Vectors[0], desCryptVectors[0], bsdiCryptVectors[0], ntCryptVectors[1], phpassVectors[0], drupal7Vectors[0], ldapVectors[3], ldapVectors[7], sha256CryptVectors[6]] as PasswordVector[]) {
      const response = await server.post('/api/verify', { input: vector.input, hash: vector.hash, ...(vector.inputEncoding ? { inputEncoding: vector.inputEncoding } : {}) })
      assert.equal(response.body.match, true, vector.hash)
      assert.equal(response.body.rehashRecommended, true, vector.hash)
      assert.match(response.body.reason, /argon2id/, vector.hash)
    }
    // yescrypt at cost 1 is below libxcrypt's default (N=4096, r=32).
    const cheap = yescryptVectors[0] as PasswordVector
    const response = await server.post('/api/verify', { input: cheap.input, hash: cheap.hash })
    assert.equal(response.body.rehashRecommended, true)
    assert.match(response.body.reason, /default cost/)
  })

  it('bcrypt verification uses the first 72 bytes and says so', async () => {
    const vector = bcryptVectors[3] as PasswordVector
    const response = await server.post('/api/verify', { input: vector.input, hash: vector.hash })
    assert.equal(response.body.match, true)
    assert.equal(response.body.warnings.length, 1)
    assert.match(response.body.warnings[0], /first 72 bytes/)
  })
})
