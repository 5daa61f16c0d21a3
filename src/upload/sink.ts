/**
 * The hashing stage of the upload pipeline (source → hashers → encoding): a `DigestSink` takes the
 * upload's bytes chunk by chunk, in order, and gives each requested algorithm's digest as raw bytes
 * at the end. Two kinds exist: `inlineSink` hashes on the calling thread; `threadedSink`
 * (threads.ts) spreads the hashers over worker threads. Both feed every hasher every chunk in order.
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

/** Hashers fed beside a sink's, on the calling thread: the content hashes (domain/content-hashes.ts). */
export interface InlineStage {
  /** Synchronous; copies whatever it keeps, so the chunk may be reused or freed once it returns. */
  write(chunk: Uint8Array): void
}

/**
 * `sink`, with `stage` fed every chunk first, on the calling thread. This is where the content
 * hashes run, even when the digests go to the hash threads: a thread is handed plain digest
 * algorithms by name and returns raw digests (threads.ts), while a content hasher is made from a
 * registry entry and its resolved parameters and ends in a string, or in a problem naming a
 * parameter (a size that does not match). Carrying those over would mean a second registry load
 * in every thread (the cost threads.ts avoids for plain OpenSSL digests), new message kinds and
 * their own cost balancing, a larger change than this one. Until then the event loop hashes the
 * content hashes while the threads hash the digests, which still overlaps the two; it makes a
 * large upload with many content hashes bounded by one core.
 */
export function withInlineStage(sink: DigestSink, stage: InlineStage): DigestSink {
  return {
    write(chunk) {
      stage.write(chunk)
      return sink.write(chunk)
    },
    finish: () => sink.finish(),
    abort: () => sink.abort(),
  }
}
