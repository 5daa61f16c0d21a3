/**
 * The metadata readers (src/content-hashes/metadata/) and the bencode decoder under them
 * (src/content-hashes/bencode.ts).
 *
 * - The decoder: BEP 3's examples, its invalid forms (i03e, i-0e), and the inputs a parser must
 *   survive: a nesting bomb, a length prefix past the end, a key twice, unsorted keys (accepted,
 *   as libtorrent does) and the exact bytes of the info dictionary.
 * - Every shape from a fixture written as the store's CLI prints it, with values computed here from
 *   a real file; each field, computed by the registry with the parameters the reader gives (and a
 *   candidate part size where it lists them), must equal what the reader expects.
 * - libtorrent makes real v1, v2 and hybrid torrents: the reader's info-hashes and pieces root are
 *   libtorrent's, and the v1 pieces are those of the file. RHash's --magnet links read back to
 *   values hashd computes, for every URN namespace of the reader's table.
 * - git ls-tree's real output, with and without -l, in SHA-1 and SHA-256 repositories.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { digestNamed } from '../src/algorithms/registry.js'
import { BENCODE_MAX_DEPTH, BencodeDictionary, BencodeError, bdecode, bencode, keyBytes, type BencodeValue } from '../src/content-hashes/bencode.js'
import { createContentHasher, findContentHash, type RawParameters } from '../src/content-hashes/index.js'
import { COMMON_PART_SIZES, partSizeCandidates, readMetadata, type ExpectedField, type MetadataReading } from '../src/content-hashes/metadata/index.js'
import { MAGNET_URNS } from '../src/content-hashes/metadata/magnet.js'
import { Problem } from '../src/problem.js'
import { Random } from './helpers/random.js'
import { python, run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB

let scratch: string
/** 10.5 MiB of seeded random bytes: two full 5 MiB parts and a half, or one 8 MiB part and a rest. */
let data: Buffer
let dataPath: string

before(() => {
  scratch = mkdtempSync(join(tmpdir(), 'hashd-metadata-'))
  const random = new Random(4646)
  data = Buffer.alloc(10 * MiB + 512 * KiB)
  for (let index = 0; index < data.length; index += 4) data.writeUInt32LE(random.next(), index)
  dataPath = join(scratch, 'object.bin')
  writeFileSync(dataPath, data)
})

after(() => rmSync(scratch, { recursive: true, force: true }))

/** The registry's content hash of `bytes`, in uneven chunks as an upload arrives. */
async function contentHash(name: string, bytes: Uint8Array, parameters: RawParameters = {}): Promise<string> {
  const entry = findContentHash(name)
  assert.ok(entry, name)
  const hasher = await createContentHasher(entry, parameters)
  for (let at = 0, step = 65_521; at < bytes.length; at += step) hasher.update(bytes.subarray(at, at + step))
  return hasher.finish()
}

async function digestOf(name: string, bytes: Uint8Array): Promise<string> {
  const algorithm = digestNamed(name)
  const hasher = await algorithm.create(algorithm.outputBytes)
  hasher.update(bytes)
  return Buffer.from(hasher.digest()).toString('hex')
}

/**
 * What a checker does with a field: the registry's content hash (or the digest) of `bytes` with
 * the field's parameters, once per candidate part size; the candidates that matched, or [0] for a
 * field without candidates that matched, or [] when none did.
 */
async function matchingPartSizes(field: ExpectedField, bytes: Uint8Array): Promise<number[]> {
  if (field.digest !== undefined) return await digestOf(field.digest, bytes) === field.expected ? [0] : []
  assert.ok(field.contentHash, `${field.field} names neither a content hash nor a digest`)
  const parameters = { ...field.parameters }
  // As the route will: the upload's size where the entry takes one and the store gave none.
  if (parameters.size === undefined && findContentHash(field.contentHash)?.parameters.size !== undefined) parameters.size = bytes.length
  if (field.partSizeCandidates === undefined) return await contentHash(field.contentHash, bytes, parameters) === field.expected ? [0] : []
  const matched: number[] = []
  for (const partSize of field.partSizeCandidates) {
    if (await contentHash(field.contentHash, bytes, { ...parameters, partSize }) === field.expected) matched.push(partSize)
  }
  return matched
}

const fieldNamed = (reading: MetadataReading, name: string): ExpectedField => {
  const field = reading.fields.find((candidate) => candidate.field === name)
  assert.ok(field, `no field ${name} in ${reading.fields.map((each) => each.field).join(', ')}`)
  return field
}

function problemOf(input: string | Uint8Array): Problem {
  try {
    readMetadata(input)
  } catch (error) {
    assert.ok(error instanceof Problem, String(error))
    return error
  }
  assert.fail('the metadata was accepted')
}

function bencodeErrorOf(input: string | Uint8Array): BencodeError {
  try {
    bdecode(typeof input === 'string' ? Buffer.from(input, 'latin1') : input)
  } catch (error) {
    assert.ok(error instanceof BencodeError, String(error))
    return error
  }
  assert.fail(`decoded ${String(input).slice(0, 40)}`)
}

const decode = (text: string): BencodeValue => bdecode(Buffer.from(text, 'latin1'))

