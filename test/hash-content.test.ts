/**
 * Content hashes in POST /api/hash, through the real server, against independent peers on the same
 * bytes written to a file: RHash (TTH, AICH, btih, the magnet link), `git hash-object` in SHA-1 and
 * SHA-256 repositories, Python's hashlib, zlib and crcmod computing S3's values from the parts as
 * AWS documents them (helpers/aws.ts), `rclone hashsum` for Dropbox and quickXorHash, and
 * ipfs-unixfs-importer for the CID. The inputs straddle the inline limit (64 KiB: the event loop
 * below, the worker pool above) and the formats' first boundaries; parameters go in `options` by
 * /api/filehash's names, and their problems point at /body/options/<name>.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { MemoryBlockstore } from 'blockstore-core/memory'
import { importer } from 'ipfs-unixfs-importer'
import { awsChecksums } from './helpers/aws.js'
import { Random } from './helpers/random.js'
import { startServer, type TestResponse, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB
/** Empty, one byte, a TTH leaf and a byte, a BitTorrent block and a byte, and past 64 KiB (the pool) and AICH's 180 KiB block. */
const SIZES = [0, 1, 1025, 16 * KiB + 1, 200_000]

let server: TestServer
let scratch: string
const inputs = new Map<number, Buffer>()
const pathOf = (size: number): string => join(scratch, 'files', `f${size}.bin`)

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-hash-content-'))
  mkdirSync(join(scratch, 'files'))
  const random = new Random(4648)
  const bytes = Buffer.alloc(Math.max(...SIZES) + 3)
  for (let index = 0; index + 4 <= bytes.length; index += 4) bytes.writeUInt32LE(random.next(), index)
  for (const size of SIZES) {
    inputs.set(size, bytes.subarray(0, size))
    writeFileSync(pathOf(size), bytes.subarray(0, size))
  }
  server = await startServer()
})

after(async () => {
  await server?.close()
  rmSync(scratch, { recursive: true, force: true })
})

/** The input as base64, so every byte goes through as it is. */
function body(size: number, algorithm: string, options?: Record<string, string | number>): Record<string, unknown> {
  return { input: (inputs.get(size) as Buffer).toString('base64'), inputEncoding: 'base64', algorithm, ...(options ? { options } : {}) }
}

async function hashOf(size: number, algorithm: string, options?: Record<string, string | number>): Promise<string> {
  const response = await server.post('/api/hash', body(size, algorithm, options))
  assert.equal(response.status, 200, `${algorithm} of ${size} bytes: ${response.text}`)
  assert.equal(response.body.algorithm, algorithm)
  assert.equal(response.body.encoding, 'standard')
  assert.equal(response.body.length, response.body.hash.length)
  return response.body.hash as string
}

function pointerOf(response: TestResponse): string | undefined {
  return (response.body.errors as Array<{ pointer: string }> | undefined)?.[0]?.pointer
}

describe('/api/hash content hashes: RHash (TTH, AICH, btih, magnet)', { skip: skipUnless('rhash') }, () => {
  it('tth, aich and btih (name in options, RHash\'s piece length for the input\'s size) are rhash\'s', async () => {
    for (const size of SIZES) {
      const name = `f${size}.bin`
      const [tth, aich, btih] = run('rhash', ['--printf', '%{TTH} %{AICH} %{btih}\\n', pathOf(size)]).split(' ')
      assert.equal(await hashOf(size, 'tth'), tth, `tth of ${size} bytes`)
      assert.equal(await hashOf(size, 'aich'), aich, `aich of ${size} bytes`)
      assert.equal(await hashOf(size, 'btih', { name }), btih, `btih of ${size} bytes`)
    }
    const withPieces = run('rhash', ['--bt-piece-length=65536', '--printf', '%{btih}\\n', pathOf(200_000)])
    assert.equal(await hashOf(200_000, 'btih', { name: 'f200000.bin', pieceLength: '64KiB' }), withPieces)
  })

  it('magnet is rhash --magnet --btih --tth --ed2k --aich', async () => {
    for (const size of [0, 1025, 200_000]) {
      const expected = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', pathOf(size)])
      assert.equal(await hashOf(size, 'magnet', { name: `f${size}.bin` }), expected, `magnet of ${size} bytes`)
    }
  })
})

