/**
 * Stage 2: blur and decimate to 64×64, as ThreatExchange `pdq/cpp/downscaling/downscaling.cpp`
 * does (`computeJaroszFilterWindowSize`, `jaroszFilterFloat`, `box1DFloat`, `decimateFloat`): two
 * passes of a box filter along rows then columns (a tent-like Jarosz filter), then one sample at the
 * centre of each output cell. The running sum is a float, added and subtracted in the reference's
 * order, so the results are the reference's to the bit.
 */
const fround = Math.fround

/** Two X-then-Y passes: "tent filter" (`PDQ_NUM_JAROSZ_XY_PASSES` in pdqhashing.cpp). */
export const JAROSZ_PASSES = 2

/** Half of old/new, rounded up: two passes then cover a full output cell. */
export function jaroszWindowSize(oldDimension: number, newDimension: number): number {
  return Math.trunc((oldDimension + 2 * newDimension - 1) / (2 * newDimension))
}

/**
 * One box filter along a vector: a window centred on each output, shrunk at both ends, its sum
 * kept as a float (`box1DFloat`'s four phases).
 */
function box1D(input: Float32Array, output: Float32Array, start: number, length: number, stride: number, window: number): void {
  const half = Math.trunc((window + 2) / 2)
  const phase1 = half - 1
  const phase2 = window - half + 1
  const phase3 = length - window
  const phase4 = half - 1
  let left = start
  let right = start
  let out = start
  let sum = 0
  let size = 0
  for (let i = 0; i < phase1; i++) {
    sum = fround(sum + (input[right] as number))
    size++
    right += stride
  }
  for (let i = 0; i < phase2; i++) {
    sum = fround(sum + (input[right] as number))
    size++
    output[out] = sum / size
    right += stride
    out += stride
  }
  for (let i = 0; i < phase3; i++) {
    sum = fround(sum + (input[right] as number))
    sum = fround(sum - (input[left] as number))
    output[out] = sum / size
    left += stride
    right += stride
    out += stride
  }
  for (let i = 0; i < phase4; i++) {
    sum = fround(sum - (input[left] as number))
    size--
    output[out] = sum / size
    left += stride
    out += stride
  }
}

/**
 * The Jarosz filter in place: `buffer1` holds the input and, afterwards, the result; `buffer2` is
 * scratch of the same size.
 */
export function jaroszFilter(
  buffer1: Float32Array,
  buffer2: Float32Array,
  rows: number,
  columns: number,
  windowAlongRows: number,
  windowAlongColumns: number,
  passes: number,
): void {
  for (let pass = 0; pass < passes; pass++) {
    for (let i = 0; i < rows; i++) box1D(buffer1, buffer2, i * columns, columns, 1, windowAlongRows)
    for (let j = 0; j < columns; j++) box1D(buffer2, buffer1, j, rows, columns, windowAlongColumns)
  }
}

/** "Target centers not corners": output (i, j) is input (⌊(i + ½) · rows / 64⌋, ⌊(j + ½) · columns / 64⌋). */
export function decimate(input: Float32Array, rows: number, columns: number, outRows: number, outColumns: number): Float32Array {
  const out = new Float32Array(outRows * outColumns)
  for (let i = 0; i < outRows; i++) {
    const inRow = Math.trunc(((i + 0.5) * rows) / outRows)
    for (let j = 0; j < outColumns; j++) {
      const inColumn = Math.trunc(((j + 0.5) * columns) / outColumns)
      out[i * outColumns + j] = input[inRow * columns + inColumn] as number
    }
  }
  return out
}
