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
 * `sink`, with `stage` fed every chunk first. The content hashes run here, on the event loop, even
 * when the digests go to threads: the hash threads are handed plain digest algorithms by name
 * (threads.ts) and would need the content-hash registry, each entry's parameters and a string
 * result carried over, which is a larger change than this one; until then a threaded upload with
 * content hashes uses one more core than the threads for them.
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
