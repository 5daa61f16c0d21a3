/**
 * The source stage of the upload pipeline: a readable stream (the raw request body, or the file
 * part of a multipart body) fed chunk by chunk into a sink. The stream is paused whenever the sink
 * asks for it (backpressure), so a slow hasher slows the socket instead of filling memory, and no
 * async iterator sits between the socket and the hashers.
 */
import type { Readable } from 'node:stream'
import { problems } from '../problem.js'
import { releaseChunk } from './release.js'
import type { DigestSink } from './sink.js'

export interface PumpLimits {
  /** Bytes past which the upload is cut with 413. */
  maxBytes: number
  /** Text of the 413 detail. */
  tooLargeDetail: string
  /**
   * Free each chunk's memory once the sink has it (release.ts): for a raw request body, whose
   * chunks hold its bytes alone. Only while this pump is the source's only reader.
   */
  release?: boolean
}

/**
 * Resolves with the number of bytes read once the stream has ended and every chunk was handed to
 * the sink. Rejects (leaving the stream paused, with its listeners removed) on a limit cut (413),
 * on a stream that closes before its end (499: the client went away), on a stream error, or on a
 * sink error; the caller then aborts the sink.
 */
export function pump(source: Readable, sink: DigestSink, limits: PumpLimits): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let size = 0
    let settled = false
    const settle = (error: unknown): void => {
      if (settled) return
      settled = true
      source.off('data', onData)
      source.off('end', onEnd)
      source.off('error', onError)
      source.off('close', onClose)
      // A listener stays so a late error (the socket reset after the cut) is not an uncaught one.
      source.on('error', () => {})
      if (error === null) {
        resolve(size)
      } else {
        source.pause()
        reject(error)
      }
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limits.maxBytes) {
        settle(problems.tooLarge(limits.tooLargeDetail))
        return
      }
      let wait: Promise<void> | undefined
      try {
        wait = sink.write(chunk)
      } catch (error) {
        settle(error)
        return
      }
      // The sink has hashed or copied the chunk (its contract).
      if (limits.release === true && source.listenerCount('data') === 1) releaseChunk(chunk)
      if (wait !== undefined) {
        source.pause()
        wait.then(() => { if (!settled) source.resume() }, settle)
      }
    }
    const onEnd = (): void => settle(null)
    const onError = (error: Error): void => settle((error as { code?: string }).code === 'ECONNRESET' ? problems.clientClosed() : error)
    // 'close' before 'end': the peer went away mid-body (Node signals it so on IncomingMessage).
    const onClose = (): void => settle(problems.clientClosed())
    source.on('data', onData)
    source.on('end', onEnd)
    source.on('error', onError)
    source.on('close', onClose)
  })
}
