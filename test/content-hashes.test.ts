/**
 * Content hashes (src/content-hashes) against independent peers on real files: RHash for TTH, AICH
 * and BTIH; `git hash-object` in SHA-1 and SHA-256 repositories; Python's hashlib, zlib and crcmod
 * (configured for CRC-64/NVME and CRC-32C) computing S3's ETags and checksums from the parts as AWS
 * documents them; the AWS SDK's own CRC packages; `rclone hashsum` for Dropbox and quickXorHash;
 * libtorrent for the BitTorrent v2 pieces root. The sizes straddle every block boundary the
 * formats have: TTH's 1,024-byte leaves, BitTorrent's 16 KiB blocks, AICH's 180 KiB blocks,
 * Dropbox's 4 MiB blocks, S3's 5 MiB parts and eMule's 9,728,000-byte chunks.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Crc32c } from '@aws-crypto/crc32c'
import { Crc64Nvme } from '@aws-sdk/crc64-nvme'
import { contentHashes, createContentHasher, findContentHash, type RawParameters } from '../src/content-hashes/index.js'
import { parseByteSize } from '../src/content-hashes/parameters.js'
import { opensslDigest, PartDigests, S3_MAX_PARTS } from '../src/content-hashes/parts.js'
import { rhashDefaultPieceLength } from '../src/content-hashes/bittorrent.js'
import { Problem } from '../src/problem.js'
import { Random } from './helpers/random.js'
import { awsChecksums } from './helpers/aws.js'
import { python, run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB
const ED2K_CHUNK = 9_728_000
const AICH_BLOCK = 184_320

/** Sizes on and around each format's boundaries, all small enough to hash in a blink. */
const SIZES = [
  0, 1, 3, 1023, 1024, 1025, 3 * 1024 + 1, 16 * KiB - 1, 16 * KiB, 16 * KiB + 1, 3 * 16 * KiB + 1,
  AICH_BLOCK - 1, AICH_BLOCK, AICH_BLOCK + 1, 5 * AICH_BLOCK + 7,
  4 * MiB - 1, 4 * MiB, 4 * MiB + 1, 5 * MiB, 5 * MiB + 1,
]
/** eMule chunk boundaries: one chunk less a byte, exactly one, one byte more, and a second chunk of five blocks. */
const CHUNK_SIZES = [ED2K_CHUNK - 1, ED2K_CHUNK, ED2K_CHUNK + 1, ED2K_CHUNK + 4 * AICH_BLOCK + 7]

let scratch: string
const files = new Map<number, string>()
const fileOf = (size: number): string => files.get(size) as string

/** Hashes the file through the registry, in uneven chunks, as an upload would arrive. */
async function hashFile(name: string, path: string, params: RawParameters = {}): Promise<string> {
  const entry = findContentHash(name)
  assert.ok(entry, name)
  const data = readFileSync(path)
  const hasher = await createContentHasher(entry, params)
  for (let position = 0, step = 65_521; position < data.length; position += step) hasher.update(data.subarray(position, position + step))
  return hasher.finish()
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1)

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-content-'))
  mkdirSync(join(scratch, 'files'))
  const random = new Random(46)
  // One random buffer, cut to each size: every file starts with the same bytes, which is fine.
  const largest = Math.max(...SIZES, ...CHUNK_SIZES)
  const bytes = Buffer.alloc(largest + 3)
  for (let index = 0; index < largest; index += 4) bytes.writeUInt32LE(random.next(), index)
  for (const size of [...SIZES, ...CHUNK_SIZES]) {
    const path = join(scratch, 'files', `f${size}.bin`)
    writeFileSync(path, bytes.subarray(0, size))
    files.set(size, path)
  }
})

after(() => rmSync(scratch, { recursive: true, force: true }))

