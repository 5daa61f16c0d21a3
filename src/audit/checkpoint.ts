/**
 * Checkpoints: "the chain had `count` lines and its last line hashed to `head`", with a MAC under
 * the audit key. The writer puts one in the log every AUDIT_CHECKPOINT_LINES lines or
 * AUDIT_CHECKPOINT_SECONDS seconds (a `checkpoint` line), keeps the latest in memory for
 * GET /api/audit/checkpoint and writes it to the process log. A copy kept outside the log (as a
 * transparency log's signed tree heads are) is what shows a cut tail: cutting the log also cuts the
 * checkpoints inside it.
 *
 * The MAC is HMAC-SHA-256 under the audit key (labelled "checkpoint": key.ts) over
 * `hashd-audit-checkpoint/1 <count> <head> <time> <keyId>`. A MAC rather than a public-key signature:
 * the same one key, in a file today or in a token tomorrow, and the one who checks a checkpoint is
 * the one who runs audit:verify, who holds that key already.
 */
import { macHex, MAC_PREFIX, type AuditKey } from './key.js'

export interface Checkpoint {
  /** The number of lines of the chain it covers: the seq of the last of them. */
  count: number
  /** SHA-256 hex of that line's bytes. */
  head: string
  time: string
  keyId: string
  mac: string
}

function statement(checkpoint: Omit<Checkpoint, 'mac'>): string {
  return `hashd-audit-checkpoint/1 ${checkpoint.count} ${checkpoint.head} ${checkpoint.time} ${checkpoint.keyId}`
}

export async function makeCheckpoint(key: AuditKey, count: number, head: string, time: string): Promise<Checkpoint> {
  const fields = { count, head, time, keyId: key.id }
  return { ...fields, mac: `${MAC_PREFIX}${await macHex(key, 'checkpoint', statement(fields))}` }
}

/** The checkpoint in a JSON value (the endpoint's answer, or the fields of a checkpoint line), or why it is not one. */
export function readCheckpoint(value: unknown): Checkpoint | string {
  if (typeof value !== 'object' || value === null) return 'not a JSON object'
  const { count, head, time, keyId, mac } = value as Record<string, unknown>
  if (!Number.isSafeInteger(count) || (count as number) < 0) return 'count is not a whole number'
  if (typeof head !== 'string' || !/^[0-9a-f]{64}$/.test(head)) return 'head is not a SHA-256 hex'
  if (typeof time !== 'string' || typeof keyId !== 'string') return 'time or keyId missing'
  if (typeof mac !== 'string' || !/^hmac-sha256:[0-9a-f]{64}$/.test(mac)) return 'mac is not hmac-sha256:<hex>'
  return { count: count as number, head, time, keyId, mac }
}

export async function checkpointMacMatches(key: AuditKey, checkpoint: Checkpoint): Promise<boolean> {
  const expected = `${MAC_PREFIX}${await macHex(key, 'checkpoint', statement(checkpoint))}`
  return expected === checkpoint.mac
}
