import { clientGone } from './client-gone.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Config } from '../config.js'
import { checkVerifyBatchTop, verify, type VerifyRequest, type VerifyResult } from '../domain/verify.js'
import type { Engine } from '../domain/engine.js'
import { auditIfPeppered } from '../plugins/audit.js'
import { BATCH_DESCRIPTION, batchableBody, batchableResponse, batchBodyLimit, batchOrSingle } from './batch.js'
import { AlgorithmName, CanonicalAlgorithm, encodedFieldRule, errorResponsesWith, InputEncoding, passwordNamesFor, ProcessingTime, Screened } from './schemas.js'

/**
 * `"upgrade": true` or a password algorithm at the top of a batch is 422 password-in-batch for the
 * whole batch (domain/verify.ts `checkVerifyBatchTop`): for the document only, on the batch's branch.
 */
const passwordWorkAtTop = { properties: { algorithm: { not: { enum: passwordNamesFor('verify') } }, upgrade: { const: false } } }

export const verifyRoute: FastifyPluginAsyncTypebox<{ engine: Engine, config: Config }> = async (app, { engine, config }) => {
  const VerifyAnswer = Type.Object({
    match: Type.Boolean(),
    algorithm: Type.Union([CanonicalAlgorithm, Type.Null()], { description: 'The algorithm checked or detected; null when no candidate matched' }),
    format: Type.Optional(Type.String({ description: 'The variant read from the hash, e.g. $2y$ or Django' })),
    processingTimeMs: ProcessingTime,
    rehashRecommended: Type.Boolean({ description: 'The input matched, but the hash uses a weak scheme or parameters below current OWASP minimums' }),
    reason: Type.Optional(Type.String()),
    warnings: Type.Array(Type.String()),
    pepperKey: Type.Optional(Type.String({ description: 'The pepper key id a peppered hash names' })),
    newHash: Type.Optional(Type.String({ description: 'With upgrade: the replacement hash to store, under the current password policy and pepper key. Absent on a mismatch and when nothing needs upgrading' })),
    screening: Type.Optional({ ...Screened, description: 'With upgrade and a match of a text input, PASSWORD_SCREENING=warn or reject: what screening of the password against the lists found (not the length rules). '
      + 'Under reject an unacceptable password gets no newHash (a warning says so): have the user choose a new one' }),
  })
  app.post('/api/verify', {
    config: { accepts: 'application/json' },
    bodyLimit: batchBodyLimit(config),
    schema: {
      tags: ['hashing'],
      summary: 'Check an input against an existing digest or password hash',
      description: 'Without `algorithm`, the format is read from the hash (password-hash prefixes), and bare hex/base64 digests are tried against every digest of their length. Comparisons are constant-time; cost parameters inside the hash are checked against the server caps before any work. Named `mysql41` also reads its 40 hex digits without the leading `*`; named `ntlm` (or `nthash`) also reads the crypt(3) form `$3$$<32 hex>`, verified as `nt-crypt`. '
        + 'Rules the schema cannot state: a hash malformed for the named (or detected) algorithm is 422 urn:hashd:problem:malformed-hash; '
        + 'cost parameters in the hash above this server\'s caps are 422 urn:hashd:problem:cost-above-cap; a hash that is neither a known format nor a hex/base64 digest is 422 urn:hashd:problem:unrecognized-hash; '
        + 'a wrapper no single input verifies (go.sum h1:, S3 multipart ETag) is 422 urn:hashd:problem:verify-not-supported. '
        + 'An `input` not valid in its inputEncoding (the body\'s `allOf` states the pattern for hex and base64) is 400 (/body/input). '
        + 'A bare digest whose length no algorithm produces is `match: false` with a warning saying so. '
        + 'Peppered hashes (`$pepper$…`) are opened with the key they name: a key that is not current still matches, with rehashRecommended and a reason naming the key; '
        + 'a key the server no longer has is 422 unknown-pepper-key with `pepperKey`; a string that does not open under its key is 422 pepper-key-mismatch. With `"upgrade": true`, a match that should be rehashed also carries `newHash`, '
        + 'made under the server\'s password policy (GET /api/password-policy) and current pepper key; a bare digest that matches is always upgraded, since it is not a password hash. '
        + 'A text input is tried in its NFKC form first, then as given: a password hash made from the unnormalized form still matches, with rehashRecommended, and its newHash is of the NFKC form.'
        + BATCH_DESCRIPTION('check', config.batch) + ' Digests only: a password hash, a peppered hash or upgrade is 422 password-in-batch for its item; at the top, `"upgrade": true` or a password algorithm '
        + 'is 422 password-in-batch for the whole batch (the body\'s batch branch states it).',
      body: batchableBody({
        input: Type.String(),
        hash: Type.String({ minLength: 1, maxLength: 4096 }),
        algorithm: Type.Optional(AlgorithmName('verify', undefined, 'Algorithm of the hash; omit to detect it.')),
        inputEncoding: Type.Optional(InputEncoding('input')),
        upgrade: Type.Optional(Type.Boolean({ default: false, description: 'On a match that should be rehashed, also return newHash (passlib\'s verify_and_update)' })),
      }, config.batch, { shared: [encodedFieldRule('input', 'inputEncoding')], batch: [passwordWorkAtTop] }),
      response: {
        200: batchableResponse(VerifyAnswer),
        ...errorResponsesWith({
          503: 'a peppered hash opened under a pepper key, AUDIT_FAIL=closed and the audit log cannot be written (urn:hashd:problem:audit-unavailable)',
          400: 'an input not valid in its inputEncoding (/body/input)',
          501: 'a crypt(3) format whose libxcrypt method is missing on this machine',
          422: 'a hash malformed for its algorithm (malformed-hash), with costs above the caps (cost-above-cap), of no known form (unrecognized-hash), or a wrapper no input verifies (verify-not-supported); a peppered hash under a key this server does not have (unknown-pepper-key) or that does not open under its key (pepper-key-mismatch); an input a crypt(3) scheme cannot take (input-not-representable, input-too-long); bytes that are not UTF-8 to an algorithm defined on text (not-text); a batch whose top asks for password work (password-in-batch: upgrade true or a password algorithm)',
        }),
      },
    },
  }, async (request, reply) => {
    const body = request.body as VerifyRequest & { items?: unknown[] }
    if (body.items === undefined && request.bodyBytes <= config.bodyLimit) {
      const run = () => verify(engine, body, () => clientGone(reply), app.passwords, app.screening, { keys: { used: (...use) => app.keyContext(request).used(...use) } })
      // A peppered hash opened under a pepper key is a keyed operation: the audit log records it.
      return app.audit === null ? run() : auditIfPeppered(app, request, 'password.verify', run, (result) => result.match ? 'match' : 'mismatch')
    }
    return batchOrSingle<VerifyRequest, VerifyResult>(app, config, request, reply, (item) => verify(engine, item, undefined, app.passwords, app.screening, { batch: true }), 'verify',
      { encodedFields: [['input', 'inputEncoding']], checkTop: checkVerifyBatchTop })
  })
}
