import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { hmac } from '../domain/hmac.js'
import type { Engine } from '../domain/engine.js'
import { AlgorithmName, CanonicalAlgorithm, errorResponses, InputEncoding, OutputEncoding, ProcessingTime } from './schemas.js'

export const hmacRoute: FastifyPluginAsyncTypebox<{ engine: Engine }> = async (app, { engine }) => {
  app.post('/api/hmac', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['hashing'],
      summary: 'HMAC (RFC 2104) of a message',
      description: 'Any digest with a defined HMAC; XOFs, checksums and password hashes are 400.',
      body: Type.Object({
        message: Type.String(),
        key: Type.String({ minLength: 1, description: 'The secret key; never logged' }),
        algorithm: Type.Optional(AlgorithmName('sha256', 'Hash function of the HMAC.')),
        encoding: Type.Optional(OutputEncoding),
        keyEncoding: Type.Optional(InputEncoding('key')),
        inputEncoding: Type.Optional(InputEncoding('message')),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({ hmac: Type.String(), algorithm: CanonicalAlgorithm, encoding: Type.String(), processingTimeMs: ProcessingTime }),
        ...errorResponses,
      },
    },
  }, async (request) => hmac(engine, request.body))
}
