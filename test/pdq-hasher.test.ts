/**
 * PDQ (src/similarity/pdq) against Meta's C++ reference: every fixture image's hash, quality and
 * seven dihedral hashes as `pdq-photo-hasher --pdqdih-across` printed them (test/fixtures/pdq,
 * whose README names the reference's commit and the commands). The fixtures cover JPEG (RGB,
 * grey, progressive, Meta's own test images), PNG (RGB, grey, palette, RGBA), lossless and lossy
 * WebP, a two-frame GIF, images under the reference's 5-pixel minimum, and images over 512 pixels
 * on a side (which the reference resizes first). The match is exact, bit for bit.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DIHEDRAL_NAMES, pdqOfImage, sniffImage } from '../src/similarity/pdq/index.js'
import { jaroszWindowSize } from '../src/similarity/pdq/jarosz.js'
import { torbenMedian } from '../src/similarity/pdq/torben.js'
import { Problem } from '../src/problem.js'
import { expectedPdq, pdqFixture as fixture } from './helpers/pdq.js'

const LIMITS = { maxPixels: 50_000_000 }

describe('PDQ hasher', () => {
  it('has fixtures in every format', () => {
    const names = Object.keys(expectedPdq)
    for (const extension of ['.jpg', '.png', '.webp', '.gif']) assert.ok(names.some((name) => name.endsWith(extension)), extension)
    assert.ok(names.length >= 15)
  })

  for (const [name, expected] of Object.entries(expectedPdq)) {
    it(`${name}: the reference's hash, quality and dihedral hashes, bit for bit`, async () => {
      const result = await pdqOfImage(fixture(name), { ...LIMITS, dihedral: true })
      assert.equal(result.hash, expected.hash)
      assert.equal(result.quality, expected.quality)
      assert.equal(expected.dihedral.original, expected.hash)
      for (const variant of DIHEDRAL_NAMES) assert.equal(result.dihedral?.[variant], expected.dihedral[variant], variant)
    })
  }

  it('without dihedral, the hash alone', async () => {
    const result = await pdqOfImage(fixture('ref-q0291.jpg'), LIMITS)
    assert.deepEqual(Object.keys(result), ['hash', 'quality'])
  })

  it('the window sizes and the median as the reference computes them', () => {
    // (old + 2·new − 1) / (2·new), rounded down: half a 64th, rounded up.
    assert.equal(jaroszWindowSize(512, 64), 4)
    assert.equal(jaroszWindowSize(513, 64), 5)
    assert.equal(jaroszWindowSize(7, 64), 1)
    // Torben's median of an even count is the lower one.
    assert.equal(torbenMedian(new Float32Array([4, 1, 3, 2])), 2)
    assert.equal(torbenMedian(new Float32Array([5, 5, 5, 5])), 5)
  })

  it('sniffs the four formats and names others', () => {
    assert.equal(sniffImage(fixture('ref-wee.jpg')).format, 'jpeg')
    assert.equal(sniffImage(fixture('gen-tiny-7x5.png')).format, 'png')
    assert.equal(sniffImage(fixture('gen-anim-160x120.gif')).format, 'gif')
    assert.equal(sniffImage(fixture('gen-rgb-320x240-lossy.webp')).format, 'webp')
    assert.deepEqual(sniffImage(Buffer.from('%PDF-1.7\n')), { format: null, description: 'a PDF document' })
    assert.deepEqual(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), { format: null, description: 'text (SVG, HTML or XML; not decoded)' })
    assert.deepEqual(sniffImage(new Uint8Array(0)), { format: null, description: 'an empty file' })
  })

  it('refuses a non-image and a truncated image with 422', async () => {
    await assert.rejects(pdqOfImage(Buffer.from('PK\x03\x04 not an image'), LIMITS), (error: unknown) =>
      error instanceof Problem && error.status === 422 && error.type === 'urn:hashd:problem:not-an-image' && error.detail.includes('a ZIP archive'))
    const jpeg = fixture('ref-q0291.jpg')
    await assert.rejects(pdqOfImage(jpeg.subarray(0, jpeg.length >> 1), LIMITS), (error: unknown) =>
      error instanceof Problem && error.status === 422 && error.type === 'urn:hashd:problem:undecodable-image')
  })

  it('refuses more pixels than the limit from the header, before decoding', async () => {
    await assert.rejects(pdqOfImage(fixture('gen-palette-640x480.png'), { maxPixels: 640 * 480 - 1 }), (error: unknown) =>
      error instanceof Problem && error.status === 413 && error.detail.includes('MAX_IMAGE_PIXELS'))
    const result = await pdqOfImage(fixture('gen-palette-640x480.png'), { maxPixels: 640 * 480 })
    assert.equal(result.hash, expectedPdq['gen-palette-640x480.png']?.hash)
  })
})
