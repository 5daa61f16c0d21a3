/**
 * Stage 3: the quality metric, ThreatExchange `pdq/cpp/hashing/pdqhashing.cpp`,
 * `pdqImageDomainQualityMetric`: the sum of the quantised vertical and horizontal gradients of the
 * 64×64 downsample, over 90, at most 100. "Quantization matters since we want to count
 * *significant* gradients"; `((u − v) · 100) / 255` is float arithmetic truncated to an integer.
 */
const fround = Math.fround

export function qualityOf(buffer64x64: Float32Array): number {
  let gradientSum = 0
  const step = (u: number, v: number): number => Math.abs(Math.trunc(fround(fround(fround(u - v) * 100) / 255)))
  for (let i = 0; i < 63; i++) {
    for (let j = 0; j < 64; j++) gradientSum += step(buffer64x64[i * 64 + j] as number, buffer64x64[(i + 1) * 64 + j] as number)
  }
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 63; j++) gradientSum += step(buffer64x64[i * 64 + j] as number, buffer64x64[i * 64 + j + 1] as number)
  }
  return Math.min(100, Math.trunc(gradientSum / 90))
}