describe('bencode decoder (BEP 3)', () => {
  it('reads BEP 3\'s examples: integers, byte strings, lists and dictionaries', () => {
    assert.equal(decode('i3e'), 3n)
    assert.equal(decode('i-3e'), -3n)
    assert.equal(decode('i0e'), 0n)
    assert.deepEqual(Buffer.from(decode('4:spam') as Uint8Array), Buffer.from('spam'))
    assert.deepEqual(Buffer.from(decode('0:') as Uint8Array), Buffer.alloc(0))
    const list = decode('l4:spam4:eggse') as Uint8Array[]
    assert.deepEqual(list.map((item) => Buffer.from(item).toString()), ['spam', 'eggs'])
    const dictionary = decode('d3:cow3:moo4:spam4:eggse') as BencodeDictionary
    assert.ok(dictionary instanceof BencodeDictionary)
    assert.equal(Buffer.from(dictionary.get('cow') as Uint8Array).toString(), 'moo')
    assert.equal(dictionary.sorted, true)
    const nested = decode('d4:spaml1:a1:bee') as BencodeDictionary
    assert.equal((nested.get('spam') as unknown[]).length, 2)
    assert.deepEqual(decode('le'), [])
    assert.equal((decode('de') as BencodeDictionary).entries.size, 0)
  })

  it('reads the signed 64-bit range, as libtorrent, and refuses one past either end', () => {
    assert.equal(decode('i9223372036854775807e'), 2n ** 63n - 1n)
    assert.equal(decode('i-9223372036854775808e'), -(2n ** 63n))
    assert.match(bencodeErrorOf('i9223372036854775808e').message, /64-bit/)
    assert.match(bencodeErrorOf('i-9223372036854775809e').message, /64-bit/)
    assert.match(bencodeErrorOf(`i${'9'.repeat(400)}e`).message, /64-bit/)
  })

  it('refuses what BEP 3 calls invalid, and every malformed form, naming the offset', () => {
    const cases: Array<[string, RegExp, number]> = [
      ['i03e', /leading zero/, 0],
      ['i-0e', /negative zero/, 0],
      ['ie', /without digits/, 0],
      ['i-e', /without digits/, 0],
      ['i1', /without its end/, 0],
      ['i1.5e', /not a digit/, 2],
      ['l4:spami03ee', /leading zero/, 7],
      ['03:abc', /leading zero/, 0],
      ['5:abc', /runs past the end/, 0],
      ['4:spam4:eggs', /after the end/, 6],
      ['l4:spam', /without its end/, 7],
      ['d3:cowe', /key without a value/, 6],
      ['di1ei2ee', /not a byte string/, 1],
      ['d1:ai1e1:ai2ee', /twice/, 7],
      ['', /empty/, 0],
      ['x', /starts no bencoded value/, 0],
      ['3', /without its colon/, 0],
      ['3x', /other than a colon/, 1],
    ]
    for (const [input, reason, offset] of cases) {
      const error = bencodeErrorOf(input)
      assert.match(error.message, reason, input)
      assert.equal(error.offset, offset, input)
      assert.match(error.message, new RegExp(`at byte ${offset}$`), input)
    }
  })

  it('refuses a huge length prefix at once, without reading or allocating it', () => {
    const error = bencodeErrorOf('99999999999999999999:x')
    assert.match(error.message, /longer than the input/)
    assert.match(bencodeErrorOf('4294967296:x').message, /longer than the input/)
    assert.match(bencodeErrorOf('16777216:x').message, /runs past the end/)
  })

  it('allows 100 levels of nesting (libtorrent\'s depth limit) and refuses the 101st; a nesting bomb fails fast', () => {
    assert.equal(BENCODE_MAX_DEPTH, 100)
    assert.doesNotThrow(() => decode(`${'l'.repeat(100)}${'e'.repeat(100)}`))
    assert.match(bencodeErrorOf(`${'l'.repeat(101)}${'e'.repeat(101)}`).message, /deeper than 100/)
    const bomb = Buffer.alloc(16 * MiB, 'l')
    const started = performance.now()
    assert.equal(bencodeErrorOf(bomb).offset, 100)
    assert.ok(performance.now() - started < 1000)
    assert.match(bencodeErrorOf(Buffer.from('d1:a'.repeat(101) + 'i1e' + 'e'.repeat(101))).message, /deeper than 100/)
  })

  it('bounds the input and the count of values; a long flat list is read in linear time', () => {
    assert.match(bencodeErrorOf(Buffer.alloc(16 * MiB + 1, 'l')).message, /more than 16777216 bytes/)
    assert.match((() => { try { bdecode(Buffer.from('li1ei2ei3ee'), { maxValues: 3 }) } catch (error) { return String(error) } return '' })(), /more than 3 values/)
    const flat = Buffer.from(`l${'i1e'.repeat(300_000)}e`)
    const started = performance.now()
    assert.equal((bdecode(flat) as unknown[]).length, 300_000)
    assert.ok(performance.now() - started < 2000)
  })

  it('accepts unsorted keys as libtorrent does, and says so; a key twice is refused', () => {
    const unsorted = decode('d4:name1:a6:lengthi5ee') as BencodeDictionary
    assert.equal(unsorted.sorted, false)
    assert.equal(unsorted.get('length'), 5n)
    assert.equal((decode('d1:ai1e1:bi2ee') as BencodeDictionary).sorted, true)
    assert.match(bencodeErrorOf('d1:bi1e1:ai2e1:bi3ee').message, /twice/)
    // Keys are bytes: a key with bytes above 0x7f survives the round trip.
    const binary = bdecode(Buffer.concat([Buffer.from('d2:'), Buffer.from([0xff, 0x00]), Buffer.from('i1ee')])) as BencodeDictionary
    assert.deepEqual(keyBytes([...binary.entries.keys()][0] as string), Buffer.from([0xff, 0x00]))
  })

  it('gives the exact span of each dictionary, and reads back what the encoder writes', () => {
    const info = { length: 5, name: 'a.txt', 'piece length': 16384, pieces: Buffer.alloc(20, 7) }
    const torrent = Buffer.concat([Buffer.from('d8:announce3:url4:info'), bencode(info), Buffer.from('e')])
    const root = bdecode(torrent) as BencodeDictionary
    const decoded = root.get('info') as BencodeDictionary
    assert.deepEqual(torrent.subarray(decoded.start, decoded.end), Buffer.from(bencode(info)))
    assert.equal(decoded.get('piece length'), 16384n)
  })
})

