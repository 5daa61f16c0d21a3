/**
 * /api/filehash with content hashes (src/content-hashes) through the real server: real files sent
 * raw (PUT, with a Content-Length or chunked) and as multipart forms, each content hash compared
 * with an independent peer reading the same file (RHash, git hash-object, rclone hashsum, Python's
 * hashlib and crcmod computing S3's parts as AWS documents them, libtorrent); the parameters in the
 * query string and as form fields; and the problems that name the field at fault.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { MemoryBlockstore } from 'blockstore-core/memory'
import { importer } from 'ipfs-unixfs-importer'
import { TigerTreeHash } from '../src/content-hashes/tth.js'
import { Random } from './helpers/random.js'
import { sendInPieces } from './helpers/send.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { awsChecksums } from './helpers/aws.js'
import { python, run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB
/**
 * Empty; one byte; one past a 5 MiB part (and past Dropbox's 4 MiB block); 12,000,000 bytes: two
 * parts of the AWS CLI's 8 MiB, and with two hashers and a Content-Length past 1 MiB the digests
 * and the content hashes go to the hash threads.
 */
const SIZES = [0, 1, 1025, 5 * MiB + 1, 12_000_000]

let server: TestServer
let scratch: string
const files = new Map<number, string>()
const fileOf = (size: number): string => files.get(size) as string
const nameOf = (size: number): string => `f${size}.bin`

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-filehash-content-'))
  const random = new Random(4646)
  const largest = Math.max(...SIZES)
  const bytes = Buffer.alloc(largest + 3)
  for (let index = 0; index < largest; index += 4) bytes.writeUInt32LE(random.next(), index)
  for (const size of SIZES) {
    const path = join(scratch, nameOf(size))
    writeFileSync(path, bytes.subarray(0, size))
    files.set(size, path)
  }
  server = await startServer()
})

after(async () => {
  await server.close()
  rmSync(scratch, { recursive: true, force: true })
})

/** PUT with the file as the body: fetch sends a Content-Length for a Buffer. */
async function put(size: number, query: string): Promise<TestResponse> {
  return toTestResponse(await server.fetch(`/api/filehash?${query}`, { method: 'PUT', body: readFileSync(fileOf(size)) }))
}

/** The same file chunked, with no Content-Length (as a pipe would send it). */
async function putChunked(size: number, query: string): Promise<TestResponse> {
  const data = readFileSync(fileOf(size))
  const pieces = Array.from({ length: Math.ceil(data.length / (64 * KiB)) }, (_, index) => data.subarray(index * 64 * KiB, (index + 1) * 64 * KiB))
  const answer = await sendInPieces(`${server.url}/api/filehash?${query}`, 'PUT', { 'content-type': 'application/octet-stream' }, pieces)
  assert.equal(answer.type.split(';')[0], answer.status === 200 ? 'application/json' : 'application/problem+json')
  return { status: answer.status, headers: new Headers({ 'content-type': answer.type }), body: JSON.parse(answer.text), text: answer.text }
}

/** A multipart form: text fields, then the file part. */
async function post(size: number, fields: Array<[string, string]>, query = ''): Promise<TestResponse> {
  const form = new FormData()
  for (const [name, value] of fields) form.append(name, value)
  form.append('file', await openAsBlob(fileOf(size)), nameOf(size))
  return toTestResponse(await server.fetch(`/api/filehash${query}`, { method: 'POST', body: form }))
}

function hashesOf(response: TestResponse, label: string): Record<string, string> {
  assert.equal(response.status, 200, `${label}: ${response.text}`)
  return response.body.hashes as Record<string, string>
}

/** A 4xx problem+json whose first error points at `pointer`. */
function assertProblem(response: TestResponse, status: number, pointer: string, detail?: RegExp): void {
  assert.equal(response.status, status, response.text)
  assert.equal(response.headers.get('content-type')?.split(';')[0], 'application/problem+json')
  assert.equal(response.body.errors?.[0]?.pointer, pointer, response.text)
  if (detail) assert.match(response.body.detail, detail)
}

