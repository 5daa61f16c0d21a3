/**
 * Stage 4: the 2-D DCT of the 64×64 downsample, keeping coefficients 1–16 on each axis (the lowest
 * frequencies but the DC term), ThreatExchange `pdq/cpp/hashing/pdqhashing.cpp`, `dct_matrix_64`
 * and `dct64To16`: B = D · A · Dᵀ with D the 16×64 DCT-II matrix, in float, summed in the
 * reference's order (k = 0…63), so the coefficients are the reference's to the bit.
 */
const fround = Math.fround

/** D[i][j] = √(2/64) · cos(π/2/64 · (i + 1) · (2j + 1)), the scale a float and each entry a float. */
const DCT_MATRIX = (() => {
  const matrix = new Float32Array(16 * 64)
  const scale = fround(Math.sqrt(2 / 64))
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 64; j++) matrix[i * 64 + j] = scale * Math.cos((Math.PI / 2 / 64) * (i + 1) * (2 * j + 1))
  }
  return matrix
})()

/** The 16×16 coefficients, row-major, of a 64×64 row-major input. */
export function dct64To16(a: Float32Array): Float32Array {
  const d = DCT_MATRIX
  const t = new Float32Array(16 * 64)
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 64; j++) {
      let sum = 0
      for (let k = 0; k < 64; k++) sum = fround(sum + fround((d[i * 64 + k] as number) * (a[k * 64 + j] as number)))
      t[i * 64 + j] = sum
    }
  }
  const b = new Float32Array(16 * 16)
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 16; j++) {
      let sum = 0
      for (let k = 0; k < 64; k++) sum = fround(sum + fround((t[i * 64 + k] as number) * (d[j * 64 + k] as number)))
      b[i * 16 + j] = sum
    }
  }
  return b
}
