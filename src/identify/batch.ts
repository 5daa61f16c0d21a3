/**
 * Files of hashes: `hashes` holds strings, and a string with line breaks is a whole pasted file
 * (a potfile, a `--username` list, secretsdump or pwdump output, Responder captures, Kerberoast
 * output), read line by line. Each line is identified as a single `hash` is (engine.ts), keeping
 * its user name; a summary counts the first answers per format, so a 10,000-line dump reads at a
 * glance.
 *
 * Potfile lines (`hash:plain`, hashcat's --potfile-path format) lose their plaintext before
 * anything else happens: it is never identified, returned or logged. Lines are potfile lines when
 * the request says `potfile: true`, or when the plaintext is written `$HEX[…]`, which no hash
 * format ends with. hashcat writes `$HEX[…]` for every plaintext that is not printable, that
 * contains the separator `:` or that looks like `$HEX[…]` itself (src/convert.c need_hexify), so
 * the plaintext is always what follows the last colon.
 *
 * The work yields to the event loop every few milliseconds, so a large file does not hold up the
 * other requests (bench/identify.ts measures the longest stall).
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { identify, type Identification, type IdentifyOptions } from './engine.js'

/** At most this many lines (entries) per request, all strings together. */
export const MAX_IDENTIFY_ENTRIES = 10_000
/**
 * At most this many matches per response, all results together: each result lists at most
 * max(1, ⌊MAX_RESPONSE_MATCHES / entries⌋) (30 for 1,000 entries, more than any string has today,
 * whose most is 13; 3 for 10,000, about 10 MB of JSON), and says how many it left out in `omitted`.
 */
export const MAX_RESPONSE_MATCHES = 30_000
/** Identify this long before yielding to the event loop. */
const SLICE_MILLISECONDS = 5

export interface BatchOptions extends IdentifyOptions {
  /** Every line is `hash:plain`: the part after the last colon is a plaintext, dropped unread. */
  potfile?: boolean
  /** At most this many matches per result (within the MAX_RESPONSE_MATCHES budget). */
  top?: number
}

export interface BatchResult extends Identification {
  /** For a line of a multi-line string: the string's index in `hashes` and the line's number (from 1). */
  item?: number
  line?: number
  /** Matches left out to keep the response within MAX_RESPONSE_MATCHES. */
  omitted?: number
}

export interface SummaryRow {
  algorithm: string
  displayName: string
  hashcat: number | null
  john: string | null
  count: number
}

export interface Batch {
  results: BatchResult[]
  /** The first answers, counted per format, most frequent first. */
  summary: SummaryRow[]
  /** Entries with no match at all. */
  unidentified: number
  /** Lines of multi-line strings left out as blank or as a tool's chatter (`[*] Dumping…`, comments, code fences). */
  skipped: number
}

interface Entry {
  text: string
  item?: number
  line?: number
}

/**
 * Lines that are a tool's chatter, not hashes: impacket's `[*]`/`[+]`/`[-]`/`[!]` status lines,
 * Responder's `[SMB] NTLMv2-SSP Client : …` lines (its `… Hash : …` lines are kept and peeled by
 * unwrap.ts), `#` comments and Markdown code fences.
 */
