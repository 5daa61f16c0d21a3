import { clientGone } from './client-gone.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { hash } from '../domain/hash.js'
import { AlgorithmName, CanonicalAlgorithm, errorResponses, InputEncoding, OutputEncoding, ProcessingTime } from './schemas.js'

export const hashRoute: FastifyPluginAsyncTypebox<{ engine: import('../domain/engine.js').Engine }> = async (app, { engine }) => {
  app.post('/api/hash', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['hashing'],
      summary: 'Digest or password hash of an input',
      description: 'Digests honour `encoding`; password hashes (bcrypt, argon2, scrypt, pbkdf2, …) return their standard string with a fresh random salt.',
      body: Type.Object({
        input: Type.String({ description: 'The text (or, with inputEncoding, binary data) to hash' }),
        algorithm: Type.Optional(AlgorithmName('sha256', 'Algorithm to use.')),
        encoding: Type.Optional(OutputEncoding),
        inputEncoding: Type.Optional(InputEncoding('input')),
        options: Type.Optional(Type.Record(Type.String({ maxLength: 32 }), Type.Integer(), {
          maxProperties: 8,
          description: 'Per-family parameters. bcrypt {cost}; argon2 {memoryCost, timeCost, parallelism, hashLength, saltLength}; scrypt {N, r, p, keyLength, saltLength}; pbkdf2 {iterations, keyLength, saltLength}; XOFs {outputLength} (bytes). GET /api/algorithms gives defaults and bounds.',
        })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          hash: Type.String(),
          length: Type.Integer({ description: 'hash.length' }),
          processingTimeMs: ProcessingTime,
          algorithm: CanonicalAlgorithm,
          encoding: Type.String({ description: 'hex, base64, base64url, or standard for formats with their own text form' }),
        }),
        ...errorResponses,
      },
    },
  }, (request, reply) => hash(engine, request.body, () => clientGone(reply)))
}
