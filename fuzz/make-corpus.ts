/**
 * `npm run fuzz:corpus`: writes the seed corpus of every target (fuzz/corpus/<target>/), from
 * the project's test vectors (test/vectors/), the identify catalogue's examples and the shapes the
 * identify tests paste, and files made here by the real tools the test suite compares against
 * (sha256sum, b2sum, b3sum, minisign, signify-openbsd, gpg). The seeds are checked in, so a
 * fuzzing run needs none of those tools; this script is rerun when a parser learns a new form.
 * A tool that is missing is reported and its seeds left out.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bencode } from '../src/content-hashes/bencode.js'
import { keyLine } from '../src/keys/api-keys.js'
import { catalog } from '../src/identify/catalog.js'
import { allDigestVectors } from '../test/vectors/digests-index.js'
import { argon2Vectors } from '../test/vectors/password-argon2.js'
import { bcryptVectors } from '../test/vectors/password-bcrypt.js'
import { apr1Vectors, bsdiCryptVectors, desCryptVectors, gostYescryptVectors, md5CryptVectors, ntCryptVectors, yescryptVectors } from '../test/vectors/password-crypt.js'
import { ldapVectors } from '../test/vectors/password-ldap.js'
import { pbkdf2Vectors } from '../test/vectors/password-pbkdf2.js'
import { drupal7Vectors, phpassVectors } from '../test/vectors/password-phpass.js'
import { scryptVectors } from '../test/vectors/password-scrypt.js'
import { sha256CryptVectors, sha512CryptVectors } from '../test/vectors/password-sha-crypt.js'
import { joinFields } from './support.js'
import { FUZZ_PEPPER_KEY } from './targets/pepper.js'
import { JSON_KEYS, MAGNET_KEYS, MODES, TYPES, URN_PREFIXES } from './targets/store-metadata.js'
import { seeds as bankFileSeeds } from './targets/bank-file.js'
import { seeds as bankImportSeeds } from './targets/bank-import.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const corpusRoot = join(root, 'fuzz', 'corpus')
const passwordHashes = [
  ...argon2Vectors, ...bcryptVectors, ...md5CryptVectors, ...apr1Vectors, ...yescryptVectors, ...gostYescryptVectors, ...desCryptVectors,
  ...bsdiCryptVectors, ...ntCryptVectors, ...ldapVectors, ...pbkdf2Vectors, ...phpassVectors, ...drupal7Vectors, ...scryptVectors,
  ...sha256CryptVectors, ...sha512CryptVectors,
].map((vector) => vector.hash)
const hexDigests = [...new Set(allDigestVectors.filter((vector) => /^[0-9a-f]+$/i.test(vector.expected)).map((vector) => vector.expected))]

const missingTools: string[] = []
const has = (tool: string): boolean => {
  const found = spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0
  if (!found) missingTools.push(tool)
  return found
}

const written = new Map<string, number>()
/** Writes one seed; the name says what it is, with a short hash to keep names unique. */
function seed(target: string, label: string, data: string | Uint8Array): void {
  const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data)
  const dir = join(corpusRoot, target)
  mkdirSync(dir, { recursive: true })
  const slug = label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 48)
  writeFileSync(join(dir, `${slug}-${createHash('sha1').update(bytes).digest('hex').slice(0, 8)}`), bytes)
  written.set(target, (written.get(target) ?? 0) + 1)
}

rmSync(corpusRoot, { recursive: true, force: true })
const work = mkdtempSync(join(tmpdir(), 'hashd-fuzz-corpus-'))
const inWork = (command: string, args: string[], input?: string): string =>
  execFileSync(command, args, { cwd: work, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] })

