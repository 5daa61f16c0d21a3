/**
 * /api/hmac: the RFC 4231, RFC 2202 and RFC 7836 vectors, then the generic RFC 2104 construction
 * (used for every digest OpenSSL lacks) against OpenSSL's `dgst -mac HMAC`, Python's `hmac`, and —
 * for hashes only RHash knows — the textbook construction around RHash's digests.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { digestAlgorithms } from '../src/algorithms/digests.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless, type ToolName } from './helpers/tools.js'
import { hmacVectors } from './vectors/digests-hmac.js'

/** OpenSSL's own HMAC over a digest it has (legacy provider for MD4 and Whirlpool). */
const opensslHmac = (digest: string, legacy = false) => (key: Buffer, message: Buffer) =>
  run('openssl', ['dgst', `-${digest}`, ...(legacy ? ['-provider', 'legacy', '-provider', 'default'] : []), '-mac', 'HMAC', '-macopt', `hexkey:${key.toString('hex')}`, '-r'], message).split(/\s+/)[0] as string

/** Python's hmac module over a hash constructor expression (`hashlib.blake2b(digest_size=32)`…). */
const pythonHmac = (setup: string, digestmod: string) => (key: Buffer, message: Buffer) =>
  python(`import sys, hmac, hashlib${setup}; print(hmac.new(bytes.fromhex(sys.argv[1]), sys.stdin.buffer.read(), ${digestmod}).hexdigest())`, [key.toString('hex')], message)

/** pycryptodome's HMAC (it carries MD2's 16-byte block size). */
const cryptodomeHmac = (module: string) => (key: Buffer, message: Buffer) =>
  python(`import sys; from Cryptodome.Hash import HMAC, ${module}; print(HMAC.new(bytes.fromhex(sys.argv[1]), sys.stdin.buffer.read(), digestmod=${module}).hexdigest())`, [key.toString('hex')], message)

/**
 * RFC 2104 §2 written out around an independent hash: H((K ⊕ opad) || H((K ⊕ ipad) || text)),
 * K being the key zero-padded to B bytes, or its hash when longer than B.
 */
function textbookHmac(hash: (data: Buffer) => string, blockBytes: number) {
  return (key: Buffer, message: Buffer): string => {
    const shortKey = key.length > blockBytes ? Buffer.from(hash(key), 'hex') : key
    const padded = Buffer.alloc(blockBytes)
    shortKey.copy(padded)
    const inner = Buffer.from(hash(Buffer.concat([padded.map((byte) => byte ^ 0x36), message])), 'hex')
    return hash(Buffer.concat([padded.map((byte) => byte ^ 0x5c), inner]))
  }
}
const rhash = (name: string) => (data: Buffer) => run('rhash', ['-p', `%{${name}}\\n`, '-'], data)
const keccak = (bits: number) => (data: Buffer) =>
  python(`import sys; from Cryptodome.Hash import keccak; print(keccak.new(digest_bits=${bits}, data=sys.stdin.buffer.read()).hexdigest())`, [], data)

/** Every digest whose HMAC hashd computes itself (no `opensslName`), with an independent HMAC and the tool it needs. */
type Independent = { tool: ToolName, hmac: (key: Buffer, message: Buffer) => string }
const GENERIC_HMAC: Record<string, Independent> = {
  md4: { tool: 'openssl', hmac: opensslHmac('md4', true) },
  whirlpool: { tool: 'openssl', hmac: opensslHmac('whirlpool', true) },
  md2: { tool: 'pycryptodome', hmac: cryptodomeHmac('MD2') },
  'blake2b-256': { tool: 'python3', hmac: pythonHmac('', 'lambda *a: hashlib.blake2b(*a, digest_size=32)') },
  'blake2b-384': { tool: 'python3', hmac: pythonHmac('', 'lambda *a: hashlib.blake2b(*a, digest_size=48)') },
  'keccak-224': { tool: 'pycryptodome', hmac: textbookHmac(keccak(224), 144) },
  'keccak-256': { tool: 'pycryptodome', hmac: textbookHmac(keccak(256), 136) },
  'keccak-384': { tool: 'pycryptodome', hmac: textbookHmac(keccak(384), 104) },
  'keccak-512': { tool: 'pycryptodome', hmac: textbookHmac(keccak(512), 72) },
  tiger: { tool: 'rhash', hmac: textbookHmac(rhash('tiger'), 64) },
  'streebog-256': { tool: 'rhash', hmac: textbookHmac(rhash('gost12-256'), 64) },
  'streebog-512': { tool: 'rhash', hmac: textbookHmac(rhash('gost12-512'), 64) },
  gost94: { tool: 'rhash', hmac: textbookHmac(rhash('gost94'), 32) },
  'gost94-cryptopro': { tool: 'rhash', hmac: textbookHmac(rhash('gost94-cryptopro'), 32) },
  has160: { tool: 'rhash', hmac: textbookHmac(rhash('has160'), 64) },
}