describe('filehash content hashes: magnet is rhash --magnet, raw and multipart', { skip: skipUnless('rhash') }, () => {
  it('the name from ?name= or the form\'s filename, beside sha256; a large upload\'s on the hash threads', async () => {
    for (const size of SIZES) {
      const expected = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', fileOf(size)])
      assert.equal(hashesOf(await put(size, `algorithms=magnet,sha256&name=${nameOf(size)}`), `raw, ${size} bytes`).magnet, expected)
      assert.equal(hashesOf(await post(size, [['algorithms', 'sha256,magnet'], ['size', String(size)]]), `form, ${size} bytes`).magnet, expected)
    }
  })
})

describe('filehash content hashes: ipfs-cid is ipfs-unixfs-importer\'s, raw and multipart', () => {
  /** kubo's `ipfs add` and `ipfs add --cid-version=1` (raw leaves), as ipfs-unixfs-importer builds them. */
  async function importerCid(size: number, cidVersion: 0 | 1): Promise<string> {
    let root = ''
    for await (const entry of importer([{ content: readFileSync(fileOf(size)) }], new MemoryBlockstore(), { cidVersion, rawLeaves: cidVersion === 1 })) root = entry.cid.toString()
    return root
  }

  it('CIDv0 by default, CIDv1 with cidVersion=1 in the query or as a form field', async () => {
    for (const size of SIZES) {
      const [v0, v1] = [await importerCid(size, 0), await importerCid(size, 1)]
      assert.equal(hashesOf(await put(size, 'algorithms=ipfs-cid'), `raw, ${size} bytes`)['ipfs-cid'], v0)
      assert.equal(hashesOf(await putChunked(size, 'algorithms=ipfs-cid,sha256&cidVersion=1'), `chunked, ${size} bytes`)['ipfs-cid'], v1)
      assert.equal(hashesOf(await post(size, [['algorithms', 'sha1,ipfs-cid'], ['cidVersion', '1']]), `form, ${size} bytes`)['ipfs-cid'], v1)
    }
  })

  it('an unknown CID version names cidVersion where it was given (the query\'s schema: 400; a form field: 422); without ipfs-cid, a 422', async () => {
    assertProblem(await put(1, 'algorithms=ipfs-cid&cidVersion=2'), 400, '/querystring/cidVersion', /cidVersion must be one of 0, 1/)
    assertProblem(await post(1, [['algorithms', 'ipfs-cid'], ['cidVersion', 'v1']]), 422, '/body/cidVersion', /cidVersion must be one of 0, 1/)
    assertProblem(await put(1, 'algorithms=sha256&cidVersion=1'), 422, '/querystring/cidVersion', /parameter of ipfs-cid/)
  })
})

describe('filehash content hashes: RHash (TTH, AICH, BTIH), raw and multipart', { skip: skipUnless('rhash', 'sha256sum') }, () => {
  it('tth, aich and btih are rhash --tth --aich --btih, beside sha256, in request order', async () => {
    for (const size of SIZES) {
      const path = fileOf(size)
      const [tth, aich, btih] = run('rhash', ['--printf', '%{TTH} %{AICH} %{btih}\\n', path]).split(' ')
      const sha256 = run('sha256sum', [path]).split(' ')[0]
      // RHash names the torrent after the file, which the raw form gives as ?name= and the form as its filename.
      const raw = hashesOf(await put(size, `algorithms=tth,sha256,aich,btih&name=${nameOf(size)}`), `raw, ${size} bytes`)
      assert.deepEqual(Object.keys(raw), ['tth', 'sha256', 'aich', 'btih'])
      assert.deepEqual(raw, { tth, sha256, aich, btih }, `raw, ${size} bytes`)
      // The form's Content-Length counts the envelope, so btih's default piece length needs size.
      const form = hashesOf(await post(size, [['algorithms', 'tth,aich,btih,sha256'], ['size', String(size)]]), `form, ${size} bytes`)
      assert.deepEqual(form, { tth, aich, btih, sha256 }, `form, ${size} bytes`)
    }
  })

  it('btih with pieceLength needs no size, and matches rhash --bt-piece-length, sent chunked', async () => {
    const size = 5 * MiB + 1
    const expected = run('rhash', ['--bt-piece-length=65536', '--printf', '%{btih}\\n', fileOf(size)])
    assert.equal(hashesOf(await putChunked(size, `algorithms=btih&pieceLength=64KiB&name=${nameOf(size)}`), 'chunked').btih, expected)
    assert.equal(hashesOf(await post(size, [['algorithms', 'btih'], ['pieceLength', '65536']]), 'form').btih, expected)
  })
})

