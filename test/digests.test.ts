/**
 * Every digest, XOF and checksum over HTTP: the published vectors under test/vectors/, then
 * independent tools (OpenSSL, RHash, b3sum, xxhsum, xz, Python's hashlib/zlib, pycryptodome,
 * passlib) in both directions — hashd must print what the tool prints, and /api/verify must accept
 * the tool's digest, with and without `algorithm`.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { digestAlgorithms } from '../src/algorithms/digests.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless, type ToolName } from './helpers/tools.js'
import { vectorFamilies } from './vectors/digests-index.js'
import { inputBytes, type DigestVector } from './vectors/digests-types.js'

/** How a vector's input travels in a JSON request: UTF-8 text where it is text, base64 otherwise. */
function requestInput(vector: DigestVector): { input: string, inputEncoding?: 'base64' | 'hex' } {
  if ('text' in vector.input) return { input: vector.input.text }
  if ('repeat' in vector.input) return { input: vector.input.repeat.repeat(vector.input.times) }
  if ('hex' in vector.input) return { input: vector.input.hex, inputEncoding: 'hex' }
  return { input: inputBytes(vector.input).toString('base64'), inputEncoding: 'base64' }
}

// ---------------------------------------------------------------------------------------------
// Independent implementations, each reading the raw bytes on stdin and printing lowercase hex.
// ---------------------------------------------------------------------------------------------

const firstToken = (text: string) => text.split(/\s+/)[0] as string
const openssl = (name: string, legacy = false) => (data: Buffer) =>
  firstToken(run('openssl', ['dgst', `-${name}`, ...(legacy ? ['-provider', 'legacy', '-provider', 'default'] : []), '-r'], data))
const rhash = (name: string) => (data: Buffer) => run('rhash', ['-p', `%{${name}}\\n`, '-'], data)
const hashlib = (constructor: string, digestArgs = '') => (data: Buffer) =>
  python(`import sys, hashlib; print(hashlib.${constructor}(sys.stdin.buffer.read()).hexdigest(${digestArgs}))`, [], data)
const cryptodome = (module: string, args = '') => (data: Buffer) =>
  python(`import sys; from Cryptodome.Hash import ${module}; h = ${module}.new(${args}); h.update(sys.stdin.buffer.read()); print(h.hexdigest())`, [], data)
const passlib = (handler: string) => (data: Buffer) =>
  python(`import sys; from passlib.hash import ${handler}; print(${handler}.hash(sys.stdin.buffer.read()))`, [], data)
const xxhsum = (variant: number) => (data: Buffer) => (/\b[0-9a-f]{8,32}\b/.exec(run('xxhsum', [`-H${variant}`, '-'], data)) as RegExpExecArray)[0]

let scratch: string
/** xz stores a CRC-64/XZ of the uncompressed data in each block; `xz --list` prints it. */
function xzCrc64(data: Buffer): string {
  const file = join(scratch, 'crc64.bin')
  writeFileSync(file, data)
  run('xz', ['-k', '-f', '--check=crc64', file])
  const xzFile = `${file}.xz`
  const block = run('xz', ['--robot', '--list', '-vv', xzFile]).split('\n').find((line) => line.startsWith('block'))
  // Robot format: block, stream, block number, …, check name ("CRC64"), check value, …
  const fields = (block ?? '').split('\t')
  return fields[fields.indexOf('CRC64') + 1] ?? ''
}

