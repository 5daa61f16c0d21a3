/**
 * The multipart source of the upload pipeline: a streaming reader of multipart/form-data bodies
 * (RFC 7578 over RFC 2046 §5.1), which hands each part's bytes to a consumer as they arrive.
 *
 * hashd read forms with @fastify/multipart (busboy) until issue 19 asked for multipart uploads within
 * 5 % of raw ones. busboy finds the boundary with Buffer.indexOf, which on random data looks at
 * every byte (a memchr for the delimiter's CR), and hands the part on through two streams: a 256
 * MiB multipart upload took 13–17 % longer than the raw one in hashd. This reader searches each
 * chunk with delimiter-search.ts, which reads one byte pair in every m − 1 (m the delimiter's
 * length), and hands the chunk's content to the consumer (the hashers) in one piece, with no stream
 * in between: within 5 % (`npm run bench:multipart-floor`). It reads only what the routes need:
 * parts with Content-Disposition form-data, a name and perhaps a filename, their bytes as they come.
 *
 * The body's shape (RFC 2046 §5.1.1): a preamble (ignored), then parts, each opened by a delimiter
 * (CRLF "--" boundary; the first may come without its CRLF, at the very start), optional
 * whitespace and CRLF, header lines, an empty line and the content; the close delimiter (a
 * delimiter followed by "--") ends the last part, and an epilogue (ignored) may follow. A body that
 * ends before its close delimiter is refused: its last part may be cut short.
 */
import type { Readable } from 'node:stream'
import { problems } from '../problem.js'
import { DelimiterSearch } from './delimiter-search.js'
import { pump } from './pump.js'

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
export const MAX_BOUNDARY = 70

const CR = 0x0d
const CRLF = Buffer.from('\r\n')
/** Transport padding after a delimiter (RFC 2046 §5.1.1) allowed before its CRLF: generous, but bounded. */
const MAX_DELIMITER_LINE = 256
const HEADERS_END = Buffer.from('\r\n\r\n')

export interface PartHead {
  /** Content-Disposition's `name`. */
  name: string
  /** Content-Disposition's `filename` as sent (UTF-8), when present: then the part is a file. */
  filename?: string
  /** The part's Content-Type, when sent. */
  contentType?: string
}

/** Where one part's bytes go, in order; `write` and `end` may return a promise (backpressure), and the reader waits for it. */
export interface PartConsumer {
  /** A piece of the content: only valid during the call (it may be a view of a body chunk that is freed after). */
  write(bytes: Uint8Array): Promise<void> | undefined
  /** The part's content is complete. */
  end(): Promise<void> | undefined
  /** The body failed or was refused: drop the work. */
  abort?(): void
}

export interface MultipartLimits {
  /** Parts in all; one more is 413. */
  parts: number
  /** Bytes of one part's header block; more is 413. */
  headerBytes: number
  /** Header lines of one part; more is 413. */
  headerLines: number
  /** Bytes of the whole body, preamble and epilogue included; more is 413 with `tooLargeDetail`. */
  bodyBytes: number
  tooLargeDetail: string
}

/**
 * A consumer that keeps a small part whole (a form field, a checksum list): more than `maxBytes`
 * is refused with the error `tooLarge` makes. `onComplete` gets the bytes, copied out of the body.
 */
export function collect(maxBytes: number, tooLarge: () => Error, onComplete: (bytes: Buffer) => void | Promise<void>): PartConsumer {
  const pieces: Buffer[] = []
  let size = 0
  return {
    write(bytes) {
      size += bytes.length
      if (size > maxBytes) throw tooLarge()
      pieces.push(Buffer.from(bytes))
      return undefined
    },
    end() {
      const completed = onComplete(Buffer.concat(pieces, size))
      return completed instanceof Promise ? completed : undefined
    },
  }
}

/** Whether a Content-Type is multipart/form-data (RFC 7578), whatever its parameters. */
export const isFormData = (contentType: string | undefined): boolean => /^\s*multipart\/form-data\s*(;|$)/i.test(contentType ?? '')