describe('/api/hash content hashes: git hash-object', { skip: skipUnless('git') }, () => {
  it('git-blob-sha1 and git-blob-sha256 take the input\'s length as the object\'s size', async () => {
    const repository = join(scratch, 'sha256-repository')
    run('git', ['init', '--quiet', '--object-format=sha256', repository])
    for (const size of SIZES) {
      assert.equal(await hashOf(size, 'git-blob-sha1'), run('git', ['hash-object', '--no-filters', pathOf(size)]), `sha1, ${size} bytes`)
      assert.equal(await hashOf(size, 'git-blob-sha256'), run('git', ['-C', repository, 'hash-object', '--no-filters', pathOf(size)]), `sha256, ${size} bytes`)
    }
    // The size given must be the input's: it is not needed, and another is refused.
    assert.equal(await hashOf(1025, 'git-blob-sha1', { size: 1025 }), run('git', ['hash-object', '--no-filters', pathOf(1025)]))
    const wrong = await server.post('/api/hash', body(1025, 'git-blob-sha1', { size: 1024 }))
    assert.equal(wrong.status, 422, wrong.text)
    assert.equal(pointerOf(wrong), '/body/options/size')
  })
})

describe('/api/hash content hashes: S3, Cloud Storage and Azure against Python (hashlib, zlib, crcmod)', { skip: skipUnless('python3', 'crcmod') }, () => {
  it('a single PUT by default; with multipartThreshold 0, one part and -1; the CRCs FULL_OBJECT or COMPOSITE', async () => {
    for (const size of SIZES) {
      const single = awsChecksums(pathOf(size), 8 * MiB, 8 * MiB)
      const parts = awsChecksums(pathOf(size), 5 * MiB, 0)
      assert.equal(await hashOf(size, 's3-etag'), single.md5.etag, `s3-etag, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-etag', { partSize: '5 MiB', multipartThreshold: 0 }), parts.md5.etag, `s3-etag in parts, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-crc64nvme'), single.crc64nvme.full, `s3-crc64nvme, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-crc32c'), single.crc32c.full, `s3-crc32c, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-crc32', { checksumType: 'COMPOSITE', partSize: 5 * MiB, multipartThreshold: 0 }), parts.crc32.composite, `s3-crc32 COMPOSITE, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-sha256'), single.sha256.composite, `s3-sha256, ${size} bytes`)
      assert.equal(await hashOf(size, 's3-sha1', { checksumType: 'FULL_OBJECT' }), single.sha1.full, `s3-sha1 FULL_OBJECT, ${size} bytes`)
      assert.equal(await hashOf(size, 'gcs-crc32c'), single.crc32c.full, `gcs-crc32c, ${size} bytes`)
      assert.equal(await hashOf(size, 'gcs-md5'), single.md5.full, `gcs-md5, ${size} bytes`)
      assert.equal(await hashOf(size, 'azure-md5'), single.md5.full, `azure-md5, ${size} bytes`)
    }
  })
})

describe('/api/hash content hashes: rclone hashsum (Dropbox, quickXorHash)', { skip: skipUnless('rclone') }, () => {
  /** `rclone hashsum <hash> <dir>`: `<hash>  <name>` per file, base64 URL-safe where it is base64. */
  function rclone(hash: string, extra: string[] = []): Map<string, string> {
    const output = run('rclone', ['--config', '/dev/null', 'hashsum', hash, ...extra, join(scratch, 'files')])
    return new Map(output.split('\n').map((line) => {
      const [value, name] = line.split(/\s+/) as [string, string]
      return [name, value.replaceAll('-', '+').replaceAll('_', '/')]
    }))
  }

  it('dropbox and quickxor are rclone\'s', async () => {
    const dropbox = rclone('dropbox')
    const quickxor = rclone('quickxor', ['--base64'])
    for (const size of SIZES) {
      assert.equal(await hashOf(size, 'dropbox'), dropbox.get(`f${size}.bin`), `dropbox of ${size} bytes`)
      assert.equal(await hashOf(size, 'quickxor'), quickxor.get(`f${size}.bin`), `quickxor of ${size} bytes`)
    }
  })
})

