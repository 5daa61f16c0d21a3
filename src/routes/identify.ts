import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { identify } from '../identify/engine.js'
import { problems } from '../problem.js'
import { errorResponses } from './schemas.js'

/** Inputs longer than this are 413: no hash format is anywhere near it. */
export const MAX_IDENTIFY_BYTES = 64 * 1024

const Match = Type.Object({
  algorithm: Type.String({ description: 'Canonical name; the registry name where /api/verify accepts the format' }),
  displayName: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: 'Probability in [0, 1]; a response\'s confidences sum to at most 1' }),
  hashcat: Type.Union([Type.Integer(), Type.Null()], { description: 'hashcat mode (-m)' }),
  john: Type.Union([Type.String(), Type.Null()], { description: 'John the Ripper --format' }),
  category: Type.String(),
  description: Type.String(),
  params: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]))),
  verifiable: Type.Boolean({ description: 'True where POST /api/verify accepts this format' }),
})

export const identifyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/identify', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['identify'],
      summary: 'The likely formats of a hash string, ranked by confidence',
      body: Type.Object({ hash: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      response: {
        200: Type.Object({ length: Type.Integer(), matches: Type.Array(Match) }),
        ...errorResponses,
      },
    },
    preValidation: async (request) => {
      const body = request.body as { hash?: unknown } | undefined
      if (typeof body?.hash === 'string' && Buffer.byteLength(body.hash) > MAX_IDENTIFY_BYTES) {
        throw problems.tooLarge(`hash is longer than ${MAX_IDENTIFY_BYTES} bytes; no hash format is that long`)
      }
    },
  }, async (request) => identify(request.body.hash))
}
