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
 * format ends with. Any other line is read as it stands, where `hash:plain` is also `hash:salt`
 * (md5($pass.$salt), MyBB…), as hashcat, haiti and Name-That-Hash read it; the engine then leaves
 * out of `params` whatever it read from the text after the last colon (engine.ts withholdTail), so
 * a plaintext pasted without `potfile` is still never sent back. hashcat writes `$HEX[…]` for every plaintext that is not printable, that
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
  /**
   * The results' JSON text, in order and comma-separated, in Buffers of about RESULT_PIECE_BYTES.
   * Each result is serialized as soon as it is identified, so a batch keeps its answer outside the
   * JS heap while it works: the result objects die young instead of being promoted (and a 200-line
   * answer of 550 kB was one string in V8's large-object space), which let the main thread's old
   * generation grow to four times its live size under a flood of batches (`npm run soak`,
   * docs/benchmarks.md#npm-run-soak-memory-under-a-long-mixed-load).
   */
  resultsJson: Buffer[]
  /**
   * Gives `resultsJson`'s memory to later batches. Call it once the answer has been sent (the
   * response's `finish`), never while a write may still read it; a batch not released is collected.
   */
  release: () => void
  /** The first answers, counted per format, most frequent first. */
  summary: SummaryRow[]
  /** Entries with no match at all. */
  unidentified: number
  /** Lines of multi-line strings left out as blank or as a tool's chatter (`[*] Dumping…`, comments, code fences). */
  skipped: number
}

export interface Entry {
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

/** What reading `hashes` found: its entries, or the first thing that refuses the request. */
export type ReadEntries =
  | { entries: Entry[], skipped: number }
  /** The strings (their indexes) that are empty or only white space. */
  | { blank: number[] }
  /** The first line (or string without line breaks: no `line`) longer than the limit. */
  | { tooLong: { item: number, line?: number } }
  /** More than MAX_IDENTIFY_ENTRIES lines in all. */
  | { tooMany: true }

/** The index of the next line break (`\r` or `\n`) at or after `from`, or `text.length`. */
class LineBreaks {
  #cr = -1
  #lf = -1

  constructor(readonly text: string) {}

