/**
 * PDQ's image path (src/similarity/pdq): the sniffing of an upload's first bytes, the header read
 * that refuses decompression bombs, sharp's decode of JPEG, PNG, WebP and GIF, and the hash.
 *
 * Input: the upload's bytes. The pixel limit is a quarter of a megapixel, so a mutated header that
 * claims a large image is refused before decoding, as MAX_IMAGE_PIXELS does in the server.
 *
 * Invariants: a hash is 64 hex digits with a quality from 0 to 100 and seven dihedral hashes; the
 * sniffer names what it does not decode; a refusal for size names MAX_IMAGE_PIXELS.
 *
 * Expected refusals: Problem 422 not-an-image and undecodable-image, and 413 for too many pixels.
 * Anything else thrown is a finding.
 */
import sharp from 'sharp'
import { DIHEDRAL_NAMES, pdqOfImage, sniffImage } from '../../src/similarity/pdq/index.js'
import { invariant, isProblem, refusingAsync } from '../support.js'

const MAX_PIXELS = 250_000
const HEX64 = /^[0-9a-f]{64}$/

// The first decode loads libvips and compiles the hash's code: seconds on a busy machine, which
// libFuzzer's per-input timeout would count against the first input. Done once before fuzzing.
await pdqOfImage(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).png().toBuffer(), { maxPixels: MAX_PIXELS, dihedral: true })

export async function fuzz(data: Buffer): Promise<void> {
  const sniffed = sniffImage(data)
  invariant(sniffed.description.length > 0, 'the sniffer named nothing')
  const result = await refusingAsync(() => pdqOfImage(data, { maxPixels: MAX_PIXELS, dihedral: true }), (error) =>
    isProblem(error, [422], ['urn:hashd:problem:not-an-image', 'urn:hashd:problem:undecodable-image'])
    || (isProblem(error, [413]) && error.detail.includes('MAX_IMAGE_PIXELS')))
  if (result === undefined) return
  invariant(sniffed.format !== null, `${sniffed.description} was hashed`)
  invariant(HEX64.test(result.hash), 'a hash that is not 64 hex digits')
  invariant(Number.isInteger(result.quality) && result.quality >= 0 && result.quality <= 100, `quality ${result.quality}`)
  for (const name of DIHEDRAL_NAMES) invariant(HEX64.test(result.dihedral?.[name] ?? ''), `no ${name} hash`)
}
