/**
 * GET /range/{prefix}: the breached-password store through HIBP's range API, at the same path and
 * with the same answers (https://haveibeenpwned.com/API/v3#SearchingPwnedPasswordsByRange), so an
 * existing client works by changing its base URL. Outside /api, as at api.pwnedpasswords.com. With
 * API_KEYS_FILE it needs a key with the passwords:range scope like every operation (scopes deny by
 * default: src/keys/scopes.ts), and it is rate-limited like every route.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Problem } from '../problem.js'
import { paddedRangeText, rangeText } from '../screening/range.js'
import type { PrefixRecords } from '../screening/store.js'
import { documentedAs, problemResponse } from './schemas.js'

const PREFIX = /^[0-9A-Fa-f]{5}$/
/** The public API's max-age: 31 days. */
const CACHEABLE = 'public, max-age=2678400'

export const rangeRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/range/:prefix', {
    schema: {
      tags: ['passwords'],
      summary: 'Pwned Passwords range API: the hash suffixes under a 5-hex-digit prefix, with their counts',
      description: 'Answers as api.pwnedpasswords.com does: `SUFFIX:COUNT` lines (uppercase hex, 35 digits for SHA-1, 27 for NTLM) separated by CRLF, '
        + 'sorted by suffix. `?mode=ntlm` reads PWNED_NTLM_STORE; the default, `sha1`, PWNED_STORE. The request header `Add-Padding: true` mixes in random suffixes with the count 0 '
        + 'up to 800–1,000 lines, drawn anew for each answer (not cached). Unpadded answers carry an ETag (the store\'s data and the prefix) and are cacheable for 31 days. '
        + 'With API keys on, needs the passwords:range scope. A prefix that is not 5 hex digits is 400 with the public API\'s message; a mode whose store this server does not have is 404.',
      params: Type.Object({
        prefix: documentedAs(Type.String({ minLength: 1, maxLength: 100, description: 'The first 5 hex digits of the SHA-1 (or NTLM) hash, in either case' }), { pattern: '^[0-9A-Fa-f]{5}$' }),
      }),
      querystring: Type.Object({
        mode: Type.Optional(Type.Unsafe<'sha1' | 'ntlm'>({ type: 'string', enum: ['sha1', 'ntlm'], default: 'sha1', description: 'sha1 (PWNED_STORE) or ntlm (PWNED_NTLM_STORE)' })),
      }, { additionalProperties: true }),
      response: {
        200: {
          description: 'The suffixes and counts; Content-Type text/plain',
          content: { 'text/plain': { schema: { type: 'string', pattern: '^(?:[0-9A-F]{27}(?:[0-9A-F]{8})?:\\d+(?:\\r\\n|$))*$' } } },
          headers: {
            'Cache-Control': { type: 'string', description: 'public, max-age=2678400 unpadded; no-store padded' },
            ETag: { type: 'string', description: 'Unpadded answers: names the store\'s data, the mode and the prefix' },
          },
        },
        304: { description: 'Not Modified: If-None-Match named this answer\'s ETag' },
        400: problemResponse('The prefix is not 5 hex digits, or mode is neither sha1 nor ntlm'),
        404: problemResponse('This server has no store for the mode asked (PWNED_STORE, PWNED_NTLM_STORE)'),
        503: problemResponse('Overloaded or shutting down, or the store cannot be read; see Retry-After'),
      },
    },
  }, (request, reply) => {
    const { prefix } = request.params
    if (!PREFIX.test(prefix)) {
      throw new Problem(400, 'urn:hashd:problem:validation', 'Invalid request', 'The hash prefix was not in a valid format: expected 5 hexadecimal characters',
        { extensions: { errors: [{ pointer: '/params/prefix', message: 'must be 5 hex digits' }] } })
    }
    const mode = request.query.mode ?? 'sha1'
    const store = app.screening.storeOf(mode)
    if (store === null) {
      throw new Problem(404, 'about:blank', 'Not Found', `This server has no ${mode === 'sha1' ? 'SHA-1' : 'NTLM'} breached-password store (${mode === 'sha1' ? 'PWNED_STORE' : 'PWNED_NTLM_STORE'} is not set)`)
    }
    const padding = request.headers['add-padding']
    const padded = typeof padding === 'string' && padding.trim().toLowerCase() === 'true'
    const upper = prefix.toUpperCase()
    reply.header('access-control-allow-origin', '*').header('vary', 'Add-Padding')
    let etag: string | undefined
    if (!padded) {
      etag = `"${store.id}-${mode}-${upper}"`
      reply.header('etag', etag).header('cache-control', CACHEABLE).header('last-modified', store.lastModified)
      if (request.headers['if-none-match']?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.code(304).send()
    } else {
      reply.header('cache-control', 'no-store')
    }
    const answer = (records: PrefixRecords) => reply.type('text/plain').send(padded ? paddedRangeText(records) : rangeText(records))
    // Records in the page cache are answered on this tick, without a promise; the rest once
    // libuv's pool has read them.
    const index = Number.parseInt(upper, 16)
    const cached = store.prefixNow(index)
    if (cached !== null) {
      answer(cached)
      return
    }
    return store.prefix(index).then(answer, () => {
      throw new Problem(503, 'about:blank', 'Service Unavailable', 'The breached-password store could not be read; retry shortly', { headers: { 'retry-after': '5' } })
    })
  })
}