describe('metadata: S3 (aws s3api head-object --checksum-mode ENABLED, get-object-attributes)', () => {
  it('a single PUT: the quoted ETag is the MD5, ChecksumCRC64NVME the full object\'s CRC', async () => {
    const small = data.subarray(0, 3 * MiB + 5)
    const md5 = createHash('md5').update(small).digest('hex')
    const crc64 = await contentHash('s3-crc64nvme', small)
    // As AWS CLI v2 prints HeadObject (S3 adds CRC-64/NVME to every new upload since 2025).
    const json = JSON.stringify({
      AcceptRanges: 'bytes', LastModified: '2025-03-04T10:21:07+00:00', ContentLength: small.length, ETag: `"${md5}"`,
      ChecksumCRC64NVME: crc64, ChecksumType: 'FULL_OBJECT', ContentType: 'application/octet-stream', ServerSideEncryption: 'AES256', Metadata: {},
    }, null, 4)
    const reading = readMetadata(json)
    assert.equal(reading.shape, 's3')
    assert.equal(reading.size, small.length)
    assert.deepEqual(fieldNamed(reading, 'ETag').expected, md5)
    assert.deepEqual(fieldNamed(reading, 'ChecksumCRC64NVME').parameters, { checksumType: 'FULL_OBJECT' })
    for (const field of reading.fields) assert.deepEqual(await matchingPartSizes(field, small), [0], field.field)
  })

  it('a multipart upload: the ETag and the COMPOSITE checksums end in -N, and the part size is found among the candidates', async () => {
    const partSize = 5 * MiB
    const etag = await contentHash('s3-etag', data, { partSize, multipartThreshold: 0 })
    const crc32c = await contentHash('s3-crc32c', data, { checksumType: 'COMPOSITE', partSize, multipartThreshold: 0 })
    const sha256 = await contentHash('s3-sha256', data, { checksumType: 'COMPOSITE', partSize, multipartThreshold: 0 })
    assert.match(etag, /-3$/)
    const json = JSON.stringify({
      AcceptRanges: 'bytes', LastModified: '2025-03-04T10:21:07+00:00', ContentLength: data.length, ETag: `"${etag}"`,
      ChecksumCRC32C: crc32c, ChecksumSHA256: sha256, ChecksumType: 'COMPOSITE', ContentType: 'binary/octet-stream',
      ServerSideEncryption: 'AES256', Metadata: {}, PartsCount: 3,
    })
    const reading = readMetadata(json)
    for (const name of ['ETag', 'ChecksumCRC32C', 'ChecksumSHA256']) {
      const field = fieldNamed(reading, name)
      assert.ok(field.partSizeCandidates?.includes(5 * MiB), `${name}: ${field.partSizeCandidates}`)
      assert.ok(!field.partSizeCandidates?.includes(8 * MiB), `${name}: 8 MiB makes two parts of this object, not three`)
      assert.deepEqual(await matchingPartSizes(field, data), [5 * MiB], name)
    }
    assert.deepEqual(fieldNamed(reading, 'ChecksumCRC32C').parameters, { checksumType: 'COMPOSITE', multipartThreshold: 0 })
  })

  it('the AWS CLI\'s 8 MiB parts are found, and are the first candidate', async () => {
    const etag = await contentHash('s3-etag', data)
    assert.match(etag, /-2$/)
    const field = fieldNamed(readMetadata(JSON.stringify({ ContentLength: data.length, ETag: `"${etag}"` })), 'ETag')
    assert.equal(field.partSizeCandidates?.[0], 8 * MiB)
    assert.deepEqual(await matchingPartSizes(field, data), field.partSizeCandidates?.filter((size) => size >= 8 * MiB && size < 10 * MiB + 512 * KiB))
  })

  it('get-object-attributes: the unquoted ETag, the checksums under Checksum, the part size from ObjectParts', async () => {
    const crc32 = await contentHash('s3-crc32', data, { checksumType: 'COMPOSITE', partSize: 6 * MiB, multipartThreshold: 0 })
    const etag = await contentHash('s3-etag', data, { partSize: 6 * MiB, multipartThreshold: 0 })
    const json = JSON.stringify({
      LastModified: '2025-03-04T10:21:07+00:00', ETag: etag, ObjectSize: data.length, StorageClass: 'STANDARD',
      Checksum: { ChecksumCRC32: crc32, ChecksumType: 'COMPOSITE' },
      ObjectParts: { TotalPartsCount: 2, PartNumberMarker: 0, NextPartNumberMarker: 2, MaxParts: 1000, IsTruncated: false, Parts: [{ PartNumber: 1, Size: 6 * MiB, ChecksumCRC32: 'AAAAAA==' }, { PartNumber: 2, Size: data.length - 6 * MiB }] },
    })
    const reading = readMetadata(json)
    assert.deepEqual(fieldNamed(reading, 'ETag').partSizeCandidates, [6 * MiB])
    for (const field of reading.fields) assert.deepEqual(await matchingPartSizes(field, data), [6 * MiB], field.field)
  })

  it('get-object-attributes of a single small part: the part size is any from 5 MiB, as the registry takes it', async () => {
    const small = data.subarray(0, 100_000)
    const etag = await contentHash('s3-etag', small, { multipartThreshold: 0 })
    assert.match(etag, /-1$/)
    const field = fieldNamed(readMetadata(JSON.stringify({ ETag: etag, ObjectSize: small.length, ObjectParts: { TotalPartsCount: 1, Parts: [{ PartNumber: 1, Size: small.length }] } })), 'ETag')
    assert.deepEqual(field.partSizeCandidates, [5 * MiB])
    assert.deepEqual(await matchingPartSizes(field, small), [5 * MiB])
  })

  it('SSE-KMS, DSSE-KMS and SSE-C ETags, and an ETag that is no MD5, cannot be checked; the checksums still can', () => {
    const md5 = 'b'.repeat(32)
    for (const extra of [{ ServerSideEncryption: 'aws:kms', SSEKMSKeyId: 'arn:aws:kms:us-east-1:111122223333:key/x' }, { ServerSideEncryption: 'aws:kms:dsse' }, { SSECustomerAlgorithm: 'AES256', SSECustomerKeyMD5: 'x' }]) {
      const reading = readMetadata(JSON.stringify({ ETag: `"${md5}"`, ContentLength: 1, ChecksumCRC32: 'AAAAAA==', ...extra }))
      assert.match(fieldNamed(reading, 'ETag').cannotCheck ?? '', /SSE-KMS or SSE-C/)
      assert.equal(fieldNamed(reading, 'ChecksumCRC32').cannotCheck, undefined)
    }
    assert.match(fieldNamed(readMetadata('{"ETag": "\\"not-an-md5\\""}'), 'ETag').cannotCheck ?? '', /not an MD5/)
  })

  it('a part count no S3 part size can give, for the object\'s length, cannot be checked', () => {
    const field = fieldNamed(readMetadata(JSON.stringify({ ETag: `"${'a'.repeat(32)}-40"`, ContentLength: 20 * MiB })), 'ETag')
    assert.deepEqual(field.partSizeCandidates, [])
    assert.match(field.cannotCheck ?? '', /no part size/)
  })

  it('a malformed checksum or part count, or a ChecksumType the checksums contradict, is a 422 naming the field, without quoting it', () => {
    for (const [json, field] of [[{ ChecksumCRC32: 'AAAAAA==', ChecksumType: 'COMPOSITE' }, 'ChecksumCRC32'], [{ ChecksumCRC32: 'AAAAAA==-2', ChecksumType: 'FULL_OBJECT' }, 'ChecksumCRC32'], [{ ChecksumCRC32: 'AAAAAA==', ChecksumType: 'PARTIAL' }, 'ChecksumType'], [{ ChecksumCRC32: 'abc' }, 'ChecksumCRC32'], [{ ChecksumSHA256: 'AAAA-0' }, 'ChecksumSHA256'], [{ ETag: `"${'a'.repeat(32)}-10001"` }, 'ETag'], [{ ChecksumCRC64NVME: 'AAAAAAAAAAA=-2' }, 'ChecksumCRC64NVME']] as const) {
      const problem = problemOf(JSON.stringify(json))
      assert.equal(problem.status, 422)
      assert.equal(problem.type, 'urn:hashd:problem:invalid-metadata')
      assert.equal(problem.extensions.field, field)
      assert.doesNotMatch(problem.detail, /AAAA|abc/)
    }
  })
})