  /** Each search resumes where the last found one, so a string of many lines is scanned once. */
  next(from: number): number {
    if (this.#cr !== this.text.length && this.#cr < from) this.#cr = this.#find('\r', from)
    if (this.#lf !== this.text.length && this.#lf < from) this.#lf = this.#find('\n', from)
    return Math.min(this.#cr, this.#lf)
  }

  #find(char: string, from: number): number {
    const index = this.text.indexOf(char, from)
    return index === -1 ? this.text.length : index
  }
}

const isLonger = (text: string, maxBytes: number): boolean => text.length * 3 > maxBytes && Buffer.byteLength(text) > maxBytes

/**
 * The entries of `hashes`: a string without line breaks is one entry, as it always was; a string
 * with them is a file, one entry per line (\r\n, \r or \n), less blank lines and chatter. Every
 * string and line is held to `maxLineBytes`. The request's schema states that no string is empty or
 * only white space; that is checked here, while reading, rather than by the validator, which would
 * count the code points of a string of megabytes and scan it for `\S` in one go.
 *
 * The reading yields to the event loop every SLICE_MILLISECONDS, as identifyBatch does: each line
 * costs at most a slice, a trim and a bounded test, so a body of a million blank lines does not hold
 * up the other requests either. Everything is read before deciding, so the answer does not depend
 * on the order of the faults: blank strings, then a line too long, then too many lines.
 */
export async function readEntries(items: readonly string[], maxLineBytes: number): Promise<ReadEntries> {
  const reading = readingEntries(items, maxLineBytes)
  for (let step = reading.next(); ; step = reading.next()) {
    if (step.done) return step.value
    await nextTurn()
  }
}

/** The same reading in one go, for callers that are not serving requests (the fuzz target, benches). */
export function readEntriesNow(items: readonly string[], maxLineBytes: number): ReadEntries {
  const reading = readingEntries(items, maxLineBytes)
  for (let step = reading.next(); ; step = reading.next()) if (step.done) return step.value
}

/** The reading, pausing (yielding) every SLICE_MILLISECONDS; its return value is the result. */
function * readingEntries(items: readonly string[], maxLineBytes: number): Generator<void, ReadEntries> {
  const entries: Entry[] = []
  let counted = 0
  let skipped = 0
  const blank: number[] = []
  let tooLong: { item: number, line?: number } | undefined
  let sliceStart = performance.now()
  for (const [item, text] of items.entries()) {
    const breaks = new LineBreaks(text)
    if (breaks.next(0) === text.length) {
      if (text.trim() === '') blank.push(item)
      else if (isLonger(text, maxLineBytes)) tooLong ??= { item }
      else if (++counted <= MAX_IDENTIFY_ENTRIES) entries.push({ text })
      continue
    }
    let hasText = false
    for (let start = 0, line = 1; start <= text.length; line += 1) {
      const end = breaks.next(start)
      const empty = end === start
      const lineText = empty ? '' : text.slice(start, end)
      start = end + (text[end] === '\r' && text[end + 1] === '\n' ? 2 : 1)
      const trimmed = empty ? '' : lineText.trim()
      if (!empty && isLonger(lineText, maxLineBytes)) tooLong ??= { item, line }
      if (trimmed !== '') hasText = true
      if (trimmed === '' || CHATTER.test(trimmed)) skipped += 1
      else if (++counted <= MAX_IDENTIFY_ENTRIES) entries.push({ text: trimmed, item, line })
      // The clock is read every few lines: a line costs microseconds, and a million blank ones a read each.
      if (line % 64 === 0 && performance.now() - sliceStart >= SLICE_MILLISECONDS) {
        yield
        sliceStart = performance.now()
      }
    }
    if (!hasText) blank.push(item)
  }
  if (blank.length > 0) return { blank }
  if (tooLong) return { tooLong }
  if (counted > MAX_IDENTIFY_ENTRIES) return { tooMany: true }
  return { entries, skipped }
}

/** `hash:plain` → `hash`, or null when the line has no colon to split at. */
export function withoutPlaintext(line: string): string | null {
  const colon = line.lastIndexOf(':')
  return colon <= 0 ? null : line.slice(0, colon)
}

/** One line read as a line of a file is (the potfile rule, `item`/`line`, the cap on matches). */
export function identifyEntry(entry: Entry, options: BatchOptions, cap: number): BatchResult {
  const trimmed = entry.text.trim()
  const potfile = options.potfile === true || HEX_PLAIN.test(trimmed)
  const hash = potfile ? withoutPlaintext(trimmed) : trimmed
  const identification: BatchResult = hash === null
    ? { length: 0, matches: [], ambiguous: false }
    : identify(hash, potfile ? { ...options, plaintextRemoved: true } : options)
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

/** The summary's counts, kept as the results go by. */
class Summary {
  readonly #rows = new Map<string, SummaryRow>()
  unidentified = 0

  add({ matches }: BatchResult): void {
    const first = matches[0]
    if (first === undefined) {
      this.unidentified += 1
      return
    }
    const key = `${first.algorithm}\u0000${first.hashcat}\u0000${first.displayName}`
    const row = this.#rows.get(key)
    if (row) row.count += 1
    else this.#rows.set(key, { algorithm: first.algorithm, displayName: first.displayName, hashcat: first.hashcat, john: first.john, count: 1 })
  }

  rows(): SummaryRow[] {
    return [...this.#rows.values()].sort((a, b) => b.count - a.count || (a.algorithm < b.algorithm ? -1 : a.algorithm > b.algorithm ? 1 : 0) || (a.hashcat ?? -1) - (b.hashcat ?? -1))
  }
}

/**
 * The size of the Buffers a batch's JSON text is written into: under glibc's mmap threshold (128
 * KiB, memory-tuning.ts), and large enough that a 10 MB answer is some 160 writes.
 */
const RESULT_PIECE_BYTES = 64 * 1024
/**
 * Pieces whose answer has been sent wait here for the next batch, up to this many bytes. Without
 * them each batch allocated its pieces anew, and they were freed only when a full collection found
 * them (they outlive the scavenges of the request that writes them): with this set to 0, four
 * clients posting 200-line batches (`SOAK_CONNECTIONS=0 SOAK_ONLY=identify npm run soak`) peaked
 * at 194 MB on Node 24 against 174 MB with it, and 128 against 122 MB on Node 20.
 */
const SPARE_PIECES_BYTES = 4 * 1024 * 1024
const sparePieces: Buffer[] = []

/** JSON texts written one after another, comma-separated, into Buffers of RESULT_PIECE_BYTES. */
export class JsonPieces {
  readonly #pieces: Buffer[] = []
  /** The pieces of RESULT_PIECE_BYTES (not a text too long for one), each whole, for `release`. */
  readonly #own: Buffer[] = []
  #current: Buffer | undefined
  #used = 0
  #count = 0

  add(json: string): void {
    const text = this.#count++ === 0 ? json : `,${json}`
    // A UTF-16 unit is at most 3 UTF-8 bytes; measure exactly only when that bound does not fit.
    if (this.#used + text.length * 3 > RESULT_PIECE_BYTES && this.#used + Buffer.byteLength(text) > RESULT_PIECE_BYTES) {
      this.#flush()
      if (Buffer.byteLength(text) > RESULT_PIECE_BYTES) {
        this.#pieces.push(Buffer.from(text))
        return
      }
    }
    if (this.#current === undefined) {
      this.#current = sparePieces.pop() ?? Buffer.allocUnsafeSlow(RESULT_PIECE_BYTES)
      this.#own.push(this.#current)
    }
    this.#used += this.#current.write(text, this.#used)
  }

  finish(): Buffer[] {
    this.#flush()
    return this.#pieces
  }

  /** Hands the pieces to the next batch; only once nothing can still read them (the answer is sent). */
  release(): void {
    for (const piece of this.#own.splice(0)) {
      if (sparePieces.length * RESULT_PIECE_BYTES >= SPARE_PIECES_BYTES) break
      sparePieces.push(piece)
    }
    this.#pieces.length = 0
  }

  #flush(): void {
    if (this.#current === undefined) return
    this.#pieces.push(this.#current.subarray(0, this.#used))
    this.#current = undefined
    this.#used = 0
  }
}

/** Identifies every entry in order, yielding to the event loop between slices of work. */
export async function identifyBatch(entries: readonly Entry[], skipped: number, options: BatchOptions = {}): Promise<Batch> {
  const cap = Math.min(options.top ?? Number.MAX_SAFE_INTEGER, Math.max(1, Math.floor(MAX_RESPONSE_MATCHES / Math.max(1, entries.length))))
  const summary = new Summary()
  const json = new JsonPieces()
  let sliceStart = performance.now()
  for (const entry of entries) {
    const result = identifyEntry(entry, options, cap)
    summary.add(result)
    json.add(JSON.stringify(result))
    if (performance.now() - sliceStart >= SLICE_MILLISECONDS) {
      await nextTurn()
      sliceStart = performance.now()
    }
  }
  return { resultsJson: json.finish(), release: () => json.release(), summary: summary.rows(), unidentified: summary.unidentified, skipped }
}

/** The batch as the JSON text the route's schema describes (JSON.stringify's), in pieces the route streams. */
export function * batchJson(batch: Batch): Generator<Buffer | string> {
  yield '{"results":['
  yield * batch.resultsJson
  yield `],"summary":${JSON.stringify(batch.summary)},"unidentified":${batch.unidentified},"skipped":${batch.skipped}}`
}
