/**
 * PDQ (Meta's perceptual hash for photos) of decoded pixels, stage by stage as ThreatExchange
 * `pdq/cpp/hashing/pdqhashing.cpp` (`pdqDihedralHash256esFromFloatLuma`) and `pdq/cpp/io/pdqio.cpp`
 * compose them: prescale to 512×512 when larger, luminance, Jarosz blur and decimation to 64×64,
 * the quality metric, the 16×16 DCT, and one bit per coefficient: above the median or not.
 */
import { dct64To16 } from './dct.js'
import { DIHEDRAL_NAMES, dihedralCoefficients, type DihedralName } from './dihedral.js'
import { decimate, JAROSZ_PASSES, jaroszFilter, jaroszWindowSize } from './jarosz.js'
import { lumaFromPixels } from './luma.js'
import { prescale, type Pixels } from './prescale.js'
import { qualityOf } from './quality.js'
import { torbenMedian } from './torben.js'

/** The reference hashes nothing smaller than 5 pixels on a side: the hash is all zeros, quality 0. */
export const MIN_HASHABLE_SIDE = 5

export interface PdqResult {
  /** 64 hex digits, as the reference prints them. */
  readonly hash: string
  /** 0–100: how much significant gradient the image has; Meta suggests ignoring hashes below 50. */
  readonly quality: number
  /** The seven other dihedral hashes, when asked for. */
  readonly dihedral?: Readonly<Record<DihedralName, string>>
}

const ZERO_HASH = '0'.repeat(64)

/**
 * The hash's 256 bits as the reference formats them (`Hash256::format`, common/pdqhashtypes.cpp):
 * bit 16·i + j is coefficient (i, j), 16-bit word i holds row i, and the words print from 15 down
 * to 0, four hex digits each.
 */
function bitsToHex(coefficients: Float32Array): string {
  const median = torbenMedian(coefficients)
  let hex = ''
  for (let word = 15; word >= 0; word--) {
    let value = 0
    for (let bit = 0; bit < 16; bit++) {
      if ((coefficients[word * 16 + bit] as number) > median) value |= 1 << bit
    }
    hex += value.toString(16).padStart(4, '0')
  }
  return hex
}

export function pdqHash(image: Pixels, options: { dihedral?: boolean } = {}): PdqResult {
  const { data, width, height, channels } = prescale(image)
  if (width < MIN_HASHABLE_SIDE || height < MIN_HASHABLE_SIDE) {
    const dihedral = Object.fromEntries(DIHEDRAL_NAMES.map((name) => [name, ZERO_HASH])) as Record<DihedralName, string>
    return options.dihedral ? { hash: ZERO_HASH, quality: 0, dihedral } : { hash: ZERO_HASH, quality: 0 }
  }
  const luma = lumaFromPixels(data, width, height, channels)
  let buffer64x64: Float32Array
  if (width === 64 && height === 64) {
    // "E.g. for video-frame processing when we've already used ffmpeg to downsample for us."
    buffer64x64 = luma
  } else {
    const scratch = new Float32Array(luma.length)
    jaroszFilter(luma, scratch, height, width, jaroszWindowSize(width, 64), jaroszWindowSize(height, 64), JAROSZ_PASSES)
    buffer64x64 = decimate(luma, height, width, 64, 64)
  }
  const quality = qualityOf(buffer64x64)
  const coefficients = dct64To16(buffer64x64)
  const hash = bitsToHex(coefficients)
  if (!options.dihedral) return { hash, quality }
  const dihedral = Object.fromEntries(
    DIHEDRAL_NAMES.map((name) => [name, bitsToHex(dihedralCoefficients(coefficients, name))]),
  ) as Record<DihedralName, string>
  return { hash, quality, dihedral }
}