describe('part size candidates', () => {
  it('lists the tools\' sizes first, then the implied ones, keeping only those that give N parts', () => {
    assert.deepEqual(COMMON_PART_SIZES.slice(0, 4), [8 * MiB, 5 * MiB, 16 * MiB, 15 * MiB])
    assert.deepEqual(partSizeCandidates(3), [...COMMON_PART_SIZES])
    // 100 MiB in 7 parts: p in [ceil(100/7) MiB, ceil(100/6) MiB - 1] = [14.29 MiB, 16.67 MiB).
    const length = 100 * MiB
    assert.deepEqual(partSizeCandidates(7, length), [16 * MiB, 15 * MiB, Math.ceil(length / 7)])
    for (const size of partSizeCandidates(7, length)) assert.equal(Math.ceil(length / size), 7)
    // 1 GiB with the AWS CLI: 8 MiB parts, 128 of them.
    assert.equal(partSizeCandidates(128, 1024 * MiB)[0], 8 * MiB)
    // 200 GiB: the CLI doubles 8 MiB to 32 MiB to stay within 10,000 parts.
    assert.equal(partSizeCandidates(6400, 200 * 1024 * MiB)[0], 32 * MiB)
    // One part: the first size that holds it all; nothing for zero parts or more than 10,000.
    assert.deepEqual(partSizeCandidates(1, 3 * MiB), [8 * MiB])
    assert.deepEqual(partSizeCandidates(1, 9 * MiB), [16 * MiB])
    assert.deepEqual(partSizeCandidates(0, 1), [])
    assert.deepEqual(partSizeCandidates(10_001, 1), [])
    assert.deepEqual(partSizeCandidates(2, 0), [])
  })
})

