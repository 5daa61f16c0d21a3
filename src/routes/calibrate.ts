import { clientGone } from './client-gone.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { CALIBRATED, calibrate, CalibrationGate, DEFAULT_ARGON2_MEMORY_KIB, MINIMUM_MEMORY_KIB } from '../domain/calibrate.js'
import type { Engine } from '../domain/engine.js'
import { documentedAs, errorResponsesWith } from './schemas.js'

/**
 * The document's view of the memory floors (calibrate.ts refuses a maxMemoryKiB below them with 422
 * below-minimum): one if/then per scheme that needs memory, so a client or fuzzer reading the
 * document knows the smallest maxMemoryKiB each one takes.
 */
const memoryFloors = Object.entries(MINIMUM_MEMORY_KIB).map(([name, minimum]) => ({
  if: { required: ['algorithm'], properties: { algorithm: { const: name } } },
  then: { properties: { maxMemoryKiB: { minimum } } },
}))

export const calibrateRoute: FastifyPluginAsyncTypebox<{ engine: Engine }> = async (app, { engine }) => {
  const gate = new CalibrationGate(engine.config.calibrateRateLimitMax, engine.config.calibrateRateLimitWindowMs)
  app.post('/api/calibrate', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['hashing'],
      summary: 'Cost parameters whose hashing time on this server is near a target',
      description: 'Measures in the worker pool, under the memory budget, and returns options for POST /api/hash (or PASSWORD_OPTIONS) near targetMs, never below the OWASP ' +
        'Password Storage Cheat Sheet minimums (a warning says when the target is below what they take) and never above the server caps. ' +
        `Supports ${CALIBRATED.join(', ')}. Expensive: server-wide, calibrations run one at a time and at most CALIBRATE_RATE_LIMIT_MAX (default 10) per ` +
        'CALIBRATE_RATE_LIMIT_WINDOW_MS (default 10 minutes), else 429 with Retry-After; a run longer than CALIBRATE_TIMEOUT_MS (default 30 s) is 503. ' +
        `Rules the schema cannot state: a memory-hard scheme whose minimum does not fit this server's caps (MAX_ARGON2_MEMORY_KIB, MAX_SCRYPT_MEMORY_BYTES, MAX_WORK_MEMORY_BYTES) is 422 urn:hashd:problem:below-minimum.`,
      body: documentedAs(Type.Object({
        algorithm: documentedAs(Type.String({
          minLength: 1, maxLength: 64, examples: ['argon2id'],
          description: `One of ${CALIBRATED.join(', ')}. The server also accepts any spelling /api/hash accepts for these (aliases, any case); `
            + 'another algorithm is 400 urn:hashd:problem:algorithm-not-allowed, a name it does not know 400 urn:hashd:problem:unknown-algorithm.',
        }), { enum: [...CALIBRATED], 'x-hashd-case-insensitive': true }),
        targetMs: Type.Integer({ minimum: 10, maximum: 5000, description: 'The hashing time wanted, in milliseconds (OWASP suggests under 1 s; 250–500 ms is common for logins)' }),
        maxMemoryKiB: Type.Optional(Type.Integer({
          minimum: 1024, maximum: 4_194_304,
          description: `Memory one hash may use, in KiB (argon2id, scrypt, yescrypt). Default: argon2id ${DEFAULT_ARGON2_MEMORY_KIB} (RFC 9106 §4), scrypt and yescrypt the server cap. `
            + `At least what the scheme's minimum needs (${Object.entries(MINIMUM_MEMORY_KIB).map(([name, kib]) => `${name} ${kib}`).join(', ')}), else 422 urn:hashd:problem:below-minimum`,
        })),
      }, { additionalProperties: false }), { allOf: memoryFloors }),
      response: {
        200: Type.Object({
          algorithm: Type.String(),
          options: Type.Record(Type.String(), Type.Integer(), { description: 'Every option of the algorithm for POST /api/hash' }),
          targetMs: Type.Integer(),
          measuredMs: Type.Number({ description: 'What hashing with the returned options took on this server: their entry in measurements (the last one, unless a refinement came out further from targetMs and was dropped)' }),
          measurements: Type.Array(Type.Object({ options: Type.Record(Type.String(), Type.Integer()), ms: Type.Number() })),
          warnings: Type.Array(Type.String()),
        }),
        ...errorResponsesWith({ 422: 'a maxMemoryKiB, or caps, below the scheme\'s minimum (below-minimum)' }),
      },
    },
  }, async (request, reply) => {
    const release = gate.enter()
    try {
      return await calibrate(engine, request.body, clientGone(reply))
    } finally {
      release()
    }
  })
}
