/**
 * The upload routes' refusal before a byte of the body is read (their `onRequest` hook): a body that
 * declares more than the route takes is 413 and the connection is closed after the answer rather
 * than the body read and dropped; a multipart body whose boundary RFC 2046 does not allow is 400.
 * Shared by /api/filehash, /api/checksums and /api/filehash/verify; drain.ts is the refusal after
 * some of the body was read.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { problems } from '../problem.js'
import { boundaryOf, isFormData, MAX_BOUNDARY } from './multipart.js'

/** The body's declared length (Content-Length), when it has one. */
export function declaredLength(request: FastifyRequest): number | undefined {
  const declared = Number(request.headers['content-length'] ?? NaN)
  return Number.isFinite(declared) ? declared : undefined
}

export const isMultipart = (request: FastifyRequest): boolean => isFormData(request.headers['content-type'])

export interface EarlyRefusal {
  /** The largest body the route takes, which may depend on whether it is a form (its envelope). */
  maxDeclaredBytes: number | ((multipart: boolean) => number)
  /** The 413's detail for a body that declares `declared` bytes. */
  tooLargeDetail: (declared: number) => string
}

export function refuseEarly({ maxDeclaredBytes, tooLargeDetail }: EarlyRefusal) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const multipart = isMultipart(request)
    const declared = declaredLength(request)
    const max = typeof maxDeclaredBytes === 'number' ? maxDeclaredBytes : maxDeclaredBytes(multipart)
    if (declared !== undefined && declared > max) {
      // The body is never read: close after the answer instead of reading and discarding it.
      reply.header('connection', 'close')
      throw problems.tooLarge(tooLargeDetail(declared))
    }
    if (!multipart) return
    const boundary = boundaryOf(request.headers['content-type'])
    if (boundary === undefined || boundary.length === 0 || boundary.length > MAX_BOUNDARY) {
      throw problems.validation(`The multipart boundary must be 1 to ${MAX_BOUNDARY} characters (RFC 2046)`)
    }
  }
}