/** The independent tool for each algorithm, and what provides it; tiger2 has none (published vectors only). */
const TOOLS: Record<string, { tool: ToolName, digest: (data: Buffer) => string }> = {
  md2: { tool: 'pycryptodome', digest: cryptodome('MD2') },
  md4: { tool: 'openssl', digest: openssl('md4', true) },
  md5: { tool: 'openssl', digest: openssl('md5') },
  sha1: { tool: 'openssl', digest: openssl('sha1') },
  sha224: { tool: 'openssl', digest: openssl('sha224') },
  sha256: { tool: 'openssl', digest: openssl('sha256') },
  sha384: { tool: 'openssl', digest: openssl('sha384') },
  sha512: { tool: 'openssl', digest: openssl('sha512') },
  'sha512-224': { tool: 'openssl', digest: openssl('sha512-224') },
  'sha512-256': { tool: 'openssl', digest: openssl('sha512-256') },
  'sha3-224': { tool: 'rhash', digest: rhash('sha3-224') },
  'sha3-256': { tool: 'openssl', digest: openssl('sha3-256') },
  'sha3-384': { tool: 'python3', digest: hashlib('sha3_384') },
  'sha3-512': { tool: 'rhash', digest: rhash('sha3-512') },
  'keccak-224': { tool: 'pycryptodome', digest: cryptodome('keccak', 'digest_bits=224') },
  'keccak-256': { tool: 'pycryptodome', digest: cryptodome('keccak', 'digest_bits=256') },
  'keccak-384': { tool: 'pycryptodome', digest: cryptodome('keccak', 'digest_bits=384') },
  'keccak-512': { tool: 'pycryptodome', digest: cryptodome('keccak', 'digest_bits=512') },
  shake128: { tool: 'python3', digest: hashlib('shake_128', '32') },
  shake256: { tool: 'python3', digest: hashlib('shake_256', '64') },
  'blake2b-256': { tool: 'python3', digest: (data) => python('import sys, hashlib; print(hashlib.blake2b(sys.stdin.buffer.read(), digest_size=32).hexdigest())', [], data) },
  'blake2b-384': { tool: 'python3', digest: (data) => python('import sys, hashlib; print(hashlib.blake2b(sys.stdin.buffer.read(), digest_size=48).hexdigest())', [], data) },
  'blake2b-512': { tool: 'rhash', digest: rhash('blake2b') },
  'blake2s-256': { tool: 'openssl', digest: openssl('blake2s256') },
  blake3: { tool: 'b3sum', digest: (data) => run('b3sum', ['--no-names'], data) },
  ripemd160: { tool: 'rhash', digest: rhash('ripemd160') },
  whirlpool: { tool: 'openssl', digest: openssl('whirlpool', true) },
  sm3: { tool: 'openssl', digest: openssl('sm3') },
  tiger: { tool: 'rhash', digest: rhash('tiger') },
  'streebog-256': { tool: 'rhash', digest: rhash('gost12-256') },
  'streebog-512': { tool: 'rhash', digest: rhash('gost12-512') },
  gost94: { tool: 'rhash', digest: rhash('gost94') },
  'gost94-cryptopro': { tool: 'rhash', digest: rhash('gost94-cryptopro') },
  has160: { tool: 'rhash', digest: rhash('has160') },
  ed2k: { tool: 'rhash', digest: rhash('ed2k') },
  crc32: { tool: 'python3', digest: (data) => python('import sys, zlib; print("%08x" % zlib.crc32(sys.stdin.buffer.read()))', [], data) },
  crc32c: { tool: 'rhash', digest: rhash('crc32c') },
  crc64: { tool: 'xz', digest: xzCrc64 },
  adler32: { tool: 'python3', digest: (data) => python('import sys, zlib; print("%08x" % zlib.adler32(sys.stdin.buffer.read()))', [], data) },
  xxh32: { tool: 'xxhsum', digest: xxhsum(0) },
  xxh64: { tool: 'xxhsum', digest: xxhsum(1) },
  xxh128: { tool: 'xxhsum', digest: xxhsum(2) },
  xxh3: { tool: 'xxhsum', digest: xxhsum(3) },
  ntlm: { tool: 'passlib', digest: passlib('nthash') },
  lm: { tool: 'passlib', digest: passlib('lmhash') },
  mysql41: { tool: 'passlib', digest: passlib('mysql41') },
}

/** The algorithms checked against passlib. */
const PASSLIB = new Set(['ntlm', 'lm', 'mysql41'])

/** Edge inputs, each sent as text where it is text and as hex or base64 where it is binary. */
const alphanumeric = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const INPUTS: Array<{ label: string, bytes: Buffer, body: { input: string, inputEncoding?: 'hex' | 'base64' } }> = (() => {
  const text = (label: string, value: string) => ({ label, bytes: Buffer.from(value, 'utf8'), body: { input: value } })
  const binary = randomBytes(1000)
  const million = Array.from(randomBytes(1_000_000), (byte) => alphanumeric[byte % alphanumeric.length]).join('')
  return [
    text('empty', ''),
    text('accented text with a check mark', 'héllo wörld ✓'),
    text('emoji', '🦀🔐 hash me'),
    text('one block minus one (63 bytes)', 'x'.repeat(63)),
    { label: 'random binary as hex', bytes: binary, body: { input: binary.toString('hex'), inputEncoding: 'hex' } },
    { label: 'random binary as base64', bytes: binary.subarray(0, 777), body: { input: binary.subarray(0, 777).toString('base64'), inputEncoding: 'base64' } },
    text('1 MB of text', million),
  ]
})()