describe('metadata: Cloud Storage, Azure, Dropbox, OneDrive', () => {
  it('gcloud storage objects describe --format=json (snake_case) and the JSON API object (crc32c, md5Hash)', async () => {
    const crc32c = await contentHash('gcs-crc32c', data)
    const md5 = await contentHash('gcs-md5', data)
    // As `gcloud storage objects describe gs://bucket/object --format=json` prints it.
    const gcloud = JSON.stringify({
      bucket: 'example-bucket', content_type: 'application/octet-stream', crc32c_hash: crc32c, creation_time: '2025-03-04T10:21:07+0000',
      etag: 'CJ3l5K2Vj4kDEAE=', generation: '1741083667378845', md5_hash: md5, metageneration: 1, name: 'object.bin', size: data.length,
      storage_class: 'STANDARD', storage_url: 'gs://example-bucket/object.bin#1741083667378845', update_time: '2025-03-04T10:21:07+0000',
    }, null, 2)
    // The JSON API's objects.get resource (int64 fields are strings).
    const api = JSON.stringify({
      kind: 'storage#object', id: 'example-bucket/object.bin/1741083667378845', name: 'object.bin', bucket: 'example-bucket', generation: '1741083667378845',
      contentType: 'application/octet-stream', size: String(data.length), md5Hash: md5, crc32c, etag: 'CJ3l5K2Vj4kDEAE=',
    })
    for (const [json, names] of [[gcloud, ['crc32c_hash', 'md5_hash']], [api, ['crc32c', 'md5Hash']]] as const) {
      const reading = readMetadata(json)
      assert.equal(reading.shape, 'gcs')
      assert.equal(reading.size, data.length)
      assert.deepEqual(reading.fields.map((field) => field.field), names)
      for (const field of reading.fields) assert.deepEqual(await matchingPartSizes(field, data), [0], field.field)
    }
    // A composite object has a crc32c and no md5Hash.
    assert.deepEqual(readMetadata(JSON.stringify({ kind: 'storage#object', crc32c, componentCount: 2 })).fields.map((field) => field.contentHash), ['gcs-crc32c'])
  })

  it('az storage blob show: properties.contentSettings.contentMd5; none is a field that cannot be checked', async () => {
    const md5 = await contentHash('azure-md5', data)
    const blob = (contentMd5: string | null) => JSON.stringify({
      container: 'backups', content: '', deleted: false, metadata: {}, name: 'object.bin', snapshot: null,
      properties: {
        appendBlobCommittedBlockCount: null, blobTier: 'Hot', blobType: 'BlockBlob', contentLength: data.length,
        contentRange: null, contentSettings: { cacheControl: null, contentDisposition: null, contentEncoding: null, contentLanguage: null, contentMd5, contentType: 'application/octet-stream' },
        creationTime: '2025-03-04T10:21:07+00:00', etag: '"0x8DD5B0A6F2C3E4A"', lastModified: '2025-03-04T10:21:07+00:00', serverEncrypted: true,
      },
    }, null, 2)
    const reading = readMetadata(blob(md5))
    assert.equal(reading.shape, 'azure')
    assert.equal(reading.size, data.length)
    assert.deepEqual(await matchingPartSizes(fieldNamed(reading, 'contentSettings.contentMd5'), data), [0])
    assert.match(fieldNamed(readMetadata(blob(null)), 'contentSettings.contentMd5').cannotCheck ?? '', /no Content-MD5/)
    assert.equal(readMetadata(JSON.stringify({ name: 'x', contentSettings: { contentMd5: md5 } })).fields[0]?.expected, md5)
  })

  it('Dropbox files/get_metadata: content_hash', async () => {
    const hash = await contentHash('dropbox', data)
    // The FileMetadata example of the Dropbox API reference, with this file's values.
    const json = JSON.stringify({
      '.tag': 'file', client_modified: '2025-03-04T10:21:07Z', content_hash: hash, has_explicit_shared_members: false,
      id: 'id:a4ayc_80_OEAAAAAAAAAXw', is_downloadable: true, name: 'object.bin', path_display: '/Backups/object.bin', path_lower: '/backups/object.bin',
      rev: 'a1c10ce0dd78', server_modified: '2025-03-04T10:21:08Z', size: data.length,
    })
    const reading = readMetadata(json)
    assert.equal(reading.shape, 'dropbox')
    assert.deepEqual(await matchingPartSizes(fieldNamed(reading, 'content_hash'), data), [0])
    assert.equal(problemOf(JSON.stringify({ '.tag': 'file', rev: 'a1', name: 'x' })).extensions.field, 'content_hash')
  })

  it('a OneDrive driveItem: quickXorHash, and sha1Hash, sha256Hash (upper-case hex) and crc32Hash (little-endian) as plain digests', async () => {
    const quickXor = await contentHash('quickxor', data)
    const sha1 = createHash('sha1').update(data).digest('hex').toUpperCase()
    const sha256 = createHash('sha256').update(data).digest('hex').toUpperCase()
    const crc32 = Buffer.from(await digestOf('crc32', data), 'hex').reverse().toString('hex').toUpperCase()
    // A driveItem as Microsoft Graph returns it (GET /me/drive/items/{id}).
    const json = JSON.stringify({
      '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#users(\'x\')/drive/items/$entity',
      createdDateTime: '2025-03-04T10:21:07Z', eTag: '"{0D4C4F5E-1C4B-4B57-9A44-4F8A2D1B3E21},2"', id: '01BYE5RZ2Z',
      lastModifiedDateTime: '2025-03-04T10:21:08Z', name: 'object.bin', size: data.length, cTag: '"c:{0D4C4F5E},2"',
      file: { mimeType: 'application/octet-stream', hashes: { quickXorHash: quickXor, sha1Hash: sha1, sha256Hash: sha256, crc32Hash: crc32 } },
      fileSystemInfo: { createdDateTime: '2025-03-04T10:21:07Z', lastModifiedDateTime: '2025-03-04T10:21:07Z' },
    })
    const reading = readMetadata(json)
    assert.equal(reading.shape, 'onedrive')
    assert.deepEqual(reading.fields.map((field) => [field.field, field.contentHash, field.digest]), [
      ['file.hashes.quickXorHash', 'quickxor', undefined], ['file.hashes.sha1Hash', null, 'sha1'],
      ['file.hashes.sha256Hash', null, 'sha256'], ['file.hashes.crc32Hash', null, 'crc32'],
    ])
    assert.equal(fieldNamed(reading, 'file.hashes.sha1Hash').expected, sha1.toLowerCase())
    for (const field of reading.fields) assert.deepEqual(await matchingPartSizes(field, data), [0], field.field)
  })
})

