/**
 * A form refused before its end (a bad signature, unknown metadata, found before the file): the
 * rest of a small body is read and dropped, so the client, still sending, reads the 4xx rather
 * than a reset connection; a larger body is cut and the connection closed after the answer.
 * Shared by the form routes (/api/checksums, /api/filehash/verify).
 */
import type { FastifyRequest } from 'fastify'
import { declaredLength } from './early-refusal.js'

/**
 * A refusal before the body's end (a bad signature found at the first file, say) reads and drops
 * the rest of a body declared at most this large, so the client, still sending, gets the 4xx
 * rather than a reset connection; a larger body is cut and the connection closed.
 */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024
const DRAIN_TIMEOUT_MS = 10_000

/** Reads and drops the rest of a small body; false when it is too large, fails or takes too long. */
export async function drain(request: FastifyRequest): Promise<boolean> {
  const raw = request.raw
  if (raw.complete) return true
  const declared = declaredLength(request)
  if (declared === undefined || declared > DRAIN_MAX_BYTES || raw.destroyed) return false
  raw.unpipe()
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => finish(false), DRAIN_TIMEOUT_MS)
    const discard = (): void => {}
    const finish = (drained: boolean): void => {
      clearTimeout(timer)
      raw.off('data', discard)
      raw.off('end', onEnd)
      raw.off('close', onClose)
      resolve(drained)
    }
    const onEnd = (): void => finish(true)
    const onClose = (): void => finish(raw.complete)
    raw.on('data', discard)
    raw.once('end', onEnd)
    raw.once('close', onClose)
    raw.on('error', discard)
    raw.resume()
  })
}
