/**
 * POST /api/checksums without outside tools: lists written by hand from published vectors
 * (FIPS 180-2 appendix B, RFC 1321 appendix A.5, RFC 7693 appendix A, the xxHash and BLAKE3
 * reference outputs for "abc"), every line form the parser reads, the answer's statuses and `ok`,
 * the `sha256sum -c` text form, the limits and the errors. test/checksums-tools.test.ts repeats
 * the check against the real tools' own lists and signatures.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { fields as fuzzFields } from '../fuzz/support.js'
import { parseChecksumList } from '../src/checksums/list.js'
import { Problem } from '../src/problem.js'
import { assertCleanAnswer, fuzzParameters } from './helpers/fuzz.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1: SHA-256("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
/** FIPS 180-2 appendix C.1: SHA-512("abc"). */
const SHA512_ABC = 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f'
/** RFC 1321 appendix A.5: MD5("abc"). */
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'
/** RFC 7693 appendix A: BLAKE2b-512("abc"). */
const BLAKE2B_ABC = 'ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923'
/** The BLAKE3 reference implementation (b3sum) for "abc". */
const BLAKE3_ABC = '6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85'
/** SHA-1("abc"), FIPS 180-2 appendix A.1. */
const SHA1_ABC = 'a9993e364706816aba3e25717850c26c9cd0d89d'

/** Inputs on which a fuzz target once failed (npm run fuzz), kept as regression tests. */
const FINDINGS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fuzz', 'findings')

const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64')

/**
 * A signify key made here with Node's Ed25519 (no tool needed), in OpenBSD signify's formats
 * (signify.c): a public key file is a comment line and base64 of `Ed` + an 8-byte key number +
 * the 32-byte key; a detached signature, base64 of `Ed` + the key number + the 64-byte Ed25519
 * signature of the message. test/checksums-tools.test.ts checks signify's own files.
 */
function signifyKey(): { publicKey: string, keyNumber: string, sign: (message: string) => string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url')
  const keyNumber = randomBytes(8)
  return {
    publicKey: `untrusted comment: signify public key\n${Buffer.concat([Buffer.from('Ed'), keyNumber, raw]).toString('base64')}\n`,
    keyNumber: keyNumber.toString('hex'),
    sign: (message) => `untrusted comment: verify with key.pub\n${Buffer.concat([Buffer.from('Ed'), keyNumber, sign(null, Buffer.from(message), privateKey)]).toString('base64')}\n`,
  }
}

interface Part { name: string, value: string | Blob, filename?: string }

async function check(server: TestServer, parts: Part[], headers: Record<string, string> = {}): Promise<TestResponse> {
  const form = new FormData()
  for (const part of parts) {
    if (part.filename !== undefined) form.append(part.name, part.value instanceof Blob ? part.value : new Blob([part.value]), part.filename)
    else form.append(part.name, part.value)
  }
  return toTestResponse(await fetch(`${server.url}/api/checksums`, { method: 'POST', body: form, headers }))
}

const list = (text: string, filename?: string): Part => (filename === undefined ? { name: 'checksums', value: text } : { name: 'checksums', value: text, filename })
const file = (name: string, content: string | Uint8Array): Part => ({ name: 'file', value: new Blob([content]), filename: name })

const statuses = (response: TestResponse): Array<[string, string, string | undefined]> =>
  response.body.files.map((entry: { name: string, status: string, algorithm?: string }) => [entry.name, entry.status, entry.algorithm])

