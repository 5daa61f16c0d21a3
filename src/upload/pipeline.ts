/**
 * The upload pipeline: source (a raw body here, or a multipart file part fed by multipart.ts) → hashers (inline, or fanned
 * out over threads) → digests. Encoding the digests is the caller's last step (encode.ts), so the
 * raw bytes stay available (to compare against an expected digest, say).
 */
import type { Readable } from 'node:stream'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { pump } from './pump.js'
import { inlineSink, type ContentHashingSink, type DigestSink, type ThreadContentHash } from './sink.js'
import type { HashThreads } from './threads.js'

/**
 * Uploads declared smaller than this are hashed on the calling thread: below it, starting the
 * threads' work and copying into the ring cost more than the second core gains.
 */
export const PARALLEL_MIN_BYTES = 1024 * 1024

export interface UploadOptions {
  /** Bytes past which the upload is cut with 413. */
  maxBytes: number
  tooLargeDetail: string
  /** The size the client declared, when it did (Content-Length); picks inline or threaded. */
  expectedBytes?: number
  /** Threads to fan out to; none means inline always. */
  threads?: HashThreads
  /** Free each chunk once hashed (release.ts): for a raw request body. */
  release?: boolean
}

export interface UploadDigests {
  size: number
  /** Raw digest per canonical algorithm name. */
  digests: Map<string, Uint8Array>
}

/**
 * Inline for small or single-digest uploads; threaded when several digests meet a large upload, and
 * for any content hash unless the upload is declared small. Content hashes go with the digests to
 * the threads (the sink is then a `ContentHashingSink`), even alone or on an upload of unknown
 * length, since some are slow; inline (declared small, or no thread free), the sink leaves them to
 * the caller (withInlineStage, sink.ts). The similarity hashes (ssdeep, TLSH) are slow the same way
 * (tens of MiB/s, where OpenSSL's digests run at hundreds), so they go to the threads alone too.
 */
export async function chooseSink(algorithms: readonly DigestAlgorithm[], options: Pick<UploadOptions, 'expectedBytes' | 'threads'>, contentHashes: readonly ThreadContentHash[] = []): Promise<DigestSink | ContentHashingSink> {
  const declaredSmall = options.expectedBytes !== undefined && options.expectedBytes < PARALLEL_MIN_BYTES
  const slow = contentHashes.length > 0 || algorithms.some((algorithm) => algorithm.kind === 'similarity')
  const worthThreads = slow ? !declaredSmall : !declaredSmall && options.expectedBytes !== undefined && algorithms.length >= 2
  const threaded = worthThreads ? options.threads?.sink(algorithms, contentHashes) ?? null : null
  return threaded ?? inlineSink(algorithms)
}

/** Whether `sink` computes the content hashes it was offered (on threads) rather than leaving them to the caller. */
export function computesContentHashes(sink: DigestSink): sink is ContentHashingSink {
  return 'contentHashes' in sink
}

export async function hashUpload(source: Readable, algorithms: readonly DigestAlgorithm[], options: UploadOptions, sink?: DigestSink): Promise<UploadDigests> {
  const hashers = sink ?? await chooseSink(algorithms, options)
  try {
    const size = await pump(source, (chunk) => hashers.write(chunk), options)
    return { size, digests: await hashers.finish() }
  } catch (error) {
    hashers.abort()
    throw error
  }
}