describe('content hashes: the registry', () => {
  it('has every name the issue lists, each once, with an output form and a reference', () => {
    const names = contentHashes.map((entry) => entry.name)
    assert.deepEqual(names, [
      's3-etag', 's3-crc64nvme', 's3-crc32', 's3-crc32c', 's3-sha1', 's3-sha256', 'gcs-crc32c', 'gcs-md5', 'azure-md5',
      'dropbox', 'quickxor', 'git-blob-sha1', 'git-blob-sha256', 'tth', 'aich', 'btih', 'bt2-root', 'ipfs-cid', 'magnet',
    ])
    for (const entry of contentHashes) {
      assert.ok(['hex', 'base64', 'base32', 'multibase', 'uri'].includes(entry.output), entry.name)
      assert.ok(entry.reference.length > 0 && entry.store.length > 0, entry.name)
    }
  })

  it('prints each in its store\'s form: hex, base64 or base32 of the right length', async () => {
    const FORMS: Record<string, RegExp> = {
      's3-etag': /^[0-9a-f]{32}$/, 's3-crc64nvme': /^[A-Za-z0-9+/]{11}=$/, 's3-crc32': /^[A-Za-z0-9+/]{6}==$/, 's3-crc32c': /^[A-Za-z0-9+/]{6}==$/,
      's3-sha1': /^[A-Za-z0-9+/]{27}=$/, 's3-sha256': /^[A-Za-z0-9+/]{43}=$/, 'gcs-crc32c': /^[A-Za-z0-9+/]{6}==$/,
      'gcs-md5': /^[A-Za-z0-9+/]{22}==$/, 'azure-md5': /^[A-Za-z0-9+/]{22}==$/, dropbox: /^[0-9a-f]{64}$/, quickxor: /^[A-Za-z0-9+/]{27}=$/,
      'git-blob-sha1': /^[0-9a-f]{40}$/, 'git-blob-sha256': /^[0-9a-f]{64}$/, tth: /^[A-Z2-7]{39}$/, aich: /^[A-Z2-7]{32}$/,
      btih: /^[0-9a-f]{40}$/, 'bt2-root': /^[0-9a-f]{64}$/, 'ipfs-cid': /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/,
      magnet: /^magnet:\?xl=3&dn=x\.bin&xt=urn:tree:tiger:[a-z2-7]{39}&xt=urn:btih:[0-9a-f]{40}&xt=urn:ed2k:[0-9a-f]{32}&xt=urn:aich:[a-z2-7]{32}$/,
    }
    for (const entry of contentHashes) {
      const hasher = await createContentHasher(entry, { ...(entry.parameters.size ? { size: 3 } : {}), ...(entry.parameters.name ? { name: 'x.bin' } : {}) })
      hasher.update(Buffer.from('abc'))
      assert.match(hasher.finish(), FORMS[entry.name] as RegExp, entry.name)
    }
  })

  it('gives the same result however the bytes are cut into chunks', async () => {
    const data = readFileSync(fileOf(3 * 16 * KiB + 1))
    const random = new Random(7)
    for (const entry of contentHashes) {
      const params: RawParameters = { ...(entry.parameters.size ? { size: data.length } : {}), ...(entry.parameters.name ? { name: 'x.bin' } : {}) }
      const whole = await createContentHasher(entry, params)
      whole.update(data)
      const pieces = await createContentHasher(entry, params)
      for (let position = 0; position < data.length;) {
        const step = random.range(0, 3000)
        pieces.update(data.subarray(position, position + step))
        position += step
      }
      assert.equal(pieces.finish(), whole.finish(), entry.name)
    }
  })
})

