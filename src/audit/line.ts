/**
 * The audit log's line format: one JSON object per line, written by writer.ts, read by verify.ts.
 *
 *     {"v":1,"seq":7,"time":"…","type":"event","requestId":"…","apiKeyId":"ops","operation":"hmac",
 *      "keyName":"orders","keyVersion":3,"outcome":"ok","inputs":{"message":"hmac-sha256:…"},
 *      "prev":"<sha-256 hex of line 6's bytes>","mac":"hmac-sha256:<hex>"}
 *
 * - `seq` counts every line of the chain from 1, across restarts and rotated files.
 * - `prev` is the SHA-256 of the previous line's bytes (without its newline); the first line of a
 *   chain has 64 zeros. So a removed, inserted or reordered line breaks the chain at that point.
 * - `mac` is the HMAC-SHA-256 (under the audit key, labelled "line": key.ts) of the line's bytes
 *   without the mac: the line up to `,"mac":` with a `}` after it. The MAC is over those exact
 *   bytes, so no canonical JSON is needed: the verifier cuts the same bytes out of the line.
 * - `mac` is always last, and `prev` just before it.
 *
 * Types: `event` (a keyed operation or a change of the key ring), `start` (a process opened the
 * log; `torn` when it found the last line cut by a crash), `rotate` (the file was truncated or
 * replaced, by logrotate's copytruncate or create: the new file starts here, still chained), and
 * `checkpoint` (checkpoint.ts).
 */
import { hash } from 'node:crypto'
import { MAC_PREFIX, macHex, type AuditKey } from './key.js'

export const LINE_VERSION = 1
export const GENESIS = '0'.repeat(64)

export type LineType = 'event' | 'start' | 'rotate' | 'checkpoint'

/** The fields of a line between `type` and `prev`, in the order they are written. */
export type LineFields = Record<string, unknown>

export interface ParsedLine {
  v: number
  seq: number
  time: string
  type: LineType
  prev: string
  mac: string
  [field: string]: unknown
}

const MAC_TAIL = /,"mac":"hmac-sha256:([0-9a-f]{64})"\}$/

/** SHA-256 of the text's UTF-8, in hex (one call into OpenSSL, no Hash object). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex')
}

const withMac = (body: string, mac: string): string => `${body.slice(0, -1)},"mac":"${MAC_PREFIX}${mac}"}`

/** The names a line gives itself, which no field may take (AuditLog.record refuses an event's detail named so). */
export const LINE_OWN_NAMES: readonly string[] = ['v', 'seq', 'time', 'type', 'prev', 'mac']

/**
 * The line's JSON without its MAC: `{"v":1,"seq":…,"time":…,"type":…,<fields>,"prev":…}`. The
 * fields are one JSON.stringify of the caller's object, set between the line's own members as
 * text: the same bytes as one JSON.stringify of them all, without copying the fields into a
 * new object per line (a fifth of a line's CPU, measured apart from HTTP). No field is named as
 * one of LINE_OWN_NAMES (the writer's own fields are fixed; events are checked by AuditLog).
 */
function lineBody(seq: number, time: string, type: LineType, fields: LineFields, prev: string): string {
  const inner = JSON.stringify(fields)
  const members = inner.length > 2 ? `${inner.slice(1, -1)},` : ''
  return `{"v":${LINE_VERSION},"seq":${seq},"time":${JSON.stringify(time)},"type":${JSON.stringify(type)},${members}"prev":${JSON.stringify(prev)}}`
}

/** A line's text (no newline): the body with its MAC appended; at once under a key in memory. */
export function makeLine(key: AuditKey, seq: number, time: string, type: LineType, fields: LineFields, prev: string): string | Promise<string> {
  const body = lineBody(seq, time, type, fields, prev)
  const mac = macHex(key, 'line', body)
  return typeof mac === 'string' ? withMac(body, mac) : mac.then((hex) => withMac(body, hex))
}

/** The bytes the line's MAC covers, and the MAC it carries; null when the line does not end in a MAC. */
export function splitMac(text: string): { body: string, mac: string } | null {
  const match = MAC_TAIL.exec(text)
  if (!match) return null
  return { body: `${text.slice(0, match.index)}}`, mac: match[1]! }
}

/** The line as an object, or a reason it is not a line of this format. */
export function parseLine(text: string): ParsedLine | string {
  if (splitMac(text) === null) return 'it does not end with a mac'
  let value: unknown
  try { value = JSON.parse(text) } catch { return 'it is not JSON' }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'it is not a JSON object'
  const line = value as Record<string, unknown>
  if (line.v !== LINE_VERSION) return `its version is not ${LINE_VERSION}`
  if (!Number.isSafeInteger(line.seq) || (line.seq as number) < 1) return 'its seq is not a whole number above 0'
  if (typeof line.time !== 'string') return 'it has no time'
  if (!['event', 'start', 'rotate', 'checkpoint'].includes(line.type as string)) return 'its type is not event, start, rotate or checkpoint'
  if (typeof line.prev !== 'string' || !/^[0-9a-f]{64}$/.test(line.prev)) return 'its prev is not a SHA-256'
  return line as ParsedLine
}

/** Whether the line's MAC is right under `key`. */
export async function macMatches(key: AuditKey, text: string): Promise<boolean> {
  const parts = splitMac(text)
  if (parts === null) return false
  const expected = await macHex(key, 'line', parts.body)
  // Both are hex of a fixed length from this process's own HMAC: no secret timing to protect here
  // beyond what the verifier, which holds the key, already knows.
  return expected === parts.mac
}

/** The `hmac-sha256:<hex>` an input appears as (and what `npm run audit:hash` prints); at once under a key in memory. */
export function inputHash(key: AuditKey, input: string): string | Promise<string> {
  const mac = macHex(key, 'input', input)
  return typeof mac === 'string' ? `${MAC_PREFIX}${mac}` : mac.then((hex) => `${MAC_PREFIX}${hex}`)
}
