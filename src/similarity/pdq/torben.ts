/**
 * Stage 5a: the median of the 256 DCT coefficients by Torben Mogensen's method, as ThreatExchange
 * `pdq/cpp/hashing/torben.cpp` computes it (float midpoints, and for an even count the lower
 * median, found without sorting or changing the input).
 */
const fround = Math.fround

export function torbenMedian(m: Float32Array): number {
  const n = m.length
  let min = m[0] as number
  let max = min
  for (let i = 1; i < n; i++) {
    const value = m[i] as number
    if (value < min) min = value
    if (value > max) max = value
  }
  const half = Math.trunc((n + 1) / 2)
  for (;;) {
    const guess = fround(fround(min + max) / 2)
    let less = 0
    let greater = 0
    let equal = 0
    let maxLessThanGuess = min
    let minGreaterThanGuess = max
    for (let i = 0; i < n; i++) {
      const value = m[i] as number
      if (value < guess) {
        less++
        if (value > maxLessThanGuess) maxLessThanGuess = value
      } else if (value > guess) {
        greater++
        if (value < minGreaterThanGuess) minGreaterThanGuess = value
      } else {
        equal++
      }
    }
    if (less <= half && greater <= half) {
      if (less >= half) return maxLessThanGuess
      if (less + equal >= half) return guess
      return minGreaterThanGuess
    }
    if (less > greater) max = maxLessThanGuess
    else min = minGreaterThanGuess
  }
}