describe('content hashes: published vectors', () => {
  it('CRC-64/NVME of "123456789" is ae8b14860a799888 (the catalogue\'s check value), CRC-32C e3069283', async () => {
    const check = Buffer.from('123456789')
    const nvme = await createContentHasher(findContentHash('s3-crc64nvme')!)
    nvme.update(check)
    assert.equal(Buffer.from(nvme.finish(), 'base64').toString('hex'), 'ae8b14860a799888')
    const castagnoli = await createContentHasher(findContentHash('gcs-crc32c')!)
    castagnoli.update(check)
    assert.equal(Buffer.from(castagnoli.finish(), 'base64').toString('hex'), 'e3069283')
  })

  it('TTH: the vectors of the THEX era (empty, one zero byte, 1,024 and 1,025 times "A"), as gtk-gnutella and MLDonkey test them', async () => {
    const tth = async (data: Uint8Array) => {
      const hasher = await createContentHasher(findContentHash('tth')!)
      hasher.update(data)
      return hasher.finish()
    }
    assert.equal(await tth(new Uint8Array(0)), 'LWPNACQDBZRYXW3VHJVCJ64QBZNGHOHHHZWCLNQ')
    assert.equal(await tth(new Uint8Array(1)), 'VK54ZIEEVTWNAUI5D5RDFIL37LX2IQNSTAXFKSA')
    assert.equal(await tth(Buffer.alloc(1024, 'A')), 'L66Q4YVNAFWVS23X2HJIRA5ZJ7WXR3F26RSASFA')
    assert.equal(await tth(Buffer.alloc(1025, 'A')), 'PZMRYHGY6LTBEH63ZWAHDORHSYTLO4LEFUIKHWY')
  })

  it('Dropbox: an empty file is the SHA-256 of nothing', async () => {
    assert.equal(await hashFile('dropbox', fileOf(0)), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })

  it('RHash\'s default piece length (torrent.c): 16 KiB below 16 MiB, then the top bit / 1024, 8 MiB from 4 GiB', () => {
    assert.equal(rhashDefaultPieceLength(0), 16 * KiB)
    assert.equal(rhashDefaultPieceLength(16 * MiB - 1), 16 * KiB)
    assert.equal(rhashDefaultPieceLength(16 * MiB), 32 * KiB)
    assert.equal(rhashDefaultPieceLength(1024 * MiB - 1), 1 * MiB)
    assert.equal(rhashDefaultPieceLength(1024 * MiB), 2 * MiB)
    assert.equal(rhashDefaultPieceLength(4096 * MiB - 1), 4 * MiB)
    assert.equal(rhashDefaultPieceLength(4096 * MiB), 8 * MiB)
  })
})

describe('content hashes: RHash (TTH, AICH, BTIH)', { skip: skipUnless('rhash') }, () => {
  it('rhash --printf "%{TTH} %{AICH} %{btih}" agrees on every size, eMule chunk boundaries included', async () => {
    for (const size of [...SIZES, ...CHUNK_SIZES]) {
      const path = fileOf(size)
      const [tth, aich, btih] = run('rhash', ['--printf', '%{TTH} %{AICH} %{btih}\\n', path]).split(' ')
      assert.equal(await hashFile('tth', path), tth, `tth of ${size} bytes`)
      assert.equal(await hashFile('aich', path), aich, `aich of ${size} bytes`)
      assert.equal(await hashFile('btih', path, { name: baseName(path), size }), btih, `btih of ${size} bytes`)
    }
  })

  it('AICH over three eMule chunks, where a chunk\'s subtree differs as a left and as a right leaf', async () => {
    // Zeros: only the shape of the tree matters here, and a full chunk's 53 blocks split unevenly.
    const path = join(scratch, 'three-chunks.bin')
    const size = 2 * ED2K_CHUNK + 5 * AICH_BLOCK + 3
    writeFileSync(path, Buffer.alloc(size))
    assert.equal(await hashFile('aich', path), run('rhash', ['--printf', '%{AICH}\\n', path]))
  })

  it('rhash --bt-piece-length agrees on btih with a piece length given', async () => {
    for (const [size, pieceLength] of [[0, 32 * KiB], [16 * KiB + 1, 16 * KiB], [5 * MiB + 1, 256 * KiB], [ED2K_CHUNK + 1, 1 * MiB]] as const) {
      const path = fileOf(size)
      const expected = run('rhash', [`--bt-piece-length=${pieceLength}`, '--printf', '%{btih}\\n', path])
      assert.equal(await hashFile('btih', path, { name: baseName(path), pieceLength }), expected, `btih of ${size} bytes, pieces of ${pieceLength}`)
    }
  })

  it('btih of a 16 MiB file picks RHash\'s default of 32 KiB', async () => {
    const path = join(scratch, 'sixteen.bin')
    writeFileSync(path, Buffer.alloc(16 * MiB, 7))
    const expected = run('rhash', ['--printf', '%{btih}\\n', path])
    assert.equal(await hashFile('btih', path, { name: 'sixteen.bin', size: 16 * MiB }), expected)
    assert.notEqual(await hashFile('btih', path, { name: 'sixteen.bin', pieceLength: 16 * KiB }), expected)
  })
})

describe('content hashes: git hash-object', { skip: skipUnless('git') }, () => {
  it('git-blob-sha1 is git hash-object, git-blob-sha256 the same in a --object-format=sha256 repository', async () => {
    const repository = join(scratch, 'sha256-repository')
    run('git', ['init', '--quiet', '--object-format=sha256', repository])
    for (const size of [0, 1, 1025, 16 * KiB + 1, 4 * MiB + 1]) {
      const path = fileOf(size)
      assert.equal(await hashFile('git-blob-sha1', path, { size }), run('git', ['hash-object', '--no-filters', path]), `sha1, ${size} bytes`)
      assert.equal(await hashFile('git-blob-sha256', path, { size }), run('git', ['-C', repository, 'hash-object', '--no-filters', path]), `sha256, ${size} bytes`)
    }
  })
})


describe('content hashes: S3, Cloud Storage and Azure against Python (hashlib, zlib, crcmod)', { skip: skipUnless('python3', 'crcmod') }, () => {
  // partSize and multipartThreshold: the AWS CLI's defaults; 5 MiB parts from the first byte (an
  // empty object is one empty part); 5 MiB parts from 5 MiB on (exactly 5 MiB is one part, "-1").
  // 5 MiB parts from 8 MiB on: a single PUT may be longer than a part.
  const SETTINGS = [
    { partSize: 8 * MiB, multipartThreshold: 8 * MiB, params: {} },
    { partSize: 5 * MiB, multipartThreshold: 0, params: { partSize: '5MiB', multipartThreshold: 0 } },
    { partSize: 5 * MiB, multipartThreshold: 5 * MiB, params: { partSize: 5 * MiB, multipartThreshold: '5 MiB' } },
    { partSize: 5 * MiB, multipartThreshold: 8 * MiB, params: { partSize: 5 * MiB } },
  ]

  it('s3-etag and the composite and full-object checksums match the parts computed as AWS documents', async () => {
    for (const size of [0, 16 * KiB + 1, 5 * MiB, 5 * MiB + 1, ED2K_CHUNK + 1]) {
      const path = fileOf(size)
      for (const { partSize, multipartThreshold, params } of SETTINGS) {
        const aws = awsChecksums(path, partSize, multipartThreshold)
        const label = `${size} bytes, parts of ${partSize}, threshold ${multipartThreshold}`
        assert.equal(await hashFile('s3-etag', path, params), aws.md5!.etag, `s3-etag, ${label}`)
        for (const name of ['crc32', 'crc32c'] as const) {
          assert.equal(await hashFile(`s3-${name}`, path, { ...params, checksumType: 'COMPOSITE' }), aws[name]!.composite, `s3-${name} COMPOSITE, ${label}`)
          assert.equal(await hashFile(`s3-${name}`, path, params), aws[name]!.full, `s3-${name} FULL_OBJECT, ${label}`)
        }
        for (const name of ['sha1', 'sha256'] as const) {
          assert.equal(await hashFile(`s3-${name}`, path, params), aws[name]!.composite, `s3-${name} COMPOSITE, ${label}`)
          assert.equal(await hashFile(`s3-${name}`, path, { ...params, checksumType: 'FULL_OBJECT' }), aws[name]!.full, `s3-${name} FULL_OBJECT, ${label}`)
        }
      }
    }
  })

  it('s3-crc64nvme, gcs-crc32c, gcs-md5 and azure-md5 are the whole object\'s, in base64', async () => {
    for (const size of [0, 1, 16 * KiB + 1, 5 * MiB + 1]) {
      const path = fileOf(size)
      const aws = awsChecksums(path, 8 * MiB, 8 * MiB)
      assert.equal(await hashFile('s3-crc64nvme', path), aws.crc64nvme!.full, `s3-crc64nvme, ${size} bytes`)
      assert.equal(await hashFile('gcs-crc32c', path), aws.crc32c!.full, `gcs-crc32c, ${size} bytes`)
      assert.equal(await hashFile('gcs-md5', path), aws.md5!.full, `gcs-md5, ${size} bytes`)
      assert.equal(await hashFile('azure-md5', path), aws.md5!.full, `azure-md5, ${size} bytes`)
    }
  })

  it('an ETag of exactly one part is MD5 of the one MD5, "-1"; one byte more is two parts', async () => {
    const params = { partSize: 5 * MiB, multipartThreshold: 0 }
    assert.match(await hashFile('s3-etag', fileOf(5 * MiB), params), /^[0-9a-f]{32}-1$/)
    assert.match(await hashFile('s3-etag', fileOf(5 * MiB + 1), params), /^[0-9a-f]{32}-2$/)
    assert.match(await hashFile('s3-etag', fileOf(0), params), /^[0-9a-f]{32}-1$/)
  })
})

describe('content hashes: the AWS SDK\'s CRC packages', () => {
  it('s3-crc64nvme is @aws-sdk/crc64-nvme, s3-crc32c and gcs-crc32c are @aws-crypto/crc32c', async () => {
    for (const size of [0, 1, 1025, 4 * MiB + 1]) {
      const data = readFileSync(fileOf(size))
      const nvme = new Crc64Nvme()
      nvme.update(data)
      assert.equal(await hashFile('s3-crc64nvme', fileOf(size)), Buffer.from(await nvme.digest()).toString('base64'), `${size} bytes`)
      const castagnoli = Buffer.alloc(4)
      castagnoli.writeUInt32BE(new Crc32c().update(data).digest() >>> 0)
      assert.equal(await hashFile('s3-crc32c', fileOf(size)), castagnoli.toString('base64'), `${size} bytes`)
      assert.equal(await hashFile('gcs-crc32c', fileOf(size)), castagnoli.toString('base64'), `${size} bytes`)
    }
  })
})

describe('content hashes: rclone hashsum (Dropbox, quickXorHash)', { skip: skipUnless('rclone') }, () => {
  /** `rclone hashsum <hash> <dir>`: `<hash>  <name>` per file. rclone prints base64 URL-safe; OneDrive's API, standard base64. */
  function rclone(hash: string, extra: string[] = []): Map<string, string> {
    const output = run('rclone', ['--config', '/dev/null', 'hashsum', hash, ...extra, join(scratch, 'files')])
    return new Map(output.split('\n').map((line) => {
      const [value, name] = line.split(/\s+/) as [string, string]
      return [name, value.replaceAll('-', '+').replaceAll('_', '/')]
    }))
  }

  it('dropbox is rclone hashsum dropbox, quickxor is rclone hashsum quickxor --base64, on every size', async () => {
    const dropbox = rclone('dropbox')
    const quickxor = rclone('quickxor', ['--base64'])
    for (const size of [...SIZES, ...CHUNK_SIZES]) {
      const path = fileOf(size)
      assert.equal(await hashFile('dropbox', path), dropbox.get(baseName(path)), `dropbox of ${size} bytes`)
      assert.equal(await hashFile('quickxor', path), quickxor.get(baseName(path)), `quickxor of ${size} bytes`)
    }
  })
})

/** libtorrent makes a v2-only torrent of one file and prints its pieces root (file_storage.root). */
const LIBTORRENT_ROOT = `
import os, sys, libtorrent as lt
path, piece_size = sys.argv[1], int(sys.argv[2])
fs = lt.file_storage()
lt.add_files(fs, path)
torrent = lt.create_torrent(fs, piece_size, flags=lt.create_torrent.v2_only)
lt.set_piece_hashes(torrent, os.path.dirname(path))
print(lt.torrent_info(torrent.generate()).files().root(0))
`

describe('content hashes: libtorrent (BitTorrent v2 pieces root)', { skip: skipUnless('libtorrent') }, () => {
  it('bt2-root is libtorrent\'s pieces root on every size but the empty one, whatever the piece length', async () => {
    for (const size of SIZES.filter((size) => size > 0)) {
      const path = fileOf(size)
      assert.equal(await hashFile('bt2-root', path), python(LIBTORRENT_ROOT, [path, '0']), `${size} bytes`)
    }
    // A file of two blocks in pieces of four: the tree is padded to two leaves, not to a piece.
    for (const pieceSize of [16 * KiB, 64 * KiB, 4 * MiB]) {
      const path = fileOf(16 * KiB + 1)
      assert.equal(await hashFile('bt2-root', path), python(LIBTORRENT_ROOT, [path, String(pieceSize)]), `pieces of ${pieceSize}`)
    }
  })

  it('an empty file has no pieces root (BEP 52): the empty string', async () => {
    assert.equal(await hashFile('bt2-root', fileOf(0)), '')
  })
})

describe('content hashes: parameters', () => {
  async function problemOf(name: string, params: RawParameters, data?: Uint8Array): Promise<Problem> {
    try {
      const hasher = await createContentHasher(findContentHash(name)!, params)
      if (data) hasher.update(data)
      hasher.finish()
    } catch (error) {
      assert.ok(error instanceof Problem, String(error))
      return error
    }
    assert.fail(`${name} accepted ${JSON.stringify(params)}`)
  }
  const field = (problem: Problem) => (problem.extensions.errors as { pointer: string }[])[0]?.pointer

  it('a part size below S3\'s 5 MiB minimum, above its 5 GiB maximum, or not a size is a 422 naming partSize', async () => {
    for (const partSize of [5 * MiB - 1, '4MiB', '6GiB', '8MB', 'lots', -1, 1.5]) {
      const problem = await problemOf('s3-etag', { partSize })
      assert.equal(problem.status, 422)
      assert.equal(field(problem), '/query/partSize')
      assert.match(problem.detail, /partSize/)
    }
  })

  it('S3\'s 10,000 parts: the 10,000th part is fine, a byte more is a 422 naming partSize', () => {
    assert.equal(S3_MAX_PARTS, 10_000)
    const parts = new PartDigests(opensslDigest('md5'), 1)
    parts.update(new Uint8Array(10_000))
    assert.throws(() => parts.update(new Uint8Array(1)), (error: unknown) =>
      error instanceof Problem && error.status === 422 && error.extensions.parameter === 'partSize' && /10,000 parts/.test(error.detail))
    assert.equal(new PartDigests(opensslDigest('md5'), 1).finish().length, 1, 'an empty object is one empty part')
  })

  it('byte sizes read as bytes or with KiB, MiB and GiB', () => {
    assert.equal(parseByteSize('8388608'), 8 * MiB)
    assert.equal(parseByteSize('8MiB'), 8 * MiB)
    assert.equal(parseByteSize('8 mib'), 8 * MiB)
    assert.equal(parseByteSize('16KiB'), 16 * KiB)
    assert.equal(parseByteSize('1GiB'), 1024 * MiB)
    assert.equal(parseByteSize('8MB'), null)
    assert.equal(parseByteSize('-5'), null)
  })

  it('S3 takes CRC-64/NVME only as FULL_OBJECT; an unknown checksumType or parameter is a 422 naming it', async () => {
    assert.equal(field(await problemOf('s3-crc64nvme', { checksumType: 'COMPOSITE' })), '/query/checksumType')
    assert.equal(field(await problemOf('s3-crc32', { checksumType: 'PARTLY' })), '/query/checksumType')
    assert.equal(field(await problemOf('dropbox', { partSize: 5 * MiB })), '/query/partSize')
    assert.equal(await hashFile('s3-crc32', fileOf(1), { checksumType: 'composite' }), await hashFile('s3-crc32', fileOf(1), { checksumType: 'FULL_OBJECT' }),
      'a single PUT has no parts: its composite checksum is the full one')
  })

  it('git blobs need the size up front, and a stream of another length is a 422 naming size', async () => {
    assert.equal(field(await problemOf('git-blob-sha1', {})), '/query/size')
    assert.equal(field(await problemOf('git-blob-sha1', { size: 4 }, new Uint8Array(3))), '/query/size')
    assert.equal(field(await problemOf('git-blob-sha256', { size: 2 }, new Uint8Array(3))), '/query/size')
  })

  it('btih needs a base name, and a piece length or the size; pieces of 16 KiB to 256 MiB', async () => {
    assert.equal(field(await problemOf('btih', { pieceLength: 16 * KiB })), '/query/name')
    assert.equal(field(await problemOf('btih', { name: 'dir/file', pieceLength: 16 * KiB })), '/query/name')
    assert.equal(field(await problemOf('btih', { name: 'file' })), '/query/size')
    assert.equal(field(await problemOf('btih', { name: 'file', pieceLength: 8 * KiB })), '/query/pieceLength')
    assert.equal(field(await problemOf('btih', { name: 'file', size: 10 }, new Uint8Array(11))), '/query/size')
  })
})
