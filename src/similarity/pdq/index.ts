/**
 * PDQ for images: decode (decode.ts: sharp on libuv's pool, decompression bombs refused before
 * decoding), prescale as the reference does (prescale.ts), then hash (hash.ts: Meta's reference
 * stage by stage). The hashing step is given by the caller, so a server runs it on its worker pool
 * while tests and tools run it here.
 */
import { decodeImage, type DecodeLimits } from './decode.js'
import { pdqHash, type PdqResult } from './hash.js'
import { prescale, type Pixels } from './prescale.js'

export { DIHEDRAL_NAMES, type DihedralName } from './dihedral.js'
export type { PdqResult } from './hash.js'
export type { Pixels } from './prescale.js'
export { sniffImage } from './sniff.js'

/** Hashes pixels of at most 512 × 512 (already prescaled). */
export type PixelHasher = (pixels: Pixels, dihedral: boolean) => Promise<PdqResult>

export const hashOnThisThread: PixelHasher = async (pixels, dihedral) => pdqHash(pixels, { dihedral })

export async function pdqOfImage(bytes: Uint8Array, options: DecodeLimits & { dihedral?: boolean }, hashPixels: PixelHasher = hashOnThisThread): Promise<PdqResult> {
  const pixels = prescale(await decodeImage(bytes, options))
  return hashPixels(pixels, options.dihedral ?? false)
}
