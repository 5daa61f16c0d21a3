/**
 * Checks an audit log (what `npm run audit:verify` runs): every line's MAC, the chain of `prev`
 * hashes and `seq` numbers, each checkpoint line against the line before it, and, given a
 * checkpoint kept elsewhere (GET /api/audit/checkpoint), that the log reaches it.
 *
 * It stops at the first line that is wrong and says what is wrong with it, by file and line number:
 * - a line whose MAC does not match was edited, or written without the audit key;
 * - a `seq` that jumps forward means lines were removed, unless the missing seq comes later in the
 *   file (then the lines were reordered); a `seq` already seen means a line was copied in;
 * - a `prev` that is not the hash of the line before, with the right seq, means a line was replaced.
 *
 * A last line without a newline is a write cut by a crash: the log verifies up to the line before,
 * and the torn tail is reported, not counted as tampering. The same fragment in the middle of the
 * file is accepted only when the `start` line after it declares it (`torn.bytes`: writer.ts).
 *
 * Rotated files are given in order (oldest first) and read as one chain. A first file that does not
 * begin the chain (seq 1, prev zeros) is reported as a warning: its earlier lines are elsewhere.
 */
import { checkpointMacMatches, readCheckpoint, type Checkpoint } from './checkpoint.js'
import type { AuditKey } from './key.js'
import { GENESIS, macMatches, parseLine, sha256Hex, type ParsedLine } from './line.js'

export interface LogFile {
  name: string
  text: string
}

export interface Where {
  file: string
  line: number
  seq?: number
}

export interface VerifyReport {
  ok: boolean
  /** Whole lines verified (across the files). */
  lines: number
  firstSeq: number | null
  lastSeq: number | null
  /** SHA-256 of the last line verified. */
  head: string | null
  /** The first thing wrong, with where it is. */
  problem: (Where & { message: string }) | null
  /** Things to know that are no tampering: a torn tail, a chain that began in an earlier file. */
  warnings: string[]
  /** With a checkpoint: what it says of the log. */
  checkpoint?: { ok: boolean, message: string }
}

interface Entry { file: string, line: number, text: string, parsed: ParsedLine | string }

/** `file:line` (`line 12` with one file). */
function at(where: Where, files: number): string {
  return `${files > 1 ? `${where.file}:` : 'line '}${where.line}${where.seq !== undefined ? ` (seq ${where.seq})` : ''}`
}

