/**
 * The audit log (AUDIT_LOG): the one thing that writes it. Routes and the key ring hand it events
 * (`record`); it turns each input into its `hmac-sha256:` form, never writing one in the clear,
 * and passes the line to the writer (writer.ts). With AUDIT_FAIL=closed (the default) a line that
 * cannot be written is the caller's 503 audit-unavailable, so nothing keyed is answered without a
 * record, as Vault's audit devices do; with `open` the failure is logged and the caller goes on.
 *
 * Files: key.ts (the audit key behind one seam), line.ts (the line format and chain),
 * checkpoint.ts, writer.ts (append, backpressure, fsync, rotation, crash recovery), verify.ts
 * (what `npm run audit:verify` runs).
 */
import { problems } from '../problem.js'
import type { Checkpoint } from './checkpoint.js'
import type { AuditKey } from './key.js'
import { inputHash, LINE_OWN_NAMES } from './line.js'
import { AuditWriter, type AuditProcessLog, type AuditSink, type AuditWriterStatus } from './writer.js'

export type { AuditKey } from './key.js'
export type { Checkpoint } from './checkpoint.js'
export { loadAuditKey } from './key.js'

export interface AuditEvent {
  /** What was done: `hmac`, `hmac.verify`, `keys.reload`, … */
  operation: string
  /** `ok`, `valid`, `invalid`, or the problem's kind (`unknown-key`, `forbidden`, …). */
  outcome: string
  requestId?: string
  /** The API key's name from API_KEYS_FILE (never the key); absent without one. */
  apiKeyId?: string
  keyName?: string
  keyVersion?: number | string
  /** Inputs by field name, in the clear: each is written as its HMAC under the audit key. */
  inputs?: Record<string, string>
  /** Anything else worth keeping that is no secret and no input (a batch's item count, a reload's cause). */
  details?: Record<string, string | number | boolean | null>
}

export interface AuditOptions {
  sink: AuditSink
  key: AuditKey
  fail: 'closed' | 'open'
  queueMax: number
  checkpointLines: number
  checkpointSeconds: number
  log: AuditProcessLog
}

/** An event's fields in the order its line gives them (absent ones are left out of the JSON). */
function lineFields(event: AuditEvent, inputs: Record<string, string> | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    requestId: event.requestId, apiKeyId: event.apiKeyId, operation: event.operation,
    keyName: event.keyName, keyVersion: event.keyVersion, outcome: event.outcome, inputs,
  }
  return event.details === undefined ? fields : Object.assign(fields, event.details)
}

export class AuditLog {
  readonly key: AuditKey
  readonly fail: 'closed' | 'open'
  readonly #writer: AuditWriter

  constructor(options: AuditOptions) {
    this.key = options.key
    this.fail = options.fail
    this.#writer = new AuditWriter(options)
  }

  /** The last write failed and none has succeeded since. */
  get failing(): boolean { return this.#writer.status.failing }

  get status(): AuditWriterStatus { return this.#writer.status }

  /** The latest checkpoint, for GET /api/audit/checkpoint; null before the first is written. */
  get checkpoint(): Checkpoint | null { return this.#writer.checkpoint }

  /**
   * Writes the event's line and settles once it is written. Fail closed: rejects with the 503
   * audit-unavailable problem when it cannot be; fail open: resolves anyway (the writer logged it).
   */
  record(event: AuditEvent): Promise<void> {
    return new Promise<void>((resolve, reject) => { this.recordThen(event, (error) => { if (error === null) resolve(); else reject(error) }) })
  }

  /**
   * `record` with a callback, for the onSend hook of every keyed answer: no promise per request,
   * and the answer is let go in the same run as the write that carries its line (writer.ts).
   * `settle` is called once, with null or with the error `record` would reject with.
   */
  recordThen(event: AuditEvent, settle: (error: unknown) => void): void {
    if (event.details !== undefined && LINE_OWN_NAMES.some((name) => Object.hasOwn(event.details!, name))) {
      settle(new TypeError(`an audit event's details may not use a line's own names (${LINE_OWN_NAMES.join(', ')})`))
      return
    }
    const time = new Date().toISOString()
    const written = (error: unknown): void => { settle(error === null || this.fail === 'open' ? null : problems.auditUnavailable()) }
    const inputs = event.inputs === undefined ? undefined : this.#hashInputs(event.inputs)
    if (inputs instanceof Promise) {
      inputs.then((hashed) => { this.#writer.enqueue('event', lineFields(event, hashed), time, written) }, settle)
      return
    }
    this.#writer.enqueue('event', lineFields(event, inputs), time, written)
  }

  /** Each input as its `hmac-sha256:` form: at once under a key in memory; one after another under a key in a token. */
  #hashInputs(inputs: Record<string, string>): Record<string, string> | Promise<Record<string, string>> {
    const hashed: Record<string, string> = {}
    if (this.key.macHexNow === undefined) {
      return (async () => {
        for (const [name, value] of Object.entries(inputs)) hashed[name] = await inputHash(this.key, value)
        return hashed
      })()
    }
    for (const name of Object.keys(inputs)) hashed[name] = inputHash(this.key, inputs[name]!) as string
    return hashed
  }

  /** Writes the first lines; a ConfigError when the file's last line is under another key. */
  start(): Promise<void> { return this.#writer.start() }

  /** A rotation check now (SIGHUP). */
  checkRotation(): Promise<void> { return this.#writer.checkRotation().catch(() => {}) }

  close(): Promise<void> { return this.#writer.close() }
}
