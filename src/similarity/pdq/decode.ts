/**
 * The decoder seam: an upload's bytes to the 8-bit pixels PDQ hashes, with sharp (libvips), on
 * libuv's thread pool, never on the event loop. Only JPEG, PNG, WebP and GIF are decoded (sniffed
 * from the bytes, whatever the client calls them); sharp would read more (SVG, TIFF, HEIF…), and
 * each extra decoder is attack surface.
 *
 * Decompression bombs are refused before decoding: the header's width × height is read first
 * (`metadata()` parses the header only) and held to MAX_IMAGE_PIXELS, and the decode itself is
 * bounded by sharp's `limitInputPixels` to the same count, so the decoded buffer is at most
 * 3 bytes × MAX_IMAGE_PIXELS. At most DECODES_AT_ONCE decodes run together; the others wait.
 *
 * What the reference reads is matched: EXIF orientation is not applied and an embedded ICC profile
 * is ignored (CImg does neither), a grey image stays one channel (the reference takes grey values
 * as luminance), GIF and WebP give their first frame. Alpha is dropped, not composited: the
 * reference stops on a four-channel image, and Meta's Python tools convert to RGB, which drops it.
 */
import type { Metadata, Sharp, SharpOptions } from 'sharp'
import { problems } from '../../problem.js'
import type { Pixels } from './prescale.js'
import { sniffImage, type ImageFormat } from './sniff.js'

export interface DecodeLimits {
  /** MAX_IMAGE_PIXELS: width × height, from the header, past which the image is refused undecoded. */
  readonly maxPixels: number
}

/** Two decodes at once: each may hold 3 × MAX_IMAGE_PIXELS bytes, and libuv's pool has four threads for all of Node. */
export const DECODES_AT_ONCE = 2

/** sharp (and libvips with it) is loaded on the first image, not at start: most servers never decode one. */
let loading: Promise<(input: Buffer, options: SharpOptions) => Sharp> | undefined
const loadSharp = (): Promise<(input: Buffer, options: SharpOptions) => Sharp> =>
  loading ??= import('sharp').then((module) => module.default)

let running = 0
const waiting: Array<() => void> = []

async function withDecodeSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= DECODES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve))
  running++
  try {
    return await work()
  } finally {
    running--
    waiting.shift()?.()
  }
}

const FORMAT_NAMES: Record<ImageFormat, string> = { jpeg: 'JPEG', png: 'PNG', gif: 'GIF', webp: 'WebP' }

function notAnImage(description: string) {
  return problems.unprocessable('not-an-image', 'Not an image PDQ can hash',
    `PDQ hashes JPEG, PNG, WebP and GIF images; the upload is ${description}`, { detected: description })
}

function undecodable(format: ImageFormat, why: string) {
  return problems.unprocessable('undecodable-image', 'Image cannot be decoded',
    `The upload starts as a ${FORMAT_NAMES[format]} image but cannot be decoded: ${why}`, { detected: FORMAT_NAMES[format] })
}

/** libvips's message, first line only and cut short: it names the fault ("premature end of JPEG file"), never the bytes. */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split('\n')[0] ?? '').slice(0, 200) || 'the decoder refused it'
}

export function tooManyPixels(width: number, height: number, maxPixels: number) {
  return problems.tooLarge(`The image is ${width} × ${height} = ${width * height} pixels; MAX_IMAGE_PIXELS is ${maxPixels}`)
}

export async function decodeImage(bytes: Uint8Array, limits: DecodeLimits): Promise<Pixels> {
  const { format } = sniffImage(bytes)
  if (format === null) throw notAnImage(sniffImage(bytes).description)
  const sharp = await loadSharp()
  return withDecodeSlot(async () => {
    const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    // The header only: no pixel is decoded here.
    let header: Metadata
    try {
      header = await sharp(input, { limitInputPixels: false }).metadata()
    } catch (error) {
      throw undecodable(format, reason(error))
    }
    if (header.format !== format) {
      throw undecodable(format, `the decoder reads it as ${header.format ?? 'nothing it knows'}`)
    }
    const width = header.width ?? 0
    const height = header.pageHeight ?? header.height ?? 0
    if (width * height > limits.maxPixels) throw tooManyPixels(width, height, limits.maxPixels)
    const grey = (header.channels ?? 3) <= 2
    try {
      let image = sharp(input, { limitInputPixels: limits.maxPixels, failOn: 'warning', ignoreIcc: true, autoOrient: false, pages: 1, page: 0 })
      image = grey ? image.extractChannel(0) : image.removeAlpha()
      const { data, info } = await image.raw().toBuffer({ resolveWithObject: true })
      const channels = info.channels === 1 ? 1 : 3
      if (info.channels !== channels) throw new Error(`${info.channels} channels after decoding`)
      if (data.length !== info.width * info.height * channels) throw new Error('not 8 bits a sample after decoding')
      return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width: info.width, height: info.height, channels }
    } catch (error) {
      throw undecodable(format, reason(error))
    }
  })
}
