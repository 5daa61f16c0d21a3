/**
 * Content hashes split by data across hash threads (src/content-hashes/segments.ts, upload/threads.ts
 * `splitByData`): each share hashes every n-th segment, and the shares are put together on the main
 * thread. Checked against the reference tools on sizes around every segment boundary: RHash for TTH
 * (1 MiB subtrees), AICH (180 KiB blocks in 9,728,000-byte chunks), btih (pieces) and the magnet
 * link (those three and ed2k's chunks); `rclone
 * hashsum` for Dropbox (4 MiB blocks) and quickXorHash (4 MiB runs); Python computing S3's ETag and
 * composite checksums from the parts as AWS documents them. Then through real hash threads with a
 * small ring, as an upload runs.
 */
import assert from 'node:assert/strict'
import { randomInt } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { findContentHash, resolveParameters, type RawParameters } from '../src/content-hashes/index.js'
import { s3EtagSegments } from '../src/content-hashes/s3.js'
import { SegmentShare } from '../src/content-hashes/segments.js'
import { Problem } from '../src/problem.js'
import { HashThreads, splitByData } from '../src/upload/threads.js'
import { awsChecksums } from './helpers/aws.js'
import { Random } from './helpers/random.js'
import { run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB
const ED2K_CHUNK = 9_728_000
const AICH_BLOCK = 184_320

/** Around TTH's 1 MiB subtrees (and one leaf), AICH's blocks and chunks, Dropbox's blocks and 5 MiB S3 parts. */
const SIZES = [
  0, 1, 1 * KiB, 1 * MiB - 1, 1 * MiB, 1 * MiB + 1, 3 * MiB + 7, AICH_BLOCK - 1, AICH_BLOCK, AICH_BLOCK + 1,
  4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 5 * MiB + 1, 10 * MiB + 3, ED2K_CHUNK - 1, ED2K_CHUNK, ED2K_CHUNK + 1, 2 * ED2K_CHUNK + 5 * AICH_BLOCK + 3,
]

let scratch: string
const pathOf = (size: number) => join(scratch, 'files', `f${size}.bin`)

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-split-'))
  mkdirSync(join(scratch, 'files'))
  const random = new Random(4646)
  const largest = Math.max(...SIZES)
  const bytes = Buffer.alloc(largest + 3)
  for (let index = 0; index < largest; index += 4) bytes.writeUInt32LE(random.next(), index)
  for (const size of SIZES) writeFileSync(pathOf(size), bytes.subarray(0, size))
})

after(() => rmSync(scratch, { recursive: true, force: true }))

/** The hash in `shares` shares, each fed the whole file in uneven chunks as a thread is, then put together. */
async function splitHash(name: string, data: Uint8Array, shares: number, raw: RawParameters = {}): Promise<string> {
  const entry = findContentHash(name)
  assert.ok(entry, name)
  const params = resolveParameters(entry, raw)
  const split = entry.split?.(params)
  assert.ok(split, `${name} splits by data`)
  const texts: string[] = []
  for (let share = 0; share < shares; share++) {
    const hasher = await split.share(share, shares)
    for (let position = 0; position < data.length;) {
      const step = randomInt(1, 300_000)
      hasher.update(data.subarray(position, position + step))
      position += step
    }
    texts.push(hasher.finish())
  }
  return split.combine(texts)
}

describe('content hashes split by data: RHash (TTH, AICH, btih)', { skip: skipUnless('rhash') }, () => {
  it('in 2 and 3 shares, each agrees with rhash on every size around the segment boundaries', async () => {
    for (const size of SIZES) {
      const path = pathOf(size)
      const data = readFileSync(path)
      const [tth, aich, btih] = run('rhash', ['--printf', '%{TTH} %{AICH} %{btih}\\n', path]).split(' ')
      for (const shares of [2, 3]) {
        assert.equal(await splitHash('tth', data, shares), tth, `tth of ${size} bytes in ${shares} shares`)
        assert.equal(await splitHash('aich', data, shares), aich, `aich of ${size} bytes in ${shares} shares`)
        assert.equal(await splitHash('btih', data, shares, { name: `f${size}.bin`, size }), btih, `btih of ${size} bytes in ${shares} shares`)
      }
    }
  })

  it('the magnet link (TTH, btih, ed2k and AICH, each split) in 2 shares agrees with rhash --magnet on every size', async () => {
    for (const size of SIZES) {
      const path = pathOf(size)
      const expected = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', path])
      assert.equal(await splitHash('magnet', readFileSync(path), 2, { name: `f${size}.bin`, size }), expected, `magnet of ${size} bytes`)
    }
  })

  it('btih with a piece length given, as rhash --bt-piece-length', async () => {
    const size = 3 * MiB + 7
    const expected = run('rhash', ['--bt-piece-length=262144', '--printf', '%{btih}\\n', pathOf(size)])
    assert.equal(await splitHash('btih', readFileSync(pathOf(size)), 2, { name: `f${size}.bin`, pieceLength: 256 * KiB }), expected)
  })
})

