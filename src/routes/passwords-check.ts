import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { PASSWORD_REQUEST_MAX } from '../config.js'
import { problems } from '../problem.js'
import { ContextWords, errorResponsesWith, problemResponse, Screened } from './schemas.js'

/** 400 for a string that is not well-formed Unicode (a lone surrogate): it has no NFKC form to compare or hash. */
function checkUnicode(password: string, context: readonly string[]): void {
  if (!password.isWellFormed()) throw problems.invalidEncoding('password', 'Unicode (it contains a lone surrogate)')
  const bad = context.findIndex((word) => !word.isWellFormed())
  if (bad !== -1) throw problems.invalidEncoding(`context/${bad}`, 'Unicode (it contains a lone surrogate)')
}

export const passwordsCheckRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/passwords/check', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['passwords'],
      summary: 'Is this password acceptable as a new password? (NIST SP 800-63B-4 §3.1.1.2)',
      description: 'Checks a prospective password, whole, against the length policy (PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, in code points after NFKC), '
        + 'the built-in list of common passwords, the organization\'s blocklist (PASSWORD_BLOCKLIST_FILE), the context words given, and the breached-password '
        + 'store (PWNED_STORE). No composition rules. The answer never contains the password. When the store cannot be read, PASSWORD_SCREENING_FAIL decides: '
        + 'open answers without the breach comparison (and says so in `warnings`), closed answers 503 urn:hashd:problem:screening-unavailable.',
      body: Type.Object({
        password: Type.String({ maxLength: PASSWORD_REQUEST_MAX, description: `The prospective password (at most ${PASSWORD_REQUEST_MAX} characters in a request; the policy's maximum is PASSWORD_MAX_LENGTH)` }),
        context: Type.Optional(ContextWords),
      }, { additionalProperties: false }),
      response: {
        200: Screened,
        ...errorResponsesWith({ 400: `a password over ${PASSWORD_REQUEST_MAX} characters; a password or context word that is not well-formed Unicode (/body/password, /body/context/<n>)` }),
        503: problemResponse('Overloaded or shutting down; or the breached-password store cannot be read with PASSWORD_SCREENING_FAIL=closed (screening-unavailable); see Retry-After'),
      },
    },
  }, async (request) => {
    const { password, context = [] } = request.body
    checkUnicode(password, context)
    return app.screening.check(password, context)
  })
}