export async function verifyLog(files: LogFile[], key: AuditKey, options: { checkpoint?: unknown } = {}): Promise<VerifyReport> {
  const warnings: string[] = []
  const entries: Entry[] = []
  for (const [index, file] of files.entries()) {
    const parts = file.text.split('\n')
    const last = parts.pop()!
    parts.forEach((text, i) => { entries.push({ file: file.name, line: i + 1, text, parsed: parseLine(text) }) })
    if (last !== '') {
      warnings.push(`${files.length > 1 ? `${file.name}:` : 'line '}${parts.length + 1} is torn (${Buffer.byteLength(last)} bytes without a newline: a write cut by a crash); ${index === files.length - 1 ? 'the log verifies up to the line before it' : 'the next file goes on from the line before it'}`)
    }
  }
  const report: VerifyReport = { ok: true, lines: 0, firstSeq: null, lastSeq: null, head: null, problem: null, warnings }
  const fail = (entry: Entry, message: string, seq?: number): VerifyReport => {
    const where = { file: entry.file, line: entry.line, ...(seq !== undefined ? { seq } : {}) }
    return { ...report, ok: false, problem: { ...where, message: `${at(where, files.length)}: ${message}` } }
  }
  const seenAt = new Map<number, Entry>()
  let head: string | null = null
  let expectedSeq = 0
  let keyChecked = false
  for (const [index, entry] of entries.entries()) {
    if (typeof entry.parsed === 'string') {
      const next = entries[index + 1]
      const declared = next && typeof next.parsed !== 'string' && next.parsed.type === 'start'
        && (next.parsed.torn as { bytes?: unknown } | undefined)?.bytes === Buffer.byteLength(entry.text)
      if (declared && entry.text !== '') {
        warnings.push(`${at(entry, files.length)} is torn (${Buffer.byteLength(entry.text)} bytes: a write cut by a crash, declared by the start line after it)`)
        continue
      }
      return fail(entry, entry.text === '' ? 'an empty line: not an audit line' : `not an audit line (${entry.parsed}): edited, or inserted`)
    }
    const line = entry.parsed
    if (!(await macMatches(key, entry.text))) {
      if (!keyChecked && typeof line.keyId === 'string' && line.keyId !== key.id) {
        return fail(entry, `written under audit key ${line.keyId}, but the key given is ${key.id}`, line.seq)
      }
      return fail(entry, 'its MAC does not match: the line was edited, or written without the audit key', line.seq)
    }
    keyChecked = true
    if (head === null) {
      report.firstSeq = line.seq
      if (line.seq === 1 && line.prev !== GENESIS) return fail(entry, 'seq 1 must begin the chain (prev of 64 zeros)', line.seq)
      if (line.seq !== 1) warnings.push(`the log begins at seq ${line.seq}: lines 1 to ${line.seq - 1} are in an earlier (rotated) file, not given here`)
    } else if (line.seq !== expectedSeq) {
      if (line.seq > expectedSeq) {
        const later = entries.slice(index + 1).find((other) => typeof other.parsed !== 'string' && other.parsed.seq === expectedSeq)
        if (later) return fail(entry, `out of order: seq ${line.seq} comes before seq ${expectedSeq}, which is at ${at(later, files.length)} (lines reordered)`, line.seq)
        const missing = line.seq - expectedSeq
        return fail(entry, `seq ${expectedSeq}${missing > 1 ? ` to ${line.seq - 1}` : ''} missing before it: ${missing} line${missing > 1 ? 's' : ''} removed`, line.seq)
      }
      const earlier = seenAt.get(line.seq)
      return fail(entry, `seq ${line.seq} again${earlier ? ` (already at ${at(earlier, files.length)})` : ''}, where seq ${expectedSeq} belongs: a line inserted or moved`, line.seq)
    } else if (line.prev !== head) {
      return fail(entry, 'its prev is not the hash of the line before it: the line before was replaced, or this one comes from another log', line.seq)
    }
    if (line.type === 'checkpoint') {
      const checkpoint = readCheckpoint({ ...line, mac: line.checkpointMac })
      if (typeof checkpoint === 'string' || checkpoint.count !== line.seq - 1 || checkpoint.head !== line.prev || !(await checkpointMacMatches(key, checkpoint))) {
        return fail(entry, 'a checkpoint that does not match the line before it', line.seq)
      }
    }
    seenAt.set(line.seq, entry)
    head = sha256Hex(entry.text)
    expectedSeq = line.seq + 1
    report.lines += 1
    report.lastSeq = line.seq
    report.head = head
  }
  if (options.checkpoint !== undefined) report.checkpoint = await against(options.checkpoint, key, report, seenAt, files.length)
  if (report.checkpoint && !report.checkpoint.ok) report.ok = false
  return report
}

/** What a checkpoint kept elsewhere says of the log: reached, cut short before it, or not this log's. */
async function against(value: unknown, key: AuditKey, report: VerifyReport, seenAt: Map<number, Entry>, files: number): Promise<{ ok: boolean, message: string }> {
  const checkpoint: Checkpoint | string = readCheckpoint(value)
  if (typeof checkpoint === 'string') return { ok: false, message: `the checkpoint is not one (${checkpoint})` }
  if (checkpoint.keyId !== key.id || !(await checkpointMacMatches(key, checkpoint))) {
    return { ok: false, message: `the checkpoint's MAC does not match under audit key ${key.id}: it was edited, or made under another key${checkpoint.keyId !== key.id ? ` (${checkpoint.keyId})` : ''}` }
  }
  const lastSeq = report.lastSeq ?? 0
  if (lastSeq < checkpoint.count) {
    return { ok: false, message: `cut short: the checkpoint of ${checkpoint.time} covers ${checkpoint.count} lines, and the log ends at seq ${lastSeq}; ${checkpoint.count - lastSeq} or more lines are gone from its end` }
  }
  const entry = seenAt.get(checkpoint.count)
  if (entry === undefined) return { ok: false, message: `the checkpoint covers seq ${checkpoint.count}, which is in an earlier file than those given` }
  if (sha256Hex(entry.text) !== checkpoint.head) {
    return { ok: false, message: `${at({ file: entry.file, line: entry.line, seq: checkpoint.count }, files)} is not the line the checkpoint of ${checkpoint.time} saw: the log was rewritten` }
  }
  return { ok: true, message: `the log reaches the checkpoint of ${checkpoint.time} (seq ${checkpoint.count}) and goes on to seq ${lastSeq}` }
}