describe('content hashes split by data: rclone hashsum (Dropbox, quickXorHash)', { skip: skipUnless('rclone') }, () => {
  it('in 2 shares, dropbox and quickxor agree with rclone on every size', async () => {
    const rclone = (hash: string, extra: string[] = []) => new Map(run('rclone', ['--config', '/dev/null', 'hashsum', hash, ...extra, join(scratch, 'files')])
      .split('\n').map((line) => {
        const [value, name] = line.split(/\s+/) as [string, string]
        return [name, value.replaceAll('-', '+').replaceAll('_', '/')]
      }))
    const dropbox = rclone('dropbox')
    const quickxor = rclone('quickxor', ['--base64'])
    for (const size of SIZES) {
      const data = readFileSync(pathOf(size))
      assert.equal(await splitHash('dropbox', data, 2), dropbox.get(`f${size}.bin`), `dropbox of ${size} bytes`)
      assert.equal(await splitHash('quickxor', data, 2), quickxor.get(`f${size}.bin`), `quickxor of ${size} bytes`)
    }
  })
})

describe('content hashes split by data: S3 parts, computed in Python from the parts', { skip: skipUnless('python3', 'crcmod') }, () => {
  it('s3-etag and the composite checksums in 2 shares, 5 MiB parts, below and above the threshold', async () => {
    for (const size of [0, 1, 5 * MiB - 1, 5 * MiB, 5 * MiB + 1, 10 * MiB + 3]) {
      const path = join(scratch, `s3-${size}.bin`)
      writeFileSync(path, readFileSync(pathOf(Math.max(...SIZES))).subarray(0, size))
      const bytes = readFileSync(path)
      const aws = awsChecksums(path, 5 * MiB, 5 * MiB)
      const parts = { partSize: 5 * MiB, multipartThreshold: 5 * MiB }
      assert.equal(await splitHash('s3-etag', bytes, 2, parts), aws.md5.etag, `etag of ${size} bytes`)
      assert.equal(await splitHash('s3-sha256', bytes, 2, { ...parts, checksumType: 'COMPOSITE' }), aws.sha256.composite, `sha256 of ${size} bytes`)
      assert.equal(await splitHash('s3-crc32c', bytes, 2, { ...parts, checksumType: 'COMPOSITE' }), aws.crc32c.composite, `crc32c of ${size} bytes`)
    }
  })

  it('more than 10,000 parts is the same 422 naming partSize as the streaming hasher\'s', async () => {
    const segmented = s3EtagSegments(resolveParameters(findContentHash('s3-etag')!, { partSize: 5 * MiB, multipartThreshold: 5 * MiB }))!
    // 10,000 parts of 5 MiB is 50,000 MiB: the share hashes only the first part (one share in 10,001),
    // and is fed zeros 25 MiB at a time.
    const share = new SegmentShare(segmented, await segmented.segmentDigest(), 0, 10_001)
    const zeros = new Uint8Array(25 * MiB)
    for (let part = 0; part < 10_000; part += 5) share.update(zeros)
    assert.throws(() => share.update(new Uint8Array(1)), (error: unknown) => error instanceof Problem && error.status === 422 && /partSize/.test(error.detail))
  })
})

describe('content hashes split by data: through the hash threads', { skip: skipUnless('rhash') }, () => {
  let threads: HashThreads
  // A 64 KiB ring, so the shares wait on each other many times over.
  before(() => { threads = new HashThreads({ threads: 2, ringBytes: 64 * 1024, idleMs: 1_000 }) })
  after(async () => { await threads.close() })

  it('one content hash alone takes both threads, one share each', () => {
    const { hashes, splits } = splitByData([{ name: 'tth', params: {} }, { name: 'git-blob-sha1', params: { size: 3 } }], 2)
    assert.deepEqual(hashes.map((hash) => [hash.key ?? hash.name, hash.share?.index]), [['tth#share0', 0], ['tth#share1', 1], ['git-blob-sha1', undefined]])
    assert.equal(splits.length, 1)
    assert.deepEqual(splitByData([{ name: 'tth', params: {} }], 1).splits, [], 'one thread: nothing to split')
  })

  for (const size of [0, 1, 1 * MiB - 1, 1 * MiB + 1, 3 * MiB + 7, ED2K_CHUNK + 1]) {
    it(`tth, aich, btih and magnet of ${size} bytes in random pieces, threaded, agree with rhash`, async () => {
      const path = pathOf(size)
      const data = readFileSync(path)
      const sink = threads.sink([], [{ name: 'tth', params: {} }, { name: 'aich', params: {} }, { name: 'btih', params: { name: `f${size}.bin`, size } }, { name: 'magnet', params: { name: `f${size}.bin`, size } }])
      assert.ok(sink, 'two idle threads give a threaded sink')
      for (let offset = 0; offset < data.length;) {
        const piece = randomInt(0, 100_000)
        const wait = sink.write(data.subarray(offset, offset + piece))
        offset += piece
        if (wait) await wait
      }
      await sink.finish()
      const [tth, aich, btih] = run('rhash', ['--printf', '%{TTH} %{AICH} %{btih}\\n', path]).split(' ')
      const magnet = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', path])
      assert.deepEqual(Object.fromEntries(sink.contentHashes()), { tth, aich, btih, magnet })
    })
  }
})
