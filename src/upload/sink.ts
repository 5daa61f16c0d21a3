/**
 * The hashing stage of the upload pipeline (source → hashers → encoding): a `DigestSink` takes the
 * upload's bytes chunk by chunk, in order, and gives each requested algorithm's digest as raw bytes
 * at the end. Two kinds exist: `inlineSink` hashes on the calling thread; `HashThreads.sink`
 * (threads.ts) spreads the hashers over worker threads, and may take content hashes too
 * (`ContentHashingSink`). Both feed every hasher every chunk in order.
 */
import type { DigestAlgorithm, Hasher } from '../algorithms/types.js'

export interface DigestSink {
  /**
   * Feeds one chunk. Returns undefined when the next chunk may follow at once, or a promise that
   * settles when the hashers have room again (backpressure: the caller stops reading until then).
   * The chunk may be reused by the caller once this returns.
   */
  write(chunk: Uint8Array): Promise<void> | undefined
  /** Ends the input: every algorithm's digest, raw bytes, by canonical name, in request order. */
  finish(): Promise<Map<string, Uint8Array>>
  /** Drops the work (client gone, limit cut, another hasher failed); frees what it holds at once. */
  abort(): void
}

/** Hashes on the calling thread: for small uploads, where a thread hop costs more than it saves. */
export async function inlineSink(algorithms: readonly DigestAlgorithm[]): Promise<DigestSink> {
  const hashers: Array<[string, Hasher]> = await Promise.all(
    algorithms.map(async (algorithm): Promise<[string, Hasher]> => [algorithm.name, await algorithm.create(algorithm.outputBytes)]))
  return {
    write(chunk) {
      for (const [, hasher] of hashers) hasher.update(chunk)
      return undefined
    },
    async finish() {
      return new Map(hashers.map(([name, hasher]) => [name, hasher.digest()]))
    },
    abort() {
      hashers.length = 0
    },
  }
}

/**
 * A content hash as a hash thread receives it: its registry entry's canonical name
 * (src/content-hashes) and its parameters, already checked and resolved on the main thread
 * (domain/content-hashes.ts), as plain values that survive a thread's message.
 */
export interface ThreadContentHash {
  name: string
  params: Record<string, string | number>
  /**
   * The name its result goes by, when not `name`: the same entry with other parameters runs beside
   * it (/api/filehash/verify tries several part sizes at once). Results are keyed by `key ?? name`.
   */
  key?: string
  /** One share of the entry split by data across the threads (content-hashes/segments.ts); set by threads.ts only. */
  share?: { index: number, count: number }
}

/** A sink that also computes content hashes (the threaded one): their text by canonical name. */
export interface ContentHashingSink extends DigestSink {
  /** Each content hash's text by its `key ?? name`, once `finish` has settled. */
  contentHashes(): ReadonlyMap<string, string>
}

/** Work fed beside a sink's, on the calling thread: the content hashes' stage (domain/content-hashes.ts). */
export interface InlineStage {
  /** Synchronous; copies whatever it keeps, so the chunk may be reused or freed once it returns. May throw a problem. */
  write(chunk: Uint8Array): void
  /** The input has ended: called before the sink finishes, so a problem found here comes first. */
  end(): void
}

/**
 * `sink`, with `stage` fed every chunk first, on the calling thread. The stage always holds the
 * file to a size promised up front (`size`, or the raw body's Content-Length) here, before any
 * hasher sees a byte past it, so that problem names the field the size came from.
 *
 * Where the content hashes themselves run: on the hash threads (pipeline.ts, `chooseSink`) unless
 * the upload is declared smaller than PARALLEL_MIN_BYTES or no thread is free, balanced across the
 * lanes with the digests (threads.ts), each thread making its hashers from the registry by name and
 * resolved parameters; the stage here then hashes nothing. One content hash alone, or an upload of
 * unknown length (chunked, or a form's part), still goes to a thread: some content hashes are slow
 * (TTH's Tiger, eMule's AICH) and must not hold the event loop for a large upload. When the upload
 * stays inline, the stage hashes them here, on the event loop, beside the inline digests: a small
 * upload, or every thread busy with other uploads (then each chunk's work is bounded by the
 * socket's chunk, and the socket's backpressure paces the upload).
 */
export function withInlineStage(sink: DigestSink, stage: InlineStage): DigestSink {
  return {
    write(chunk) {
      stage.write(chunk)
      return sink.write(chunk)
    },
    async finish() {
      stage.end()
      return sink.finish()
    },
    abort: () => sink.abort(),
  }
}
