import { clientGone } from './client-gone.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { CALIBRATED, calibrate, CalibrationGate, DEFAULT_ARGON2_MEMORY_KIB } from '../domain/calibrate.js'
import type { Engine } from '../domain/engine.js'
import { errorResponses } from './schemas.js'

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
        'CALIBRATE_RATE_LIMIT_WINDOW_MS (default 10 minutes), else 429 with Retry-After; a run longer than CALIBRATE_TIMEOUT_MS (default 30 s) is 503.',
      body: Type.Object({
        algorithm: Type.String({ minLength: 1, maxLength: 64, description: `One of ${CALIBRATED.join(', ')} (any spelling /api/hash accepts)`, examples: ['argon2id'] }),
        targetMs: Type.Integer({ minimum: 10, maximum: 5000, description: 'The hashing time wanted, in milliseconds (OWASP suggests under 1 s; 250–500 ms is common for logins)' }),
        maxMemoryKiB: Type.Optional(Type.Integer({
          minimum: 1024, maximum: 4_194_304,
          description: `Memory one hash may use, in KiB (argon2id, scrypt, yescrypt). Default: argon2id ${DEFAULT_ARGON2_MEMORY_KIB} (RFC 9106 §4), scrypt and yescrypt the server cap`,
        })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Object({
          algorithm: Type.String(),
          options: Type.Record(Type.String(), Type.Integer(), { description: 'Every option of the algorithm for POST /api/hash' }),
          targetMs: Type.Integer(),
          measuredMs: Type.Number({ description: 'What hashing with the returned options took on this server: their entry in measurements (the last one, unless a refinement came out further from targetMs and was dropped)' }),
          measurements: Type.Array(Type.Object({ options: Type.Record(Type.String(), Type.Integer()), ms: Type.Number() })),
          warnings: Type.Array(Type.String()),
        }),
        ...errorResponses,
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
