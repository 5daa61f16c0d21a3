/**
 * Stage 1: pixels to luminance, as Meta's reference does it (ThreatExchange `pdq/cpp/io/pdqio.cpp`,
 * `loadFloatLumaFromCImg`, and `pdq/cpp/downscaling/downscaling.cpp`, `fillFloatLumaFromRGB` and
 * `fillFloatLumaFromGrey`). Every operation is a 32-bit float one, as in the C++, so `Math.fround`
 * follows each step: a double computation rounded to float is the correctly rounded float result
 * for +, −, × and ÷.
 */
const fround = Math.fround

/** "From Wikipedia: standard RGB to luminance (the 'Y' in 'YUV')", stored as floats. */
const LUMA_FROM_R = fround(0.299)
const LUMA_FROM_G = fround(0.587)
const LUMA_FROM_B = fround(0.114)

/**
 * Luminance of interleaved 8-bit pixels, row-major. One channel is grey and is taken as it is (the
 * reference does not weight it); three are R, G, B.
 */
export function lumaFromPixels(pixels: Uint8Array, width: number, height: number, channels: 1 | 3): Float32Array {
  const count = width * height
  const luma = new Float32Array(count)
  if (channels === 1) {
    for (let i = 0; i < count; i++) luma[i] = pixels[i] as number
    return luma
  }
  for (let i = 0, p = 0; i < count; i++, p += 3) {
    const r = fround(LUMA_FROM_R * (pixels[p] as number))
    const g = fround(LUMA_FROM_G * (pixels[p + 1] as number))
    const b = fround(LUMA_FROM_B * (pixels[p + 2] as number))
    luma[i] = fround(r + g) + b
  }
  return luma
}
