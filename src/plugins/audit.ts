/**
 * The audit log for the app (src/audit/): opened at start (an AUDIT_LOG that cannot be opened, or
 * an AUDIT_KEY that cannot be read, is a ConfigError and the server does not start), checked for a
 * rotation on SIGHUP, closed with a last checkpoint when the app closes. Each reload of the key
 * ring that puts new keys in force is a `keys.reload` line. `app.audit` is null
 * without AUDIT_LOG. The keyed routes call `auditKeyed` around their work.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { AuditLog, type AuditEvent } from '../audit/index.js'
import { openAuditKey } from '../audit/key.js'
import type { Config } from '../config.js'
import { knownProblem } from '../problem.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The audit log (AUDIT_LOG), or null without one. */
    audit: AuditLog | null
  }
  interface FastifyRequest {
    /** A keyed operation's event, written in onSend before its answer leaves (auditKeyed); null for others. */
    auditEvent: PendingEvent | null
  }
}

interface PendingEvent {
  event: Omit<AuditEvent, 'outcome' | 'requestId' | 'apiKeyId'>
  /** Set when the operation has ended (an error's kind); unset, the status decides. */
  outcome?: string
  /** Written (or tried): an answer replaced by the 503 goes out without a second line. */
  recorded: boolean
}

async function auditPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const config = options.config.audit
  if (config === null) {
    app.decorate('audit', null)
    return
  }
  const key = await openAuditKey(config.key, app.keyRing.pkcs11)
  const audit = new AuditLog({ ...config, key, log: app.log })
  await audit.start()
  app.decorate('audit', audit)
  app.decorateRequest('auditEvent', null)
  // The line of a keyed operation is written before its answer leaves, whichever way it leaves:
  // returned by the route, sent by the batch writer (routes/batch.ts), or as a problem. A line
  // that cannot be written fails the answer (fail closed: the error handler sends the 503).
  app.addHook('onSend', (request, reply, payload, done) => {
    const pending = request.auditEvent
    if (pending === null || pending.recorded) { done(null, payload); return }
    pending.recorded = true
    const { event } = pending
    const used = keyUsed(request)
    // Settled in the run that writes the line (audit/writer.ts), so the answer leaves in the turn
    // it would have left in without the log; a callback, as a promise per answer costs more.
    audit.recordThen({
      operation: event.operation, requestId: String(request.id), apiKeyId: request.apiKey?.name,
      keyName: used === null ? event.keyName : used.keyName, keyVersion: used === null ? event.keyVersion : used.keyVersion,
      outcome: pending.outcome ?? (reply.statusCode < 400 ? 'ok' : `status-${reply.statusCode}`), inputs: event.inputs, details: event.details,
    }, (error) => { if (error === null) done(null, payload); else done(error as Error) })
  })
  app.log.info({ audit: { sink: config.sink.kind === 'file' ? config.sink.path : 'stdout', keyId: key.id, fail: config.fail } }, 'audit log on')
  // Every change of the key ring: which file, and what is in force now (names, versions, counts).
  app.keyRing.onChange((change) => {
    void audit.record({ operation: 'keys.reload', outcome: 'ok', details: { source: change.source, ...change.summary } }).catch(() => {})
  })
  const onHangup = (): void => { void audit.checkRotation() }
  process.on('SIGHUP', onHangup)
  app.addHook('onClose', async () => {
    process.off('SIGHUP', onHangup)
    await audit.close()
  })
}

/** The kind of problem an operation ended in (`unknown-key`, `forbidden`), for a line's outcome. */
function outcomeOf(error: unknown): string {
  const problem = knownProblem(error)
  if (problem === null) return 'error'
  return problem.type.startsWith('urn:hashd:problem:') ? problem.type.slice('urn:hashd:problem:'.length) : `status-${problem.status}`
}

/** The first key a request used (`hmac:orders:v3`, `pepper:k2`: plugins/keys.ts), as the line's keyName and keyVersion. */
function keyUsed(request: FastifyRequest): { keyName: string, keyVersion: number | string } | null {
  const use = request.keyUses?.[0]
  if (use === undefined) return null
  const hmac = /^hmac:(.+):v(\d+)$/.exec(use)
  if (hmac) return { keyName: hmac[1]!, keyVersion: Number(hmac[2]) }
  const pepper = /^pepper:(.+)$/.exec(use)
  return pepper ? { keyName: 'pepper', keyVersion: pepper[1]! } : null
}

/**
 * Runs a keyed operation and has its line written before its answer leaves (the onSend hook
 * above): with AUDIT_FAIL=closed, a line that cannot be written turns the answer, whatever it was,
 * into 503 audit-unavailable, so no result of a keyed operation is given without its record.
 * `outcome` names a result (`valid`, `invalid`); by default `ok`. Without an audit log, just runs it.
 */
export function auditKeyed<R>(
  app: FastifyInstance, request: FastifyRequest, event: PendingEvent['event'],
  run: () => R | Promise<R>, outcome: (result: R) => string = () => 'ok',
): R | Promise<R> {
  if (app.audit === null) return run()
  const pending: PendingEvent = { event, recorded: false }
  request.auditEvent = pending
  const failed = (error: unknown): never => {
    pending.outcome = outcomeOf(error)
    throw error
  }
  const succeeded = (result: R): R => {
    // A batch's answer is sent inside run() (routes/batch.ts), its line written already.
    if (!pending.recorded) pending.outcome = outcome(result)
    return result
  }
  // A result made at once is returned at once, as the route would without an audit log: the line
  // is written in onSend all the same, and a promise here would only cost the request a turn.
  let result: R | Promise<R>
  try {
    result = run()
  } catch (error) {
    return failed(error)
  }
  return result instanceof Promise ? result.then(succeeded, failed) : succeeded(result)
}

/**
 * Runs an operation that may use a pepper key (a password hash made or verified: the server's keys,
 * the request's `pepper` and the stored hash's form decide), and has its line written when it did,
 * before its answer leaves, as auditKeyed does. Whether a key was used is known only once it has
 * run (plugins/keys.ts notes each use), so the line is set up then. The password is not in the
 * line in any form, not even as a MAC: anyone holding the audit key could test guesses against it.
 */
export async function auditIfPeppered<R>(
  app: FastifyInstance, request: FastifyRequest, operation: string,
  run: () => R | Promise<R>, outcome: (result: R) => string = () => 'ok',
): Promise<R> {
  if (app.audit === null) return run()
  const peppered = (): boolean => request.keyUses?.some((use) => use.startsWith('pepper:')) ?? false
  try {
    const result = await run()
    if (peppered()) request.auditEvent = { event: { operation }, outcome: outcome(result), recorded: false }
    return result
  } catch (error) {
    if (peppered()) request.auditEvent = { event: { operation }, outcome: outcomeOf(error), recorded: false }
    throw error
  }
}

export default fp(auditPlugin, { name: 'audit', dependencies: ['keys'] })
