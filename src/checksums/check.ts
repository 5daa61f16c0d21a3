/**
 * A check of uploaded files against a parsed checksum list: which entries an upload answers to,
 * which algorithms it must go through (only those its lines name, each once), and the report.
 *
 * An upload matches the entries with its exact name; when there are none, the entries whose base
 * name is the upload's base name and that no other upload has claimed (a list written in a release
 * directory says `dist/app.tar.gz`; a browser sends `app.tar.gz`). Digests are compared in
 * constant time (constantTimeEqual).
 */
import type { DigestAlgorithm } from '../algorithms/types.js'
import { constantTimeEqual } from '../domain/encoding.js'
import { problems } from '../problem.js'
import type { ChecksumEntry, ChecksumList, SkippedLine } from './list.js'
import type { SignatureResult } from './signatures/types.js'

export type FileStatus = 'ok' | 'failed' | 'missing' | 'unlisted'

export interface FileResult {
  name: string
  status: FileStatus
  /** Absent for unlisted files. */
  algorithm?: string
  /** True when the algorithm was inferred (from the list's name or the digest's length), not read from a tag or the algorithm field. */
  algorithmGuessed?: boolean
  line?: number
  /** The list's digest, as the list wrote it (hex lowercased). */
  expected?: string
  /** The computed digest in the list's encoding; absent when the file was not sent. */
  actual?: string
  /** The uploaded file's name, when it matched by base name only. */
  file?: string
  /** Bytes hashed. */
  size?: number
}

export interface CheckReport {
  ok: boolean
  strict: boolean
  files: FileResult[]
  counts: Record<FileStatus, number>
  /** Lines that were not checksum lines or named an algorithm hashd cannot check (at most MAX_REPORTED_SKIPS). */
  skipped: SkippedLine[]
  skippedLines: number
}

/** The report lists at most this many skipped lines (the count is always exact). */
export const MAX_REPORTED_SKIPS = 100

/** What one upload is checked against. */
export interface UploadPlan {
  name: string
  entries: ChecksumEntry[]
  /** The distinct algorithms of those entries, in list order: the only hashers the upload goes through. */
  algorithms: DigestAlgorithm[]
}

const baseName = (name: string): string => name.slice(name.lastIndexOf('/') + 1)

const show = (bytes: Uint8Array, encoding: ChecksumEntry['encoding']): string => Buffer.from(bytes).toString(encoding)

export class ChecksumCheck {
  readonly #list: ChecksumList
  /** Entry index → its result once its file was hashed. */
  readonly #results = new Map<ChecksumEntry, { actual: Uint8Array, size: number, file: string }>()
  readonly #claimed = new Set<ChecksumEntry>()
  readonly #uploads = new Set<string>()
  readonly #unlisted: Array<{ name: string, size: number }> = []

  constructor(list: ChecksumList) {
    this.#list = list
  }

  /** The entries and algorithms for an upload of this name; refuses a name sent twice. */
  plan(name: string): UploadPlan {
    if (this.#uploads.has(name)) throw problems.validation(`Two file parts have the same name; send each file once`, [{ pointer: '/body/file', message: 'duplicate file name' }])
    this.#uploads.add(name)
    let entries = this.#list.entries.filter((entry) => entry.name === name)
    if (entries.length === 0) {
      const base = baseName(name)
      entries = this.#list.entries.filter((entry) => !this.#claimed.has(entry) && baseName(entry.name) === base)
      // Several listed paths share the base name: take the first path's lines only.
      const first = entries[0]
      if (first) entries = entries.filter((entry) => entry.name === first.name)
    }
    for (const entry of entries) this.#claimed.add(entry)
    const algorithms = new Map<string, DigestAlgorithm>()
    for (const entry of entries) algorithms.set(entry.algorithm.name, entry.algorithm)
    return { name, entries, algorithms: [...algorithms.values()] }
  }

  /** Records an upload's digests (raw, by canonical algorithm name), or an unlisted upload's size. */
  record(plan: UploadPlan, size: number, digests: Map<string, Uint8Array>): void {
    if (plan.entries.length === 0) {
      this.#unlisted.push({ name: plan.name, size })
      return
    }
    for (const entry of plan.entries) {
      const actual = digests.get(entry.algorithm.name)
      if (actual === undefined) throw new Error(`no ${entry.algorithm.name} digest for a planned entry`)
      this.#results.set(entry, { actual, size, file: plan.name })
    }
  }

  /**
   * The answer: every entry in list order, then the unlisted uploads. `ok` is true only when at
   * least one file was checked and every checked file matched; `strict` also fails a missing file.
   */
  report(strict: boolean): CheckReport {
    const counts: Record<FileStatus, number> = { ok: 0, failed: 0, missing: 0, unlisted: 0 }
    const files: FileResult[] = this.#list.entries.map((entry) => {
      const result = this.#results.get(entry)
      const base: FileResult = {
        name: entry.name, status: 'missing', algorithm: entry.algorithm.name, line: entry.line,
        expected: show(entry.expected, entry.encoding),
        ...(entry.algorithmFrom === 'list-name' || entry.algorithmFrom === 'length' ? { algorithmGuessed: true } : {}),
      }
      if (result) {
        base.status = constantTimeEqual(result.actual, entry.expected) ? 'ok' : 'failed'
        base.actual = show(result.actual, entry.encoding)
        base.size = result.size
        if (result.file !== entry.name) base.file = result.file
      }
      counts[base.status]++
      return base
    })
    for (const upload of this.#unlisted) {
      files.push({ name: upload.name, status: 'unlisted', size: upload.size })
      counts.unlisted++
    }
    const checked = counts.ok + counts.failed
    const ok = checked > 0 && counts.failed === 0 && (!strict || counts.missing === 0)
    return {
      ok, strict, files, counts,
      skipped: this.#list.skipped.slice(0, MAX_REPORTED_SKIPS),
      skippedLines: this.#list.skipped.length,
    }
  }
}

