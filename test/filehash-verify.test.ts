/**
 * /api/filehash/verify through the real server: for each store, a real file and the metadata an
 * independent tool computed for it (Python's hashlib and crcmod computing S3's ETag and checksums
 * from the parts as AWS documents them; git hash-object and git ls-tree -l of a real repository;
 * rhash --magnet; python3-libtorrent's v1, v2 and hybrid .torrent files; rclone hashsum for
 * Dropbox and OneDrive), a match, then the same file with one byte flipped, a mismatch; and the
 * bad inputs, each a 4xx that names the part at fault.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, openAsBlob, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { PieceCheck } from '../src/content-hashes/pieces.js'
import { TigerTreeHash } from '../src/content-hashes/tth.js'
import { awsChecksums } from './helpers/aws.js'
import { Random } from './helpers/random.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { python, run, skipUnless } from './helpers/tools.js'

const MiB = 1024 * 1024
/** Two parts of the AWS CLI's 8 MiB, three of 5 MiB; past 1 MiB, so the hashers run on the hash threads. */
const SIZE = 12_000_000
/** A small file, which stays on the event loop (declared under 1 MiB). */
const SMALL = 70_000
/** The byte flipped in the mismatch cases: in piece 17 of 64 KiB pieces. */
const FLIPPED_AT = 17 * 65536 + 5

let server: TestServer
let scratch: string
/** name → path: `big.bin`, its flipped copy `big-flipped.bin` (same name in its own directory), `small.bin`. */
let big: string
let flipped: string
let small: string

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-filehash-verify-'))
  const random = new Random(4647)
  const bytes = Buffer.alloc(SIZE)
  for (let index = 0; index < SIZE; index += 4) bytes.writeUInt32LE(random.next(), index)
  big = join(scratch, 'big.bin')
  writeFileSync(big, bytes)
  mkdirSync(join(scratch, 'flipped'))
  flipped = join(scratch, 'flipped', 'big.bin')
  const changed = Buffer.from(bytes)
  changed[FLIPPED_AT] = (changed[FLIPPED_AT] as number) ^ 0x01
  writeFileSync(flipped, changed)
  small = join(scratch, 'small.bin')
  writeFileSync(small, bytes.subarray(0, SMALL))
  server = await startServer()
})

after(async () => {
  await server.close()
  rmSync(scratch, { recursive: true, force: true })
})

type Metadata = string | { torrent: Uint8Array }

/** The form: metadata (a text field, or a .torrent file part), then the file, in that order. */
async function verify(metadata: Metadata, path: string): Promise<TestResponse> {
  const form = new FormData()
  if (typeof metadata === 'string') form.append('metadata', metadata)
  else form.append('metadata', new Blob([metadata.torrent]), 'x.torrent')
  form.append('file', await openAsBlob(path), 'big.bin')
  return toTestResponse(await server.fetch('/api/filehash/verify', { method: 'POST', body: form }))
}

interface Field { field: string, verdict: string, expected: string, actual?: string, reason?: string, partSize?: number, algorithm: string }

function answerOf(response: TestResponse, what: string): { verdict: string, shape: string, size: number, fields: Field[] } {
  assert.equal(response.status, 200, `${what}: ${response.text}`)
  return response.body
}

function assertAll(response: TestResponse, verdict: 'match' | 'mismatch', what: string): Field[] {
  const answer = answerOf(response, what)
  assert.equal(answer.verdict, verdict, `${what}: ${response.text}`)
  return answer.fields
}

const field = (fields: Field[], name: string): Field => {
  const found = fields.find((candidate) => candidate.field === name)
  assert.ok(found, `no field ${name} in ${JSON.stringify(fields)}`)
  return found
}

/** An `aws s3api head-object` answer for a multipart upload in parts of `partSize`, from the values Python computes (helpers/aws.ts). */
function s3HeadObject(path: string, partSize: number): string {
  const aws = awsChecksums(path, partSize, 0)
  return JSON.stringify({
    ETag: `"${aws.md5.etag}"`, ContentLength: statSync(path).size,
    ChecksumCRC64NVME: aws.crc64nvme.full, ChecksumCRC32C: aws.crc32c.composite,
  })
}