describe('the checksum list parser', () => {
  const parse = (text: string, listName?: string) => parseChecksumList(text, { maxLines: 1000, ...(listName ? { listName } : {}) })

  it('reads GNU lines in text and binary mode, and guesses by length', () => {
    const parsed = parse(`${SHA256_ABC}  abc.txt\n${MD5_ABC} *abc.bin\n`)
    assert.deepEqual(parsed.entries.map((entry) => [entry.name, entry.algorithm.name, entry.algorithmFrom, entry.expected.toString('hex')]),
      [['abc.txt', 'sha256', 'length', SHA256_ABC], ['abc.bin', 'md5', 'length', MD5_ABC]])
  })

  it('undoes GNU escaping on lines that start with a backslash, and only there', () => {
    const parsed = parse(`\\${SHA256_ABC}  back\\\\slash\\nnewline\n${SHA256_ABC}  plain\\name\nSHA256 (x) = ${SHA256_ABC}\n\\SHA256 (tab\\\\x) = ${SHA256_ABC}\n`)
    assert.deepEqual(parsed.entries.map((entry) => entry.name), ['back\\slash\nnewline', 'plain\\name', 'x', 'tab\\x'])
  })

  it('refuses an unknown escape, as coreutils does', () => {
    const parsed = parse(`\\${SHA256_ABC}  bad\\qescape\n${SHA256_ABC}  good\n`)
    assert.deepEqual(parsed.entries.map((entry) => entry.name), ['good'])
    assert.equal(parsed.skipped[0]?.line, 1)
  })

  it('reads BSD tags, including RHash\'s padded tags and OpenSSL\'s SHA2-256(x)= form', () => {
    const parsed = parse([
      `SHA512 (a) = ${SHA512_ABC}`, `BLAKE2b (b) = ${BLAKE2B_ABC}`, `MD5   (c) = ${MD5_ABC}`, `SHA2-256(d)= ${SHA256_ABC}`,
      `SHA1 (name with (parens) = x) = ${SHA1_ABC}`, `TTH   (e) = 62kjl4lb5rqhi7reexsjb6knl7rvurmt5mprrii`,
    ].join('\n'))
    assert.deepEqual(parsed.entries.map((entry) => [entry.name, entry.algorithm.name, entry.algorithmFrom]),
      [['a', 'sha512', 'tag'], ['b', 'blake2b-512', 'tag'], ['c', 'md5', 'tag'], ['d', 'sha256', 'tag'], ['name with (parens) = x', 'sha1', 'tag']])
    assert.deepEqual(parsed.skipped, [{ line: 6, reason: 'unknown algorithm tag', tag: 'TTH' }])
  })

  it('takes a hint from the list\'s file name, when the digest has that length', () => {
    assert.equal(parse(`${BLAKE3_ABC}  abc`, 'B3SUMS').entries[0]?.algorithm.name, 'blake3')
    assert.equal(parse(`${BLAKE3_ABC}  abc`, 'release/abc.b3').entries[0]?.algorithmFrom, 'list-name')
    assert.equal(parse(`${SHA512_ABC}  abc`, 'SHA512SUMS').entries[0]?.algorithm.name, 'sha512')
    assert.equal(parse(`${BLAKE2B_ABC}  abc`, 'B2SUMS').entries[0]?.algorithm.name, 'blake2b-512')
    // A hint that does not fit the digest's length gives way to the length.
    assert.equal(parse(`${SHA256_ABC}  abc`, 'SHA512SUMS').entries[0]?.algorithm.name, 'sha256')
  })

  it('reads base64 digests, CRLF line ends, blank and comment lines', () => {
    const parsed = parse(`# made by hand\r\n\r\n${b64(SHA256_ABC)}  a\r\nSHA512 (b) = ${b64(SHA512_ABC)}\r\n   # indented comment\r\n`)
    assert.deepEqual(parsed.entries.map((entry) => [entry.name, entry.algorithm.name, entry.encoding]), [['a', 'sha256', 'base64'], ['b', 'sha512', 'base64']])
    assert.equal(parsed.skipped.length, 0)
  })

  it('names the first bad line when none is usable (422), and refuses too many lines (413)', () => {
    assert.throws(() => parse('# only a comment\n\nnot a checksum\nabc  x\n'), (error: unknown) =>
      error instanceof Problem && error.status === 422 && /line 3/.test(error.detail) && error.extensions.line === 3)
    assert.throws(() => parseChecksumList(`${SHA256_ABC}  a\n`.repeat(11), { maxLines: 10 }), (error: unknown) => error instanceof Problem && error.status === 413)
  })
})

