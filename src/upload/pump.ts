/**
 * The source stage of the upload pipeline: a request body read chunk by chunk into a consumer (the
 * hashers, for a raw body; the multipart reader, for a form). The body is paused whenever the
 * consumer asks for it (backpressure), so a slow hasher slows the socket instead of filling
 * memory, and no async iterator sits between the socket and the hashers.
 */
import type { Readable } from 'node:stream'
import { problems } from '../problem.js'
import { releaseChunk } from './release.js'

export interface PumpLimits {
  /** Bytes past which the body is cut with 413. */
  maxBytes: number
  /** Text of the 413 detail. */
  tooLargeDetail: string
  /**
   * Free each chunk's memory once consumed (release.ts): for a request body, whose chunks hold its
   * bytes alone, read by a consumer that copies whatever it keeps. Only while this pump is the
   * source's only reader.
   */
  release?: boolean
}

/**
 * Feeds `source` to `consume`, which may return a promise to have the body paused until it
 * settles. Resolves with the number of bytes read once the stream has ended, every chunk was
 * consumed and `atEnd` (if given) has returned. Rejects (leaving the stream paused, with its
 * listeners removed) on a limit cut (413), on a stream that closes before its end (499: the client
 * went away), on a stream error, or on an error from `consume` or `atEnd`; the caller then aborts
 * its consumer.
 */
export function pump(source: Readable, consume: (chunk: Buffer) => Promise<void> | undefined, limits: PumpLimits, atEnd?: () => void): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let size = 0
    let settled = false
    /** The consumer's wait, while there is one. */
    let pending: Promise<void> | undefined
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
    const consumed = (chunk: Buffer): void => {
      if (limits.release === true && source.listenerCount('data') === 1) releaseChunk(chunk)
    }
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > limits.maxBytes) {
        settle(problems.tooLarge(limits.tooLargeDetail))
        return
      }
      let wait: Promise<void> | undefined
      try {
        wait = consume(chunk)
      } catch (error) {
        settle(error)
        return
      }
      if (wait === undefined) {
        consumed(chunk)
        return
      }
      source.pause()
      pending = wait.then(() => {
        pending = undefined
        if (settled) return
        consumed(chunk)
        source.resume()
      }, settle)
    }
    const onEnd = (): void => {
      // The body has ended: a 'close' now is its normal one, not the client going away.
      source.off('close', onClose)
      const finish = (): void => {
        try {
          atEnd?.()
          settle(null)
        } catch (error) {
          settle(error)
        }
      }
      // 'end' comes once the last chunk is delivered, even while the consumer still waits with
      // that chunk (pausing the body does not hold 'end' back): finish after it.
      if (pending === undefined) finish()
      else void pending.then(finish)
    }
    const onError = (error: Error): void => settle((error as { code?: string }).code === 'ECONNRESET' ? problems.clientClosed() : error)
    // 'close' before 'end': the peer went away mid-body (Node signals it so on IncomingMessage).
    const onClose = (): void => settle(problems.clientClosed())
    source.on('data', onData)
    source.on('end', onEnd)
    source.on('error', onError)
    source.on('close', onClose)
  })
}