// ---- multipart and delimiter-search: the forms browsers and curl send, and the RFC's corners ----
{
  const boundary = '----WebKitFormBoundary7MA4YWxkTrZu0gW'
  const part = (headers: string[], content: string): string => `--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n${content}\r\n`
  const bodies: Array<[string, string, string]> = [
    ['browser form with a file', `boundary=${boundary}`, part(['Content-Disposition: form-data; name="algorithm"'], 'sha256') +
      part(['Content-Disposition: form-data; name="file"; filename="read me.txt"', 'Content-Type: text/plain'], 'hello\r\n--not the boundary\r\n') + `--${boundary}--\r\n`],
    ['curl quoted boundary, preamble, epilogue', '"boundary=x"; boundary="------------------------d74496d66958873e"',
      'preamble\r\n--------------------------d74496d66958873e\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\x01\r\r\n--\r\n--------------------------d74496d66958873e--\r\nepilogue'],
    ['RFC 8187 filename*, padding, folded header', 'boundary=AaB03x',
      '--AaB03x \t\r\nContent-Disposition: form-data; name="files";\r\n filename*=UTF-8\'\'na%C3%AFve%20file.txt\r\ncontent-type: text/plain\r\n\r\ncontent\r\n--AaB03x\r\nContent-Disposition: form-data; name="e"\r\n\r\n\r\n--AaB03x--'],
    ['escaped quotes and backslashes in names', 'boundary=b',
      '--b\r\nContent-Disposition: form-data; name="a\\"b"; filename="C:\\dir\\x.txt"\r\n\r\nx\r\n--b--\r\n'],
    ['an unclosed body', 'boundary=b', '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever closed\r\n--b'],
    ['headers without a disposition', 'boundary=b', '--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--'],
  ]
  for (const [label, parameters, body] of bodies) {
    seed('multipart', label, joinFields(parameters, 'seed', Buffer.from(body, 'latin1')))
    seed('multipart', `${label} other cuts`, joinFields(parameters, '\x07\xfe', Buffer.from(body, 'latin1')))
  }
  const delimiter = `\r\n--${boundary}`
  seed('delimiter-search', 'delimiter at the end', Buffer.concat([Buffer.from([delimiter.length - 2]), Buffer.from(delimiter), Buffer.from([0, 0]), Buffer.from(`content\r\n--${boundary.slice(0, 10)}${delimiter}`)]))
  seed('delimiter-search', 'near misses only', Buffer.concat([Buffer.from([8]), Buffer.from('\r\n--abcdefgh'), Buffer.from([3, 5]), Buffer.from('\r\n--abcdefg\r\r\n--abcdefgX\r\n\r\n--abcdefgh')]))
  seed('delimiter-search', 'two-byte delimiter', Buffer.concat([Buffer.from([0]), Buffer.from('\r\n'), Buffer.from([0, 0]), Buffer.from('aaaa\rb\r\n')]))
}

// ---- checksum-list: lists written by the real tools, and lines over the digest vectors ----
{
  writeFileSync(join(work, 'release.tar.gz'), 'release\n')
  writeFileSync(join(work, 'read me.txt'), 'read me\n')
  writeFileSync(join(work, 'back\\slash.bin'), 'back slash\n')
  const names = ['release.tar.gz', 'read me.txt', 'back\\slash.bin']
  const lists: Array<[string, string, string[]]> = [
    ['sha256sum', 'SHA256SUMS', []], ['sha512sum', 'SHA512SUMS', ['--tag']], ['md5sum', 'MD5SUMS', []], ['sha1sum', 'release.sha1', ['-b']],
    ['b2sum', 'B2SUMS', []], ['b2sum', 'B2SUMS', ['-l', '256', '--tag']], ['b3sum', 'B3SUMS', []], ['xxhsum', 'XXHSUMS', ['-H2']], ['xxhsum', 'XXHSUMS', ['--tag', '-H3']],
  ]
  for (const [tool, listName, args] of lists) {
    if (!has(tool)) continue
    const text = inWork(tool, [...args, ...names])
    for (const mode of [0, 1]) seed('checksum-list', `${tool} ${args.join(' ')} mode ${mode}`, joinFields(Buffer.from([mode]), listName, text))
  }
  const lines = allDigestVectors.filter((vector) => /^[0-9a-f]+$/.test(vector.expected)).slice(0, 40)
  seed('checksum-list', 'tagged vector lines', joinFields(Buffer.from([0]), '', lines.map((vector) => `${vector.algorithm.toUpperCase()} (file ${vector.algorithm}) = ${vector.expected}`).join('\n')))
  seed('checksum-list', 'untagged vector lines crlf', joinFields(Buffer.from([0]), 'x.iso.sha256', `\uFEFF# comment\r\n${lines.map((vector) => `${vector.expected} *file`).join('\r\n')}\r\n`))
  seed('checksum-list', 'base64 and escapes', joinFields(Buffer.from([2]), 'SUMS.txt', '\\' + 'a'.repeat(64) + '  a\\nb\\\\c\nSHA2-256 (x) = ' + Buffer.alloc(32, 7).toString('base64') + '\nBLAKE2b-256 (y) = ' + '0'.repeat(64) + '\nTTH   (f) = abc\n'))
}

