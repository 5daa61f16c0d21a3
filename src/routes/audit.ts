/**
 * GET /api/audit/checkpoint: the audit log's latest checkpoint (src/audit/checkpoint.ts), to be
 * kept outside the log; `npm run audit:verify -- LOG --checkpoint FILE` then shows whether the log
 * was cut short before it. No secret and no input: a count, a hash, a time, the key's id, a MAC.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { problems } from '../problem.js'
import { problemResponse } from './schemas.js'

const CheckpointAnswer = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'Lines of the chain the checkpoint covers (the seq of the last of them)' }),
  head: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 (hex) of that line\'s bytes' }),
  time: Type.String({ description: 'When the checkpoint was made (RFC 3339)' }),
  keyId: Type.String({ description: 'The audit key\'s id (a MAC of a fixed label, not the key)' }),
  mac: Type.String({ pattern: '^hmac-sha256:[0-9a-f]{64}$', description: 'HMAC-SHA-256 under the audit key over the fields above (docs/security.md)' }),
})

export const auditRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/audit/checkpoint', {
    schema: {
      tags: ['meta'],
      summary: 'The audit log\'s latest checkpoint: keep it outside the log to show later that the log was not cut short',
      description: 'Save the answer as a file and pass it to `npm run audit:verify -- LOG --checkpoint FILE`. '
        + 'The server writes a checkpoint at start, every AUDIT_CHECKPOINT_LINES lines and AUDIT_CHECKPOINT_SECONDS after a line; each is also in the process log.',
      response: {
        200: CheckpointAnswer,
        404: problemResponse('No audit log on this server (AUDIT_LOG is not set)'),
        503: problemResponse('The audit log could not write its first checkpoint (urn:hashd:problem:audit-unavailable)'),
      },
    },
  }, async () => {
    const audit = app.audit
    if (audit === null) throw problems.notFoundWhy('This server keeps no audit log (AUDIT_LOG is not set)')
    const checkpoint = audit.checkpoint
    if (checkpoint === null) throw problems.auditUnavailable()
    return checkpoint
  })
}