describe('filehash content hashes: git hash-object', { skip: skipUnless('git') }, () => {
  it('git-blob-sha1 and git-blob-sha256 take the size from Content-Length, ?size= or the form field', async () => {
    const repository = join(scratch, 'sha256-repo')
    run('git', ['init', '-q', '--object-format=sha256', repository])
    for (const size of SIZES) {
      const path = fileOf(size)
      const expected = {
        'git-blob-sha1': run('git', ['hash-object', '--no-filters', path]),
        'git-blob-sha256': run('git', ['-C', repository, 'hash-object', '--no-filters', path]),
      }
      assert.deepEqual(hashesOf(await put(size, 'algorithms=git-blob-sha1,git-blob-sha256'), `Content-Length, ${size} bytes`), expected)
      assert.deepEqual(hashesOf(await putChunked(size, `algorithms=git-blob-sha1,git-blob-sha256&size=${size}`), `chunked, ${size} bytes`), expected)
      assert.deepEqual(hashesOf(await post(size, [['algorithms', 'git-blob-sha1,git-blob-sha256'], ['size', String(size)]]), `form, ${size} bytes`), expected)
      assert.deepEqual(hashesOf(await post(size, [], `?algorithms=git-blob-sha1,git-blob-sha256&size=${size}`), `form with a query, ${size} bytes`), expected)
    }
  })
})

describe('filehash content hashes: rclone hashsum (Dropbox, quickXorHash)', { skip: skipUnless('rclone') }, () => {
  it('dropbox and quickxor are rclone hashsum dropbox and quickxor --base64, and encoding does not touch them', async () => {
    /** rclone prints base64 URL-safe; OneDrive's API (and hashd), standard base64. */
    const rclone = (hash: string, extra: string[] = []) => new Map(run('rclone', ['--config', '/dev/null', 'hashsum', hash, ...extra, scratch, '--max-depth', '1']).split('\n')
      .map((line) => line.split(/\s+/) as [string, string]).map(([value, name]) => [name, value.replaceAll('-', '+').replaceAll('_', '/')]))
    const dropbox = rclone('dropbox')
    const quickxor = rclone('quickxor', ['--base64'])
    for (const size of SIZES) {
      const expected = { dropbox: dropbox.get(nameOf(size)), quickxor: quickxor.get(nameOf(size)) }
      assert.deepEqual(hashesOf(await put(size, 'algorithms=dropbox,quickxor'), `raw, ${size} bytes`), expected)
      const form = hashesOf(await post(size, [['algorithms', 'dropbox,quickxor,sha256'], ['encoding', 'base64']]), `form, ${size} bytes`)
      assert.deepEqual({ dropbox: form.dropbox, quickxor: form.quickxor }, expected)
      assert.equal(form.sha256, Buffer.from(python('import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())', [fileOf(size)]), 'hex').toString('base64'))
    }
  })
})