/**
 * A name as `sha256sum -c` prints it: a name with a newline, carriage return or backslash is
 * escaped and the line starts with `\` (coreutils' digest.c) — coreutils 9.1 escapes only names
 * with a newline; both forms read back the same way.
 */
function printedName(name: string): { prefix: string, name: string } {
  if (!/[\n\r]/.test(name)) return { prefix: '', name }
  return { prefix: '\\', name: name.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('\r', '\\r') }
}

/** A count and its noun, as coreutils words its warnings (`1 line is`, `2 lines are`). */
const counted = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`

/** Text from a key or a signature on one line: a tab (minisign's trusted comments have one) as a space, other control characters as `?`. */
// eslint-disable-next-line no-control-regex -- control characters are what it replaces
const oneLine = (text: string): string => text.replaceAll('\t', ' ').replace(/[\u0000-\u001f\u007f]/g, '?')

/** The line naming the signature that was verified, for the text report. */
export function signatureLine(signature: SignatureResult): string {
  const by = signature.userId === undefined ? `key ${signature.keyId}` : `key ${signature.keyId} (${oneLine(signature.userId)})`
  const comment = signature.trustedComment === undefined ? '' : `; trusted comment: ${oneLine(signature.trustedComment)}`
  return `hashd: good ${signature.scheme} signature of the checksum list by ${by}${comment}`
}

/**
 * The check as `sha256sum -c` reports it, stdout then its warnings, with `hashd:` where coreutils
 * writes its own name: `name: OK`, `name: FAILED`, and without `strict` nothing for a listed file
 * that was not sent (as `--ignore-missing`), with `strict` `name: FAILED open or read`; then
 * `hashd: WARNING: 1 line is improperly formatted` (a skipped line), `… listed file could not be
 * read`, `… computed checksum did NOT match`, and `hashd: <list>: no file was verified` when none
 * was. A verified signature is named on the first line; a file sent that the list does not name
 * gets a warning of its own. The check passed (`ok`) exactly when no line says FAILED and none
 * says "no file was verified"; the route answers 200 then, else 422 with the same text.
 */
export function reportAsText(report: CheckReport, context: { signature?: SignatureResult | undefined, listName?: string | undefined } = {}): string {
  const lines: string[] = []
  if (context.signature) lines.push(signatureLine(context.signature))
  for (const file of report.files) {
    if (file.status === 'unlisted' || (file.status === 'missing' && !report.strict)) continue
    const { prefix, name } = printedName(file.name)
    const verdict = file.status === 'ok' ? 'OK' : file.status === 'failed' ? 'FAILED' : 'FAILED open or read'
    lines.push(`${prefix}${name}: ${verdict}`)
  }
  const { counts } = report
  if (report.skippedLines > 0) lines.push(`hashd: WARNING: ${counted(report.skippedLines, 'line is', 'lines are')} improperly formatted`)
  if (report.strict && counts.missing > 0) lines.push(`hashd: WARNING: ${counted(counts.missing, 'listed file', 'listed files')} could not be read`)
  if (counts.failed > 0) lines.push(`hashd: WARNING: ${counted(counts.failed, 'computed checksum did', 'computed checksums did')} NOT match`)
  if (counts.unlisted > 0) lines.push(`hashd: WARNING: ${counted(counts.unlisted, 'file sent is', 'files sent are')} not in the list`)
  if (counts.ok + counts.failed === 0) lines.push(`hashd: ${oneLine(context.listName ?? 'the checksum list')}: no file was verified`)
  return `${lines.join('\n')}\n`
}
