/**
 * A JSON request body read as Fastify's own parser reads it (secure-json-parse with `__proto__`
 * and `constructor.prototype` refused), after a UTF-8 check (RFC 8259 §8.1), with the same
 * problems. plugins/body.ts runs it on the event loop for small bodies and, through the worker pool
 * (workers/tasks.ts), for large ones: parsing 8 MiB of JSON escapes (`\n` four million times)
 * holds a thread for a quarter of a second, which the event loop must not be.
 */
import { isUtf8 } from 'node:buffer'
import secureJsonParse from 'secure-json-parse'
import { problems } from '../problem.js'

/** Only on the error path: tells a syntax error from a body refused for its keys. */
function isValidJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** The parsed body; throws the problem Fastify's parser and the body plugin would give. */
export function parseJsonBody(body: Uint8Array): unknown {
  // buffer.isUtf8 validates without decoding; the text is then made once.
  if (!isUtf8(body)) throw problems.validation('The request body is not valid UTF-8')
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
  try {
    return secureJsonParse(text, null, { protoAction: 'error', constructorAction: 'error' })
  } catch {
    if (isValidJson(text)) {
      // secure-json-parse refused valid JSON: it carries __proto__ or constructor.prototype.
      throw problems.validation('The body contains a prototype-pollution key (__proto__, or constructor with prototype); hashd refuses such bodies',
        [{ pointer: '/body', message: 'forbidden key' }])
    }
    throw problems.validation('The request body is not valid JSON')
  }
}