describe('filehash/verify: S3 head-object against Python (hashlib, crcmod)', { skip: skipUnless('python3', 'crcmod') }, () => {
  it('a multipart ETag and checksums without a part size: matched through the candidates, which the answer names', async () => {
    for (const partSize of [8 * MiB, 5 * MiB]) {
      const metadata = s3HeadObject(big, partSize)
      const fields = assertAll(await verify(metadata, big), 'match', `${partSize}-byte parts`)
      assert.equal(field(fields, 'ETag').partSize, partSize)
      assert.equal(field(fields, 'ChecksumCRC32C').partSize, partSize)
      assert.equal(field(fields, 'ChecksumCRC64NVME').verdict, 'match')
      const changed = assertAll(await verify(metadata, flipped), 'mismatch', `${partSize}-byte parts, flipped`)
      for (const each of changed) assert.equal(each.verdict, 'mismatch', JSON.stringify(each))
    }
  })

  it('a single PUT\'s ETag (no -N, no part size): match, on the event loop and on the hash threads', async () => {
    for (const path of [small, big]) {
      const etag = awsChecksums(path, 8 * MiB, 16 * MiB).md5.etag
      assert.match(etag, /^[0-9a-f]{32}$/)
      const fields = assertAll(await verify(JSON.stringify({ ETag: `"${etag}"`, ContentLength: statSync(path).size }), path), 'match', `single PUT of ${path}`)
      assert.equal(field(fields, 'ETag').verdict, 'match')
    }
    assertAll(await verify(JSON.stringify({ ETag: `"${awsChecksums(big, 8 * MiB, 16 * MiB).md5.etag}"`, ContentLength: SIZE }), flipped), 'mismatch', 'single PUT, flipped')
  })

  it('an SSE-KMS ETag cannot be checked; the checksums still are', async () => {
    const metadata = JSON.parse(s3HeadObject(big, 8 * MiB)) as Record<string, unknown>
    const fields = assertAll(await verify(JSON.stringify({ ...metadata, ServerSideEncryption: 'aws:kms' }), big), 'match', 'SSE-KMS')
    assert.equal(field(fields, 'ETag').verdict, 'cannot-check')
    assert.match(field(fields, 'ETag').reason ?? '', /SSE-KMS/)
    const alone = answerOf(await verify(JSON.stringify({ ETag: metadata.ETag, ServerSideEncryption: 'aws:kms' }), big), 'SSE-KMS alone')
    assert.equal(alone.verdict, 'cannot-check')
  })

  it('a file of another size than ContentLength: every field mismatches for its size, and a size row says so', async () => {
    const metadata = s3HeadObject(big, 8 * MiB)
    const fields = assertAll(await verify(metadata, small), 'mismatch', 'another size')
    assert.deepEqual(fields[0], { field: 'size', verdict: 'mismatch', expected: String(SIZE), actual: String(SMALL), reason: 'size', algorithm: 'size' })
    for (const each of fields) assert.equal(each.reason, 'size')
  })
})

