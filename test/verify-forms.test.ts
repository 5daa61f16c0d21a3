/**
 * Two verify forms people meet in dumps and on BSD systems:
 *
 * - mysql41 as bare hex: MySQL's PASSWORD() is `*` + 40 uppercase hex, but dumps and hashcat
 *   (-m 300) write the 40 hex alone, in either case. Named `mysql41`, verify reads both; without
 *   `algorithm`, detection still asks for the `*`.
 * - the NT hash in crypt(3) form, `$3$$` + 32 hex (FreeBSD crypt-nthash.c, libxcrypt "nthash"):
 *   verify reads it detected and named (nt-crypt, or ntlm/nthash, which hand it to nt-crypt), and
 *   identify names it NTLM, hashcat 1000, John `nt`.
 *
 * Expected values: MySQL's manual, passlib's and John's published vectors, Python's hashlib and
 * passlib, and libxcrypt's crypt(3) through Python's ctypes.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipBecause, skipUnless } from './helpers/tools.js'

/**
 * Published mysql41 hashes: MySQL 5.7 Reference Manual, PASSWORD() ("SELECT PASSWORD('mypass')"),
 * and John the Ripper 1.7.9's vectors as passlib's test_handlers.py mysql41_test carries them.
 */
const MYSQL41_VECTORS: Array<[password: string, hash: string, source: string]> = [
  ['mypass', '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4', 'MySQL 5.7 manual, PASSWORD()'],
  ['verysecretpassword', '*2C905879F74F28F8570989947D06A8429FB943E6', 'John the Ripper 1.7.9 via passlib'],
  ["' OR 1 /*'", '*97CF7A3ACBE0CA58D5391AC8377B5D9AC11D46D9', 'John the Ripper 1.7.9 via passlib'],
]

/** NT hashes in $3$$ form: passlib's bsd_nthash_test, and the NT hash of "password" every NTLM table lists. */
const NT_CRYPT_VECTORS: Array<[password: string, hash: string, source: string]> = [
  ['passphrase', '$3$$7f8fe03093cc84b267b109625f6bbf4b', 'passlib test_handlers.py bsd_nthash_test'],
  ['password', '$3$$8846f7eaee8fb117ad06bdd830b7586c', 'NT hash of "password" (MS-NLMP NTOWFv1)'],
]

const PASSWORDS = ['', 'mypass', 'Secret-Passw0rd!', 'héllo wörld ✓', '🔑🦀 pass', 'x'.repeat(300)]
/** ASCII passwords, where crypt(3)'s byte widening and NTLM's UTF-16LE give the same NT hash. */
const ASCII_PASSWORDS = ['', 'password', 'Secret-Passw0rd!', 'THE YEAR', 'x'.repeat(100)]

/** The variants of a mysql41 hash a caller may send when naming the algorithm. */
const bareForms = (starred: string): string[] => [starred.slice(1), starred.slice(1).toLowerCase(), starred, `*${starred.slice(1).toLowerCase()}`]

