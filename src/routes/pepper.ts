import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { rewrap } from '../domain/rewrap.js'
import { auditKeyed } from '../plugins/audit.js'
import { errorResponses } from './schemas.js'

export const pepperRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/pepper/rewrap', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['hashing'],
      summary: 'Move a stored password hash to the current pepper key, without the password',
      description: 'A `$pepper$` hash under an older key that is still configured is decrypted and encrypted again under the current key; one already under it comes back ' +
        'unchanged (`changed: false`); an unpeppered password hash in a format hashd reads is peppered. Nothing is rehashed: the cost parameters stay as they are ' +
        '(verify-and-upgrade raises them at login). 422 without pepper keys, for a key no longer configured (unknown-pepper-key), and for bare digests and anything else that is not a password hash in a format hashd reads (not-a-password-hash).',
      body: Type.Object({
        hash: Type.String({ minLength: 1, maxLength: 4096, description: 'The stored hash' }),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          hash: Type.String({ description: 'The hash to store: under the current pepper key' }),
          pepperKey: Type.String({ description: 'The current pepper key id', examples: ['k2'] }),
          previousPepperKey: Type.Union([Type.String(), Type.Null()], { description: 'The key the hash was under; null when it was not peppered', examples: ['k1'] }),
          changed: Type.Boolean({ description: 'false when the hash was already under the current key' }),
        }),
        ...errorResponses,
      },
    },
  }, async (request) => {
    if (app.audit === null) return rewrap(app.passwords, request.body.hash)
    return auditKeyed(app, request, { operation: 'pepper.rewrap', inputs: { hash: request.body.hash } }, async () => {
      const result = await rewrap(app.passwords, request.body.hash)
      // The key it used, for the line (and the access line), as hashing with a pepper notes it.
      app.keyContext(request).used('pepper', 'pepper', result.pepperKey)
      return result
    })
  })
}