describe('POST /api/checksums', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('checks files against a GNU list: ok, failed (one byte changed), missing, unlisted', async () => {
    const response = await check(server, [
      list(`${SHA256_ABC}  abc.txt\n${SHA256_ABC}  changed.txt\n${SHA256_ABC}  missing.txt\n`),
      file('abc.txt', 'abc'), file('changed.txt', 'abd'), file('extra.txt', 'abc'),
    ])
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(statuses(response), [
      ['abc.txt', 'ok', 'sha256'], ['changed.txt', 'failed', 'sha256'], ['missing.txt', 'missing', 'sha256'], ['extra.txt', 'unlisted', undefined],
    ])
    assert.deepEqual(response.body.counts, { ok: 1, failed: 1, missing: 1, unlisted: 1 })
    assert.equal(response.body.ok, false)
    const [ok, failed, missing] = response.body.files
    assert.equal(ok.actual, SHA256_ABC)
    assert.equal(ok.algorithmGuessed, true)
    assert.equal(failed.expected, SHA256_ABC)
    assert.notEqual(failed.actual, SHA256_ABC)
    assert.equal(missing.actual, undefined)
  })

  it('is ok with a missing file, but not with strict', async () => {
    const parts = (strict: string) => [list(`${SHA256_ABC}  abc.txt\n${SHA256_ABC}  missing.txt\n`), { name: 'strict', value: strict }, file('abc.txt', 'abc')]
    const lenient = await check(server, parts('false'))
    assert.equal(lenient.body.ok, true)
    const strict = await check(server, parts('true'))
    assert.equal(strict.status, 200)
    assert.equal(strict.body.ok, false)
    assert.equal(strict.body.strict, true)
  })

  it('is not ok when no file was checked', async () => {
    const response = await check(server, [list(`${SHA256_ABC}  abc.txt\n`), file('other.txt', 'abc')])
    assert.equal(response.status, 200)
    assert.equal(response.body.ok, false)
    assert.deepEqual(response.body.counts, { ok: 0, failed: 0, missing: 1, unlisted: 1 })
  })

  it('checks one file against several algorithms in one pass (a mixed list), in list order', async () => {
    const response = await check(server, [
      list(`SHA512 (abc) = ${SHA512_ABC}\n${MD5_ABC}  abc\nBLAKE2b (abc) = ${BLAKE2B_ABC}\n${SHA256_ABC}  other\n`),
      file('abc', 'abc'), file('other', 'abc'),
    ])
    assert.deepEqual(statuses(response), [['abc', 'ok', 'sha512'], ['abc', 'ok', 'md5'], ['abc', 'ok', 'blake2b-512'], ['other', 'ok', 'sha256']])
    assert.equal(response.body.files[0].algorithmGuessed, undefined)
    assert.equal(response.body.ok, true)
  })

  it('takes the algorithm of untagged lines from the algorithm field', async () => {
    const response = await check(server, [list(`${BLAKE3_ABC}  abc\n`), { name: 'algorithm', value: 'BLAKE3' }, file('abc', 'abc')])
    assert.deepEqual(statuses(response), [['abc', 'ok', 'blake3']])
    assert.equal(response.body.files[0].algorithmGuessed, undefined)
    const unknown = await check(server, [list(`${BLAKE3_ABC}  abc\n`), { name: 'algorithm', value: 'no-such-hash' }, file('abc', 'abc')])
    assert.equal(unknown.status, 400)
    assert.equal(unknown.headers.get('content-type'), 'application/problem+json; charset=utf-8')
  })

  it('takes the list as a file part, whose name hints at the algorithm', async () => {
    const response = await check(server, [list(`${BLAKE3_ABC}  abc\n`, 'B3SUMS'), file('abc', 'abc')])
    assert.deepEqual(statuses(response), [['abc', 'ok', 'blake3']])
    assert.equal(response.body.files[0].algorithmGuessed, true)
  })

  it('shows the computed digest the way the list wrote it (base64 here)', async () => {
    const response = await check(server, [list(`${b64(SHA256_ABC)}  abc\n`), file('abc', 'abd')])
    assert.equal(response.body.files[0].expected, b64(SHA256_ABC))
    assert.match(response.body.files[0].actual, /^[A-Za-z0-9+/]{43}=$/)
    assert.equal(response.body.files[0].status, 'failed')
  })

  it('matches by exact name first, then by base name; names with spaces and backslashes', async () => {
    const response = await check(server, [
      list(`${SHA256_ABC}  dist/app.tar.gz\n${SHA256_ABC}  app.tar.gz\n\\${SHA256_ABC}  dir/back\\\\slash\n${SHA256_ABC}  with space.txt\n`),
      file('app.tar.gz', 'abc'), file('back\\slash', 'abc'), file('with space.txt', 'abc'),
    ])
    assert.deepEqual(statuses(response), [
      ['dist/app.tar.gz', 'missing', 'sha256'], ['app.tar.gz', 'ok', 'sha256'], ['dir/back\\slash', 'ok', 'sha256'], ['with space.txt', 'ok', 'sha256'],
    ])
    assert.equal(response.body.files[2].file, 'back\\slash')
  })

  it('answers as sha256sum -c prints with Accept: text/plain, 200 only when the check passed, else 422 with the text', async () => {
    const parts = [
      list(`${SHA256_ABC}  abc.txt\n${SHA256_ABC}  changed.txt\n${SHA256_ABC}  missing.txt\ngarbage\n`),
      file('abc.txt', 'abc'), file('changed.txt', 'abd'), file('extra', 'x'),
    ]
    const failed = await check(server, parts, { accept: 'text/plain' })
    assert.equal(failed.status, 422, 'a FAILED file fails the request, so curl -f fails a CI job')
    assert.match(failed.headers.get('content-type') ?? '', /^text\/plain/)
    // As `sha256sum -c --ignore-missing` prints it (stdout, then its warnings with hashd: for sha256sum:).
    assert.equal(failed.text, [
      'abc.txt: OK', 'changed.txt: FAILED', 'hashd: WARNING: 1 line is improperly formatted',
      'hashd: WARNING: 1 computed checksum did NOT match', 'hashd: WARNING: 1 file sent is not in the list', '',
    ].join('\n'))
    // strict: as `sha256sum -c`, a file not sent is FAILED open or read.
    const strict = await check(server, [parts[0]!, { name: 'strict', value: 'true' }, ...parts.slice(1)], { accept: 'text/plain' })
    assert.equal(strict.status, 422)
    assert.equal(strict.text, [
      'abc.txt: OK', 'changed.txt: FAILED', 'missing.txt: FAILED open or read', 'hashd: WARNING: 1 line is improperly formatted',
      'hashd: WARNING: 1 listed file could not be read', 'hashd: WARNING: 1 computed checksum did NOT match', 'hashd: WARNING: 1 file sent is not in the list', '',
    ].join('\n'))
    const passed = await check(server, [parts[0]!, file('abc.txt', 'abc')], { accept: 'text/plain' })
    assert.deepEqual([passed.status, passed.text], [200, 'abc.txt: OK\nhashd: WARNING: 1 line is improperly formatted\n'])
    const none = await check(server, [list(`${SHA256_ABC}  abc.txt\n`, 'SHA256SUMS'), file('other', 'abc')], { accept: 'text/plain' })
    assert.deepEqual([none.status, none.text], [422, 'hashd: WARNING: 1 file sent is not in the list\nhashd: SHA256SUMS: no file was verified\n'])
    // The JSON answer is 200 either way: `ok` says.
    const json = await check(server, parts)
    assert.deepEqual([json.status, json.body.ok], [200, false])
  })

  it('names the signature it verified in the text, and answers a bad one in the text asked for', async () => {
    const listText = `${SHA256_ABC}  abc.txt\n`
    const signer = signifyKey()
    // As file parts: a form's text fields have their line ends made CRLF, which a signature sees.
    const signed = (text: string, accept = 'text/plain') => check(server, [
      list(text, 'SHA256SUMS'), { name: 'signature', value: new Blob([signer.sign(text)]), filename: 'SHA256SUMS.sig' },
      { name: 'publicKey', value: signer.publicKey }, file('abc.txt', 'abc'),
    ], { accept })
    const good = await signed(listText)
    assert.equal(good.status, 200, good.text)
    assert.equal(good.text, `hashd: good signify signature of the checksum list by key ${signer.keyNumber}\nabc.txt: OK\n`)
    const bad = await check(server, [
      list(`${SHA256_ABC}  abc.txt \n`, 'SHA256SUMS'), { name: 'signature', value: new Blob([signer.sign(listText)]), filename: 'SHA256SUMS.sig' },
      { name: 'publicKey', value: signer.publicKey }, file('abc.txt', 'abc'),
    ], { accept: 'text/plain' })
    assert.equal(bad.status, 422)
    assert.equal(bad.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.match(bad.text, /^hashd: urn:hashd:problem:bad-signature: The signify signature does not verify: .*; no file was checked\n$/)
    const badJson = await check(server, [
      list(`${SHA256_ABC}  abc.txt \n`, 'SHA256SUMS'), { name: 'signature', value: new Blob([signer.sign(listText)]), filename: 'SHA256SUMS.sig' },
      { name: 'publicKey', value: signer.publicKey }, file('abc.txt', 'abc'),
    ])
    assert.deepEqual([badJson.status, badJson.headers.get('content-type'), badJson.body.type], [422, 'application/problem+json; charset=utf-8', 'urn:hashd:problem:bad-signature'])
    const malformed = await check(server, [list('garbage\n'), file('abc.txt', 'abc')], { accept: 'text/plain' })
    assert.equal(malformed.status, 422)
    assert.match(malformed.text, /^hashd: urn:hashd:problem:\S+: .*line 1/)
  })

  it('gates a CI job: curl -f succeeds on a passing check and fails on a tampered file or a bad signature', { skip: skipUnless('curl') }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-checksums-curl-'))
    try {
      const signer = signifyKey()
      writeFileSync(join(dir, 'SHA256SUMS'), `${SHA256_ABC}  abc.txt\n`)
      writeFileSync(join(dir, 'SHA256SUMS.sig'), signer.sign(`${SHA256_ABC}  abc.txt\n`))
      writeFileSync(join(dir, 'key.pub'), signer.publicKey)
      // Asynchronously: the server runs in this process and must answer meanwhile.
      const curl = (content: string) => {
        writeFileSync(join(dir, 'abc.txt'), content)
        return new Promise<{ status: number | null, stdout: string, stderr: string }>((resolve) => {
          execFile('curl', ['-sS', '-f', '-H', 'Accept: text/plain', '-F', 'checksums=@SHA256SUMS', '-F', 'signature=@SHA256SUMS.sig',
            '-F', 'publicKey=@key.pub', '-F', 'file=@abc.txt', `${server.url}/api/checksums`], { cwd: dir, encoding: 'utf8' },
          (error, stdout, stderr) => resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }))
        })
      }
      const good = await curl('abc')
      assert.equal(good.status, 0, good.stderr)
      assert.match(good.stdout, /^hashd: good signify signature .*\nabc.txt: OK\n$/)
      const tampered = await curl('abd')
      assert.equal(tampered.status, 22, 'curl -f exits 22 on an HTTP error')
      assert.match(tampered.stderr, /error: 422/)
      writeFileSync(join(dir, 'SHA256SUMS'), `${SHA256_ABC}  abc.txt\n${SHA256_ABC}  other\n`)
      assert.equal((await curl('abc')).status, 22, 'a list changed after signing fails too')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('reports skipped lines with their numbers', async () => {
    const response = await check(server, [list(`garbage\n${SHA256_ABC}  abc\nEDON-R256 (abc) = 00\n`), file('abc', 'abc')])
    assert.equal(response.body.ok, true)
    assert.deepEqual(response.body.skipped.map((skip: { line: number }) => skip.line), [1, 3])
    assert.equal(response.body.skippedLines, 2)
  })

  it('refuses a list with no usable line with 422 naming the first bad line, before any file', async () => {
    const response = await check(server, [list('# comment\n\nthis is not a checksum line\n'), file('abc', 'abc')])
    assert.equal(response.status, 422)
    assert.equal(response.body.type, 'urn:hashd:problem:no-checksum-lines')
    assert.match(response.body.detail, /line 3/)
    assert.equal(response.body.line, 3)
  })

  it('refuses a form without a list, a signature without a key, an unknown field, and fields after a file', async () => {
    assert.equal((await check(server, [file('abc', 'abc')])).status, 400)
    const noKey = await check(server, [list(`${SHA256_ABC}  abc\n`), { name: 'signature', value: 'x', filename: 'abc.minisig' }, file('abc', 'abc')])
    assert.equal(noKey.status, 400)
    assert.equal(noKey.body.errors[0].pointer, '/body/publicKey')
    assert.equal((await check(server, [list(`${SHA256_ABC}  abc\n`), { name: 'colour', value: 'blue' }])).status, 400)
    const late = await check(server, [list(`${SHA256_ABC}  abc\n`), file('abc', 'abc'), { name: 'strict', value: 'true' }])
    assert.equal(late.status, 400)
    assert.match(late.body.detail, /before the first file/)
  })

  it('refuses a signature in no known scheme with 422, and hashes nothing', async () => {
    const response = await check(server, [
      list(`${SHA256_ABC}  abc\n`), { name: 'signature', value: 'just some text\n' }, { name: 'publicKey', value: 'RWQ-not-a-key' }, file('abc', 'abc'),
    ])
    assert.equal(response.status, 422)
    assert.equal(response.body.type, 'urn:hashd:problem:unsupported-signature')
  })

  // Found by the checksum-list fuzz target (fuzz/findings/checksum-list/): the tag and list-name
  // tables were object literals, so `constructor` or `__proto__` read Object's own members and
  // the lookup threw a TypeError (a 500).
  it('reads a tag or a list name that is a member of Object.prototype as any other unknown name', async () => {
    const tag = await check(server, [list(`constructor (abc) = ${SHA256_ABC}\n`), file('abc', 'abc')])
    assert.equal(tag.status, 422, tag.text)
    assert.equal(tag.body.type, 'urn:hashd:problem:no-checksum-lines')
    assert.match(tag.body.detail, /unknown algorithm tag/)
    for (const listName of ['__proto__SUMS', 'release.constructor', 'hasOwnProperty.txt']) {
      const named = await check(server, [list(`${SHA256_ABC}  abc\n`, listName), file('abc', 'abc')])
      assert.deepEqual(statuses(named), [['abc', 'ok', 'sha256']], listName)
      assert.equal(named.body.files[0].algorithmGuessed, true)
    }
    const [, listName, text] = fuzzFields(readFileSync(join(FINDINGS, 'checksum-list', 'list-name-proto-typeerror')), 3)
    const found = await check(server, [list(text!.toString('utf8'), listName!.toString('utf8')), { name: 'algorithm', value: 'blake3' }, file('abc', 'abc')])
    assertCleanAnswer(found.status, found.headers.get('content-type'), found.text, 'the fuzzer\'s input')
  })

  // Found by the openpgp-armor fuzz target (fuzz/findings/openpgp-armor/): a signature packet of
  // an unknown version is kept unparsed by OpenPGP.js and names no key; its undefined key id
  // threw a TypeError (a 500).
  it('refuses an OpenPGP signature whose packet names no key with 422 malformed-signature', async () => {
    const [, signature, key] = fuzzFields(readFileSync(join(FINDINGS, 'openpgp-armor', 'signature-packet-without-issuer-typeerror')), 3)
    const response = await check(server, [
      list(`${SHA256_ABC}  abc\n`), { name: 'signature', value: new Blob([signature!]), filename: 'SHA256SUMS.asc' }, { name: 'publicKey', value: key!.toString('utf8') }, file('abc', 'abc'),
    ])
    assert.equal(response.status, 422, response.text)
    assert.equal(response.body.type, 'urn:hashd:problem:malformed-signature')
    assert.match(response.body.detail, /names no signing key/)
  })

  it('is in the OpenAPI document with its form fields and both answer types', async () => {
    const spec = (await server.get('/api/openapi.json')).body
    const post = spec.paths['/api/checksums'].post
    assert.deepEqual(Object.keys(post.requestBody.content['multipart/form-data'].schema.properties).sort(),
      ['algorithm', 'checksums', 'file', 'publicKey', 'signature', 'strict'])
    assert.deepEqual(Object.keys(post.responses['200'].content).sort(), ['application/json', 'text/plain'])
    assert.ok(post.responses['422'])
    assert.ok(post.responses['413'])
  })
})