/** The boundary parameter of a multipart Content-Type (RFC 2046 §5.1.1, a token or a quoted string), or undefined. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(contentType ?? '')
  if (!match) return undefined
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2]
}

const malformed = (detail: string) => problems.validation(`Malformed multipart body: ${detail}`)

/** RFC 7578 §4.2: form-data, a name, perhaps a filename. Header bytes arrive as latin1 and filenames are UTF-8 as browsers and curl send them. */
function partHead(headerBlock: Buffer, limits: MultipartLimits): PartHead {
  const lines: string[] = []
  for (const line of headerBlock.toString('latin1').split('\r\n')) {
    // An obsolete folded line (RFC 5322 §2.2.3) continues the one before.
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`
    else if (line !== '') lines.push(line)
  }
  if (lines.length > limits.headerLines) throw problems.tooLarge(`A part has more than ${limits.headerLines} header lines`)
  let disposition: string | undefined
  let contentType: string | undefined
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon <= 0) throw malformed('a part header line has no name (RFC 2046 §5.1.1)')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    // The first of a repeated header counts, as in busboy.
    if (name === 'content-disposition') disposition ??= value
    else if (name === 'content-type') contentType ??= value
  }
  if (disposition === undefined) throw malformed('a part has no Content-Disposition header (RFC 7578 §4.2)')
  const parsed = readDisposition(disposition)
  if (parsed === undefined) throw malformed('a part\'s Content-Disposition cannot be read (RFC 7578 §4.2)')
  const name = parsed.parameters.get('name')
  if (parsed.type !== 'form-data' || name === undefined) throw malformed('a part\'s Content-Disposition is not form-data with a name (RFC 7578 §4.2)')
  const head: PartHead = { name: utf8(name) }
  const extended = parsed.parameters.get('filename*')
  const decoded = extended === undefined ? undefined : extendedValue(extended)
  const filename = parsed.parameters.get('filename')
  if (decoded !== undefined) head.filename = decoded
  else if (filename !== undefined) head.filename = utf8(filename)
  if (contentType !== undefined) head.contentType = contentType
  return head
}

/**
 * Content-Disposition's type and parameters, read as form-data senders write them (RFC 7578 §4.2
 * and the HTML standard's multipart/form-data encoding): a parameter is a token or a quoted string;
 * in a quoted string a backslash escapes only `"` and `\`, and is kept before anything else,
 * since browsers and curl send file names raw (`C:\dir\a.txt`, `back\slash`), percent-encoding
 * only `"`, CR and LF. busboy reads them the same way. Undefined when it cannot be read.
 */
function readDisposition(value: string): { type: string, parameters: Map<string, string> } | undefined {
  const semicolon = value.indexOf(';')
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase()
  const parameters = new Map<string, string>()
  let at = semicolon === -1 ? value.length : semicolon + 1
  while (at < value.length) {
    const key = /^[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*=[ \t]*/.exec(value.slice(at))
    if (!key) return undefined
    at += key[0].length
    let parameter = ''
    if (value[at] === '"') {
      at++
      for (;;) {
        if (at >= value.length) return undefined
        const char = value[at] as string
        if (char === '"') { at++; break }
        const next = value[at + 1]
        if (char === '\\' && (next === '"' || next === '\\')) { parameter += next; at += 2; continue }
        parameter += char
        at++
      }
      while (value[at] === ' ' || value[at] === '\t') at++
      if (at < value.length && value[at] !== ';') return undefined
    } else {
      const end = value.indexOf(';', at)
      parameter = (end === -1 ? value.slice(at) : value.slice(at, end)).trim()
      at = end === -1 ? value.length : end
    }
    at++
    const name = (key[1] as string).toLowerCase()
    if (parameters.has(name)) return undefined
    parameters.set(name, parameter)
  }
  return { type, parameters }
}

/** An RFC 8187 ext-value (`UTF-8''na%C3%AFve.txt`) decoded; undefined for another charset or a bad one. */
function extendedValue(value: string): string | undefined {
  const match = /^([^']*)'[^']*'(.*)$/.exec(value)
  if (!match) return undefined
  const charset = (match[1] as string).toLowerCase()
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return undefined
  const bytes = Buffer.from((match[2] as string).replace(/%([0-9A-Fa-f]{2})/g, (_all, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1')
  return bytes.toString(charset === 'utf-8' ? 'utf8' : 'latin1')
}

const utf8 = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8')

type State = 'content' | 'after-delimiter' | 'headers' | 'epilogue'

/**
 * The state machine: fed chunk by chunk; returns a promise where a consumer asked it to wait.
 * Exported for the fuzz target (fuzz/targets/multipart.ts), which feeds it without a stream.
 */
export class MultipartReader {
  private readonly search: DelimiterSearch
  private state: State = 'content'
  /** The last bytes of content seen (fewer than the delimiter), held back until the next chunk says whether a delimiter starts in them. A copy. */
  private carried: Buffer | null = CRLF
  /** The part being read; null in the preamble. */
  private consumer: PartConsumer | null = null
  /** Bytes still to drop from the start of a part's content: the CRLF after its headers. */
  private separator = 0
  /** After a delimiter: the bytes of its line read so far. */
  private delimiterLine = ''
  /** The header block read so far (after a CRLF that stands for the delimiter line's). */
  private headerBlock: Buffer = Buffer.alloc(0)
  private parts = 0
  private aborted = false

  constructor(boundary: string, private readonly limits: MultipartLimits, private readonly onPart: (head: PartHead) => PartConsumer | Promise<PartConsumer>) {
    // The body's first delimiter may come without its CRLF: the reader starts with one carried.
    this.search = new DelimiterSearch(Buffer.from(`\r\n--${boundary}`, 'latin1'))
  }

  /** Reads a chunk; a promise when it must wait for a consumer, resolved once the whole chunk is read. */
  feed(chunk: Buffer, at = 0): Promise<void> | undefined {
    while (at < chunk.length && !this.aborted) {
      const step = this.state === 'content' ? this.content(chunk, at)
        : this.state === 'after-delimiter' ? this.afterDelimiter(chunk, at)
          : this.state === 'headers' ? this.headers(chunk, at)
            : chunk.length
      if (typeof step === 'number') {
        at = step
        continue
      }
      const [wait, next] = step
      return wait.then(() => this.feed(chunk, next))
    }
    return undefined
  }

  /** The body ended: it must have ended after its close delimiter. */
  end(): void {
    if (this.state !== 'epilogue') throw malformed('it ended before the closing boundary (RFC 2046 §5.1.1)')
  }

  abort(): void {
    this.aborted = true
    this.consumer?.abort?.()
    this.consumer = null
  }

  /** Hands content to the part's consumer (none in the preamble), less the separator's bytes. */
  private emit(bytes: Uint8Array): Promise<void> | undefined {
    if (this.separator > 0) {
      const dropped = Math.min(this.separator, bytes.length)
      this.separator -= dropped
      bytes = bytes.subarray(dropped)
    }
    return bytes.length === 0 || this.consumer === null ? undefined : this.consumer.write(bytes)
  }

  /** A delimiter ended the content: the part (if any) is complete. */
  private delimited(): Promise<void> | undefined {
    this.state = 'after-delimiter'
    this.separator = 0
    this.delimiterLine = ''
    const consumer = this.consumer
    this.consumer = null
    return consumer?.end()
  }

  /** Content up to the next delimiter: the next offset, or a wait and the offset after it. */
  private content(chunk: Buffer, at: number): number | [Promise<void>, number] {
    const search = this.search
    const span = search.length - 1
    const carried = this.carried
    if (carried !== null) {
      this.carried = null
      // A delimiter starts with CR: held-back bytes without one are content (most chunks' case).
      if (carried.includes(CR)) {
        // Whether a delimiter starts in the bytes held back: they with the chunk's first bytes.
        const joined = Buffer.concat([carried, chunk.subarray(at, at + span)])
        const found = joined.indexOf(search.delimiter)
        const short = joined.length - carried.length < span
        if (found !== -1 && found < carried.length) {
          return this.then([this.emit(joined.subarray(0, found)), () => this.delimited()], at + found + search.length - carried.length)
        }
        if (short) {
          // Too little of the chunk to decide on every held-back byte: settle those that can no longer start one.
          const settled = Math.max(0, joined.length - span)
          this.carried = Buffer.from(joined.subarray(settled))
          return this.then([this.emit(joined.subarray(0, settled))], chunk.length)
        }
      }
      const wait = this.emit(carried)
      if (wait !== undefined) return [wait, at]
    }
    // Starts from `limit` on lack room for a whole delimiter in this chunk.
    const limit = Math.max(at, chunk.length - span)
    if (at < limit) {
      const found = search.find(chunk, at, limit)
      if (found !== -1) return this.then([this.emit(chunk.subarray(at, found)), () => this.delimited()], found + search.length)
    }
    // Of those, the first whose bytes so far begin a delimiter is held back with all after it, for
    // the next chunk to decide on; the rest is content, handed on whole (nearly every chunk).
    const held = this.partialStart(chunk, limit)
    if (held < chunk.length) this.carried = Buffer.from(chunk.subarray(held))
    // The whole chunk as it came where it is all content: no view to make (nearly every chunk of a file).
    const wait = this.emit(at === 0 && held === chunk.length ? chunk : chunk.subarray(at, held))
    return wait === undefined ? chunk.length : [wait, chunk.length]
  }

  /** The first start from `from` on at which the chunk's remaining bytes are the beginning of a delimiter; the chunk's length if none. */
  private partialStart(chunk: Buffer, from: number): number {
    const delimiter = this.search.delimiter
    for (let start = chunk.indexOf(CR, from); start !== -1; start = chunk.indexOf(CR, start + 1)) {
      let index = 1
      while (start + index < chunk.length && chunk[start + index] === delimiter[index]) index++
      if (start + index === chunk.length) return start
    }
    return chunk.length
  }

  /**
   * Runs steps one after another, each started once the one before has settled: the first is
   * already started (its result given), later ones are functions. The offset when no step waits,
   * else a wait and the offset to go on from.
   */
  private then(steps: [Promise<void> | undefined, ...Array<() => Promise<void> | undefined>], next: number): number | [Promise<void>, number] {
    const [first, ...rest] = steps
    let wait = first
    for (const step of rest) wait = wait === undefined ? step() : wait.then(step)
    return wait === undefined ? next : [wait, next]
  }

  /** After a delimiter: "--" closes the body; otherwise optional whitespace and CRLF open a part (RFC 2046 §5.1.1). */
  private afterDelimiter(chunk: Buffer, at: number): number {
    while (at < chunk.length) {
      const byte = chunk[at++] as number
      const line = this.delimiterLine += String.fromCharCode(byte)
      if (line.length > MAX_DELIMITER_LINE) throw malformed('a boundary line has more after the boundary than whitespace (RFC 2046 §5.1.1)')
      if (line === '--') {
        this.state = 'epilogue'
        return at
      }
      if (line === '-') continue
      if (/^[ \t]*$/.test(line)) continue
      if (/^[ \t]*\r$/.test(line)) continue
      if (/^[ \t]*\r\n$/.test(line)) {
        this.state = 'headers'
        this.headerBlock = CRLF
        return at
      }
      throw malformed('a boundary line has more after the boundary than whitespace (RFC 2046 §5.1.1)')
    }
    return at
  }

  /** A part's header block, up to its empty line; then the consumer the route gives for the part. */
  private headers(chunk: Buffer, at: number): number | [Promise<void>, number] {
    const before = this.headerBlock.length
    // Never more than the limit and the four bytes of the block's end.
    const room = this.limits.headerBytes + HEADERS_END.length + CRLF.length - before
    const block = Buffer.concat([this.headerBlock, chunk.subarray(at, at + room)])
    const end = block.indexOf(HEADERS_END)
    if (end === -1) {
      // Up to three bytes of the block's end may have come already.
      if (block.length - CRLF.length > this.limits.headerBytes + HEADERS_END.length - 1) throw problems.tooLarge(`A part's headers are larger than ${this.limits.headerBytes} bytes`)
      this.headerBlock = block
      return Math.min(chunk.length, at + room)
    }
    if (end - CRLF.length > this.limits.headerBytes) throw problems.tooLarge(`A part's headers are larger than ${this.limits.headerBytes} bytes`)
    this.headerBlock = Buffer.alloc(0)
    if (++this.parts > this.limits.parts) throw problems.tooLarge(`The multipart body has more than ${this.limits.parts} parts`)
    const head = partHead(block.subarray(CRLF.length, end), this.limits)
    const next = at + end + HEADERS_END.length - before
    this.state = 'content'
    // The block's second CRLF separates the headers from the content (RFC 2046 §5.1.1:
    // MIME-part-headers [CRLF *OCTET]), or, for a part with no content, begins the next delimiter.
    // It is held back as content would be, and dropped if no delimiter starts with it.
    this.carried = CRLF
    this.separator = CRLF.length
    const consumer = this.onPart(head)
    if (!(consumer instanceof Promise)) {
      this.consumer = consumer
      return next
    }
    return [consumer.then((started) => {
      if (this.aborted) started.abort?.()
      else this.consumer = started
    }), next]
  }
}

/**
 * Reads a multipart/form-data body to its end (through pump.ts, as a raw body is read), calling
 * `onPart` for each part and feeding the consumer it returns. The body is paused whenever a
 * consumer asks to wait. Resolves once the body has ended after its close delimiter; rejects (the
 * consumer aborted, the body left paused) on a malformed body (400), a limit (413), a consumer's
 * or `onPart`'s error, a stream error, or a body that closes before its end (499: the client went
 * away).
 *
 * Each body chunk that is wholly its own buffer is freed once read (release.ts), as the raw form's
 * are: whatever was kept of it (held-back bytes, header bytes) was copied.
 */
export function readMultipart(body: Readable, boundary: string, limits: MultipartLimits,
  onPart: (head: PartHead) => PartConsumer | Promise<PartConsumer>): Promise<void> {
  if (boundary.length === 0 || boundary.length > MAX_BOUNDARY) {
    return Promise.reject(problems.validation(`The multipart boundary must be 1 to ${MAX_BOUNDARY} characters (RFC 2046)`))
  }
  const reader = new MultipartReader(boundary, limits, onPart)
  return pump(body, (chunk) => reader.feed(chunk), { maxBytes: limits.bodyBytes, tooLargeDetail: limits.tooLargeDetail, release: true }, () => reader.end())
    .then(() => undefined, (error: unknown) => {
      reader.abort()
      throw error
    })
}
