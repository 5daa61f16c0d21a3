/**
 * Request bodies: JSON that must be valid UTF-8 (RFC 8259 §8.1) and free of prototype-pollution
 * keys, and a per-route media-type check so that a JSON route refuses multipart and the upload route
 * refuses JSON with 415 (RFC 9110 §15.5.16). text/plain, which Fastify parses by default, is not taken.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Engine } from '../domain/engine.js'
import { parseJsonBody } from '../domain/json-body.js'
import { problems } from '../problem.js'

/** '' stands for a request without Content-Type (curl -T sends none). */
type MediaType = 'application/json' | 'multipart/form-data' | 'application/octet-stream' | ''

declare module 'fastify' {
  interface FastifyRequest {
    /** The size of a JSON body as received, in bytes (0 for other bodies). */
    bodyBytes: number
  }
  interface FastifyContextConfig {
    /** The media type the route's body must have; checked before the body is read. */
    accepts?: MediaType | readonly MediaType[]
  }
}

function mediaTypeCheck(accepts: MediaType | readonly MediaType[], url: string) {
  const allowed: readonly string[] = [accepts].flat()
  return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const header = request.headers['content-type']
    // The common case, a bare media type spelt as the route names it, without parsing the header.
    if (header !== undefined && allowed.includes(header)) {
      done()
      return
    }
    const mediaType = (header ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
    if (!allowed.includes(mediaType)) {
      const named = allowed.filter((type) => type !== '')
      done(problems.unsupportedMediaType(`${url} takes ${named.join(' or ')}${mediaType ? `, not ${mediaType.slice(0, 80)}` : '; the request has no Content-Type'}`))
      return
    }
    done()
  }
}

/**
 * A JSON body larger than this is parsed on the worker pool (domain/json-body.ts, the same checks
 * and problems): JSON.parse of 8 MiB (POST /api/identify's limit) holds a thread for 30 ms when it is
 * plain text and a quarter of a second when it is all escapes, while 1 MiB costs a few milliseconds,
 * less than the hop to a thread and back.
 */
export const JSON_INLINE_MAX_BYTES = 1024 * 1024

async function bodyPlugin(app: FastifyInstance, { engine }: { engine: Engine }): Promise<void> {
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  app.decorateRequest('bodyBytes', 0)
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.bodyBytes = (body as Buffer).length
    if ((body as Buffer).length > JSON_INLINE_MAX_BYTES) {
      engine.parseJson(body as Buffer).then((value) => done(null, value), (error: Error) => done(error, undefined))
      return
    }
    // The same reading as the pool's (domain/json-body.ts), on this thread for bodies this small.
    let value: unknown
    try {
      value = parseJsonBody(body as Buffer)
    } catch (error) {
      done(error as Error, undefined)
      return
    }
    done(null, value)
  })

  // The media-type check is added to each route that declares `accepts`, when the route is
  // registered, so requests pay no per-request lookup of their route's options.
  app.addHook('onRoute', (route) => {
    const accepts = route.config?.accepts
    if (accepts === undefined) return
    const check = mediaTypeCheck(accepts, route.url)
    route.onRequest = route.onRequest === undefined ? [check] : [check, ...[route.onRequest].flat()]
  })
}

export default fp(bodyPlugin, { name: 'body' })
