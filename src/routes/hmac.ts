import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { hmac } from '../domain/hmac.js'
import type { Engine } from '../domain/engine.js'
import { AlgorithmName, CanonicalAlgorithm, documentedAs, encodedFieldRule, errorResponsesWith, InputEncoding, OutputEncoding, ProcessingTime } from './schemas.js'

export const hmacRoute: FastifyPluginAsyncTypebox<{ engine: Engine }> = async (app, { engine }) => {
  app.post('/api/hmac', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['hashing'],
      summary: 'HMAC (RFC 2104) of a message',
      description: 'Any digest with a defined HMAC; XOFs, checksums and password hashes are 400 urn:hashd:problem:algorithm-not-allowed. '
        + 'A `key` or `message` not valid in its encoding (keyEncoding, inputEncoding; the body\'s `allOf` states the pattern for hex and base64) '
        + 'is 400 with the pointer /body/key or /body/message.',
      // The document also states each field's encoding as a pattern (allOf); the server checks it itself, with the pointer.
      body: documentedAs(Type.Object({
        message: Type.String(),
        key: Type.String({ minLength: 1, description: 'The secret key; never logged' }),
        algorithm: Type.Optional(AlgorithmName('hmac', 'sha256', 'Hash function of the HMAC.')),
        encoding: Type.Optional(OutputEncoding),
        keyEncoding: Type.Optional(InputEncoding('key')),
        inputEncoding: Type.Optional(InputEncoding('message')),
      }, { additionalProperties: false }), { allOf: [encodedFieldRule('message', 'inputEncoding'), encodedFieldRule('key', 'keyEncoding')] }),
      response: {
        200: Type.Object({ hmac: Type.String(), algorithm: CanonicalAlgorithm, encoding: OutputEncoding, processingTimeMs: ProcessingTime }),
        ...errorResponsesWith({ 400: 'a key or message not valid in its encoding, or a key of no bytes (/body/key, /body/message)' }),
      },
    },
  }, async (request) => hmac(engine, request.body))
}
