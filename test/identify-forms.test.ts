/**
 * /api/identify and /api/verify on digests as people paste them: base64 and base64url (padded or
 * not), SRI / npm integrity, OpenSSH and X.509 fingerprints, OCI digests, Nix hashes, go.sum h1:,
 * git object ids, S3 multipart ETags, and truncated strings (near misses).
 *
 * Every value is made live by an independent tool (openssl, ssh-keygen, Python's hashlib and
 * base64) or copied from a published document (the Nix manual, the Go modules reference, the OCI
 * image spec); nothing is compared against hashd's own output.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless } from './helpers/tools.js'

const CONTENT = 'correct horse battery staple'

interface Match {
  algorithm: string
  confidence: number
  hashcat: number | null
  format?: string
  problem?: string
  params?: Record<string, number | string>
  verifiable: boolean
}

/** base64 of a digest of CONTENT, from `openssl dgst -binary | base64` (coreutils). */
function opensslBase64(digest: string, content = CONTENT): string {
  return run('sh', ['-c', `openssl dgst -${digest} -binary | base64 -w0`], content)
}

/** The same digest in base64url without padding, from Python's base64 module. */
function pythonBase64Url(digest: string, padded: boolean): string {
  return python(`import base64, hashlib, sys; s = base64.urlsafe_b64encode(hashlib.new(sys.argv[1], sys.argv[2].encode()).digest()).decode(); print(s if sys.argv[3] == '1' else s.rstrip('='))`, [digest, CONTENT, padded ? '1' : '0'])
}

