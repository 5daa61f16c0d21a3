/**
 * Stage 5b: the seven other dihedral hashes (rotations by 90°, 180°, 270°, and the four flips) from
 * the original's DCT coefficients, without transforming the image: a flip negates the odd
 * frequencies along its axis and a transpose swaps the axes (ThreatExchange
 * `pdq/cpp/hashing/pdqhashing.cpp`, `dct16OriginalToRotate90` and its siblings, and the sign table
 * above them). B[row][column] is written from A[i][j], as in the reference.
 */
export const DIHEDRAL_NAMES = [
  'rotate90',
  'rotate180',
  'rotate270',
  'flipX',
  'flipY',
  'flipPlus1',
  'flipMinus1',
] as const
export type DihedralName = (typeof DIHEDRAL_NAMES)[number]

interface Transform {
  /** Whether A[i][j] goes to B[j][i] rather than B[i][j]. */
  readonly transpose: boolean
  /** Whether A[i][j] is negated. */
  readonly negate: (i: number, j: number) => boolean
}

const TRANSFORMS: Record<DihedralName, Transform> = {
  rotate90: { transpose: true, negate: (_i, j) => (j & 1) === 0 },
  rotate180: { transpose: false, negate: (i, j) => ((i + j) & 1) === 1 },
  rotate270: { transpose: true, negate: (i) => (i & 1) === 0 },
  flipX: { transpose: false, negate: (i) => (i & 1) === 0 },
  flipY: { transpose: false, negate: (_i, j) => (j & 1) === 0 },
  flipPlus1: { transpose: true, negate: () => false },
  flipMinus1: { transpose: true, negate: (i, j) => ((i + j) & 1) === 1 },
}

export function dihedralCoefficients(a: Float32Array, name: DihedralName): Float32Array {
  const { transpose, negate } = TRANSFORMS[name]
  const b = new Float32Array(256)
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 16; j++) {
      const value = a[i * 16 + j] as number
      b[transpose ? j * 16 + i : i * 16 + j] = negate(i, j) ? -value : value
    }
  }
  return b
}