describe('digests over HTTP', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
    scratch = mkdtempSync(join(tmpdir(), 'hashd-digests-'))
  })
  after(async () => {
    await server.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  describe('published vectors', () => {
    for (const [family, vectors] of Object.entries(vectorFamilies)) {
      it(`${family}: ${vectors.length} vectors from /api/hash, each accepted by /api/verify`, async () => {
        for (const vector of vectors) {
          const options = vector.outputLength ? { options: { outputLength: vector.outputLength } } : {}
          const label = `${vector.algorithm} of ${JSON.stringify(vector.input).slice(0, 60)} (${vector.source})`
          const hashed = await server.post('/api/hash', { ...requestInput(vector), algorithm: vector.algorithm, ...options })
          assert.equal(hashed.status, 200, `${label}: ${hashed.text}`)
          assert.equal(hashed.body.hash, vector.expected, label)
          assert.equal(hashed.body.algorithm, vector.algorithm)
          const verified = await server.post('/api/verify', { ...requestInput(vector), hash: vector.expected, algorithm: vector.algorithm })
          assert.equal(verified.status, 200, `${label}: ${verified.text}`)
          assert.equal(verified.body.match, true, label)
        }
      })
    }

    it('covers every digest, XOF and checksum except those only tools can check', () => {
      const withVectors = new Set(Object.values(vectorFamilies).flat().map((vector) => vector.algorithm))
      const withoutVectors = digestAlgorithms.map((digest) => digest.name).filter((name) => !withVectors.has(name))
      // BLAKE2b at 256 and 384 bits has no vector in RFC 7693; Python's hashlib checks it below.
      assert.deepEqual(withoutVectors.sort(), ['blake2b-256', 'blake2b-384'])
    })

    it('flips one bit and no longer verifies', async () => {
      const wrong = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ac'
      const verified = await server.post('/api/verify', { input: 'abc', hash: wrong, algorithm: 'sha256' })
      assert.equal(verified.body.match, false)
    })
  })

  describe('names', () => {
    const spellings: Array<[string, string]> = [
      ['MD2', 'md2'], ['Tiger192,3', 'tiger'], ['TIGER-192', 'tiger'], ['Tiger2', 'tiger2'],
      ['Streebog-256', 'streebog-256'], ['GOST12-256', 'streebog-256'], ['gost_12_512', 'streebog-512'], ['GOST R 34.11-2012-512', 'streebog-512'],
      ['GOST94', 'gost94'], ['GOST R 34.11-94', 'gost94'], ['gost94-CryptoPro', 'gost94-cryptopro'], ['HAS-160', 'has160'],
      ['eD2k', 'ed2k'], ['eDonkey', 'ed2k'], ['LMHASH', 'lm'], ['LanMan', 'lm'], ['CRC-64/XZ', 'crc64'], ['xxHash128', 'xxh128'],
    ]
    for (const [spelling, canonical] of spellings) {
      it(`"${spelling}" names ${canonical}`, async () => {
        const response = await server.post('/api/hash', { input: 'abc', algorithm: spelling })
        assert.equal(response.status, 200, response.text)
        assert.equal(response.body.algorithm, canonical)
      })
    }
  })

  it('has an independent tool for every digest but tiger2', () => {
    const untested = digestAlgorithms.map((digest) => digest.name).filter((name) => !(name in TOOLS))
    assert.deepEqual(untested, ['tiger2'])
  })

  describe('independent tools agree, and /api/verify accepts their digests', () => {
    for (const [algorithm, { tool: provider, digest: tool }] of Object.entries(TOOLS)) {
      it(algorithm, { skip: skipUnless(provider) }, async () => {
        for (const { label, bytes, body } of INPUTS) {
          if (algorithm === 'ntlm' && label.startsWith('random binary')) {
            // NTLM hashes UTF-16LE text: bytes that are not UTF-8 text are the request's fault.
            const refused = await server.post('/api/hash', { ...body, algorithm })
            assert.equal(refused.status, 422, refused.text)
            continue
          }
          // passlib refuses passwords over 4096 bytes; xz writes no block (so no check) for empty input.
          if (PASSLIB.has(algorithm) && bytes.length > 4096) continue
          if (algorithm === 'crc64' && bytes.length === 0) continue
          const expected = tool(bytes)
          assert.match(expected, /^\*?[0-9a-fA-F]+$/, `${algorithm} tool output for ${label}`)
          const hashed = await server.post('/api/hash', { ...body, algorithm })
          assert.equal(hashed.status, 200, `${algorithm}, ${label}: ${hashed.text}`)
          assert.equal(hashed.body.hash, expected, `${algorithm}, ${label}`)

          const named = await server.post('/api/verify', { ...body, hash: expected, algorithm })
          assert.equal(named.status, 200, named.text)
          assert.equal(named.body.match, true, `${algorithm}, ${label}: verify with algorithm`)
          const detected = await server.post('/api/verify', { ...body, hash: expected })
          assert.equal(detected.status, 200, detected.text)
          assert.equal(detected.body.match, true, `${algorithm}, ${label}: verify without algorithm (${JSON.stringify(detected.body)})`)
          if (detected.body.algorithm !== algorithm) {
            // Another algorithm can give the same digest for this input (crc32 and crc32c of "", MD4 and
            // NTLM of "", MD4 and eD2k below one chunk): it must really produce the tool's digest.
            const other = await server.post('/api/hash', { ...body, algorithm: detected.body.algorithm })
            assert.equal(other.body.hash, expected, `${algorithm}, ${label}: detected as ${detected.body.algorithm}`)
          }
        }
      })
    }
  })

  describe('output lengths and encodings', () => {
    it('BLAKE3 and SHAKE at other lengths match b3sum --length and hashlib', { skip: skipUnless('b3sum', 'python3') }, async () => {
      const data = Buffer.from('extendable output')
      for (const length of [1, 20, 100, 1024]) {
        const blake3 = await server.post('/api/hash', { input: 'extendable output', algorithm: 'blake3', options: { outputLength: length } })
        assert.equal(blake3.body.hash, run('b3sum', ['--no-names', '--length', String(length)], data))
        const shake = await server.post('/api/hash', { input: 'extendable output', algorithm: 'shake256', options: { outputLength: length } })
        assert.equal(shake.body.hash, hashlib('shake_256', String(length))(data))
        const verified = await server.post('/api/verify', { input: 'extendable output', hash: blake3.body.hash, algorithm: 'blake3' })
        assert.equal(verified.body.match, true)
      }
    })

    it('fixed-length digests refuse outputLength', async () => {
      const response = await server.post('/api/hash', { input: 'abc', algorithm: 'streebog-256', options: { outputLength: 16 } })
      assert.equal(response.status, 400, response.text)
    })

    it('checksums print fixed-width big-endian hex with leading zeros, and base64 of the same bytes', { skip: skipUnless('python3') }, async () => {
      // zlib's Adler-32 of "a" is 0x00620062: the leading zeros must stay.
      const hex = await server.post('/api/hash', { input: 'a', algorithm: 'adler32' })
      assert.equal(hex.body.hash, '00620062')
      assert.equal(hex.body.hash, TOOLS.adler32?.digest(Buffer.from('a')))
      const base64 = await server.post('/api/hash', { input: 'a', algorithm: 'adler32', encoding: 'base64' })
      assert.equal(base64.body.hash, Buffer.from('00620062', 'hex').toString('base64'))
      for (const name of ['crc32', 'crc32c', 'crc64', 'xxh32', 'xxh64', 'xxh3', 'xxh128']) {
        const response = await server.post('/api/hash', { input: '', algorithm: name })
        const width = digestAlgorithms.find((digest) => digest.name === name)?.outputBytes as number
        assert.match(response.body.hash, new RegExp(`^[0-9a-f]{${2 * width}}$`), name)
      }
    })

    it('verify accepts base64 and uppercase hex of a tool digest', { skip: skipUnless('rhash') }, async () => {
      const expected = TOOLS['streebog-512']?.digest(Buffer.from('abc')) as string
      for (const hash of [expected.toUpperCase(), Buffer.from(expected, 'hex').toString('base64')]) {
        const verified = await server.post('/api/verify', { input: 'abc', hash, algorithm: 'streebog-512' })
        assert.equal(verified.body.match, true, hash)
      }
    })

    it('weak digests recommend a rehash when they match', { skip: skipUnless('rhash') }, async () => {
      for (const algorithm of ['md2', 'md4', 'md5', 'sha1', 'lm', 'ntlm', 'mysql41', 'ed2k']) {
        const hashed = await server.post('/api/hash', { input: 'secret', algorithm })
        const verified = await server.post('/api/verify', { input: 'secret', hash: hashed.body.hash, algorithm })
        assert.equal(verified.body.match, true, algorithm)
        assert.equal(verified.body.rehashRecommended, true, algorithm)
      }
      const strong = await server.post('/api/verify', { input: 'abc', hash: TOOLS['streebog-256']?.digest(Buffer.from('abc')), algorithm: 'streebog-256' })
      assert.equal(strong.body.rehashRecommended, false)
    })
  })

  describe('LM and eD2k edge cases', () => {
    it('LM uppercases ASCII and ignores bytes past 14, as passlib does', { skip: skipUnless('passlib') }, async () => {
      for (const password of ['password', 'PassWord', 'abcdefghijklmnopqrstu', 'héllo', '12345678901234']) {
        const response = await server.post('/api/hash', { input: password, algorithm: 'lm' })
        assert.equal(response.body.hash, TOOLS.lm?.digest(Buffer.from(password)), password)
      }
    })

    it('LM and NTLM and mysql41 have no HMAC', async () => {
      for (const algorithm of ['lm', 'ntlm', 'mysql41', 'ed2k']) {
        const response = await server.post('/api/hmac', { message: 'm', key: 'k', algorithm })
        assert.equal(response.status, 400, `${algorithm}: ${response.text}`)
      }
    })
  })
})