// ---- minisign and signify: real keys and signatures (no passwords), detached and embedded ----
const list = `${'0'.repeat(64)}  release.tar.gz\n`
writeFileSync(join(work, 'SHA256SUMS'), list)
if (has('minisign')) {
  inWork('minisign', ['-G', '-W', '-p', 'minisign.pub', '-s', 'minisign.key'])
  inWork('minisign', ['-S', '-s', 'minisign.key', '-m', 'SHA256SUMS', '-t', 'release 1.0'])
  const prehashed = readFileSync(join(work, 'SHA256SUMS.minisig'))
  inWork('minisign', ['-S', '-l', '-s', 'minisign.key', '-m', 'SHA256SUMS', '-x', 'legacy.minisig'])
  const legacy = readFileSync(join(work, 'legacy.minisig'))
  const keyFile = readFileSync(join(work, 'minisign.pub'))
  const keyLineOnly = keyFile.toString().split('\n')[1] ?? ''
  seed('minisign', 'prehashed signature key file', joinFields(list, prehashed, keyFile))
  seed('minisign', 'legacy signature key line', joinFields(list, legacy, keyLineOnly))
  seed('minisign', 'changed list', joinFields(`${list}x`, prehashed, keyFile))
  seed('minisign', 'crlf signature', joinFields(list, prehashed.toString().replaceAll('\n', '\r\n'), keyFile))
}
if (has('signify-openbsd')) {
  inWork('signify-openbsd', ['-G', '-n', '-p', 'signify.pub', '-s', 'signify.sec'])
  inWork('signify-openbsd', ['-S', '-s', 'signify.sec', '-m', 'SHA256SUMS', '-x', 'detached.sig'])
  inWork('signify-openbsd', ['-S', '-e', '-s', 'signify.sec', '-m', 'SHA256SUMS', '-x', 'embedded.sig'])
  const keyFile = readFileSync(join(work, 'signify.pub'))
  seed('signify', 'detached signature', joinFields(list, readFileSync(join(work, 'detached.sig')), keyFile))
  seed('signify', 'embedded signature', joinFields('', readFileSync(join(work, 'embedded.sig')), keyFile))
  seed('signify', 'another list', joinFields(`${list}x`, readFileSync(join(work, 'detached.sig')), keyFile))
}