describe('metadata: shapes, bounds and refusals', () => {
  it('unknown shapes are a 422 listing the accepted ones; JSON that is not JSON names itself', () => {
    for (const input of ['hello', '{"unrelated": 1}', '[1, 2]', 'd41d8cd98f00b204e9800998ecf8427e', Buffer.from([0xff, 0xfe, 0x00])]) {
      const problem = problemOf(input)
      assert.equal(problem.status, 422)
      assert.equal(problem.type, 'urn:hashd:problem:unknown-metadata')
      assert.match(problem.detail, /head-object/)
      assert.match(problem.detail, /\.torrent/)
      assert.match(problem.detail, /magnet/)
      assert.match(problem.detail, /git ls-tree/)
    }
    assert.equal(problemOf('{"ETag": ').type, 'urn:hashd:problem:invalid-metadata')
  })

  it('text above 1 MiB and a .torrent above 16 MiB are a 413', () => {
    assert.equal(problemOf(`{"ETag": "${' '.repeat(1024 * 1024)}"}`).status, 413)
    const torrent = Buffer.concat([Buffer.from('d4:info'), Buffer.alloc(16 * MiB)])
    assert.equal(problemOf(torrent).status, 413)
  })

  it('a byte-order mark and surrounding white space are ignored', () => {
    assert.equal(readMetadata(`\uFEFF\r\n  {"content_hash": "${'a'.repeat(64)}"}\n`).shape, 'dropbox')
  })

  it('JSON keys are own properties only: __proto__ and constructor find nothing', () => {
    assert.equal(problemOf('{"__proto__": {"ETag": "x"}, "constructor": {"ETag": "x"}}').type, 'urn:hashd:problem:unknown-metadata')
  })
})

