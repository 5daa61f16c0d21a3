/**
 * Request bodies: JSON that must be valid UTF-8 (RFC 8259 §8.1) and free of prototype-pollution
 * keys, and a per-route media-type check so that a JSON route refuses multipart and the upload route
 * refuses JSON with 415 (RFC 9110 §15.5.16). text/plain, which Fastify parses by default, is not taken.
 */
import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { problems } from '../problem.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media type the route's body must have; checked before the body is read. */
    accepts?: 'application/json' | 'multipart/form-data'
  }
}

/** Only on the error path: tells a syntax error from a body refused for its keys. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

async function bodyPlugin(app: FastifyInstance): Promise<void> {
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  // 'error' on both: a body with __proto__ or constructor.prototype is refused, never merged.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // buffer.isUtf8 validates without decoding; the text is then made once.
    if (!isUtf8(body as Buffer)) {
      done(problems.validation('The request body is not valid UTF-8'), undefined)
      return
    }
    const text = (body as Buffer).toString('utf8')
    parseJson(request, text, (error, value) => {
      if (error && isValidJson(text)) {
        // secure-json-parse refused valid JSON: it carries __proto__ or constructor.prototype.
        done(problems.validation('The body contains a prototype-pollution key (__proto__, or constructor with prototype); hashd refuses such bodies',
          [{ pointer: '/body', message: 'forbidden key' }]), undefined)
        return
      }
      done(error, value)
    })
  })

  app.addHook('onRequest', (request, _reply, done) => {
    const accepts = request.routeOptions.config.accepts
    const mediaType = accepts ? (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() : accepts
    if (mediaType !== accepts) {
      done(problems.unsupportedMediaType(`${request.routeOptions.url} takes ${accepts}${mediaType ? `, not ${mediaType.slice(0, 80)}` : '; the request has no Content-Type'}`))
      return
    }
    done()
  })
}

export default fp(bodyPlugin, { name: 'body' })