// ---- openpgp-armor: a gpg key, armored and binary; detached, binary and clearsigned signatures ----
if (has('gpg')) {
  const home = join(work, 'gnupg')
  mkdirSync(home, { mode: 0o700 })
  const gpg = (args: string[], input?: string): Buffer =>
    execFileSync('gpg', ['--homedir', home, '--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { cwd: work, input, stdio: ['pipe', 'pipe', 'pipe'] })
  gpg(['--quick-generate-key', 'Release Signing <release@example.org>', 'ed25519', 'sign', 'never'])
  gpg(['--quick-generate-key', 'Old Signing <old@example.org>', 'rsa2048', 'sign', 'never'])
  const armoredKey = gpg(['--armor', '--export', 'release@example.org'])
  const binaryKeys = gpg(['--export'])
  const armoredSignature = gpg(['--armor', '--detach-sign', '--local-user', 'release@example.org', '--output', '-', 'SHA256SUMS'])
  const binarySignature = gpg(['--detach-sign', '--local-user', 'old@example.org', '--output', '-', 'SHA256SUMS'])
  const textSignature = gpg(['--armor', '--textmode', '--detach-sign', '--local-user', 'release@example.org', '--output', '-', 'SHA256SUMS'])
  const clearsigned = gpg(['--clearsign', '--local-user', 'release@example.org', '--output', '-', 'SHA256SUMS'])
  seed('openpgp-armor', 'armored signature armored key', joinFields(list, armoredSignature, armoredKey))
  seed('openpgp-armor', 'binary signature keyring', joinFields(list, binarySignature, binaryKeys))
  seed('openpgp-armor', 'textmode signature', joinFields(list, textSignature, armoredKey))
  seed('openpgp-armor', 'wrong key', joinFields(list, binarySignature, armoredKey))
  seed('openpgp-armor', 'clearsigned with key', joinFields('', clearsigned, armoredKey))
  seed('openpgp-armor', 'clearsigned without key', joinFields('', clearsigned, ''))
}

// ---- identify-input: every catalogue example, the vectors, and the shapes people paste ----
{
  const { formats } = await catalog()
  const examples = formats.flatMap((format) => format.example === null ? [] : [format.example])
  for (const example of examples) seed('identify-input', `example ${example.slice(0, 24)}`, joinFields(Buffer.from([0]), example))
  for (const hash of passwordHashes) seed('identify-input', `vector ${hash.slice(0, 24)}`, joinFields(Buffer.from([0]), hash))
  for (const digest of hexDigests.slice(0, 40)) seed('identify-input', `digest ${digest.length}`, joinFields(Buffer.from([0]), digest))
  const md5 = '5f4dcc3b5aa765d61d8327deb882cf99'
  const nt = '8846f7eaee8fb117ad06bdd830b7586c'
  const bcrypt = bcryptVectors[0]!.hash
  const wrappers: Array<[string, string]> = [
    ['json member', `"hash": ${JSON.stringify(bcrypt)},`], ['json object', `{"password_hash":${JSON.stringify(bcrypt)}}`],
    ['yaml', `password: "${bcrypt}"`], ['sql insert', `INSERT INTO \`users\` VALUES (7,'alice','${bcrypt}','alice@example.org');`],
    ['sql tuple', `(8, 'bob', '${md5}', NULL),`], ['code fence', `\`\`\`${md5}\`\`\``], ['bullet quotes comma', `* '${md5}',`],
    ['typographic quotes', `“${md5}”`], ['brackets', `[${md5}]`], ['hex prefix', `0x${md5}`],
    ['openssl fingerprint', `SHA256 Fingerprint=${Buffer.alloc(32, 0xab).toString('hex').toUpperCase().match(/../g)!.join(':')}`],
    ['ssh-keygen line', `256 SHA256:${Buffer.alloc(32, 1).toString('base64').replace(/=+$/, '')} user@host (ED25519)`],
    ['shadow line', `root:${sha512CryptVectors[0]!.hash}:19000:0:99999:7:::`], ['user hash', `alice:${md5}`],
    ['secretsdump rc4', `CORP.LOCAL/jdoe:rc4_hmac:${nt}`],
  ]
  for (const [label, text] of wrappers) seed('identify-input', label, joinFields(Buffer.from([0]), text))
  const dump = ['[*] Dumping local SAM hashes (uid:rid:lmhash:nthash)', `Administrator:500:aad3b435b51404eeaad3b435b51404ee:${nt}:::`,
    `Guest:501:aad3b435b51404eeaad3b435b51404ee:31d6cfe0d16ae931b73c59d7e0c089c0::: (status=Disabled)`, '[*] Cleaning up...', ''].join('\n')
  seed('identify-input', 'pwdump', joinFields(Buffer.from([0]), dump))
  const responder = ['[SMB] NTLMv2-SSP Client   : 10.0.0.5', '[SMB] NTLMv2-SSP Username : CORP\\jdoe',
    `[SMB] NTLMv2-SSP Hash     : jdoe::CORP:1122334455667788:${'ab'.repeat(16)}:${'01'.repeat(40)}`].join('\r\n')
  seed('identify-input', 'responder', joinFields(Buffer.from([0]), responder))
  seed('identify-input', 'potfile hex plaintexts', joinFields(Buffer.from([1]), `${md5}:password\n${nt}:$HEX[70613a7373]\n${bcrypt}:x`))
  seed('identify-input', 'popular username list', joinFields(Buffer.from([2]), passwordHashes.slice(0, 12).map((hash, index) => `user${index}:${hash}`).join('\n')))
}

// ---- pepper: strings sealed with the target's key, and the digest envelopes ----
{
  for (const [index, hash] of passwordHashes.slice(0, 12).entries()) {
    const scheme = ['bcrypt', 'argon2id', 'sha512-crypt'][index % 3]!
    seed('pepper', `sealed ${scheme}`, FUZZ_PEPPER_KEY.seal(scheme, hash))
  }
  seed('pepper', 'sealed by another key', '$pepper$v=1,k=other,s=bcrypt$AAAAAAAAAAAAAAAA$' + 'A'.repeat(40))
  seed('pepper', 'unknown version', '$pepper$v=2,k=fuzz,s=bcrypt$AAAAAAAAAAAAAAAA$' + 'A'.repeat(40))
  const sha256 = createHash('sha256').update('hashd').digest()
  const envelopes: Array<[string, string]> = [
    ['sri', `sha384-${createHash('sha384').update('hashd').digest('base64')}`], ['oci', `sha256:${sha256.toString('hex')}`],
    ['nix32', 'sha256:1b8m03r63zqhnjf7l5wnldhh7c134ap5vpj0850ymkq1iyzicy5s'], ['ssh sha256', `SHA256:${sha256.toString('base64').replace(/=+$/, '')}`],
    ['ssh md5', `MD5:${createHash('md5').update('hashd').digest('hex').match(/../g)!.join(':')}`], ['colon hex', sha256.toString('hex').toUpperCase().match(/../g)!.join(':')],
    ['go.sum', `h1:${sha256.toString('base64')}`], ['s3 etag', `"${createHash('md5').update('x').digest('hex')}-12"`],
  ]
  for (const [label, text] of envelopes) seed('pepper', `envelope ${label}`, text)
}

// ---- keys-file: API keys as `npm run apikey` writes them, and pepper key files ----
{
  const key = (n: number): string => `hk_${Buffer.alloc(32, n).toString('base64url')}`
  seed('keys-file', 'api keys', joinFields(Buffer.from([0]), `# API keys\n${keyLine('ci', key(1))}\n${keyLine('partner-a', key(2), 600)}  # limit\r\n\n${keyLine('web.ui_2', key(3))}\n`))
  seed('keys-file', 'api key pasted unhashed', joinFields(Buffer.from([0]), `ci ${key(1)}\n`))
  seed('keys-file', 'api keys repeated name', joinFields(Buffer.from([0]), `${keyLine('ci', key(1))}\n${keyLine('ci', key(2), 5)}\n`))
  const secret = (n: number): string => Buffer.alloc(32 + n, n).toString('base64')
  seed('keys-file', 'pepper keys rotation', joinFields(Buffer.from([1]), `# pepper keys, last is current\n2024-01 ${secret(1)}\n2025-06\t${secret(2)}\r\n2026-01 ${Buffer.alloc(40, 9).toString('base64url')}\n`))
  seed('keys-file', 'pepper key too short', joinFields(Buffer.from([1]), `k1 ${Buffer.alloc(16, 1).toString('base64')}\n`))
  seed('keys-file', 'pepper key repeated id', joinFields(Buffer.from([1]), `k1 ${secret(1)}\nk1 ${secret(2)}\n`))
  seed('keys-file', 'pepper keys staged and retired', joinFields(Buffer.from([1]), `k0 ${secret(3)} state=retired\nk1 ${secret(1)}\nk2 ${secret(2)} state=staged\n`))
  seed('keys-file', 'api keys scoped', joinFields(Buffer.from([0]), `${keyLine('front', key(4))} scopes=verify,hmac:verify hmac-keys=orders\n${keyLine('back', key(5), 60)} scopes=-pepper:rewrap\n`))
  seed('keys-file', 'hmac keys rotation', joinFields(Buffer.from([2]), `orders 1 ${secret(1)} algorithms=sha256,sha512 min-verify-version=2\norders 2 ${secret(2)}\norders 3 ${secret(3)} state=staged\nusers 7 ${secret(4)} state=current\nusers 9 ${secret(5)}\n`))
}

// ---- torrent-metadata: bencode, torrents v1, v2 and hybrid, and each store's metadata as its CLI prints it ----
{
  const sha1 = (text: string): Buffer => createHash('sha1').update(text).digest()
  const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest()
  const decoderInputs: Array<[string, string | Buffer]> = [
    ['bep3 examples', 'd4:spaml1:a1:be3:cow3:moo1:xi-3ee'],
    ['integer bounds', 'li9223372036854775807ei-9223372036854775808ei0ee'],
    ['leading zero', 'i03e'],
    ['negative zero', 'i-0e'],
    ['unsorted keys', 'd4:name1:a6:lengthi5ee'],
    ['repeated key', 'd1:ai1e1:ai2ee'],
    ['length past the end', 'l5:abce'],
    ['nested 100', `${'l'.repeat(100)}${'e'.repeat(100)}`],
    ['binary key', Buffer.concat([Buffer.from('d2:'), Buffer.from([0xff, 0x00]), Buffer.from('i1ee')])],
  ]
  for (const [label, input] of decoderInputs) seed('torrent-metadata', `bencode ${label}`, joinFields(Buffer.from([0]), input))

  const pieces = Buffer.concat([sha1('piece 1'), sha1('piece 2')])
  const v1Info = { length: 20000, name: 'object.bin', 'piece length': 16384, pieces }
  const fileTree = { 'object.bin': { '': { length: 20000, 'pieces root': sha256('root') } } }
  const torrents: Array<[string, Uint8Array]> = [
    ['v1 single file', bencode({ announce: 'udp://tracker.example:6969', 'creation date': 1741083667, info: v1Info })],
    ['v1 private', bencode({ info: { ...v1Info, private: 1, source: 'tracker' } })],
    ['v1 one of files', bencode({ info: { files: [{ length: 20000, path: ['dir', 'object.bin'] }], name: 'dir', 'piece length': 16384, pieces } })],
    ['v1 two files', bencode({ info: { files: [{ length: 10000, path: ['a'] }, { length: 10000, path: ['b'] }], name: 'dir', 'piece length': 16384, pieces } })],
    ['v2 single file', bencode({ info: { 'file tree': fileTree, 'meta version': 2, name: 'object.bin', 'piece length': 16384 }, 'piece layers': {} })],
    ['hybrid single file', bencode({ info: { ...v1Info, 'file tree': fileTree, 'meta version': 2 } })],
    ['v2 empty file', bencode({ info: { 'file tree': { e: { '': { length: 0 } } }, 'meta version': 2, name: 'e', 'piece length': 16384 } })],
  ]
  for (const [label, torrent] of torrents) seed('torrent-metadata', `torrent ${label}`, joinFields(Buffer.from([1]), torrent))

  const md5 = 'b10a8db164e0754105b7a99be72e3fe5'
  const texts: Array<[string, string]> = [
    ['s3 head-object', JSON.stringify({ AcceptRanges: 'bytes', ContentLength: 11010048, ETag: `"${md5}-2"`, ChecksumCRC64NVME: 'uLYKZQwNEnU=', ChecksumType: 'FULL_OBJECT', ServerSideEncryption: 'AES256', Metadata: {} }, null, 4)],
    ['s3 composite sse-kms', JSON.stringify({ ContentLength: 11010048, ETag: `"${md5}"`, ChecksumCRC32C: 'yZRlqg==-3', ChecksumType: 'COMPOSITE', ServerSideEncryption: 'aws:kms', PartsCount: 3 })],
    ['s3 get-object-attributes', JSON.stringify({ ETag: md5, ObjectSize: 11010048, Checksum: { ChecksumSHA256: `${Buffer.alloc(32, 1).toString('base64')}-2`, ChecksumType: 'COMPOSITE' }, ObjectParts: { TotalPartsCount: 2, Parts: [{ PartNumber: 1, Size: 8388608 }] } })],
    ['gcloud storage describe', JSON.stringify({ bucket: 'b', crc32c_hash: 'yZRlqg==', md5_hash: 'sQqNsWTgdUEFt6mb5y4/5Q==', name: 'object.bin', size: 11, storage_url: 'gs://b/object.bin#1' }, null, 2)],
    ['gcs json api', JSON.stringify({ kind: 'storage#object', crc32c: 'yZRlqg==', md5Hash: 'sQqNsWTgdUEFt6mb5y4/5Q==', size: '11' })],
    ['az storage blob show', JSON.stringify({ name: 'object.bin', properties: { blobType: 'BlockBlob', contentLength: 11, contentSettings: { contentMd5: 'sQqNsWTgdUEFt6mb5y4/5Q==', contentType: 'text/plain' } } }, null, 2)],
    ['dropbox get_metadata', JSON.stringify({ '.tag': 'file', name: 'object.bin', rev: 'a1c10ce0dd78', size: 11, content_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' })],
    ['onedrive driveitem', JSON.stringify({ name: 'object.bin', size: 11, file: { mimeType: 'text/plain', hashes: { quickXorHash: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=', sha1Hash: 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709', crc32Hash: '00000000' } } })],
    ['rhash magnet', 'magnet:?xl=3&dn=hostname&xt=urn:tree:tiger:rnkcifxjikrsxyjikvd2hbkw7js7mbmo3dryngy&xt=urn:btih:74764509bc0c04b70eeb7b2cd78f38a5117f34a7&xt=urn:ed2k:16c39643552757122cbb5d25cfb14260&xt=urn:aich:ki4qsrwfsduxji2yyjoub4e3kzwpgff6'],
    ['magnet base32 btmh', `magnet:?xt.1=urn:btih:OR3EKCN4BQCLODXLPMWNPDZYUUIX6NFH&xt.2=urn:btmh:1220${'ab'.repeat(32)}&dn=a+b%20c&tr=udp%3A%2F%2Ft`],
    ['git ls-tree -l', `100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391       0\tREADME.md\n040000 tree ${'1'.repeat(40)}       -\tsrc\n100755 blob ${'3'.repeat(64)}    1234\tbin/run\n`],
  ]
  for (const [label, text] of texts) seed('torrent-metadata', label, joinFields(Buffer.from([2]), text))
}

// ---- image-sniff: the small PDQ fixtures (test/fixtures/pdq), cut short, and a header claiming too many pixels ----
{
  const fixture = (name: string): Buffer => readFileSync(join(root, 'test', 'fixtures', 'pdq', name))
  for (const name of ['gen-tiny-7x5.png', 'gen-gray-150x150.jpg', 'gen-rgb-320x240-lossy.webp', 'ref-small.jpg', 'gen-tiny-4x4.png']) {
    seed('image-sniff', name, fixture(name))
  }
  const jpeg = fixture('gen-rgb-300x200.jpg')
  seed('image-sniff', 'truncated jpeg', jpeg.subarray(0, jpeg.length >> 1))
  const bomb = Buffer.from(fixture('gen-tiny-7x5.png'))
  bomb.writeUInt32BE(100_000, 16)
  bomb.writeUInt32BE(100_000, 20)
  bomb.writeUInt32BE(crc32(bomb.subarray(12, 29)), 29)
  seed('image-sniff', 'png header claiming 100000 x 100000', bomb)
  seed('image-sniff', 'pdf', '%PDF-1.7\n1 0 obj\n<<>>\nendobj\n')
}

// ---- similarity-hashes: the pairs of the ssdeep and TLSH fixtures, PDQ hashes, and their kinds mixed ----
{
  const fixtureText = (path: string): string => readFileSync(join(root, 'test', 'fixtures', ...path.split('/')), 'utf8')
  /** The options byte (see the target): algorithm in the low 2 bits, 0x04 a threshold, 0x20 lengthTerm, 0x40 Latin-1. */
  const compareSeed = (label: string, options: number[], a: string, b: string) => seed('similarity-hashes', label, joinFields(Buffer.from(options), a, b))
  const ssdeepPairs = fixtureText('ssdeep/compare.txt').split('\n').filter((line) => line && !line.startsWith('#')).map((line) => line.split(' '))
  for (const [index, [a, b]] of ssdeepPairs.filter((_, index) => index % 12 === 0).entries()) compareSeed(`ssdeep pair ${index}`, [index % 2], a!, b!)
  const tlshPairs = fixtureText('tlsh/distances.tsv').trim().split('\n').map((line) => line.split('\t'))
  for (const [index, [a, b]] of tlshPairs.filter((_, index) => index % 20 === 0).entries()) compareSeed(`tlsh pair ${index}`, [index % 2 === 0 ? 0 : 2 | 0x20 | (index % 4 === 1 ? 0x80 : 0)], a!, b!)
  const [tlshA, tlshB] = tlshPairs[0]!
  compareSeed('tlsh before version 4', [0], tlshA!.slice(2).toLowerCase(), tlshB!)
  const pdq = JSON.parse(fixtureText('pdq/expected.json')) as Record<string, { hash: string, dihedral: Record<string, string> }>
  for (const [name, { hash, dihedral }] of Object.entries(pdq).slice(0, 4)) compareSeed(`pdq ${name}`, [3 | 0x04 | 0x08], hash, dihedral.flipX!)
  const [ssdeepA] = ssdeepPairs[0]!
  compareSeed('ssdeep against tlsh', [0], ssdeepA!, tlshA!)
  compareSeed('ssdeep named tlsh', [2], ssdeepA!, ssdeepA!)
  compareSeed('ssdeep with lengthTerm', [1 | 0x20], ssdeepA!, ssdeepA!)
  compareSeed('ssdeep threshold out of range', [1 | 0x04 | 0x18, 1], ssdeepA!, ssdeepA!)
  compareSeed('long runs and short block hashes', [0x40], '3:aaaaaaaaaaaaaaaaaaab:aaaaaaaab', '6:aaaaaaab:aaaaaaaaaaaaaaaa')
}

// ---- store-metadata: each store's metadata as its CLI prints it, a magnet link and ls-tree lines, in the target's field encoding ----
{
  const md5 = 'b10a8db164e0754105b7a99be72e3fe5'
  /** A JSON member: the key's index, the value's type (0 text, 1 quoted text, 3 a number written as text), the value. */
  const member = (key: typeof JSON_KEYS[number], type: number, value: string): Buffer => Buffer.concat([Buffer.from([JSON_KEYS.indexOf(key), type]), Buffer.from(value)])
  const json = (...members: Buffer[]): Buffer => Buffer.concat([Buffer.from([0]), joinFields(...members)])
  const objects: Array<[string, Buffer]> = [
    ['s3 head-object multipart', json(member('ETag', 1, `${md5}-2`), member('ContentLength', 3, '11010048'), member('ChecksumCRC64NVME', 0, 'uLYKZQwNEnU='), member('ChecksumType', 0, 'FULL_OBJECT'))],
    ['s3 composite sse-kms', json(member('ETag', 1, md5), member('ChecksumCRC32C', 0, 'yZRlqg==-3'), member('ChecksumType', 0, 'COMPOSITE'), member('ServerSideEncryption', 0, 'aws:kms'), member('PartsCount', 3, '3'))],
    ['s3 get-object-attributes', json(member('ETag', 0, md5), member('ObjectSize', 3, '11010048'), member('Checksum.ChecksumSHA256', 0, `${Buffer.alloc(32, 1).toString('base64')}-2`), member('Checksum.ChecksumType', 0, 'COMPOSITE'), member('ObjectParts.TotalPartsCount', 3, '2'))],
    ['gcs json api', json(member('kind', 0, 'storage#object'), member('crc32c', 0, 'yZRlqg=='), member('md5Hash', 0, 'sQqNsWTgdUEFt6mb5y4/5Q=='), member('size', 0, '11'))],
    ['gcloud storage describe', json(member('crc32c_hash', 0, 'yZRlqg=='), member('md5_hash', 0, 'sQqNsWTgdUEFt6mb5y4/5Q=='), member('size', 3, '11'))],
    ['az storage blob show', json(member('properties.blobType', 0, 'BlockBlob'), member('properties.contentLength', 3, '11'), member('properties.contentSettings.contentMd5', 0, 'sQqNsWTgdUEFt6mb5y4/5Q=='))],
    ['dropbox get_metadata', json(member('.tag', 0, 'file'), member('rev', 0, 'a1c10ce0dd78'), member('size', 3, '11'), member('content_hash', 0, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'))],
    ['onedrive driveitem', json(member('file.hashes.quickXorHash', 0, 'AAAAAAAAAAAAAAAAAAAAAAAAAAA='), member('file.hashes.sha1Hash', 0, 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709'), member('size', 3, '11'))],
  ]
  for (const [label, input] of objects) seed('store-metadata', label, input)

  /** A magnet pair: the key's index, the URN prefix's index (shifted) and whether to percent-encode, the value. */
  const pair = (key: typeof MAGNET_KEYS[number], prefix: typeof URN_PREFIXES[number], encode: boolean, value: string): Buffer =>
    Buffer.concat([Buffer.from([MAGNET_KEYS.indexOf(key), (URN_PREFIXES.indexOf(prefix) << 1) | (encode ? 1 : 0)]), Buffer.from(value)])
  const magnet = (...pairs: Buffer[]): Buffer => Buffer.concat([Buffer.from([1]), joinFields(...pairs)])
  seed('store-metadata', 'rhash magnet', magnet(pair('xl', '', false, '3'), pair('dn', '', false, 'hostname'),
    pair('xt', 'urn:tree:tiger:', false, 'rnkcifxjikrsxyjikvd2hbkw7js7mbmo3dryngy'), pair('xt', 'urn:btih:', false, '74764509bc0c04b70eeb7b2cd78f38a5117f34a7'),
    pair('xt', 'urn:ed2k:', false, '16c39643552757122cbb5d25cfb14260'), pair('xt', 'urn:aich:', false, 'ki4qsrwfsduxji2yyjoub4e3kzwpgff6')))
  seed('store-metadata', 'magnet base32 btmh', magnet(pair('xt.1', 'urn:btih:', false, 'OR3EKCN4BQCLODXLPMWNPDZYUUIX6NFH'),
    pair('xt.2', 'urn:btmh:1220', false, 'ab'.repeat(32)), pair('dn', '', true, 'a b c')))

  /** An ls-tree line: the control bits (0x04 a size, 0x08 a SHA-256 id, 0x10 the size `-`), the mode's and type's indexes, the path. */
  const line = (control: number, mode: typeof MODES[number], type: typeof TYPES[number], path: string): Buffer =>
    Buffer.concat([Buffer.from([control, MODES.indexOf(mode), TYPES.indexOf(type)]), Buffer.from(path)])
  const lines = [line(0x04, '100644', 'blob', 'README.md'), line(0x14, '040000', 'tree', 'src'), line(0x0c, '100755', 'blob', 'bin/run')]
  // The mode byte over 3 chooses the line end: 2 newline, 5 CRLF, 8 NUL (-z).
  for (const [mode, label] of [[2, 'newline'], [5, 'crlf'], [8, 'nul']] as const) seed('store-metadata', `git ls-tree -l ${label}`, Buffer.concat([Buffer.from([mode]), joinFields(...lines)]))
  seed('store-metadata', 'git ls-tree without -l', Buffer.concat([Buffer.from([2]), joinFields(line(0, '100644', 'blob', 'a.txt'), line(0, '160000', 'commit', 'vendor/lib'))]))
}

// ---- bank-import and bank-file: each bank type's lines as exported lists write them, and a small bank of each type ----
for (const [label, data] of bankImportSeeds()) seed('bank-import', label, data)
for (const [label, data] of await bankFileSeeds()) seed('bank-file', label, data)

rmSync(work, { recursive: true, force: true })
for (const target of readdirSync(corpusRoot).sort()) console.log(`fuzz: corpus ${target}: ${written.get(target) ?? 0} seeds`)
if (missingTools.length > 0) console.log(`fuzz: left out the seeds of missing tools: ${[...new Set(missingTools)].join(', ')}`)
