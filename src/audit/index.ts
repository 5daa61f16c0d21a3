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
import { inputHash } from './line.js'
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
  async record(event: AuditEvent): Promise<void> {
    const time = new Date().toISOString()
    let inputs: Record<string, string> | undefined
    if (event.inputs) {
      inputs = {}
      for (const [name, value] of Object.entries(event.inputs)) {
        const hashed = inputHash(this.key, value)
        inputs[name] = typeof hashed === 'string' ? hashed : await hashed
      }
    }
    const fields = {
      requestId: event.requestId, apiKeyId: event.apiKeyId, operation: event.operation,
      keyName: event.keyName, keyVersion: event.keyVersion, outcome: event.outcome, inputs, ...event.details,
    }
    try {
      await this.#writer.append('event', fields, time)
    } catch {
      if (this.fail === 'closed') throw problems.auditUnavailable()
    }
  }

  /** Writes the first lines; a ConfigError when the file's last line is under another key. */
  start(): Promise<void> { return this.#writer.start() }

  /** A rotation check now (SIGHUP). */
  checkRotation(): Promise<void> { return this.#writer.checkRotation().catch(() => {}) }

  close(): Promise<void> { return this.#writer.close() }
}