describe('metadata: .torrent files', () => {
  const infoBytes = (torrent: Buffer): Buffer => {
    const info = (bdecode(torrent) as BencodeDictionary).get('info') as BencodeDictionary
    return torrent.subarray(info.start, info.end)
  }

  it('a canonical single-file v1 torrent (as rhash and btih make it): the info-hash is the registry\'s btih, and every piece checks', async () => {
    const file = data.subarray(0, 100_000)
    const pieceLength = 32 * KiB
    const pieces = Buffer.concat(Array.from({ length: Math.ceil(file.length / pieceLength) }, (_, index) => createHash('sha1').update(file.subarray(index * pieceLength, (index + 1) * pieceLength)).digest()))
    const torrent = Buffer.from(bencode({ announce: 'udp://tracker.example:6969', 'created by': 'hashd test', info: { length: file.length, name: 'object.bin', 'piece length': pieceLength, pieces } }))
    const reading = readMetadata(torrent)
    assert.equal(reading.shape, 'torrent')
    assert.equal(reading.size, file.length)
    assert.equal(reading.name, 'object.bin')
    const infoHash = fieldNamed(reading, 'info-hash')
    assert.equal(infoHash.expected, createHash('sha1').update(infoBytes(torrent)).digest('hex'))
    assert.deepEqual(infoHash.parameters, { name: 'object.bin', pieceLength, size: file.length })
    assert.equal(await contentHash('btih', file, infoHash.parameters), infoHash.expected)
    const plan = fieldNamed(reading, 'pieces').pieces
    assert.ok(plan)
    assert.equal(plan.hashes.length, 4 * 20)
    assert.deepEqual(Buffer.from(plan.hashes), pieces)
  })

  it('a private torrent, or one with keys out of order, hashes its exact bytes and is checked by its pieces', () => {
    const pieces = createHash('sha1').update(data.subarray(0, 5)).digest()
    const privateTorrent = Buffer.from(bencode({ info: { length: 5, name: 'a', 'piece length': 16384, pieces, private: 1 } }))
    const field = fieldNamed(readMetadata(privateTorrent), 'info-hash')
    assert.equal(field.expected, createHash('sha1').update(infoBytes(privateTorrent)).digest('hex'))
    assert.match(field.cannotCheck ?? '', /checked through its pieces/)
    const unsortedInfo = Buffer.concat([Buffer.from('d4:name1:a6:lengthi5e12:piece lengthi16384e6:pieces20:'), pieces, Buffer.from('e')])
    const unsorted = Buffer.concat([Buffer.from('d4:info'), unsortedInfo, Buffer.from('e')])
    const reading = readMetadata(unsorted)
    assert.equal(fieldNamed(reading, 'info-hash').expected, createHash('sha1').update(unsortedInfo).digest('hex'))
    assert.match(fieldNamed(reading, 'info-hash').cannotCheck ?? '', /canonical/)
  })

  it('a torrent of several files cannot be checked against one upload; one of exactly one file in the multi-file form can, by its pieces', () => {
    const pieces = Buffer.concat([createHash('sha1').update('1').digest(), createHash('sha1').update('2').digest()])
    const two = readMetadata(Buffer.from(bencode({ info: { files: [{ length: 10_000, path: ['a'] }, { length: 10_000, path: ['b'] }], name: 'dir', 'piece length': 16384, pieces } })))
    assert.deepEqual(two.fields.map((field) => field.field), ['info-hash'])
    assert.match(two.fields[0]?.cannotCheck ?? '', /2 files/)
    const one = readMetadata(Buffer.from(bencode({ info: { files: [{ length: 20_000, path: ['dir', 'a'] }], name: 'dir', 'piece length': 16384, pieces } })))
    assert.match(fieldNamed(one, 'info-hash').cannotCheck ?? '', /checked through its pieces/)
    assert.equal(fieldNamed(one, 'pieces').pieces?.length, 20_000)
    const root = createHash('sha256').update('root').digest()
    const v2 = readMetadata(Buffer.from(bencode({ info: { 'file tree': { a: { '': { length: 1, 'pieces root': root } }, d: { b: { '': { length: 2, 'pieces root': root } } } }, 'meta version': 2, name: 'd', 'piece length': 16384 } })))
    assert.match(fieldNamed(v2, 'pieces root').cannotCheck ?? '', /several files/)
  })

  it('refuses a torrent that is not bencode, too deep, without info, or whose pieces do not fit its length', () => {
    const cases: Array<[Buffer, string, RegExp]> = [
      [Buffer.from('d4:infod6:lengthi03eee'), 'torrent', /leading zero/],
      [Buffer.from(`d4:info${'l'.repeat(200)}`), 'torrent', /deeper than 100/],
      [Buffer.from('d4:infoi1ee'), 'info', /missing/],
      [Buffer.from('d4:infod6:lengthi5e4:name1:a12:piece lengthi16384e6:pieces19:0123456789012345678ee'), 'pieces', /20-byte/],
      [Buffer.from(`d4:infod6:lengthi50000e4:name1:a12:piece lengthi16384e6:pieces20:${'x'.repeat(20)}ee`), 'pieces', /make 4/],
      [Buffer.from('d4:infod4:name1:a12:piece lengthi16384eee'), 'info', /neither pieces/],
    ]
    for (const [torrent, field, detail] of cases) {
      const problem = problemOf(torrent)
      assert.equal(problem.status, 422, torrent.toString('latin1').slice(0, 40))
      assert.equal(problem.extensions.field, field)
      assert.match(problem.detail, detail)
    }
  })

  /** libtorrent makes a torrent of one file and prints its info-hashes, the pieces root and the info keys. */
  const LIBTORRENT_MAKE = `
import json, os, sys, libtorrent as lt
path, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
flags = {'v1': lt.create_torrent.v1_only, 'v2': lt.create_torrent.v2_only, 'hybrid': 0}[kind]
fs = lt.file_storage()
lt.add_files(fs, path)
torrent = lt.create_torrent(fs, 0, flags=flags)
torrent.add_tracker('udp://tracker.example:6969')
lt.set_piece_hashes(torrent, os.path.dirname(path))
data = lt.bencode(torrent.generate())
open(out, 'wb').write(data)
info = lt.torrent_info(out)
hashes = info.info_hashes()
print(json.dumps({
  'v1': str(hashes.v1) if hashes.has_v1() else None,
  'v2': str(hashes.v2) if hashes.has_v2() else None,
  'root': str(info.files().root(0)) if hashes.has_v2() else None,
  'pieceLength': info.piece_length(),
}))
`

  describe('against libtorrent', { skip: skipUnless('libtorrent') }, () => {
    for (const kind of ['v1', 'v2', 'hybrid'] as const) {
      it(`a ${kind} torrent: the info-hashes and the pieces root are libtorrent's; the fields check against the file`, async () => {
        for (const size of [1, 16 * KiB + 1, 300_001]) {
          const path = join(scratch, `${kind}-${size}.bin`)
          const file = data.subarray(0, size)
          writeFileSync(path, file)
          const out = join(scratch, `${kind}-${size}.torrent`)
          const expected = JSON.parse(python(LIBTORRENT_MAKE, [path, kind, out])) as { v1: string | null, v2: string | null, root: string | null, pieceLength: number }
          const reading = readMetadata(readFileSync(out))
          const label = `${kind}, ${size} bytes`
          assert.equal(reading.size, size, label)
          assert.equal(reading.name, `${kind}-${size}.bin`, label)
          if (expected.v1 !== null) {
            assert.equal(fieldNamed(reading, 'info-hash').expected, expected.v1, label)
            // libtorrent's v1 info dictionary is exactly btih's; a hybrid's also holds the file tree.
            assert.equal(fieldNamed(reading, 'info-hash').cannotCheck === undefined, kind === 'v1', label)
            const plan = fieldNamed(reading, 'pieces').pieces
            assert.equal(plan?.pieceLength, expected.pieceLength, label)
            const pieces = Buffer.concat(Array.from({ length: Math.ceil(size / expected.pieceLength) }, (_, index) => createHash('sha1').update(file.subarray(index * expected.pieceLength, (index + 1) * expected.pieceLength)).digest()))
            assert.deepEqual(Buffer.from(plan?.hashes ?? []), pieces, label)
          } else {
            assert.ok(!reading.fields.some((field) => field.field === 'info-hash' || field.field === 'pieces'), label)
          }
          if (expected.v2 !== null) {
            assert.equal(fieldNamed(reading, 'info-hash v2').expected, expected.v2, label)
            const root = fieldNamed(reading, 'pieces root')
            assert.equal(root.expected, expected.root, label)
            assert.deepEqual(await matchingPartSizes(root, file), [0], label)
          } else {
            assert.ok(!reading.fields.some((field) => field.field === 'pieces root'), label)
          }
          // Whatever the reader says can be checked matches the file it was made from.
          for (const field of reading.fields.filter((each) => each.cannotCheck === undefined && (each.contentHash !== null || each.digest !== undefined))) {
            assert.deepEqual(await matchingPartSizes(field, file), [0], `${label}: ${field.field}`)
          }
        }
      })
    }
  })
})

