/**
 * PDQ beside the other hashes of /api/filehash: the upload's bytes are collected in memory (never
 * on disk) as they stream through the digests, up to MAX_IMAGE_SIZE, and hashed once the upload
 * has ended: decoded by sharp on libuv's pool, and the pixels hashed on the worker pool.
 */
import type { Config } from '../config.js'
import { problems } from '../problem.js'
import { pdqOfImage, type PdqResult, type PixelHasher } from '../similarity/pdq/index.js'
import type { InlineStage } from '../upload/sink.js'
import type { Engine } from './engine.js'

export interface ImageLimits {
  /** MAX_IMAGE_SIZE: the most bytes collected for an image hash. */
  maxBytes: number
  /** MAX_IMAGE_PIXELS: width × height from the image's header. */
  maxPixels: number
}

export const imageLimits = (config: Config): ImageLimits => config.images

/** Collects an upload's chunks for PDQ, copying each (the pipeline may reuse or free a chunk once written). */
export class ImageBytes implements InlineStage {
  readonly #chunks: Buffer[] = []
  #size = 0
  readonly #maxBytes: number

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  write(chunk: Uint8Array): void {
    this.#size += chunk.length
    if (this.#size > this.#maxBytes) {
      this.#chunks.length = 0
      throw problems.tooLarge(`PDQ reads images of at most MAX_IMAGE_SIZE (${this.#maxBytes} bytes); the upload is larger`)
    }
    this.#chunks.push(Buffer.from(chunk))
  }

  end(): void {}

  /** The whole upload, once; the collector lets go of it. */
  take(): Buffer {
    const bytes = Buffer.concat(this.#chunks, this.#size)
    this.#chunks.length = 0
    return bytes
  }
}

/** The worker pool hashes the pixels (the Jarosz filter of a 512 × 512 image takes milliseconds of CPU). */
export function poolHasher(engine: Engine): PixelHasher {
  return async (pixels, dihedral) => {
    const { value } = await engine.run<string>({ op: 'pdq', input: pixels.data, width: pixels.width, height: pixels.height, channels: pixels.channels, dihedral })
    return JSON.parse(value) as PdqResult
  }
}

export async function pdqOfUpload(bytes: ImageBytes, limits: ImageLimits, dihedral: boolean, engine: Engine): Promise<PdqResult> {
  return pdqOfImage(bytes.take(), { maxPixels: limits.maxPixels, dihedral }, poolHasher(engine))
}