describe('POST /api/checksums limits', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({ MAX_CHECKSUM_LIST_BYTES: '2048', MAX_CHECKSUM_LINES: '20', MAX_CHECKSUM_FILES: '2', MAX_CHECKSUM_BODY_BYTES: '4096', MAX_FILE_SIZE: '3000' })
  })
  after(async () => { await server.close() })

  it('refuses a list over MAX_CHECKSUM_LIST_BYTES, as a field or a file part (413)', async () => {
    const big = `${SHA256_ABC}  abc\n`.repeat(40)
    for (const part of [list(big), list(big, 'SHA256SUMS')]) {
      const response = await check(server, [part, file('abc', 'abc')])
      assert.equal(response.status, 413, response.text)
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8')
    }
  })

  it('refuses a list over MAX_CHECKSUM_LINES (413)', async () => {
    const response = await check(server, [list('\n'.repeat(25) + `${SHA256_ABC}  abc\n`), file('abc', 'abc')])
    assert.equal(response.status, 413)
    assert.match(response.body.detail, /MAX_CHECKSUM_LINES/)
  })

  it('refuses more than MAX_CHECKSUM_FILES files (413)', async () => {
    const response = await check(server, [list(`${SHA256_ABC}  abc\n`), file('a', 'abc'), file('b', 'abc'), file('c', 'abc')])
    assert.equal(response.status, 413)
    assert.match(response.body.detail, /MAX_CHECKSUM_FILES/)
  })

  it('refuses a file over MAX_FILE_SIZE and files together over MAX_CHECKSUM_BODY_BYTES (413)', async () => {
    const one = await check(server, [list(`${SHA256_ABC}  abc\n`), file('abc', new Uint8Array(3001))])
    assert.equal(one.status, 413)
    const two = await check(server, [list(`${SHA256_ABC}  abc\n`), file('a', new Uint8Array(2500)), file('b', new Uint8Array(2500))])
    assert.equal(two.status, 413)
    assert.match(two.body.detail, /MAX_CHECKSUM_BODY_BYTES/)
  })
})