describe('filehash content hashes: S3, Cloud Storage and Azure against Python (hashlib, zlib, crcmod)', { skip: skipUnless('python3', 'crcmod') }, () => {
  const aws = (size: number, partSize: number, threshold: number) =>
    awsChecksums(fileOf(size), partSize, threshold)
  const ALL = 's3-etag,s3-crc64nvme,s3-crc32,s3-crc32c,s3-sha1,s3-sha256,gcs-crc32c,gcs-md5,azure-md5'

  it('with the AWS CLI\'s defaults (8 MiB parts from 8 MiB on), raw with a Content-Length and as a form', async () => {
    for (const size of SIZES) {
      const expected = aws(size, 8 * MiB, 8 * MiB)
      const want = {
        's3-etag': expected.md5!.etag, 's3-crc64nvme': expected.crc64nvme!.full, 's3-crc32': expected.crc32!.full, 's3-crc32c': expected.crc32c!.full,
        's3-sha1': expected.sha1!.composite, 's3-sha256': expected.sha256!.composite,
        'gcs-crc32c': expected.crc32c!.full, 'gcs-md5': expected.md5!.full, 'azure-md5': expected.md5!.full,
      }
      // sha256 and md5 beside them: on the 12 MB file, on the hash threads.
      const raw = hashesOf(await put(size, `algorithms=sha256,${ALL},md5`), `raw, ${size} bytes`)
      assert.deepEqual(Object.keys(raw), ['sha256', ...ALL.split(','), 'md5'])
      const { sha256: _sha256, md5, ...content } = raw
      assert.deepEqual(content, want, `raw, ${size} bytes`)
      assert.equal(md5, Buffer.from(expected.md5!.full, 'base64').toString('hex'))
      assert.deepEqual(hashesOf(await post(size, [['algorithms', ALL]]), `form, ${size} bytes`), want)
    }
  })

  it('partSize, multipartThreshold and checksumType from the query or the form, the same every way', async () => {
    for (const size of SIZES) {
      const expected = aws(size, 5 * MiB, 0)
      const want = { 's3-etag': expected.md5!.etag, 's3-crc32c': expected.crc32c!.composite, 's3-sha256': expected.sha256!.composite }
      const query = 'algorithms=s3-etag,s3-crc32c,s3-sha256&partSize=5MiB&multipartThreshold=0&checksumType=COMPOSITE'
      assert.deepEqual(hashesOf(await put(size, query), `raw, ${size} bytes`), want)
      assert.deepEqual(hashesOf(await putChunked(size, query), `chunked, ${size} bytes`), want)
      assert.deepEqual(hashesOf(await post(size, [['algorithms', 's3-etag,s3-crc32c,s3-sha256'], ['partSize', '5 MiB'], ['multipartThreshold', '0'], ['checksumType', 'COMPOSITE']]), `form, ${size} bytes`), want)
      assert.deepEqual(hashesOf(await post(size, [], `?${query}`), `form with a query, ${size} bytes`), want)
    }
  })
})

describe('filehash content hashes: libtorrent (BitTorrent v2 pieces root)', { skip: skipUnless('libtorrent') }, () => {
  const LIBTORRENT_ROOT = `
import os, sys, libtorrent as lt
path = sys.argv[1]
fs = lt.file_storage()
lt.add_files(fs, path)
torrent = lt.create_torrent(fs, 0, flags=lt.create_torrent.v2_only)
lt.set_piece_hashes(torrent, os.path.dirname(path))
print(lt.torrent_info(torrent.generate()).files().root(0))
`
  it('bt2-root is libtorrent\'s pieces root (a file that is not empty: an empty one has none)', async () => {
    for (const size of SIZES.filter((size) => size > 0)) {
      const expected = python(LIBTORRENT_ROOT, [fileOf(size)])
      assert.equal(hashesOf(await put(size, 'algorithms=bt2-root'), `raw, ${size} bytes`)['bt2-root'], expected)
      assert.equal(hashesOf(await post(size, [['algorithms', 'bt2-root']]), `form, ${size} bytes`)['bt2-root'], expected)
    }
  })
})

