/**
 * /api/identify's options and what a match says to do next, on hashes made by independent tools
 * (passlib, xxhsum, openssl, mkpasswd):
 * - `mysql41-bare` is verifiable, and /api/verify accepts it under the `verifyAlgorithm` it names;
 * - an uppercase XXH64 keeps xxh64 in the top 5, and verifies;
 * - `ambiguous` is set on 32 hex digits (MD5, NTLM or MD4) and not on a SHA-256 digest or bcrypt;
 * - `popular: true` keeps only the formats GET /api/identify/formats marks popular;
 * - each match's `commands` are the hashcat and John command lines for its mode and format;
 * - GET /api/identify/formats lists every format with an example that POST /api/identify lists it
 *   for, the syntax in words, and a version that is also its ETag; it is in the OpenAPI document.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless } from './helpers/tools.js'

const PASSWORD = 'correct horse battery staple'

interface Match {
  algorithm: string
  displayName: string
  confidence: number
  hashcat: number | null
  john: string | null
  format?: string
  verifiable: boolean
  verifyAlgorithm?: string
  commands?: { hashcat?: string, john?: string }
}
interface Identification { length: number, matches: Match[], ambiguous: boolean }
interface FormatInfo { name: string, displayName: string, hashcat: number | null, john: string | null, format?: string, example: string | null, syntax: string, popular: boolean, verifiable: boolean }

describe('/api/identify options, next commands and the format list', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const identify = async (body: Record<string, unknown>): Promise<Identification> => {
    const response = await server.post('/api/identify', body)
    assert.equal(response.status, 200, response.text.slice(0, 300))
    return response.body
  }
  const verify = async (body: Record<string, unknown>): Promise<boolean> => {
    const response = await server.post('/api/verify', body)
    assert.equal(response.status, 200, response.text)
    return response.body.match
  }

  it('reports a bare MySQL 4.1 hash as verifiable under mysql41, and /api/verify agrees', { skip: skipUnless('passlib') }, async () => {
    const starred = python('import sys; from passlib.hash import mysql41; print(mysql41.hash(sys.argv[1]))', [PASSWORD])
    const bare = starred.slice(1)
    const match = (await identify({ hash: bare })).matches.find((candidate) => candidate.algorithm === 'mysql41-bare')
    assert.ok(match, 'mysql41-bare is among the matches')
    assert.equal(match.verifiable, true)
    assert.equal(match.verifyAlgorithm, 'mysql41')
    assert.equal(await verify({ input: PASSWORD, hash: bare, algorithm: match.verifyAlgorithm }), true)
    assert.equal(await verify({ input: 'wrong', hash: bare, algorithm: match.verifyAlgorithm }), false)
  })

  it('keeps xxh64 in the top 5 for an uppercase XXH64, which verifies', { skip: skipUnless('xxhsum') }, async () => {
    const upper = run('xxhsum', ['-H1'], PASSWORD).split(' ')[0]!.toUpperCase()
    assert.match(upper, /^[0-9A-F]{16}$/)
    const { matches } = await identify({ hash: upper })
    const rank = matches.findIndex((match) => match.algorithm === 'xxh64') + 1
    assert.ok(rank >= 1 && rank <= 5, `xxh64 ranked ${rank}: ${matches.map((match) => match.algorithm).join(', ')}`)
    assert.equal(matches[rank - 1]!.verifiable, true)
    assert.equal(await verify({ input: PASSWORD, hash: upper, algorithm: 'xxh64' }), true)
  })

  it('flags 32 hex digits as ambiguous, and neither a SHA-256 digest nor bcrypt', { skip: skipUnless('openssl', 'mkpasswd') }, async () => {
    const digest = (name: string): string => run('openssl', ['dgst', `-${name}`, '-r'], PASSWORD).split(' ')[0]!
    const md5 = await identify({ hash: digest('md5') })
    assert.equal(md5.ambiguous, true)
    assert.deepEqual(md5.matches.slice(0, 3).map((match) => match.algorithm).sort(), ['md4', 'md5', 'ntlm'])
    assert.equal((await identify({ hash: digest('sha256') })).ambiguous, false)
    assert.equal((await identify({ hash: run('mkpasswd', ['-m', 'bcrypt', PASSWORD]) })).ambiguous, false)
  })

  it('gives the hashcat and John command lines of each match', { skip: skipUnless('openssl', 'mkpasswd') }, async () => {
    const md5 = (await identify({ hash: run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]! })).matches[0]!
    assert.deepEqual(md5.commands, { hashcat: 'hashcat -m 0 -a 0 hashes.txt wordlist.txt', john: 'john --format=raw-md5 --wordlist=wordlist.txt hashes.txt' })
    const shadow = (await identify({ hash: `root:${run('mkpasswd', ['-m', 'sha512crypt', PASSWORD])}:19700:0:99999:7:::` })).matches[0]!
    assert.equal(shadow.commands?.hashcat, 'cut -d: -f2 hashes.txt > hashcat.txt && hashcat -m 1800 -a 0 hashcat.txt wordlist.txt')
    assert.equal(shadow.commands?.john, 'john --format=sha512crypt --wordlist=wordlist.txt hashes.txt')
  })

  it('lists at most `top` matches per result of hashes, counting the rest in omitted', { skip: skipUnless('openssl') }, async () => {
    const hash = run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]!
    const all = (await identify({ hash })).matches.length
    const response = await server.post('/api/identify', { hashes: [hash, `${hash}\n${hash}`], top: 2 })
    assert.equal(response.status, 200)
    for (const result of response.body.results as Array<{ matches: Match[], omitted?: number }>) {
      assert.equal(result.matches.length, 2)
      assert.equal(result.omitted, all - 2)
    }
    assert.equal((await server.post('/api/identify', { hashes: [hash], top: 0 })).status, 400)
  })

  describe('GET /api/identify/formats', () => {
    let formats: FormatInfo[] = []
    let version = ''
    before(async () => {
      const response = await server.get('/api/identify/formats')
      assert.equal(response.status, 200)
      formats = response.body.formats
      version = response.body.version
      assert.equal(response.headers.get('etag'), `"${version}"`)
      assert.equal(response.body.count, formats.length)
    })

    it('lists every format with an example that POST /api/identify lists it for, and its syntax in words', async () => {
      assert.ok(formats.length >= 400, `${formats.length} formats`)
      assert.match(version, /^[0-9a-f]{16}$/)
      assert.ok(formats.every((format) => typeof format.example === 'string' && format.syntax.length > 0))
      const examples = formats.map((format) => format.example!)
      const results: Identification[] = []
      for (let start = 0; start < examples.length; start += 1000) {
        const response = await server.post('/api/identify', { hashes: examples.slice(start, start + 1000) })
        assert.equal(response.status, 200)
        results.push(...response.body.results)
      }
      const missing = formats.filter((format, index) => !results[index]!.matches.some((match) =>
        match.algorithm === format.name && match.hashcat === format.hashcat && match.displayName === format.displayName && match.format === format.format))
      assert.deepEqual(missing.map((format) => `${format.name} ${format.example}`), [])
      const bcrypt = formats.find((format) => format.name === 'bcrypt')!
      assert.equal(bcrypt.hashcat, 3200)
      assert.match(bcrypt.syntax, /2 digits \(cost\)/)
      assert.equal(formats.find((format) => format.name === 'md5' && format.format === undefined)!.syntax, '32 hex digits')
    })

    it('is stable between requests and described in the OpenAPI document', async () => {
      assert.equal((await server.get('/api/identify/formats')).body.version, version)
      const openapi = (await server.get('/api/openapi.json')).body
      assert.ok(openapi.paths['/api/identify/formats']?.get, 'GET /api/identify/formats is documented')
    })

    it('with popular: true keeps only the formats it marks popular', { skip: skipUnless('openssl') }, async () => {
      const popular = new Set(formats.filter((format) => format.popular).map((format) => `${format.name}|${format.displayName}`))
      const hash = run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]!
      const all = await identify({ hash })
      const kept = await identify({ hash, popular: true })
      assert.ok(kept.matches.length > 0 && kept.matches.length < all.matches.length, `${kept.matches.length} of ${all.matches.length}`)
      assert.ok(kept.matches.every((match) => popular.has(`${match.algorithm}|${match.displayName}`)), kept.matches.map((match) => match.algorithm).join(', '))
      assert.deepEqual(kept.matches.map((match) => match.algorithm).slice(0, 2), ['md5', 'ntlm'])
      // Confidences are those of the full ranking: filtering does not inflate them.
      assert.equal(kept.matches[0]!.confidence, all.matches[0]!.confidence)
    })
  })
})
