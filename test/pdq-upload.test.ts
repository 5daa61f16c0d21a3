/**
 * PDQ over HTTP: /api/filehash with `pdq` among the algorithms, in the raw and the multipart form,
 * against the reference's hashes of the fixtures (test/fixtures/pdq), beside a digest computed in
 * the same pass; and the refusals: a non-image and a truncated image (422), an upload over
 * MAX_IMAGE_SIZE and decompression bombs whose headers claim more than MAX_IMAGE_PIXELS (413,
 * before any pixel is decoded).
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { crc32 } from 'node:zlib'
import { DIHEDRAL_NAMES } from '../src/similarity/pdq/index.js'
import { expectedPdq, pdqFixture } from './helpers/pdq.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'

const MAX_IMAGE_SIZE = 512 * 1024

/** A PNG with a valid header claiming width × height pixels, and one tiny IDAT: a decompression bomb's header. */
function pngClaiming(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([length, body, crc])
  }
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8)
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])), chunk('IEND', Buffer.alloc(0))])
}

/** A real JPEG whose frame header (SOF0) is rewritten to claim width × height. */
function jpegClaiming(width: number, height: number): Buffer {
  const jpeg = Buffer.from(pdqFixture('gen-rgb-300x200.jpg'))
  const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]))
  assert.ok(sof > 0)
  jpeg.writeUInt16BE(height, sof + 5)
  jpeg.writeUInt16BE(width, sof + 7)
  return jpeg
}

describe('/api/filehash with pdq', () => {
  let server: TestServer
  before(async () => { server = await startServer({ MAX_IMAGE_SIZE: String(MAX_IMAGE_SIZE), MAX_IMAGE_PIXELS: '1000000' }) })
  after(async () => { await server.close() })

  const raw = async (body: Buffer, query: string): Promise<TestResponse> =>
    toTestResponse(await server.fetch(`/api/filehash?${query}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body }))

  it('each fixture, raw body: the reference\'s hash, quality and dihedral hashes, and sha256 in the same pass', async () => {
    for (const [name, expected] of Object.entries(expectedPdq)) {
      const image = pdqFixture(name)
      const response = await raw(image, 'algorithms=sha256,pdq&dihedral=true')
      assert.equal(response.status, 200, `${name}: ${response.text}`)
      assert.deepEqual(Object.keys(response.body.hashes), ['sha256', 'pdq'])
      assert.equal(response.body.hashes.sha256, createHash('sha256').update(image).digest('hex'))
      const { hash, quality, dihedral } = response.body.hashes.pdq
      assert.equal(hash, expected.hash, name)
      assert.equal(quality, expected.quality, name)
      assert.deepEqual(Object.keys(dihedral), [...DIHEDRAL_NAMES])
      for (const variant of DIHEDRAL_NAMES) assert.equal(dihedral[variant], expected.dihedral[variant], `${name} ${variant}`)
    }
  })

  it('multipart, the GIF\'s first frame, dihedral as a form field; without dihedral, hash and quality only', async () => {
    const expected = expectedPdq['gen-anim-160x120.gif']
    const form = new FormData()
    form.append('algorithms', 'PDQ,md5')
    form.append('dihedral', 'true')
    form.append('file', new Blob([pdqFixture('gen-anim-160x120.gif')]), 'anim.gif')
    const response = await toTestResponse(await server.fetch('/api/filehash', { method: 'POST', body: form }))
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(Object.keys(response.body.hashes), ['pdq', 'md5'])
    assert.equal(response.body.hashes.pdq.hash, expected?.hash)
    assert.equal(response.body.hashes.pdq.dihedral.rotate90, expected?.dihedral.rotate90)
    const plain = await raw(pdqFixture('ref-wee.jpg'), 'algorithms=pdq')
    assert.deepEqual(plain.body.hashes, { pdq: { hash: expectedPdq['ref-wee.jpg']?.hash, quality: expectedPdq['ref-wee.jpg']?.quality } })
  })

  it('422 naming what a non-image is, and for a truncated image', async () => {
    const pdf = await raw(Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n'), 'algorithms=pdq')
    assert.equal(pdf.status, 422)
    assert.match(pdf.headers.get('content-type') ?? '', /^application\/problem\+json/)
    assert.equal(pdf.body.type, 'urn:hashd:problem:not-an-image')
    assert.equal(pdf.body.detected, 'a PDF document')
    const jpeg = pdqFixture('ref-q0291.jpg')
    const truncated = await raw(jpeg.subarray(0, jpeg.length - 2000), 'algorithms=sha256,pdq')
    assert.equal(truncated.status, 422)
    assert.equal(truncated.body.type, 'urn:hashd:problem:undecodable-image')
    assert.equal(truncated.body.detected, 'JPEG')
  })

  it('413 for pixel bombs, from the header, before decoding; memory stays where it was', async () => {
    const rssBefore = process.memoryUsage().rss
    for (const bomb of [pngClaiming(100_000, 100_000), jpegClaiming(60_000, 60_000), pngClaiming(1001, 1000)]) {
      const response = await raw(bomb, 'algorithms=sha256,pdq')
      assert.equal(response.status, 413, response.text)
      assert.match(response.body.detail, /MAX_IMAGE_PIXELS is 1000000/)
    }
    // 100,000² RGB pixels would be 30 GB; nothing near even one decoded megapixel was allocated.
    assert.ok(process.memoryUsage().rss - rssBefore < 64 * 1024 * 1024)
    // Without pdq the same bytes are just a file.
    assert.equal((await raw(pngClaiming(100_000, 100_000), 'algorithms=sha256')).status, 200)
  })

  it('413 for an upload over MAX_IMAGE_SIZE when pdq is asked, and dihedral must be true or false', async () => {
    const large = Buffer.concat([pdqFixture('ref-q0291.jpg'), Buffer.alloc(MAX_IMAGE_SIZE)])
    const response = await raw(large, 'algorithms=pdq')
    assert.equal(response.status, 413)
    assert.match(response.body.detail, /MAX_IMAGE_SIZE/)
    const bad = await raw(pdqFixture('ref-wee.jpg'), 'algorithms=pdq&dihedral=yes')
    assert.equal(bad.status, 400)
  })
})