describe('filehash/verify: git ls-tree of a real repository', { skip: skipUnless('git') }, () => {
  const lsTree = (objectFormat: 'sha1' | 'sha256', path: string, long: boolean): string => {
    const repository = mkdtempSync(join(scratch, `git-${objectFormat}-`))
    run('git', ['init', '-q', `--object-format=${objectFormat}`, repository])
    writeFileSync(join(repository, 'big.bin'), readFileSync(path))
    run('git', ['-C', repository, 'add', 'big.bin'])
    const tree = run('git', ['-C', repository, 'write-tree'])
    const id = run('git', ['-C', repository, 'hash-object', 'big.bin'])
    const lines = run('git', ['-C', repository, 'ls-tree', ...(long ? ['-l'] : []), tree])
    assert.ok(lines.includes(id), 'ls-tree names the blob hash-object gives')
    return lines
  }

  it('git ls-tree -l lines match, SHA-1 and SHA-256 repositories; a flipped byte mismatches', async () => {
    for (const format of ['sha1', 'sha256'] as const) {
      const fields = assertAll(await verify(lsTree(format, big, true), big), 'match', format)
      assert.equal(field(fields, 'big.bin').algorithm, `git-blob-${format}`)
      assertAll(await verify(lsTree(format, big, true), flipped), 'mismatch', `${format}, flipped`)
    }
  })

  it('a whole tree pasted: the verdict is the file\'s own line\'s, found by the file part\'s name or else by size', async () => {
    const repository = mkdtempSync(join(scratch, 'git-tree-'))
    run('git', ['init', '-q', repository])
    mkdirSync(join(repository, 'dir'))
    const files: Record<string, string> = { 'a.txt': 'abc', 'dir/b.txt': 'abd', 'c.txt': 'hello world', 'dir/d.txt': 'a longer file' }
    for (const [path, content] of Object.entries(files)) writeFileSync(join(repository, path), content)
    run('git', ['-C', repository, 'add', '.'])
    const tree = run('git', ['-C', repository, 'write-tree'])
    // -r -t: the blobs in dir/ and the tree line of dir itself, which stays cannot-check.
    const lines = run('git', ['-C', repository, 'ls-tree', '-r', '-t', '-l', tree])
    const check = async (content: string, name: string) => {
      const form = new FormData()
      form.append('metadata', lines)
      form.append('file', new Blob([content]), name)
      const answer = answerOf(await toTestResponse(await server.fetch('/api/filehash/verify', { method: 'POST', body: form })), `${name}: ${content}`)
      return { verdict: answer.verdict, fields: Object.fromEntries(answer.fields.map((each) => [each.field, each.verdict])), reasons: answer.fields.map((each) => each.reason ?? '') }
    }
    // By size: a.txt and dir/b.txt are 3 bytes; the file is dir/b.txt's content, so that line matches and the others are other files.
    const bySize = await check('abd', 'upload.bin')
    assert.deepEqual(bySize.fields, { 'a.txt': 'cannot-check', 'c.txt': 'cannot-check', dir: 'cannot-check', 'dir/b.txt': 'match', 'dir/d.txt': 'cannot-check' })
    assert.equal(bySize.verdict, 'match')
    assert.ok(bySize.reasons.some((reason) => /^another file: the file's own line is dir\/b\.txt, found by its size, 3 bytes$/.test(reason)), JSON.stringify(bySize.reasons))
    // By name, the path's last segment: d.txt's line is the file's, and its content differs: mismatch.
    const byName = await check('a longer filf', 'd.txt')
    assert.equal(byName.verdict, 'mismatch')
    assert.equal(byName.fields['dir/d.txt'], 'mismatch')
    assert.equal(byName.fields['a.txt'], 'cannot-check')
    assert.equal((await check('abc', 'a.txt')).verdict, 'match')
    // A paste longer than the hashers one request runs: the line named as the file is computed first.
    const padding = Array.from({ length: 80 }, (_, index) => `100644 blob ${index.toString(16).padStart(40, '0')}       9\tpad/${index}.txt\n`).join('')
    const form = new FormData()
    form.append('metadata', padding + lines)
    form.append('file', new Blob(['abc']), 'a.txt')
    const long = answerOf(await toTestResponse(await server.fetch('/api/filehash/verify', { method: 'POST', body: form })), 'a long paste')
    assert.equal(long.verdict, 'match')
    assert.equal(field(long.fields, 'a.txt').verdict, 'match')
    assert.equal(long.fields.length, 85)
    // No line of that name or size: every blob's line is judged, and none matches.
    const none = await check('zzzz', 'upload.bin')
    assert.equal(none.verdict, 'mismatch')
    assert.deepEqual(Object.values(none.fields).sort(), ['cannot-check', 'mismatch', 'mismatch', 'mismatch', 'mismatch'])
  })

  it('lines without -l: cannot be checked, and the reason says to paste git ls-tree -l', async () => {
    const answer = answerOf(await verify(lsTree('sha1', big, false), big), 'without -l')
    assert.equal(answer.verdict, 'cannot-check')
    assert.match(field(answer.fields, 'big.bin').reason ?? '', /git ls-tree -l/)
  })
})

describe('filehash/verify: rhash --magnet', { skip: skipUnless('rhash') }, () => {
  it('a magnet link with btih, TTH, ed2k and AICH matches; a flipped byte mismatches each', async () => {
    const magnet = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', '--sha1', big]).split(' ')[0] as string
    const fields = assertAll(await verify(magnet, big), 'match', 'magnet')
    assert.deepEqual(fields.map((each) => each.verdict), fields.map(() => 'match'))
    assert.ok(fields.length >= 4, JSON.stringify(fields))
    const changed = assertAll(await verify(magnet, flipped), 'mismatch', 'magnet, flipped')
    assert.deepEqual(changed.map((each) => each.verdict), changed.map(() => 'mismatch'))
  })

  it('a link without xl: btih cannot be checked, and the reason asks for xl; the rest still is', async () => {
    const magnet = run('rhash', ['--magnet', '--btih', '--tth', small]).split(' ')[0] as string
    const withoutSize = magnet.replace(/xl=[0-9]+&/, '')
    const answer = answerOf(await verify(withoutSize, small), 'magnet without xl')
    assert.equal(answer.verdict, 'match')
    const btih = answer.fields.find((each) => each.algorithm === 'btih')
    assert.equal(btih?.verdict, 'cannot-check')
    assert.match(btih?.reason ?? '', /xl/)
  })
})

describe('filehash/verify: .torrent files made by python3-libtorrent', { skip: skipUnless('libtorrent') }, () => {
  const torrentOf = (kind: string): Uint8Array => execPython(MAKE_TORRENT, [big, kind])

  it('v1, v2 and hybrid torrents match; with one byte flipped, the v1 pieces name piece 17', async () => {
    for (const kind of ['v1', 'v2', 'hybrid']) {
      const torrent = torrentOf(kind)
      const fields = assertAll(await verify({ torrent }, big), 'match', kind)
      if (kind !== 'v2') assert.equal(field(fields, 'pieces').actual, `all ${Math.ceil(SIZE / 65536)} pieces match`)
      if (kind !== 'v1') assert.equal(field(fields, 'pieces root').verdict, 'match')
      const changed = assertAll(await verify({ torrent }, flipped), 'mismatch', `${kind}, flipped`)
      if (kind !== 'v2') assert.equal(field(changed, 'pieces').actual, `1 of ${Math.ceil(SIZE / 65536)} pieces differ, the first is piece 17`)
      if (kind !== 'v1') assert.equal(field(changed, 'pieces root').verdict, 'mismatch')
    }
  })
})

/** A .torrent of the file at argv[1], v1, v2 or hybrid (argv[2]), in 64 KiB pieces, as libtorrent makes it. */
const MAKE_TORRENT = `
import os, sys, libtorrent as lt
path, kind = sys.argv[1], sys.argv[2]
fs = lt.file_storage()
lt.add_files(fs, path)
flags = {'v1': lt.create_torrent.v1_only, 'v2': lt.create_torrent.v2_only, 'hybrid': 0}[kind]
torrent = lt.create_torrent(fs, 65536, flags=flags)
lt.set_piece_hashes(torrent, os.path.dirname(path))
sys.stdout.buffer.write(lt.bencode(torrent.generate()))
`

/** Python's bytes on stdout, as bytes. */
function execPython(code: string, args: string[]): Uint8Array {
  return Buffer.from(python(`import base64, io, sys\nout = io.BytesIO()\nsys.stdout = type('W', (), {'buffer': out})()\nexec(${JSON.stringify(code)})\nsys.stdout = sys.__stdout__\nprint(base64.b64encode(out.getvalue()).decode())`, args), 'base64')
}

describe('filehash/verify: Dropbox and OneDrive JSON against rclone hashsum', { skip: skipUnless('rclone') }, () => {
  const rclone = (hash: string, path: string, extra: string[] = []): string =>
    (run('rclone', ['--config', '/dev/null', 'hashsum', hash, ...extra, path]).split(/\s+/)[0] as string)

  it('Dropbox content_hash and OneDrive quickXorHash match; a flipped byte mismatches', async () => {
    for (const [path, verdict] of [[big, 'match'], [flipped, 'mismatch']] as const) {
      const dropbox = JSON.stringify({ '.tag': 'file', name: 'big.bin', size: SIZE, content_hash: rclone('dropbox', big) })
      assert.equal(answerOf(await verify(dropbox, path), 'dropbox').verdict, verdict)
      // rclone prints base64url; OneDrive's API, standard base64.
      const quickXor = Buffer.from(rclone('quickxor', big, ['--base64']), 'base64url').toString('base64')
      const oneDrive = JSON.stringify({ name: 'big.bin', size: SIZE, file: { hashes: { quickXorHash: quickXor } } })
      const answer = answerOf(await verify(oneDrive, path), 'onedrive')
      assert.equal(answer.verdict, verdict)
      assert.equal(answer.shape, 'onedrive')
    }
  })
})

describe('filehash/verify: off the event loop for a large upload', { skip: availableParallelism() < 2 ? 'hash threads need two cores' : skipUnless('rhash', 'libtorrent') }, () => {
  it('a large upload\'s piece check and TTH run on a hash thread; a small one\'s on the event loop', async () => {
    // The server runs in this process: the hash threads load their own copies of these modules, so
    // only the event loop's hashers are counted here.
    let onEventLoop = 0
    const pieceUpdate = PieceCheck.prototype.update
    const tigerUpdate = TigerTreeHash.prototype.update
    PieceCheck.prototype.update = function (this: PieceCheck, chunk: Uint8Array) {
      onEventLoop += chunk.length
      pieceUpdate.call(this, chunk)
    }
    TigerTreeHash.prototype.update = function (this: TigerTreeHash, chunk: Uint8Array) {
      onEventLoop += chunk.length
      tigerUpdate.call(this, chunk)
    }
    try {
      const torrent = execPython(MAKE_TORRENT, [big, 'v1'])
      assertAll(await verify({ torrent }, big), 'match', 'v1 torrent')
      assertAll(await verify(run('rhash', ['--magnet', '--tth', big]).split(' ')[0] as string, big), 'match', 'magnet')
      assert.equal(onEventLoop, 0, 'no piece or TTH byte hashed on the event loop')
      assertAll(await verify(run('rhash', ['--magnet', '--tth', small]).split(' ')[0] as string, small), 'match', 'small magnet')
      assert.equal(onEventLoop, SMALL, 'a small upload stays on the event loop')
    } finally {
      PieceCheck.prototype.update = pieceUpdate
      TigerTreeHash.prototype.update = tigerUpdate
    }
  })
})

describe('filehash/verify: bad input is a 4xx naming the part', () => {
  const assertProblem = (response: TestResponse, status: number, pointer?: string): void => {
    assert.equal(response.status, status, response.text)
    assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/)
    if (pointer !== undefined) assert.equal(response.body.errors?.[0]?.pointer, pointer, response.text)
  }
  const send = async (parts: Array<[string, string | Blob, string?]>): Promise<TestResponse> => {
    const form = new FormData()
    for (const [name, value, filename] of parts) {
      if (typeof value === 'string') form.append(name, value)
      else form.append(name, value, filename)
    }
    return toTestResponse(await server.fetch('/api/filehash/verify', { method: 'POST', body: form }))
  }
  const file = (): Blob => new Blob([Buffer.from('hello world\n')])
  const dropbox = JSON.stringify({ content_hash: '0'.repeat(64) })

  it('no metadata, or the metadata after the file: 400 naming /body/metadata', async () => {
    assertProblem(await send([['file', file(), 'a.txt']]), 400, '/body/metadata')
    assertProblem(await send([['file', file(), 'a.txt'], ['metadata', dropbox]]), 400, '/body/metadata')
  })

  it('no file, two files, an unknown part: 400 naming it', async () => {
    assertProblem(await send([['metadata', dropbox]]), 400, '/body/file')
    assertProblem(await send([['metadata', dropbox], ['file', file(), 'a'], ['file', file(), 'b']]), 400, '/body/file')
    assertProblem(await send([['metadata', dropbox], ['algorithms', 'sha256'], ['file', file(), 'a']]), 400, '/body/algorithms')
  })

  it('metadata of no known shape, or a broken .torrent: 422', async () => {
    assertProblem(await send([['metadata', 'hello'], ['file', file(), 'a']]), 422)
    assertProblem(await send([['metadata', new Blob([Buffer.from('d4:infod4:name')]), 'x.torrent'], ['file', file(), 'a']]), 422)
  })

  it('text metadata past 1 MiB, or a .torrent past 16 MiB: 413', async () => {
    assertProblem(await send([['metadata', `{"content_hash": "${'0'.repeat(MiB)}"}`], ['file', file(), 'a']]), 413)
    assertProblem(await send([['metadata', new Blob([Buffer.alloc(16 * MiB + 1)]), 'x.torrent'], ['file', file(), 'a']]), 413)
  })

  it('more git ls-tree lines than the hashers one request runs: the lines past them cannot be checked', async () => {
    const line = (index: number): string => `100644 blob ${index.toString(16).padStart(40, '0')}      12\tfile${index}.txt`
    const answer = answerOf(await send([['metadata', Array.from({ length: 100 }, (_, index) => line(index)).join('\n')], ['file', file(), 'a']]), '100 lines')
    assert.equal(answer.fields.length, 100)
    assert.equal(answer.fields.filter((each) => each.verdict === 'cannot-check').length, 36)
    assert.match(answer.fields[99]?.reason ?? '', /more than 64/)
  })

  it('an empty file against matching metadata: 200 and match', async () => {
    const empty = JSON.stringify({ content_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: 0 })
    const response = await send([['metadata', empty], ['file', new Blob([]), 'empty']])
    assert.equal(answerOf(response, 'empty').verdict, 'match')
  })
})
