/**
 * bcrypt's two engines (issue 19): `$2b$` is hashed and `$2b$`/`$2y$` verified by libxcrypt's
 * crypt_blowfish, inputs with a NUL byte and `$2a$` by @node-rs/bcrypt. What hashd writes at the
 * edges of the 72-byte rule (exactly 72 bytes, 8-bit bytes, empty) is checked with python3-bcrypt,
 * and python3-bcrypt's `$2b$` hashes of the same inputs, relabelled `$2y$` (the same algorithm in
 * crypt_blowfish), verify in hashd. A 73-byte input is still 422 and a 72-byte one hashes.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const INPUTS_HEX = [
  '',
  Buffer.from('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789').toString('hex'),
  Buffer.from(Array.from({ length: 72 }, (_, index) => 0x80 + index)).toString('hex'),
  'ffffa3',
]

const post = async (server: TestServer, path: string, body: object) => {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

describe('bcrypt through libxcrypt and @node-rs/bcrypt', { skip: skipUnless('python3-bcrypt') }, () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('hashd\'s $2b$ hashes verify in python3-bcrypt, at 0, 72 and 8-bit bytes', async () => {
    for (const input of INPUTS_HEX) {
      const { status, body } = await post(server, '/api/hash', { algorithm: 'bcrypt', input, inputEncoding: 'hex', options: { cost: 5 } })
      assert.equal(status, 200, JSON.stringify(body))
      const hash = String(body.hash)
      assert.match(hash, /^\$2b\$05\$[./A-Za-z0-9]{53}$/)
      const verdict = python('import sys, bcrypt; print(bcrypt.checkpw(bytes.fromhex(sys.argv[1]), sys.argv[2].encode()))', [input, hash]).trim()
      assert.equal(verdict, 'True', `input ${input.slice(0, 16)}…`)
    }
  })

  it('python3-bcrypt\'s hashes verify in hashd as $2b$ and as $2y$; a changed byte does not', async () => {
    for (const input of INPUTS_HEX) {
      const hash = python('import sys, bcrypt; print(bcrypt.hashpw(bytes.fromhex(sys.argv[1]), bcrypt.gensalt(5)).decode())', [input]).trim()
      for (const label of ['$2b$', '$2y$']) {
        const relabelled = label + hash.slice(4)
        const right = await post(server, '/api/verify', { input, inputEncoding: 'hex', hash: relabelled })
        assert.equal(right.body.match, true, `${relabelled} of ${input.slice(0, 16)}…`)
        const wrong = await post(server, '/api/verify', { input: `78${input}`, inputEncoding: 'hex', hash: relabelled })
        assert.equal(wrong.body.match, false)
      }
    }
  })

  it('an input with a NUL byte is hashed (by @node-rs/bcrypt) and verifies in hashd, byte for byte', async () => {
    const input = '6869006869'
    const { status, body } = await post(server, '/api/hash', { algorithm: 'bcrypt', input, inputEncoding: 'hex', options: { cost: 4 } })
    assert.equal(status, 200)
    assert.equal((await post(server, '/api/verify', { input, inputEncoding: 'hex', hash: String(body.hash) })).body.match, true)
    // The byte after the NUL counts: the input is hashed as bytes, not as a C string.
    assert.equal((await post(server, '/api/verify', { input: '6869006868', inputEncoding: 'hex', hash: String(body.hash) })).body.match, false)
  })

  it('73 bytes are refused with 422; the caps still apply', async () => {
    const long = await post(server, '/api/hash', { algorithm: 'bcrypt', input: 'x'.repeat(73), options: { cost: 4 } })
    assert.equal(long.status, 422)
    const costly = await post(server, '/api/hash', { algorithm: 'bcrypt', input: 'x', options: { cost: 15 } })
    assert.equal(costly.status, 422)
  })
})