describe('POST /api/checksums under random input', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('parses any text into entries, skips or a 4xx problem, never anything else', () => {
    const lineish = fc.oneof(
      fc.string({ maxLength: 120 }),
      fc.tuple(fc.constantFrom('', '\\'), fc.stringMatching(/^[0-9a-fA-F+/=]{0,130}$/), fc.constantFrom('  ', ' *', ' '), fc.string({ maxLength: 40 }))
        .map(([escape, digest, mode, name]) => `${escape}${digest}${mode}${name}`),
      fc.tuple(fc.constantFrom('SHA256', 'MD5', 'BLAKE2b', 'XXH3', 'TTH', 'SHA2-256', 'x'), fc.string({ maxLength: 30 }), fc.stringMatching(/^[0-9a-zA-Z+/=]{0,90}$/))
        .map(([tag, name, digest]) => `${tag} (${name}) = ${digest}`),
    )
    fc.assert(fc.property(fc.array(lineish, { maxLength: 20 }), fc.constantFrom('\n', '\r\n'), (lines, end) => {
      try {
        const parsed = parseChecksumList(lines.join(end), { maxLines: 1000 })
        for (const entry of parsed.entries) assert.equal(entry.expected.length, entry.algorithm.outputBytes)
      } catch (error) {
        assert.ok(error instanceof Problem && error.status >= 400 && error.status < 500, String(error))
      }
    }), fuzzParameters())
  })

  it('answers random signatures and keys with a 4xx problem, never a 5xx', async () => {
    const blob = (prefix: string, length: number) => fc.uint8Array({ minLength: length, maxLength: length })
      .map((bytes) => Buffer.concat([Buffer.from(prefix), Buffer.from(bytes)]).toString('base64'))
    const signature = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
      fc.tuple(blob('Ed', 72), blob('', 64), fc.string({ maxLength: 20 }))
        .map(([sig, global, comment]) => Buffer.from(`untrusted comment: x\n${sig}\ntrusted comment: ${comment}\n${global}\n`)),
      blob('Ed', 72).map((sig) => Buffer.from(`untrusted comment: x\n${sig}\n`)),
      fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.from(`-----BEGIN PGP SIGNATURE-----\n\n${Buffer.from(bytes).toString('base64')}\n-----END PGP SIGNATURE-----\n`)),
      fc.uint8Array({ maxLength: 120 }).map((bytes) => Buffer.concat([Buffer.from([0xc2]), Buffer.from(bytes)])),
    )
    const key = fc.oneof(
      blob('Ed', 40),
      fc.string({ maxLength: 80 }),
      fc.uint8Array({ maxLength: 120 }).map((bytes) => `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${Buffer.from(bytes).toString('base64')}\n-----END PGP PUBLIC KEY BLOCK-----\n`),
    )
    await fc.assert(fc.asyncProperty(signature, key, async (signatureBytes, keyText) => {
      const response = await check(server, [
        list(`${SHA256_ABC}  abc\n`), { name: 'signature', value: new Blob([signatureBytes]), filename: 'list.sig' }, { name: 'publicKey', value: keyText }, file('abc', 'abc'),
      ])
      assertCleanAnswer(response.status, response.headers.get('content-type'), response.text, 'random signature')
      assert.ok(response.status >= 400, 'a random signature never verifies')
    }), fuzzParameters(0.5))
  })
})