describe('identify and verify: digests in the forms people paste', () => {
  let server: TestServer
  let directory: string
  before(async () => {
    server = await startServer()
    directory = mkdtempSync(join(tmpdir(), 'hashd-forms-'))
  })
  after(async () => {
    await server.close()
    rmSync(directory, { recursive: true, force: true })
  })

  const identify = async (hash: string): Promise<Match[]> => {
    const response = await server.post('/api/identify', { hash })
    assert.equal(response.status, 200, response.text)
    return response.body.matches
  }
  const rankOf = (matches: Match[], algorithm: string, format?: string): number =>
    matches.findIndex((match) => match.algorithm === algorithm && (format === undefined || match.format === format)) + 1
  const verify = async (hash: string, input: string, inputEncoding?: string): Promise<{ status: number, body: { match: boolean, algorithm: string | null, type?: string } }> => {
    const response = await server.post('/api/verify', { input, hash, ...(inputEncoding ? { inputEncoding } : {}) })
    return { status: response.status, body: response.body }
  }

  it('reads base64 digests from openssl dgst -binary | base64, padded or not: md5, sha1, sha256, sha512 first, the rest in the top 5', { skip: skipUnless('openssl', 'sha256sum') }, async () => {
    const cases: Array<[string, string, number]> = [
      ['md5', 'md5', 1], ['sha1', 'sha1', 1], ['sha256', 'sha256', 1], ['sha512', 'sha512', 1],
      ['sha224', 'sha224', 5], ['sha384', 'sha384', 5], ['sha3-256', 'sha3-256', 5], ['sha3-512', 'sha3-512', 5],
      ['blake2b512', 'blake2b-512', 5], ['ripemd160', 'ripemd160', 5],
    ]
    for (const [openssl, name, required] of cases) {
      const padded = opensslBase64(openssl)
      for (const form of [padded, padded.replace(/=+$/, '')]) {
        const matches = await identify(form)
        const rank = rankOf(matches, name, 'base64')
        assert.ok(rank >= 1 && rank <= required, `${openssl} ${form}: ${name} ranked ${rank}, needs ≤ ${required} (${matches.slice(0, 5).map((match) => match.algorithm).join(', ')})`)
        assert.equal(matches[rank - 1]!.verifiable, true)
        const verified = await verify(form, CONTENT)
        assert.equal(verified.status, 200)
        assert.equal(verified.body.match, true, `${openssl} ${form}`)
        assert.equal((await verify(form, `${CONTENT}!`)).body.match, false)
      }
    }
  })

  it('reads base64url digests from Python, padded or not; - or _ rules out crypt formats, + or / rules out base64url', { skip: skipUnless('python3') }, async () => {
    for (const [digest, required] of [['md5', 1], ['sha1', 1], ['sha256', 1], ['sha512', 1], ['sha384', 5], ['sha3_256', 5]] as const) {
      const name = digest.replace('_', '-')
      for (const padded of [true, false]) {
        const form = pythonBase64Url(digest, padded)
        const matches = await identify(form)
        const rank = rankOf(matches, name, 'base64')
        assert.ok(rank >= 1 && rank <= required, `${digest} ${form}: ${name} ranked ${rank} (${matches.slice(0, 5).map((match) => match.algorithm).join(', ')})`)
        if (/[-_]/.test(form)) {
          assert.match(String(matches[rank - 1]!.params?.encoding), /^base64url/)
          assert.ok(!matches.some((match) => match.hashcat === 5700 || match.hashcat === 2400), `${form}: a crypt-alphabet format matched a string with - or _`)
        }
        assert.equal((await verify(form, CONTENT)).body.match, true, `${digest} ${form}`)
      }
    }
    // A string with + or / is standard base64, never base64url.
    const standard = python('import base64, hashlib\nfor i in range(1000):\n    s = base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode()\n    if "+" in s and "/" in s:\n        print(s); break')
    const top = (await identify(standard))[0]!
    assert.equal(top.algorithm, 'sha256')
    assert.match(String(top.params?.encoding), /^base64(?!url)/)
  })

  it('reads SRI / npm integrity values made with hashlib + base64, and verifies the input against them', { skip: skipUnless('python3') }, async () => {
    for (const digest of ['sha256', 'sha384', 'sha512', 'sha1']) {
      const sri = python('import base64, hashlib, sys; print(sys.argv[1] + "-" + base64.b64encode(hashlib.new(sys.argv[1], sys.argv[2].encode()).digest()).decode())', [digest, CONTENT])
      const top = (await identify(sri))[0]!
      assert.deepEqual([top.algorithm, top.format, top.verifiable], [digest, 'sri', true], sri)
      assert.ok(top.confidence >= 0.5)
      const verified = await verify(sri, CONTENT)
      assert.deepEqual([verified.status, verified.body.match, verified.body.algorithm], [200, true, digest])
      assert.equal((await verify(sri, 'something else')).body.match, false)
      // Named algorithm: the same answer; a different one is a malformed hash, not a silent miss.
      assert.equal((await server.post('/api/verify', { input: CONTENT, hash: sri, algorithm: digest })).body.match, true)
    }
    const sha384 = python('import base64, hashlib, sys; print("sha384-" + base64.b64encode(hashlib.sha384(sys.argv[1].encode()).digest()).decode())', [CONTENT])
    assert.equal((await server.post('/api/verify', { input: CONTENT, hash: sha384, algorithm: 'sha256' })).status, 422)
  })

  it('reads OpenSSH fingerprints from ssh-keygen -l (SHA256: and -E md5) and verifies the key blob against them', { skip: skipUnless('ssh-keygen') }, async () => {
    const key = join(directory, 'id_ed25519')
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'hashd test', '-f', key])
    const other = join(directory, 'other')
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other])
    const blob = readFileSync(`${key}.pub`, 'utf8').split(' ')[1]!
    const otherBlob = readFileSync(`${other}.pub`, 'utf8').split(' ')[1]!
    for (const [flags, algorithm] of [[[], 'sha256'], [['-E', 'md5'], 'md5']] as const) {
      const line = run('ssh-keygen', ['-l', ...flags, '-f', `${key}.pub`])
      const fingerprint = line.split(' ')[1]!
      for (const text of [fingerprint, line]) {
        const top = (await identify(text))[0]!
        assert.deepEqual([top.algorithm, top.format, top.verifiable], [algorithm, 'openssh-fingerprint', true], text)
      }
      const verified = await verify(fingerprint, blob, 'base64')
      assert.deepEqual([verified.status, verified.body.match, verified.body.algorithm], [200, true, algorithm], fingerprint)
      assert.equal((await verify(fingerprint, otherBlob, 'base64')).body.match, false)
    }
  })

  it('reads X.509 fingerprints from openssl x509 -fingerprint, in either case, and verifies the DER certificate against them', { skip: skipUnless('openssl') }, async () => {
    const certificate = join(directory, 'cert.pem')
    run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(directory, 'key.pem'), '-out', certificate, '-subj', '/CN=hashd test', '-days', '1'])
    const der = run('sh', ['-c', `openssl x509 -in '${certificate}' -outform DER | base64 -w0`])
    for (const digest of ['sha256', 'sha1', 'md5']) {
      const line = run('openssl', ['x509', '-in', certificate, '-noout', '-fingerprint', `-${digest}`])
      const fingerprint = line.slice(line.indexOf('=') + 1)
      for (const text of [fingerprint, fingerprint.toLowerCase(), line]) {
        const top = (await identify(text))[0]!
        assert.deepEqual([top.algorithm, top.format, top.verifiable], [digest, 'colon-hex', true], text)
      }
      const verified = await verify(fingerprint, der, 'base64')
      assert.deepEqual([verified.status, verified.body.match, verified.body.algorithm], [200, true, digest], fingerprint)
      assert.equal((await verify(fingerprint.toLowerCase(), der, 'base64')).body.match, true)
      assert.equal((await verify(fingerprint, Buffer.from('not the certificate').toString('base64'), 'base64')).body.match, false)
    }
  })

  it('reads the Nix manual\'s published hashes (nix32 and SRI) and verifies through its base32 alphabet and byte order', { skip: skipUnless('python3') }, async () => {
    // nix hash convert (Nix manual): sha256 nix32 1b8m03r6… is sha256-ungWv48B…; sha1 800d59cf… is nix32 vw46m23b…, SRI sha1-gA1Zz808….
    const nix32 = 'sha256:1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s'
    const sri = 'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='
    for (const [text, format] of [[nix32, 'nix-base32'], [sri, 'sri'], [nix32.slice(7), 'nix-base32']] as const) {
      const top = (await identify(text))[0]!
      assert.deepEqual([top.algorithm, top.format, top.verifiable], ['sha256', format, true], text)
    }
    for (const [text, format] of [['sha1:vw46m23bizj4n8afrc0fj19wrp7mj3c0', 'nix-base32'], ['sha1-gA1Zz808BekAy04hS+SPa4hqCN8=', 'sri']] as const) {
      const top = (await identify(text))[0]!
      assert.deepEqual([top.algorithm, top.format], ['sha1', format], text)
    }
    // Which content has that digest: Python's hashlib says "abc" (its base64 is the SRI body).
    assert.equal(python('import base64, hashlib; print(base64.b64encode(hashlib.sha256(b"abc").digest()).decode())'), sri.slice(7))
    for (const text of [nix32, sri, nix32.slice(7)]) {
      assert.equal((await verify(text, 'abc')).body.match, true, text)
      assert.equal((await verify(text, 'abd')).body.match, false, text)
    }
  })

  it('reads the OCI image spec\'s digests and verifies a blob against a sha256: digest made with hashlib', { skip: skipUnless('python3') }, async () => {
    // image-spec descriptor.md, "Digests": the registered sha256 example.
    const top = (await identify('sha256:6c3c624b58dbbcd3c0dd82b4c53f04194d1247c6eebdaab7c610cf7d66709b3b'))[0]!
    assert.deepEqual([top.algorithm, top.format, top.verifiable], ['sha256', 'oci-digest', true])
    // The spec prints its sha512 example cut short with "…": a near miss, with what is wrong.
    const truncated = (await identify('sha512:401b09eab3c013d4ca54922bb802bec8fd5318192b0a75f201d8b372742'))[0]!
    assert.deepEqual([truncated.algorithm, truncated.format, truncated.verifiable], ['sha512', 'oci-digest', false])
    assert.equal(truncated.problem, 'hex digest has 59 characters; an OCI sha512 digest has 128')
    for (const algorithm of ['sha256', 'sha512']) {
      const digest = python('import hashlib, sys; print(sys.argv[1] + ":" + hashlib.new(sys.argv[1], sys.argv[2].encode()).hexdigest())', [algorithm, CONTENT])
      assert.equal((await identify(digest))[0]!.format, 'oci-digest')
      assert.equal((await verify(digest, CONTENT)).body.match, true)
      assert.equal((await verify(digest, 'other layer')).body.match, false)
    }
  })

  it('names the Go modules reference\'s h1: hash, S3 multipart ETags and git object ids, and refuses to verify them', { skip: skipUnless('python3') }, async () => {
    // go.sum lines as the Go modules reference and golang.org/x/image's go.sum show them.
    const h1 = 'h1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg='
    const go = (await identify(h1))[0]!
    assert.deepEqual([go.algorithm, go.format, go.verifiable], ['sha256', 'go-sum-h1', false])
    const refused = await server.post('/api/verify', { input: CONTENT, hash: h1 })
    assert.equal(refused.status, 422)
    assert.match(refused.body.type, /verify-not-supported/)

    // S3 multipart ETag: md5 of the parts' binary md5s, then -<parts> (built with hashlib).
    const etag = python('import hashlib; parts = [b"a" * 5242880, b"tail"]; print(hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-2")')
    const s3 = (await identify(etag))[0]!
    assert.deepEqual([s3.algorithm, s3.format, s3.verifiable], ['md5', 's3-multipart-etag', false])
    assert.equal((await server.post('/api/verify', { input: CONTENT, hash: etag })).status, 422)

    // git hash-object's id of a blob: sha1("blob <size>\0" + content). Same syntax as a bare
    // sha1, which stays first; the git reading is offered in the top 5, not verifiable.
    const blobId = python('import hashlib, sys; data = sys.argv[1].encode(); print(hashlib.sha1(b"blob %d\\0" % len(data) + data).hexdigest())', [CONTENT])
    const matches = await identify(blobId)
    assert.equal(matches[0]!.algorithm, 'sha1')
    const git = rankOf(matches, 'sha1', 'git-object-id')
    assert.ok(git >= 2 && git <= 5, `git object id ranked ${git}`)
    assert.equal(matches[git - 1]!.verifiable, false)
  })

  it('answers a truncated sha512-crypt or bcrypt string with the format, a low confidence and the problem', { skip: skipUnless('mkpasswd') }, async () => {
    const sha512crypt = run('mkpasswd', ['-m', 'sha512crypt', CONTENT])
    const cut = sha512crypt.slice(0, sha512crypt.length - 46)
    const shaMatch = (await identify(cut))[0]!
    assert.equal(shaMatch.algorithm, 'sha512-crypt')
    assert.equal(shaMatch.problem, 'checksum has 40 characters; sha512-crypt has 86')
    assert.equal(shaMatch.verifiable, false)
    assert.ok(shaMatch.confidence > 0 && shaMatch.confidence < 0.2, String(shaMatch.confidence))
    const bcrypt = run('mkpasswd', ['-m', 'bcrypt', CONTENT])
    const bcryptMatch = (await identify(bcrypt.slice(0, 59)))[0]!
    assert.equal(bcryptMatch.algorithm, 'bcrypt')
    assert.match(bcryptMatch.problem ?? '', /^salt and checksum have 52 characters; bcrypt/)
    assert.ok(bcryptMatch.confidence < 0.2)
    // The whole strings are still what they were, with no problem.
    assert.equal((await identify(sha512crypt))[0]!.problem, undefined)
    assert.equal((await identify(bcrypt))[0]!.problem, undefined)
  })
})