describe('/api/hash content hashes: ipfs-unixfs-importer', () => {
  it('ipfs-cid v0 by default and v1 with cidVersion, as ipfs add builds them', async () => {
    for (const size of SIZES) {
      for (const version of [0, 1] as const) {
        let root: string | undefined
        for await (const entry of importer([{ content: inputs.get(size) as Buffer }], new MemoryBlockstore(), { cidVersion: version, rawLeaves: version === 1 })) root = entry.cid.toString()
        assert.equal(await hashOf(size, 'ipfs-cid', version === 1 ? { cidVersion: '1' } : undefined), root, `CIDv${version} of ${size} bytes`)
      }
    }
  })
})

describe('/api/hash content hashes: the request', () => {
  it('text input is its UTF-8 bytes, and encoding is ignored: the store\'s own form', async () => {
    const hex = await server.post('/api/hash', { input: 'abc', algorithm: 's3-etag', encoding: 'base64' })
    assert.equal(hex.status, 200, hex.text)
    // RFC 1321 A.5: MD5("abc").
    assert.deepEqual({ hash: hex.body.hash, encoding: hex.body.encoding }, { hash: '900150983cd24fb0d6963f7d28e17f72', encoding: 'standard' })
    const azure = await server.post('/api/hash', { input: '616263', inputEncoding: 'hex', algorithm: 'azure-md5' })
    assert.equal(azure.body.hash, Buffer.from('900150983cd24fb0d6963f7d28e17f72', 'hex').toString('base64'))
  })

  it('a bad parameter is 422 invalid-parameter naming /body/options/<name>; a string option to a digest is 400', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ input: 'x', algorithm: 'btih' }, 422, '/body/options/name'],
      [{ input: 'x', algorithm: 'magnet', options: { name: 'a/b' } }, 422, '/body/options/name'],
      [{ input: 'x', algorithm: 's3-etag', options: { partSize: '4MiB' } }, 422, '/body/options/partSize'],
      [{ input: 'x', algorithm: 's3-etag', options: { partSize: '8MB' } }, 422, '/body/options/partSize'],
      [{ input: 'x', algorithm: 's3-crc64nvme', options: { checksumType: 'COMPOSITE' } }, 422, '/body/options/checksumType'],
      [{ input: 'x', algorithm: 'ipfs-cid', options: { cidVersion: '2' } }, 422, '/body/options/cidVersion'],
      [{ input: 'x', algorithm: 'tth', options: { partSize: 5 * MiB } }, 422, '/body/options/partSize'],
      [{ input: 'x', algorithm: 'sha3-256', options: { outputLength: '32' } }, 400, '/body/options/outputLength'],
    ]
    for (const [request, status, pointer] of cases) {
      const response = await server.post('/api/hash', request)
      assert.equal(response.status, status, `${JSON.stringify(request)}: ${response.text}`)
      assert.equal(pointerOf(response), pointer, JSON.stringify(request))
      if (status === 422) assert.equal(response.body.type, 'urn:hashd:problem:invalid-parameter')
    }
    const peppered = await server.post('/api/hash', { input: 'x', algorithm: 'tth', pepper: true })
    assert.equal(peppered.status, 400, peppered.text)
    assert.equal(peppered.body.type, 'urn:hashd:problem:algorithm-not-allowed')
  })

  it('a batch takes content hashes, at the top and per item', async () => {
    const response = await server.post('/api/hash', { algorithm: 'git-blob-sha1', items: [{ input: 'abc' }, { input: 'abc', algorithm: 'tth' }, { input: 'abc', algorithm: 'btih' }] })
    assert.equal(response.status, 200, response.text)
    const [git, tth, btih] = response.body.results as Array<Record<string, unknown>>
    // git hash-object of "abc" (no newline); THEX's TTH of "abc" as RHash prints it.
    assert.equal(git?.hash, 'f2ba8f84ab5c1bce84a7b441cb1959cfc7093b7f')
    assert.equal(tth?.hash, 'ASD4UJSEH5M47PDYB46KBTSQTSGDKLBHYXOMUIA')
    assert.equal((btih?.problem as { status?: number } | undefined)?.status, 422, 'btih without a name is the item\'s problem')
  })
})
