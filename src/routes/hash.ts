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
      description: 'Digests honour `encoding`; password hashes (bcrypt, argon2, scrypt, pbkdf2, …) return their standard string with a fresh random salt. ' +
        'When the server has pepper keys (PEPPER_KEYS_FILE), password hashes are peppered with the current key by default: the finished hash is encrypted ' +
        '(AES-256-GCM) into a `$pepper$v=1,k=<key id>,s=<scheme>$<nonce>$<ciphertext>` string, and `pepperKey` names the key; `"pepper": false` opts out. ' +
        'bcrypt refuses inputs over 72 bytes (422 input-too-long); bcrypt-sha256 takes any length.',
      body: Type.Object({
        input: Type.String({ description: 'The text (or, with inputEncoding, binary data) to hash' }),
        algorithm: Type.Optional(AlgorithmName('sha256', 'Algorithm to use.')),
        encoding: Type.Optional(OutputEncoding),
        inputEncoding: Type.Optional(InputEncoding('input')),
        options: Type.Optional(Type.Record(Type.String({ maxLength: 32 }), Type.Integer(), {
          maxProperties: 8,
          description: 'Per-family parameters. bcrypt {cost}; argon2 {memoryCost, timeCost, parallelism, hashLength, saltLength}; scrypt {N, r, p, keyLength, saltLength}; pbkdf2 {iterations, keyLength, saltLength}; XOFs {outputLength} (bytes). GET /api/algorithms gives defaults and bounds.',
        })),
        pepper: Type.Optional(Type.Boolean({
          description: 'Password hashes only. Default: true when the server has pepper keys, false otherwise. true on a server without keys is 422 no-pepper-keys.',
        })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          hash: Type.String(),
          length: Type.Integer({ description: 'hash.length' }),
          processingTimeMs: ProcessingTime,
          algorithm: CanonicalAlgorithm,
          encoding: Type.String({ description: 'hex, base64, base64url, or standard for formats with their own text form' }),
          pepperKey: Type.Optional(Type.String({ description: 'The id of the pepper key the hash is encrypted under (peppered password hashes only)', examples: ['k2'] })),
        }),
        ...errorResponses,
      },
    },
  }, (request, reply) => hash(engine, request.body, () => clientGone(reply), app.passwords))
}
