/**
 * POST /api/checksums against the real tools' own output: lists made by sha256sum, sha512sum
 * --tag, b2sum, b3sum, xxhsum and rhash over files named with spaces and backslashes, and
 * signatures made by minisign (prehashed and legacy), signify-openbsd (detached and embedded) and
 * gpg (armored, binary and clearsigned). Each tool runs inside its test; without it the test is skipped with the
 * Debian package named (test/helpers/tools.ts). The text answer is compared with what
 * `sha256sum -c` itself prints for the same files.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** The files every list is made over: a space and a backslash in two names, one file large enough for the threaded hashers. */
const NAMES = ['release.tar.gz', 'read me.txt', 'back\\slash.bin', 'big.iso'] as const

interface Part { name: string, value: string | Blob, filename?: string }

describe('POST /api/checksums against real tools', () => {
  let server: TestServer
  let dir: string
  const gnupgHomes: string[] = []

  before(async () => {
    server = await startServer()
    dir = mkdtempSync(join(tmpdir(), 'hashd-checksums-'))
    writeFileSync(join(dir, NAMES[0]), randomBytes(100_000))
    writeFileSync(join(dir, NAMES[1]), 'read me\n')
    writeFileSync(join(dir, NAMES[2]), randomBytes(1000))
    writeFileSync(join(dir, NAMES[3]), randomBytes(3 * 1024 * 1024))
  })
  after(async () => {
    await server.close()
    for (const home of gnupgHomes) spawnSync('gpgconf', ['--kill', 'gpg-agent'], { env: { ...process.env, GNUPGHOME: home }, stdio: 'ignore' })
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs a tool in the files' directory, so the names it writes are the bare names. */
  const tool = (command: string, args: string[], options: { env?: NodeJS.ProcessEnv, input?: string } = {}): string =>
    execFileSync(command, args, { cwd: dir, encoding: 'utf8', env: options.env ?? process.env, input: options.input, stdio: ['pipe', 'pipe', 'pipe'] })

  async function check(parts: Part[], headers: Record<string, string> = {}): Promise<TestResponse> {
    const form = new FormData()
    for (const part of parts) {
      if (part.filename !== undefined) form.append(part.name, part.value instanceof Blob ? part.value : new Blob([part.value]), part.filename)
      else form.append(part.name, part.value)
    }
    return toTestResponse(await fetch(`${server.url}/api/checksums`, { method: 'POST', body: form, headers }))
  }

  const fileParts = async (names: readonly string[] = NAMES): Promise<Part[]> =>
    Promise.all(names.map(async (name) => ({ name: 'file', value: await openAsBlob(join(dir, name)), filename: name })))

  const listPart = (text: string, filename = 'SHA256SUMS'): Part => ({ name: 'checksums', value: text, filename })

  function assertAllOk(response: TestResponse, algorithms: string[]): void {
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.ok, true, response.text)
    const files = response.body.files as Array<{ status: string, algorithm: string }>
    assert.ok(files.length > 0)
    for (const entry of files) assert.equal(entry.status, 'ok', JSON.stringify(entry))
    assert.deepEqual([...new Set(files.map((entry) => entry.algorithm))].sort(), [...algorithms].sort())
  }

  it('checks a sha256sum list, escaped names included, and answers as sha256sum -c does', { skip: skipUnless('sha256sum') }, async () => {
    const sums = tool('sha256sum', [...NAMES])
    assert.match(sums, /^\\[0-9a-f]{64} {2}back\\\\slash\.bin$/m, 'sha256sum escapes the backslash')
    assertAllOk(await check([listPart(sums), ...await fileParts()]), ['sha256'])

    // The same files, one changed by one byte and one not there, through hashd and sha256sum -c.
    const copy = mkdtempSync(join(tmpdir(), 'hashd-checksums-c-'))
    try {
      for (const name of NAMES.slice(0, 3)) writeFileSync(join(copy, name), readFileSync(join(dir, name)))
      const changed = readFileSync(join(copy, NAMES[0]))
      changed[500] = (changed[500] ?? 0) ^ 0x01
      writeFileSync(join(copy, NAMES[0]), changed)
      writeFileSync(join(copy, 'SHA256SUMS'), sums)
      const parts = await Promise.all(NAMES.slice(0, 3).map(async (name) => ({ name: 'file', value: await openAsBlob(join(copy, name)), filename: name })))
      // What coreutils writes, stdout then its warnings (less its per-file "No such file" lines), with hashd: for sha256sum:.
      const coreutils = (args: string[]) => {
        const run = spawnSync('sha256sum', args, { cwd: copy, encoding: 'utf8' })
        assert.equal(run.status, 1, 'sha256sum -c fails')
        const warnings = run.stderr.split('\n').filter((line) => line !== '' && !line.endsWith('No such file or directory'))
        return run.stdout + warnings.map((line) => `${line.replace(/^sha256sum: /, 'hashd: ')}\n`).join('')
      }
      // strict is `sha256sum -c`; without it, `sha256sum -c --ignore-missing`. Either way the check failed: 422.
      const strict = await check([listPart(sums), { name: 'strict', value: 'true' }, ...parts], { accept: 'text/plain' })
      assert.deepEqual([strict.status, strict.text], [422, coreutils(['-c', 'SHA256SUMS'])])
      const text = await check([listPart(sums), ...parts], { accept: 'text/plain' })
      assert.deepEqual([text.status, text.text], [422, coreutils(['-c', '--ignore-missing', 'SHA256SUMS'])])
      const json = await check([listPart(sums), ...parts])
      assert.deepEqual(json.body.counts, { ok: 2, failed: 1, missing: 1, unlisted: 0 })
      assert.equal(json.body.ok, false)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })

  it('checks a sha512sum --tag list', { skip: skipUnless('sha512sum') }, async () => {
    const sums = tool('sha512sum', ['--tag', ...NAMES])
    assert.match(sums, /^\\SHA512 \(back\\\\slash\.bin\) = /m)
    assertAllOk(await check([listPart(sums, 'SHA512SUMS'), ...await fileParts()]), ['sha512'])
  })

  it('checks b2sum lists: untagged B2SUMS (by its name) and --tag -l 256', { skip: skipUnless('b2sum') }, async () => {
    const response = await check([listPart(tool('b2sum', [...NAMES]), 'B2SUMS'), ...await fileParts()])
    assertAllOk(response, ['blake2b-512'])
    assert.equal(response.body.files[0].algorithmGuessed, true)
    assertAllOk(await check([listPart(tool('b2sum', ['--tag', '-l', '256', ...NAMES]), 'B2SUMS'), ...await fileParts()]), ['blake2b-256'])
  })

  it('checks a b3sum list: B3SUMS by its name, or any name with algorithm=blake3', { skip: skipUnless('b3sum') }, async () => {
    const sums = tool('b3sum', [...NAMES])
    assertAllOk(await check([listPart(sums, 'B3SUMS'), ...await fileParts()]), ['blake3'])
    const named = await check([listPart(sums, 'checksums.txt'), { name: 'algorithm', value: 'blake3' }, ...await fileParts()])
    assertAllOk(named, ['blake3'])
    assert.equal(named.body.files[0].algorithmGuessed, undefined)
  })

  it('checks xxhsum lists: every --tag variant in one list, and untagged XXH32/XXH64 by length', { skip: skipUnless('xxhsum') }, async () => {
    const tagged = ['-H0', '-H1', '-H2', '-H3'].map((variant) => tool('xxhsum', ['--tag', variant, ...NAMES])).join('')
    assertAllOk(await check([listPart(tagged, 'xxhsums'), ...await fileParts()]), ['xxh32', 'xxh64', 'xxh128', 'xxh3'])
    const untagged = tool('xxhsum', ['-H0', ...NAMES]) + tool('xxhsum', ['-H1', ...NAMES])
    assertAllOk(await check([listPart(untagged, 'list'), ...await fileParts()]), ['xxh32', 'xxh64'])
  })

  it('checks an rhash --bsd list of every algorithm both know, and rhash --base64', { skip: skipUnless('rhash') }, async () => {
    // RHash takes a backslash in a name as a path separator, so it hashes the names without one.
    const names = NAMES.filter((name) => !name.includes('\\'))
    const sums = tool('rhash', ['--bsd', '-a', ...names])
    const response = await check([listPart(sums, 'RHASHSUMS'), ...await fileParts(names)])
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.ok, true)
    assert.equal(response.body.counts.failed, 0)
    const algorithms = new Set(response.body.files.map((entry: { algorithm: string }) => entry.algorithm))
    for (const algorithm of ['crc32', 'md4', 'md5', 'sha1', 'tiger', 'ed2k', 'whirlpool', 'ripemd160', 'gost94', 'gost94-cryptopro', 'has160',
      'streebog-256', 'streebog-512', 'sha224', 'sha256', 'sha384', 'sha512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512', 'crc32c', 'blake2s-256', 'blake2b-512']) {
      assert.ok(algorithms.has(algorithm), `${algorithm} checked`)
    }
    // What hashd lacks (TTH, BTIH, AICH, EDON-R, Snefru) is skipped by name, line by line.
    assert.ok(response.body.skipped.some((skip: { reason: string, tag?: string }) => skip.reason === 'unknown algorithm tag' && skip.tag === 'TTH'))
    assertAllOk(await check([listPart(tool('rhash', ['--sha256', '--base64', ...names])), ...await fileParts(names)]), ['sha256'])
  })

  it('checks one mixed list (sha256sum, sha512sum --tag, b3sum) over CRLF, each file in one pass', { skip: skipUnless('sha256sum', 'sha512sum', 'b3sum') }, async () => {
    const mixed = `# release 1.0\n\n${tool('sha256sum', [...NAMES])}${tool('sha512sum', ['--tag', ...NAMES])}`.replaceAll('\n', '\r\n')
    const response = await check([listPart(mixed, 'CHECKSUMS'), ...await fileParts()])
    assertAllOk(response, ['sha256', 'sha512'])
    assert.equal(response.body.files.length, NAMES.length * 2)
    const b3 = await check([listPart(tool('b3sum', [...NAMES]), 'B3SUMS'), ...await fileParts()])
    assertAllOk(b3, ['blake3'])
  })

  describe('signatures', () => {
    const original = () => readFileSync(join(dir, 'SIGNED'), 'utf8')
    /** The signed list with one byte changed (a digit of the first digest). */
    const tampered = () => {
      const text = original()
      return text.slice(0, 5) + (text[5] === '0' ? '1' : '0') + text.slice(6)
    }
    const signed = async (list: string, signature: Buffer | string, key: Buffer | string, sigName = 'SHA256SUMS.sig') =>
      check([listPart(list), { name: 'signature', value: new Blob([signature]), filename: sigName }, { name: 'publicKey', value: new Blob([key]), filename: 'key' }, ...await fileParts()])

    const makeList = () => {
      writeFileSync(join(dir, 'SIGNED'), tool('sha256sum', [...NAMES]))
    }

    function assertRefused(response: TestResponse, type: string): void {
      assert.equal(response.status, 422, response.text)
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.equal(response.body.type, `urn:hashd:problem:${type}`)
    }

    it('minisign: prehashed (default) and legacy (-l), with the key file or its RW… line; a changed list and the wrong key are refused', { skip: skipUnless('minisign', 'sha256sum') }, async () => {
      makeList()
      const keys = join(dir, 'minisign')
      mkdirSync(keys, { recursive: true })
      tool('minisign', ['-G', '-W', '-p', join(keys, 'a.pub'), '-s', join(keys, 'a.key')])
      tool('minisign', ['-G', '-W', '-p', join(keys, 'b.pub'), '-s', join(keys, 'b.key')])
      tool('minisign', ['-S', '-s', join(keys, 'a.key'), '-m', 'SIGNED', '-x', join(keys, 'prehashed.minisig'), '-t', 'release 1.0 of hashd'])
      tool('minisign', ['-S', '-l', '-s', join(keys, 'a.key'), '-m', 'SIGNED', '-x', join(keys, 'legacy.minisig')])
      const publicKey = readFileSync(join(keys, 'a.pub'), 'utf8')
      // Debian's minisign prints the key number without leading zeros (%" PRIX64); hashd gives all 16 digits.
      const keyId = /minisign public key ([0-9A-F]{1,16})\b/.exec(publicKey)?.[1]?.padStart(16, '0')
      const keyLine = publicKey.trim().split('\n')[1] ?? ''
      const prehashed = readFileSync(join(keys, 'prehashed.minisig'))
      const legacy = readFileSync(join(keys, 'legacy.minisig'))
      assert.match(prehashed.toString().split('\n')[1] ?? '', /^RU/, 'prehashed signatures start with ED → RU…')
      assert.match(legacy.toString().split('\n')[1] ?? '', /^RW/, 'legacy signatures start with Ed → RW…')

      const viaFile = await signed(original(), prehashed, publicKey, 'SHA256SUMS.minisig')
      assertAllOk(viaFile, ['sha256'])
      assert.deepEqual(viaFile.body.signature, { verified: true, scheme: 'minisign', keyId, trustedComment: 'release 1.0 of hashd' })
      const viaLine = await signed(original(), legacy, keyLine, 'SHA256SUMS.minisig')
      assertAllOk(viaLine, ['sha256'])
      assert.equal(viaLine.body.signature.keyId, keyId)
      assert.match(viaLine.body.signature.trustedComment, /^timestamp:\d+\tfile:SIGNED/)

      assertRefused(await signed(tampered(), prehashed, publicKey), 'bad-signature')
      assertRefused(await signed(tampered(), legacy, publicKey), 'bad-signature')
      assertRefused(await signed(original(), prehashed, readFileSync(join(keys, 'b.pub'))), 'wrong-key')
      // A changed trusted comment fails the global signature, as `minisign -V` says.
      const forged = prehashed.toString().replace('release 1.0 of hashd', 'release 2.0 of hashd')
      assertRefused(await signed(original(), forged, publicKey), 'bad-signature')
    })

    it('signify: detached and embedded (-e) signatures; a changed list and the wrong key are refused', { skip: skipUnless('signify', 'sha256sum') }, async () => {
      makeList()
      const keys = join(dir, 'signify')
      mkdirSync(keys, { recursive: true })
      tool('signify-openbsd', ['-G', '-n', '-p', join(keys, 'a.pub'), '-s', join(keys, 'a.sec')])
      tool('signify-openbsd', ['-G', '-n', '-p', join(keys, 'b.pub'), '-s', join(keys, 'b.sec')])
      tool('signify-openbsd', ['-S', '-s', join(keys, 'a.sec'), '-m', 'SIGNED', '-x', join(keys, 'SIGNED.sig')])
      tool('signify-openbsd', ['-S', '-e', '-s', join(keys, 'a.sec'), '-m', 'SIGNED', '-x', join(keys, 'SHA256.sig')])
      const publicKey = readFileSync(join(keys, 'a.pub'))
      const keyNumber = Buffer.from(publicKey.toString().split('\n')[1] ?? '', 'base64').subarray(2, 10).toString('hex')
      const detached = readFileSync(join(keys, 'SIGNED.sig'))

      const response = await signed(original(), detached, publicKey)
      assertAllOk(response, ['sha256'])
      assert.deepEqual(response.body.signature, { verified: true, scheme: 'signify', keyId: keyNumber })

      // OpenBSD's SHA256.sig form: the list travels inside the signature, no checksums part.
      const embedded = await check([
        { name: 'signature', value: new Blob([readFileSync(join(keys, 'SHA256.sig'))]), filename: 'SHA256.sig' },
        { name: 'publicKey', value: new Blob([publicKey]), filename: 'a.pub' }, ...await fileParts(),
      ])
      assertAllOk(embedded, ['sha256'])

      assertRefused(await signed(tampered(), detached, publicKey), 'bad-signature')
      assertRefused(await signed(original(), detached, readFileSync(join(keys, 'b.pub'))), 'wrong-key')
    })

    it('OpenPGP: gpg armored, binary and clearsigned; a changed list and the wrong key are refused', { skip: skipUnless('gpg', 'sha256sum') }, async () => {
      makeList()
      const home = (name: string): NodeJS.ProcessEnv => {
        const path = join(dir, `gnupg-${name}`)
        mkdirSync(path, { recursive: true, mode: 0o700 })
        if (!gnupgHomes.includes(path)) gnupgHomes.push(path)
        return { ...process.env, GNUPGHOME: path }
      }
      const gpg = (name: string, args: string[]) => tool('gpg', ['--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { env: home(name) })
      gpg('signer', ['--quick-gen-key', 'Release Signer <release@example.org>', 'default', 'default', 'never'])
      gpg('other', ['--quick-gen-key', 'Someone Else <else@example.org>', 'ed25519', 'sign', 'never'])
      const publicKey = gpg('signer', ['--armor', '--export', 'release@example.org'])
      const otherKey = gpg('other', ['--armor', '--export', 'else@example.org'])
      const colons = gpg('signer', ['--with-colons', '--list-keys', 'release@example.org'])
      const keyId = colons.split('\n').find((line) => line.startsWith('pub:'))?.split(':')[4]
      const fingerprint = colons.split('\n').find((line) => line.startsWith('fpr:'))?.split(':')[9]
      gpg('signer', ['--armor', '--detach-sign', '-o', join(dir, 'SIGNED.asc'), join(dir, 'SIGNED')])
      gpg('signer', ['--detach-sign', '-o', join(dir, 'SIGNED.gpg'), join(dir, 'SIGNED')])
      const armored = readFileSync(join(dir, 'SIGNED.asc'))
      const binary = readFileSync(join(dir, 'SIGNED.gpg'))

      for (const signature of [armored, binary]) {
        const response = await signed(original(), signature, publicKey, 'SHA256SUMS.gpg')
        assertAllOk(response, ['sha256'])
        assert.equal(response.body.signature.scheme, 'openpgp')
        assert.equal(response.body.signature.keyId, keyId)
        assert.equal(response.body.signature.fingerprint, fingerprint)
        assert.equal(response.body.signature.userId, 'Release Signer <release@example.org>')
      }
      assertRefused(await signed(tampered(), armored, publicKey), 'bad-signature')
      assertRefused(await signed(tampered(), binary, publicKey), 'bad-signature')
      assertRefused(await signed(original(), armored, otherKey), 'wrong-key')

      // A clearsigned list (gpg --clearsign, as Fedora's CHECKSUM files) carries its signature.
      writeFileSync(join(dir, 'CHECKSUM'), tool('sha256sum', ['--tag', ...NAMES]))
      gpg('signer', ['--clearsign', '-o', join(dir, 'CHECKSUM.asc'), join(dir, 'CHECKSUM')])
      const clearsigned = readFileSync(join(dir, 'CHECKSUM.asc'), 'utf8')
      const withKey = async (list: string, key: string) =>
        check([listPart(list, 'CHECKSUM'), { name: 'publicKey', value: new Blob([key]), filename: 'key.asc' }, ...await fileParts()])
      const verified = await withKey(clearsigned, publicKey)
      assertAllOk(verified, ['sha256'])
      assert.equal(verified.body.signature.keyId, keyId)
      assertRefused(await withKey(clearsigned.replace(/= ([0-9a-f])/, (_match, digit: string) => `= ${digit === '0' ? '1' : '0'}`), publicKey), 'bad-signature')
      assertRefused(await withKey(clearsigned, otherKey), 'wrong-key')
      // Without a key its text is read, unverified: no signature in the answer.
      const unverified = await check([listPart(clearsigned, 'CHECKSUM'), ...await fileParts()])
      assertAllOk(unverified, ['sha256'])
      assert.equal(unverified.body.signature, undefined)
    })
  })
})
