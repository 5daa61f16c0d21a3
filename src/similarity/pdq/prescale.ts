/**
 * Stage 0: the reference's photo hasher resizes an image larger than 512 pixels on either side to
 * exactly 512×512 before hashing ("the two-pass Jarosz filter is prohibitively expensive for larger
 * images so we use off-the-shelf downsampling", ThreatExchange `pdq/cpp/io/pdqio.cpp`,
 * `DOWNSAMPLE_DIMS`). It calls CImg's `resize(512, 512)`, whose default is nearest-neighbour
 * interpolation and which does not keep the aspect ratio: output column x reads input column
 * ⌊x · width / 512⌋ (CImg.h, `get_resize`, `interpolation_type` 1, where the offsets are the
 * differences of `(ulongT)((x + 1.0) * _width / sx)`), and the same for rows. A side of 512 or less
 * is stretched to 512 the same way. Hashes of large images match the reference only with this step.
 */
export const PRESCALE_SIDE = 512

export interface Pixels {
  readonly data: Uint8Array
  readonly width: number
  readonly height: number
  readonly channels: 1 | 3
}

export function needsPrescale(width: number, height: number): boolean {
  return width > PRESCALE_SIDE || height > PRESCALE_SIDE
}

/** Nearest-neighbour resize to 512×512, CImg's way; the input is returned when no resize is due. */
export function prescale(image: Pixels): Pixels {
  const { data, width, height, channels } = image
  if (!needsPrescale(width, height)) return image
  const side = PRESCALE_SIDE
  const sourceColumns = new Int32Array(side)
  for (let x = 0; x < side; x++) sourceColumns[x] = Math.floor((x * width) / side)
  const out = new Uint8Array(side * side * channels)
  for (let y = 0; y < side; y++) {
    const sourceRow = Math.floor((y * height) / side) * width
    const outRow = y * side
    for (let x = 0; x < side; x++) {
      const from = (sourceRow + (sourceColumns[x] as number)) * channels
      const to = (outRow + x) * channels
      for (let c = 0; c < channels; c++) out[to + c] = data[from + c] as number
    }
  }
  return { data: out, width: side, height: side, channels }
}