const CHATTER = /^(?:\[[*+!-]\](?:\s|$)|\[[\w .+-]{1,24}\]\s(?!.{0,48}?\bHash\s*:)|#(?:\s|$)|```)/
const HEX_PLAIN = /:\$HEX\[[0-9a-fA-F]{0,2048}\]$/

export type EntriesOrError = { entries: Entry[], skipped: number } | { tooMany: number }

/** The entries of `hashes`: a string without line breaks is one entry, as it always was. */
export function entriesOf(items: readonly string[]): EntriesOrError {
  const entries: Entry[] = []
  let skipped = 0
  for (const [item, text] of items.entries()) {
    if (!/[\r\n]/.test(text)) {
      entries.push({ text })
    } else {
      const lines = text.split(/\r\n|\r|\n/)
      for (const [index, line] of lines.entries()) {
        const trimmed = line.trim()
        if (trimmed === '' || CHATTER.test(trimmed)) {
          skipped += 1
          continue
        }
        entries.push({ text: trimmed, item, line: index + 1 })
      }
    }
    if (entries.length > MAX_IDENTIFY_ENTRIES) return { tooMany: entries.length }
  }
  return { entries, skipped }
}

/** `hash:plain` → `hash`, or null when the line has no colon to split at. */
export function withoutPlaintext(line: string): string | null {
  const colon = line.lastIndexOf(':')
  return colon <= 0 ? null : line.slice(0, colon)
}

function identifyEntry(entry: Entry, options: BatchOptions, cap: number): BatchResult {
  const trimmed = entry.text.trim()
  const potfile = options.potfile === true || HEX_PLAIN.test(trimmed)
  const hash = potfile ? withoutPlaintext(trimmed) : trimmed
  const identification: BatchResult = hash === null
    ? { length: 0, matches: [], ambiguous: false }
    : identify(hash, options)
  if (potfile) identification.normalized = ['potfile-plaintext', ...(identification.normalized ?? [])]
  if (entry.item !== undefined) {
    identification.item = entry.item
    identification.line = entry.line!
  }
  if (identification.matches.length > cap) {
    identification.omitted = identification.matches.length - cap
    identification.matches = identification.matches.slice(0, cap)
  }
  return identification
}

function summarize(results: readonly BatchResult[]): { summary: SummaryRow[], unidentified: number } {
  const rows = new Map<string, SummaryRow>()
  let unidentified = 0
  for (const { matches } of results) {
    const first = matches[0]
    if (first === undefined) {
      unidentified += 1
      continue
    }
    const key = `${first.algorithm}\u0000${first.hashcat}\u0000${first.displayName}`
    const row = rows.get(key)
    if (row) row.count += 1
    else rows.set(key, { algorithm: first.algorithm, displayName: first.displayName, hashcat: first.hashcat, john: first.john, count: 1 })
  }
  const summary = [...rows.values()].sort((a, b) => b.count - a.count || (a.algorithm < b.algorithm ? -1 : a.algorithm > b.algorithm ? 1 : 0) || (a.hashcat ?? -1) - (b.hashcat ?? -1))
  return { summary, unidentified }
}

/** Identifies every entry in order, yielding to the event loop between slices of work. */
export async function identifyBatch(entries: readonly Entry[], skipped: number, options: BatchOptions = {}): Promise<Batch> {
  const cap = Math.min(options.top ?? Number.MAX_SAFE_INTEGER, Math.max(1, Math.floor(MAX_RESPONSE_MATCHES / Math.max(1, entries.length))))
  const results: BatchResult[] = []
  let sliceStart = performance.now()
  for (const entry of entries) {
    results.push(identifyEntry(entry, options, cap))
    if (performance.now() - sliceStart >= SLICE_MILLISECONDS) {
      await nextTurn()
      sliceStart = performance.now()
    }
  }
  return { results, ...summarize(results), skipped }
}

/** Results serialized per this many, with a turn of the event loop between: a 10 MB answer does not stall it. */
const RESULTS_PER_CHUNK = 250

/**
 * The batch as JSON text in pieces, the same text JSON.stringify gives: the route streams it, so
 * serializing 10,000 results never holds the event loop for more than one piece.
 */
export async function * batchJson(batch: Batch): AsyncGenerator<string> {
  yield '{"results":['
  for (let start = 0; start < batch.results.length; start += RESULTS_PER_CHUNK) {
    const piece = batch.results.slice(start, start + RESULTS_PER_CHUNK).map((result) => JSON.stringify(result)).join(',')
    yield start === 0 ? piece : `,${piece}`
    await nextTurn()
  }
  yield `],"summary":${JSON.stringify(batch.summary)},"unidentified":${batch.unidentified},"skipped":${batch.skipped}}`
}