describe('filehash content hashes: problems that name the field', () => {
  it('a parameter no requested algorithm takes: 422 naming it, in the query or the form', async () => {
    assertProblem(await put(1, 'algorithms=sha256,dropbox&partSize=8MiB'), 422, '/querystring/partSize', /s3-etag/)
    assertProblem(await post(1, [['algorithms', 'sha256'], ['pieceLength', '64KiB']]), 422, '/body/pieceLength', /btih/)
    assertProblem(await put(1, 'algorithms=s3-etag&checksumType=COMPOSITE'), 422, '/querystring/checksumType')
  })

  it('a parameter out of bounds, or a value an algorithm does not take: 422 naming it', async () => {
    assertProblem(await put(1, 'algorithms=s3-etag&partSize=1MiB'), 422, '/querystring/partSize', /at least 5 MiB/)
    assertProblem(await post(1, [['algorithms', 's3-etag'], ['partSize', '6GiB']]), 422, '/body/partSize', /at most 5 GiB/)
    assertProblem(await put(1, 'algorithms=s3-crc64nvme&checksumType=COMPOSITE'), 422, '/querystring/checksumType', /FULL_OBJECT/)
    assertProblem(await put(1, 'algorithms=btih&name=a%2Fb.bin'), 422, '/querystring/name', /base name/)
  })

  it('an unknown parameter or a malformed one: 400 naming it (the query schema; the form\'s field list)', async () => {
    assertProblem(await put(1, 'algorithms=s3-etag&partsize=8MiB'), 400, '/querystring/partsize')
    assertProblem(await put(1, 'algorithms=s3-etag&partSize=8MB'), 400, '/querystring/partSize')
    assertProblem(await put(1, 'algorithms=s3-etag&checksumType=full'), 400, '/querystring/checksumType')
    assertProblem(await post(1, [['algorithms', 's3-etag'], ['part_size', '8MiB']]), 400, '/body/part_size')
  })

  it('a size needed up front and not given: 422 naming size, or name for btih\'s torrent name', async () => {
    assertProblem(await post(1, [['algorithms', 'git-blob-sha1']]), 422, '/querystring/size', /size is required/)
    assertProblem(await putChunked(1, 'algorithms=git-blob-sha256'), 422, '/querystring/size')
    assertProblem(await post(1, [['algorithms', 'btih']]), 422, '/querystring/size', /pieceLength/)
    assertProblem(await put(1, 'algorithms=btih'), 422, '/querystring/name', /name is required/)
  })

  it('a file whose size is not the size given: 422 naming where the size came from', async () => {
    const size = 5 * MiB + 1
    assertProblem(await putChunked(size, `algorithms=git-blob-sha1&size=${size + 1}`), 422, '/querystring/size', new RegExp(`file is ${size} bytes`))
    // Longer than promised: refused as the byte past it arrives, before the upload ends.
    assertProblem(await putChunked(size, 'algorithms=git-blob-sha1,btih&name=x.bin&size=1000'), 422, '/querystring/size', /file is longer/)
    assertProblem(await post(size, [['algorithms', 'git-blob-sha256'], ['size', '5MiB']]), 422, '/body/size', /file is longer/)
    assertProblem(await post(1, [['algorithms', 'btih'], ['size', '2']], '?name=x.bin'), 422, '/body/size', /file is 1 bytes/)
  })

  it('at most 16 digests, and every content hash beside them', async () => {
    const names = 's3-etag,s3-crc64nvme,s3-crc32,s3-crc32c,s3-sha1,s3-sha256,gcs-crc32c,gcs-md5,azure-md5,dropbox,quickxor,git-blob-sha1,git-blob-sha256,tth,aich,btih,bt2-root,ipfs-cid,magnet'
    const digests = 'md5,sha1,sha224,sha256,sha384,sha512,sha3-256,sha3-512,blake2b-512,blake2s-256,blake3,xxh64,xxh3,xxh128,crc32,crc32c'
    const all = hashesOf(await put(1, `algorithms=${digests},${names}&name=one.bin`), 'every content hash')
    assert.equal(Object.keys(all).length, 16 + 19)
    assertProblem(await put(1, `algorithms=${digests},md4,${names}&name=one.bin`), 400, '/querystring/algorithms', /at most 16/)
  })

  it('expected is compared with digests only; with content hashes alone it warns', async () => {
    const response = await put(1, 'algorithms=s3-etag&expected=' + '0'.repeat(32))
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(response.body.matches, {})
    assert.match(response.body.warnings[0], /digests only/)
  })
})