describe('/api/hmac', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it(`matches ${hmacVectors.length} published vectors (RFC 4231 cases 1–7, RFC 2202 cases 1–7, RFC 7836)`, async () => {
    for (const vector of hmacVectors) {
      const response = await server.post('/api/hmac', {
        message: vector.messageHex, inputEncoding: 'hex', key: vector.keyHex, keyEncoding: 'hex', algorithm: vector.algorithm,
      })
      assert.equal(response.status, 200, `${vector.source}: ${response.text}`)
      const hmac = vector.truncatedTo ? response.body.hmac.slice(0, 2 * vector.truncatedTo) : response.body.hmac
      assert.equal(hmac, vector.expected, `${vector.algorithm}, ${vector.source}`)
      assert.equal(response.body.algorithm, vector.algorithm)
    }
  })

  it('takes text keys and messages as UTF-8, and answers base64 on request', async () => {
    const response = await server.post('/api/hmac', { message: 'what do ya want for nothing?', key: 'Jefe', algorithm: 'SHA-256', encoding: 'base64' })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.algorithm, 'sha256')
    assert.equal(response.body.hmac, Buffer.from('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'hex').toString('base64'))
  })

  it('covers every digest without an OpenSSL HMAC (tiger2 only by construction)', () => {
    const generic = digestAlgorithms.filter((digest) => digest.kind === 'digest' && digest.blockBytes !== undefined && digest.opensslName === undefined).map((digest) => digest.name)
    assert.deepEqual(generic.filter((name) => !(name in GENERIC_HMAC)), ['tiger2'])
  })

  describe('the generic RFC 2104 construction agrees with independent HMACs', () => {
    const keys: Array<[string, Buffer]> = [
      ['a short key', Buffer.from('key')],
      ['a key of exactly 32 bytes', randomBytes(32)],
      ['a key of 200 bytes (longer than every block)', randomBytes(200)],
    ]
    const messages: Array<[string, Buffer]> = [
      ['an empty message', Buffer.alloc(0)],
      ['"The quick brown fox…"', Buffer.from('The quick brown fox jumps over the lazy dog')],
      ['300 random bytes', randomBytes(300)],
    ]
    for (const [algorithm, { tool, hmac: independent }] of Object.entries(GENERIC_HMAC)) {
      it(algorithm, { skip: skipUnless(tool) }, async () => {
        for (const [keyLabel, key] of keys) {
          for (const [messageLabel, message] of messages) {
            const response = await server.post('/api/hmac', {
              message: message.toString('base64'), inputEncoding: 'base64', key: key.toString('hex'), keyEncoding: 'hex', algorithm,
            })
            assert.equal(response.status, 200, response.text)
            assert.equal(response.body.hmac, independent(key, message), `${algorithm} with ${keyLabel} over ${messageLabel}`)
          }
        }
      })
    }
  })

  it('refuses XOFs, checksums, password hashes and digests without a defined HMAC with 400', async () => {
    for (const algorithm of ['shake128', 'shake256', 'blake3', 'crc32', 'xxh3', 'adler32', 'bcrypt', 'argon2id', 'lm', 'ntlm', 'mysql41', 'ed2k']) {
      const response = await server.post('/api/hmac', { message: 'm', key: 'k', algorithm })
      assert.equal(response.status, 400, `${algorithm}: ${response.text}`)
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/)
    }
  })

  it('refuses an unknown algorithm, an empty key and a key that is not the hex it claims', async () => {
    assert.equal((await server.post('/api/hmac', { message: 'm', key: 'k', algorithm: 'sha257' })).status, 400)
    assert.equal((await server.post('/api/hmac', { message: 'm', key: '', algorithm: 'sha256' })).status, 400)
    assert.equal((await server.post('/api/hmac', { message: 'm', key: 'zz', keyEncoding: 'hex', algorithm: 'sha256' })).status, 400)
  })
})