describe('metadata: magnet links', () => {
  it('reads hex and base32 info-hashes, xt.1-style topics, dn and xl; a v2 btmh cannot be checked', () => {
    const hex = '74764509bc0c04b70eeb7b2cd78f38a5117f34a7'
    const base32 = 'OR3EKCN4BQCLODXLPMWNPDZYUUIX6NFH'
    const reading = readMetadata(`magnet:?xt.1=urn:btih:${base32}&xt.2=urn:btmh:1220${'ab'.repeat(32)}&dn=my+file%20name.bin&xl=3&tr=udp%3A%2F%2Ftracker.example%3A6969`)
    assert.equal(reading.shape, 'magnet')
    assert.equal(reading.name, 'my file name.bin')
    assert.equal(reading.size, 3)
    const btih = fieldNamed(reading, 'xt=urn:btih')
    assert.equal(btih.expected, hex)
    assert.deepEqual(btih.parameters, { name: 'my file name.bin', size: 3 })
    assert.match(fieldNamed(reading, 'xt=urn:btmh').cannotCheck ?? '', /v2 info-hash/)
    assert.match(fieldNamed(readMetadata(`magnet:?xt=urn:btih:${hex}`), 'xt=urn:btih').cannotCheck ?? '', /no dn/)
    assert.match(fieldNamed(readMetadata(`magnet:?xt=urn:btih:${hex}&dn=a%2Fb`), 'xt=urn:btih').cannotCheck ?? '', /base name/)
    assert.match(fieldNamed(readMetadata('magnet:?xt=urn:kzhash:abc'), 'xt=urn:kzhash').cannotCheck ?? '', /does not compute/)
    assert.equal(problemOf('magnet:?dn=x').extensions.field, 'xt')
    assert.equal(problemOf('magnet:?xt=urn:btih:%E0%A4%A').extensions.field, 'xt')
    assert.equal(problemOf('magnet:?xt=urn:btih:abcd').extensions.field, 'xt=urn:btih')
  })

  it('every digest of the URN table is a digest of the registry, of the size the table says', () => {
    for (const urn of MAGNET_URNS) {
      if (urn.digest !== undefined) assert.equal(digestNamed(urn.digest).outputBytes, urn.bytes, urn.namespace)
      else assert.ok(findContentHash(urn.contentHash as string), urn.namespace)
    }
  })

  it('rhash --magnet with every hash it knows reads back to values hashd computes, for every namespace of the table', { skip: skipUnless('rhash') }, async () => {
    for (const size of [0, 1, 1025, 200_000]) {
      const path = join(scratch, `magnet-${size}.bin`)
      const file = data.subarray(0, size)
      writeFileSync(path, file)
      for (const args of [['--magnet', '--btih', '--tth', '--aich', '--ed2k'], ['--magnet', '-a']]) {
        const link = run('rhash', [...args, path])
        const reading = readMetadata(link)
        assert.equal(reading.size, size)
        const checked = reading.fields.filter((field) => field.cannotCheck === undefined)
        for (const field of checked) assert.deepEqual(await matchingPartSizes(field, file), [0], `${field.field} of ${size} bytes (${args.join(' ')})`)
        if (args.includes('-a')) {
          const namespaces = new Set(checked.map((field) => field.field.slice('xt=urn:'.length)))
          for (const urn of MAGNET_URNS.filter((each) => each.namespace !== 'btih')) assert.ok(namespaces.has(urn.namespace), `rhash -a gives no ${urn.namespace}`)
        } else {
          assert.equal(checked.length, 4)
        }
      }
    }
  })
})

describe('metadata: git ls-tree', () => {
  it('reads lines with and without -l, blobs as the registry\'s git-blob ids; trees and submodules cannot be checked', () => {
    const sha1 = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    const text = `100644 blob ${sha1}\tREADME.md\r\n040000 tree ${'1'.repeat(40)}\tsrc\n160000 commit ${'2'.repeat(40)}\tvendor/lib\n100755 blob ${'3'.repeat(64)}     1234\tbin/run\n`
    const reading = readMetadata(text)
    assert.equal(reading.shape, 'git-ls-tree')
    assert.deepEqual(reading.fields.map((field) => [field.field, field.contentHash, field.parameters.size, field.cannotCheck === undefined]), [
      ['README.md', 'git-blob-sha1', undefined, true], ['src', 'git-blob-sha1', undefined, false],
      ['vendor/lib', 'git-blob-sha1', undefined, false], ['bin/run', 'git-blob-sha256', 1234, true],
    ])
    assert.equal(problemOf(`100644 blob ${sha1}\tREADME.md\nnot a line\n`).extensions.field, 'line 2')
  })

  it('git ls-tree\'s real output in SHA-1 and SHA-256 repositories, -l and -z, checks against the files', { skip: skipUnless('git') }, async () => {
    for (const format of ['sha1', 'sha256']) {
      const repository = mkdtempSync(join(scratch, `git-${format}-`))
      run('git', ['init', '--quiet', `--object-format=${format}`, repository])
      const files = new Map([['a.txt', data.subarray(0, 0)], ['b c.bin', data.subarray(0, 70_000)], ['ü.bin', data.subarray(5, 17)]])
      for (const [name, bytes] of files) writeFileSync(join(repository, name), bytes)
      run('git', ['-C', repository, 'add', '.'])
      run('git', ['-C', repository, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '--quiet', '-m', 'files'])
      for (const args of [[], ['-l'], ['-z'], ['-l', '-z']]) {
        const reading = readMetadata(run('git', ['-C', repository, '-c', 'core.quotePath=false', 'ls-tree', ...args, 'HEAD']))
        assert.equal(reading.fields.length, 3)
        for (const field of reading.fields) {
          assert.equal(field.contentHash, `git-blob-${format}`)
          const bytes = files.get(field.field)
          assert.ok(bytes, field.field)
          if (args.includes('-l')) assert.equal(field.parameters.size, bytes.length)
          assert.deepEqual(await matchingPartSizes(field, bytes), [0], `${format} ${args.join(' ')} ${field.field}`)
        }
      }
    }
  })
})