describe('filehash content hashes: off the event loop for a large upload', { skip: availableParallelism() < 2 ? 'two hash threads need two cores' : false }, () => {
  it('a large upload\'s tth is hashed by a hash thread: raw or as a form, alone, or chunked with no length; a small one\'s on the event loop', async () => {
    // The server runs in this process: the hash threads load their own copy of tth.js, so only the
    // event loop's TigerTreeHash is counted here.
    let onEventLoop = 0
    const update = TigerTreeHash.prototype.update
    TigerTreeHash.prototype.update = function (this: TigerTreeHash, chunk: Uint8Array) {
      onEventLoop += chunk.length
      update.call(this, chunk)
    }
    try {
      const size = 5 * MiB + 1
      const raw = hashesOf(await put(size, 'algorithms=sha256,tth'), 'raw, with a Content-Length')
      const form = hashesOf(await post(size, [['algorithms', 'sha256,tth']]), 'form')
      // A content hash alone takes one thread; an upload of unknown length goes to the threads too.
      const alone = hashesOf(await put(size, 'algorithms=tth'), 'tth alone')
      const chunked = hashesOf(await putChunked(size, 'algorithms=sha256,tth'), 'chunked')
      assert.equal(onEventLoop, 0, 'no TTH byte hashed on the event loop')
      assert.deepEqual(raw, chunked)
      assert.deepEqual(form, chunked)
      assert.equal(alone.tth, chunked.tth)
      // Declared smaller than PARALLEL_MIN_BYTES: a thread's hop costs more than it saves.
      const small = 1025
      const inline = hashesOf(await put(small, 'algorithms=sha256,tth'), 'small')
      assert.equal(onEventLoop, small)
      assert.equal(inline.tth, hashesOf(await putChunked(small, 'algorithms=tth'), 'small, chunked').tth)
    } finally {
      TigerTreeHash.prototype.update = update
    }
  })
})

describe('filehash content hashes: the OpenAPI document', () => {
  it('lists every parameter in the query of POST and PUT and in the form, with bounds, and no others', async () => {
    const document = (await server.get('/api/openapi.json')).body
    const operations = document.paths['/api/filehash']
    for (const method of ['post', 'put']) {
      const parameters = new Map<string, { schema: Record<string, unknown>, description?: string }>(
        operations[method].parameters.filter((parameter: { in: string }) => parameter.in === 'query').map((parameter: { name: string }) => [parameter.name, parameter]))
      for (const name of ['partSize', 'multipartThreshold', 'pieceLength', 'size']) {
        const parameter = parameters.get(name)
        assert.ok(parameter, `${method} ${name}`)
        assert.equal(parameter.schema.maxLength, 32)
        assert.ok(new RegExp(parameter.schema.pattern as string).test('8MiB') && !new RegExp(parameter.schema.pattern as string).test('8MB'), name)
        assert.match(parameter.description ?? String(parameter.schema.description), / to /, `${name} states its bounds`)
      }
      assert.deepEqual([...parameters.keys()].sort(), ['algorithms', 'checksumType', 'cidVersion', 'dihedral', 'encoding', 'expected', 'multipartThreshold', 'name', 'partSize', 'pieceLength', 'size'])
      assert.deepEqual(parameters.get('checksumType')?.schema.enum, ['FULL_OBJECT', 'COMPOSITE'])
      assert.deepEqual(parameters.get('cidVersion')?.schema.enum, ['0', '1'])
      const algorithms = new RegExp(parameters.get('algorithms')?.schema.pattern as string)
      assert.ok(algorithms.test('sha256,s3-etag,dropbox,btih'))
    }
    const form = operations.post.requestBody.content['multipart/form-data'].schema
    assert.equal(form.additionalProperties, false)
    for (const name of ['partSize', 'multipartThreshold', 'checksumType', 'pieceLength', 'size', 'cidVersion']) assert.ok(form.properties[name], `form field ${name}`)
  })
})