describe('verify forms: mysql41 as bare hex, NT hash as $3$$', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const verify = async (body: Record<string, string>): Promise<{ match: boolean, algorithm: string | null }> => {
    const response = await server.post('/api/verify', body)
    assert.equal(response.status, 200, `${JSON.stringify(body)}: ${response.text}`)
    return response.body
  }

  /** Named mysql41, every spelling of `hash` matches `input` and none matches another password. */
  const checkMysql41 = async (input: string, starred: string, label: string): Promise<void> => {
    for (const hash of bareForms(starred)) {
      const named = await verify({ input, hash, algorithm: 'mysql41' })
      assert.deepEqual([named.match, named.algorithm], [true, 'mysql41'], `${label}: ${hash}`)
      const wrong = await verify({ input: `${input}x`, hash, algorithm: 'MySQL-SHA1' })
      assert.equal(wrong.match, false, `${label}: ${hash} with another password`)
    }
  }

  describe('mysql41 as bare hex', () => {
    it('published vectors verify named mysql41 with and without the *, in either case', async () => {
      for (const [password, hash, source] of MYSQL41_VECTORS) await checkMysql41(password, hash, source)
    })

    it('Python hashlib: "*" + upper(sha1(sha1(pw).digest()).hexdigest())', { skip: skipUnless('python3') }, async () => {
      const hashes = JSON.parse(python('import hashlib, json, sys; print(json.dumps(["*" + hashlib.sha1(hashlib.sha1(p.encode()).digest()).hexdigest().upper() for p in json.loads(sys.stdin.read())]))',
        [], JSON.stringify(PASSWORDS))) as string[]
      for (const [index, password] of PASSWORDS.entries()) await checkMysql41(password, hashes[index] as string, `hashlib, ${JSON.stringify(password.slice(0, 20))}`)
    })

    it('passlib.hash.mysql41', { skip: skipUnless('passlib') }, async () => {
      const hashes = JSON.parse(python('import json, sys; from passlib.hash import mysql41; print(json.dumps([mysql41.hash(p) for p in json.loads(sys.stdin.read())]))',
        [], JSON.stringify(PASSWORDS))) as string[]
      for (const [index, password] of PASSWORDS.entries()) await checkMysql41(password, hashes[index] as string, `passlib, ${JSON.stringify(password.slice(0, 20))}`)
    })

    it('without algorithm, bare hex is not taken for mysql41; with its * it is', async () => {
      const [password, starred] = MYSQL41_VECTORS[0] as [string, string, string]
      const bare = await verify({ input: password, hash: starred.slice(1) })
      assert.notEqual(bare.algorithm, 'mysql41')
      assert.equal(bare.match, false, 'no 20-byte digest of "mypass" is SHA1(SHA1("mypass"))')
      const detected = await verify({ input: password, hash: starred.toLowerCase() })
      assert.deepEqual([detected.match, detected.algorithm], [true, 'mysql41'])
    })

    it('named mysql41 still refuses what is neither form (39 hex, 41 hex, non-hex) with 422', async () => {
      const hex = (MYSQL41_VECTORS[0] as [string, string, string])[1].slice(1)
      for (const hash of [hex.slice(1), `${hex}0`, `${hex.slice(1)}g`, `**${hex}`]) {
        const response = await server.post('/api/verify', { input: 'mypass', hash, algorithm: 'mysql41' })
        assert.equal(response.status, 422, `${hash}: ${response.text}`)
      }
    })
  })

  describe('NT hash in crypt(3) form, $3$$', () => {
    /** Detected as nt-crypt, and named nt-crypt, ntlm or nthash: all match, and another password does not. */
    const checkNtCrypt = async (input: string, hash: string, label: string): Promise<void> => {
      for (const spelling of [hash, `$3$$${hash.slice(4).toUpperCase()}`]) {
        for (const algorithm of [undefined, 'nt-crypt', 'ntlm', 'NTHASH']) {
          const body = { input, hash: spelling, ...(algorithm ? { algorithm } : {}) }
          const result = await verify(body)
          assert.deepEqual([result.match, result.algorithm], [true, 'nt-crypt'], `${label}: ${JSON.stringify(body)}`)
          const wrong = await verify({ ...body, input: `${input}x` })
          assert.equal(wrong.match, false, `${label}: another password, ${JSON.stringify(body)}`)
        }
      }
    }

    it('published vectors (passlib bsd_nthash, the NT hash of "password")', async () => {
      for (const [password, hash, source] of NT_CRYPT_VECTORS) await checkNtCrypt(password, hash, source)
    })

    it('passlib bsd_nthash, for ASCII passwords', { skip: skipUnless('passlib') }, async () => {
      // passlib encodes text as UTF-16LE, crypt(3) widens each byte: they agree on ASCII only.
      const hashes = JSON.parse(python('import json, sys; from passlib.hash import bsd_nthash; print(json.dumps([bsd_nthash.hash(p) for p in json.loads(sys.stdin.read())]))',
        [], JSON.stringify(ASCII_PASSWORDS))) as string[]
      for (const [index, password] of ASCII_PASSWORDS.entries()) await checkNtCrypt(password, hashes[index] as string, `passlib ${JSON.stringify(password.slice(0, 20))}`)
    })

    it('libxcrypt crypt(3) "nthash" through ctypes, every password', { skip: skipUnless('libxcrypt') }, async (t) => {
      const hashes = JSON.parse(python([
        'import ctypes, json, sys',
        'lib = ctypes.CDLL("libcrypt.so.1"); lib.crypt.restype = ctypes.c_char_p; lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]',
        'out = [lib.crypt(p.encode(), b"$3$") for p in json.loads(sys.stdin.read())]',
        'print(json.dumps([None if h is None else h.decode() for h in out]))',
      ].join('\n'), [], JSON.stringify(PASSWORDS))) as Array<string | null>
      // A libxcrypt built without nthash answers NULL or a failure token starting with "*".
      if (hashes.some((hash) => hash === null || hash.startsWith('*'))) {
        t.skip(skipBecause('this libxcrypt was built without the nthash method ($3$)'))
        return
      }
      for (const [index, password] of PASSWORDS.entries()) {
        const hash = hashes[index] as string
        assert.match(hash, /^\$3\$\$[0-9a-f]{32}$/)
        await checkNtCrypt(password, hash, `crypt(3) ${JSON.stringify(password.slice(0, 20))}`)
      }
    })

    it('named ntlm, plain hex is still the NT hash as a digest', async () => {
      const [password, hash] = NT_CRYPT_VECTORS[1] as [string, string, string]
      const result = await verify({ input: password, hash: hash.slice(4).toUpperCase(), algorithm: 'ntlm' })
      assert.deepEqual([result.match, result.algorithm], [true, 'ntlm'])
    })

    it('a malformed $3$ hash named ntlm is a 422 naming nt-crypt', async () => {
      for (const hash of ['$3$$8846f7eaee8fb117ad06bdd830b7586', '$3$8846f7eaee8fb117ad06bdd830b7586c', '$3$$8846f7eaee8fb117ad06bdd830b7586g']) {
        const response = await server.post('/api/verify', { input: 'password', hash, algorithm: 'ntlm' })
        assert.equal(response.status, 422, `${hash}: ${response.text}`)
        assert.match(response.body.detail, /nt-crypt/)
      }
    })

    it('/api/identify names it NTLM first, hashcat 1000, John nt, verifiable, in either case', async () => {
      for (const [, hash] of NT_CRYPT_VECTORS) {
        for (const spelling of [hash, `$3$$${hash.slice(4).toUpperCase()}`]) {
          const response = await server.post('/api/identify', { hash: spelling })
          assert.equal(response.status, 200, response.text)
          const top = response.body.matches[0]
          assert.ok(top, `${spelling}: no match`)
          assert.deepEqual([top.algorithm, top.hashcat, top.john, top.verifiable], ['nt-crypt', 1000, 'nt', true], spelling)
          assert.match(top.displayName, /NTLM/)
          assert.match(top.displayName, /nthash/)
        }
      }
    })
  })
})
