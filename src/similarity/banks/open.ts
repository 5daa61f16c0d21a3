/**
 * Opening a bank file (format.ts) and searching it. openBank reads the whole file once: it checks
 * the header, the data's SHA-256 and the entry table, keeps the hash records in memory (and builds
 * the type's index over them), and leaves the ids and labels on disk, read for the matches only
 * through the descriptor it keeps open until close().
 */
import { close, closeSync, fstat, open, read, readSync } from 'node:fs'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
import { basename } from 'node:path'
import { BANK_HEADER_BYTES, decodeBankHeader, NO_LABEL, type BankHeader } from './format.js'
import { DigestSearcher } from './digest.js'
import { MatchSink, type BankSearcher } from './sink.js'
import { SsdeepSearcher, ssdeepRecordIsValid } from './ssdeep.js'
import { openPdqSearcher } from './table-threads.js'
import { TlshSearcher } from './tlsh.js'
import {
  BANK_TYPE_SPECS, BankFileError, type BankMatch, type BankSearchOptions, type BankSearchResult, type BankType,
} from './types.js'

export interface Bank {
  /** The bank's name: its file's name without a trailing `.bank`, unless openBank was given one. */
  readonly name: string
  readonly type: BankType
  readonly count: number
  /** The data's SHA-256, 64 lower-case hex digits (as `tail -c +257 FILE | sha256sum` prints it). */
  readonly dataSha256: string
  readonly path: string
  /** The file's size. */
  readonly bytes: number
  readonly importedAt: Date
  /** Bytes held in memory for searching: the hash records and the index. */
  readonly memoryBytes: number
  /** How the bank is searched: `multi-index hashing, 11 slices of 23 bits`, `linear scan`, … */
  readonly index: string
  /**
   * Every entry within the threshold of the query, or of any of several query hashes (each entry
   * once, at its best value; `variant` says which query hash gave it when there are several).
   * Each query is a hash of the bank's type as a client writes it (isBankHash); a query that is
   * not throws a TypeError. Synchronous: the search runs on the caller's thread, and the ids and
   * labels of the matches returned are read with positioned reads (the page cache, normally).
   */
  search(query: string | readonly string[], options: BankSearchOptions): BankSearchResult
  /**
   * Many searches at once, each answered as search() would answer it, in order. A PDQ bank with an
   * index runs them together, for a third to a half more searches per CPU second (pdq.ts searchMany).
   */
  searchMany(queries: readonly (string | readonly string[])[], options: BankSearchOptions): BankSearchResult[]
  /** Closes the file. A search after close throws. */
  close(): void
  /** Whether close() was called (the folder replaced or removed the bank). */
  readonly closed: boolean
}

const READ_CHUNK = 4 << 20

/** Reads `length` bytes at `position` into `target` (from `at`), or throws when the file is shorter. */
const openFile = promisify(open)
const readFile = promisify(read)
const statFile = promisify(fstat)
const closeFile = promisify(close)

async function readFully(file: number, target: Buffer, at: number, length: number, position: number, path: string): Promise<void> {
  let done = 0
  while (done < length) {
    const { bytesRead } = await readFile(file, target, at + done, length - done, position + done)
    if (bytesRead === 0) throw new BankFileError(path, 'it ended before its header says (truncated while being read)')
    done += bytesRead
  }
}

/**
 * Opens and checks a bank. Throws BankFileError (naming the file and what is wrong) for a file
 * that cannot be opened, is not a bank, is of another format version, is truncated or damaged.
 */
export async function openBank(path: string, name?: string): Promise<Bank> {
  let file: number
  try {
    file = await openFile(path, 'r')
  } catch (error) {
    throw new BankFileError(path, `it cannot be opened (${(error as NodeJS.ErrnoException).code ?? String(error)})`)
  }
  // PDQ's tables are built on their threads while the rest of the file is read and checked; a
  // refused file stops them.
  const building = new AbortController()
  try {
    const size = (await statFile(file)).size
    const head = Buffer.alloc(BANK_HEADER_BYTES)
    const { bytesRead } = await readFile(file, head, 0, BANK_HEADER_BYTES, 0)
    const header = decodeBankHeader(path, head.subarray(0, bytesRead), size)
    const sha = createHash('sha256')
    // The records, in a buffer of their own (aligned for the PDQ word view); PDQ's shared with the
    // threads that build its tables (table-threads.ts).
    const records = Buffer.from(header.spec.type === 'pdq' ? new SharedArrayBuffer(header.hashesLength) : new ArrayBuffer(header.hashesLength))
    for (let at = 0; at < header.hashesLength; at += READ_CHUNK) {
      const length = Math.min(READ_CHUNK, header.hashesLength - at)
      await readFully(file, records, at, length, header.hashesOffset + at, path)
      sha.update(records.subarray(at, at + length))
    }
    // Any 32 bytes are a PDQ hash: its tables need no check of the records to start.
    const pdqSearcher = header.spec.type === 'pdq' ? searcherFor(header, records, building.signal) : null
    pdqSearcher?.catch(() => {}) // awaited below, unless the file is refused first
    // The entry table: offsets that rise from 0 to the strings' length, each span at least 4 bytes.
    const chunk = Buffer.allocUnsafe(READ_CHUNK)
    // Through a DataView: V8 compiles its little-endian reads to plain loads, where Buffer's
    // readUInt32LE is a call a word (10 M of them in a 10 M-entry bank).
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.length)
    let previous = -1
    for (let at = 0; at < header.entriesLength; at += READ_CHUNK) {
      const length = Math.min(READ_CHUNK, header.entriesLength - at)
      await readFully(file, chunk, 0, length, header.entriesOffset + at, path)
      sha.update(chunk.subarray(0, length))
      for (let k = 0; k < length; k += 8) {
        const high = view.getUint32(k + 4, true)
        const offset = high >= 0x20_0000 ? Number.NaN : view.getUint32(k, true) + high * 0x1_0000_0000
        const first = at + k === 0
        if (!(first ? offset === 0 : offset >= previous + 4) || offset > header.stringsLength) {
          throw new BankFileError(path, `its entry table is out of order at entry ${(at + k) / 8} (damaged)`)
        }
        previous = offset
      }
    }
    if (previous !== header.stringsLength) throw new BankFileError(path, 'its entry table does not end at the strings\' length (damaged)')
    for (let at = 0; at < header.stringsLength; at += READ_CHUNK) {
      const length = Math.min(READ_CHUNK, header.stringsLength - at)
      await readFully(file, chunk, 0, length, header.stringsOffset + at, path)
      sha.update(chunk.subarray(0, length))
    }
    const dataSha256 = sha.digest()
    if (!dataSha256.equals(header.dataSha256)) throw new BankFileError(path, 'its data SHA-256 does not match its header (damaged or truncated)')
    checkRecords(path, header, records)
    return new FileBank(path, name ?? basename(path).replace(/\.bank$/, ''), file, header, size, records, await (pdqSearcher ?? searcherFor(header, records)))
  } catch (error) {
    building.abort(error)
    await closeFile(file).catch(() => {})
    throw error
  }
}

/** Records whose form the searches rely on: sorted digests, well-formed ssdeep records. */
function checkRecords(path: string, header: BankHeader, records: Buffer): void {
  const width = header.spec.recordBytes
  if (header.spec.type === 'ssdeep') {
    for (let entry = 0; entry < header.count; entry++) {
      if (!ssdeepRecordIsValid(records, entry * width)) throw new BankFileError(path, `its ssdeep record ${entry} is not well formed (damaged)`)
    }
  }
  if (header.spec.type === 'md5' || header.spec.type === 'sha1' || header.spec.type === 'sha256') {
    for (let entry = 1; entry < header.count; entry++) {
      if (records.compare(records, entry * width, entry * width + width, (entry - 1) * width, entry * width) > 0) {
        throw new BankFileError(path, `its records are not sorted at entry ${entry} (damaged)`)
      }
    }
  }
}

/**
 * The type's searcher. PDQ's tables are built on threads (openBank starts them early, with a
 * signal); TLSH's and ssdeep's a step at a time, yielding to the event loop between steps.
 */
async function searcherFor(header: BankHeader, records: Buffer, signal?: AbortSignal): Promise<BankSearcher> {
  switch (header.spec.type) {
    case 'pdq': return await openPdqSearcher(records, header.count, signal)
    case 'tlsh': return await TlshSearcher.create(records, header.count)
    case 'ssdeep': return await SsdeepSearcher.create(records, header.count)
    default: return new DigestSearcher(records, header.count, header.spec.recordBytes)
  }
}

class FileBank implements Bank {
  readonly name: string
  readonly type: BankType
  readonly count: number
  readonly dataSha256: string
  readonly path: string
  readonly bytes: number
  readonly importedAt: Date
  readonly memoryBytes: number
  readonly index: string
  readonly #header: BankHeader
  readonly #fd: number
  readonly #searcher: BankSearcher
  #closed = false

  constructor(path: string, name: string, fd: number, header: BankHeader, bytes: number, records: Buffer, searcher: BankSearcher) {
    this.path = path
    this.name = name
    this.#fd = fd
    this.#header = header
    this.type = header.spec.type
    this.count = header.count
    this.dataSha256 = header.dataSha256.toString('hex')
    this.bytes = bytes
    this.importedAt = header.importedAt
    this.#searcher = searcher
    this.memoryBytes = records.length + searcher.indexBytes
    this.index = searcher.indexName
  }

  search(query: string | readonly string[], options: BankSearchOptions): BankSearchResult {
    return this.searchMany([query], options)[0]!
  }

  searchMany(queries: readonly (string | readonly string[])[], options: BankSearchOptions): BankSearchResult[] {
    if (this.#closed) throw new Error(`bank ${this.name} is closed`)
    const { limit } = options
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError('limit must be an integer of at least 1')
    const spec = BANK_TYPE_SPECS[this.type]
    const groups = queries.map((query) => (typeof query === 'string' ? [query] : query).map((text, at) => {
      const record = typeof text === 'string' && text.length <= 200 ? spec.encode(text) : null
      if (record === null) throw new TypeError(`query ${at} is not a ${this.type} hash (${spec.form})`)
      return record
    }))
    const measure = this.type === 'ssdeep' ? 'score' : 'distance'
    const sinks = groups.map((group) => new MatchSink(measure, group.length, limit))
    const lengthTerm = options.lengthTerm ?? true
    const searcher = this.#searcher
    const searched = groups.filter((group) => group.length > 0)
    if (searcher.searchMany !== undefined && searched.length > 1) {
      searcher.searchMany(searched, options.threshold, lengthTerm, sinks.filter((_, at) => groups[at]!.length > 0))
    } else {
      groups.forEach((group, at) => { if (group.length > 0) searcher.search(group, options.threshold, lengthTerm, sinks[at]!) })
    }
    return sinks.map((sink, at) => this.#answer(sink, groups[at]!.length, limit))
  }

  /** A search's answer: the best `limit` of its sink, with their ids and labels. */
  #answer(sink: MatchSink, queryCount: number, limit: number): BankSearchResult {
    const best = sink.best(limit)
    const matches = best.map((at): BankMatch => {
      const { id, label } = this.#strings(sink.entries[at]!)
      const value = sink.values[at]!
      return {
        id, label,
        ...(this.type === 'ssdeep' ? { score: value } : { distance: value }),
        ...(queryCount > 1 ? { variant: sink.variants[at]! } : {}),
      }
    })
    return { matches, truncated: sink.size > limit }
  }

  /** An entry's id and label, read from the file. */
  #strings(entry: number): { id: string, label: string | null } {
    const header = this.#header
    const fd = this.#fd
    const span = Buffer.allocUnsafe(16)
    readAll(fd, span, 16, header.entriesOffset + entry * 8, this.path)
    const from = span.readUInt32LE(0) + span.readUInt32LE(4) * 0x1_0000_0000
    const to = span.readUInt32LE(8) + span.readUInt32LE(12) * 0x1_0000_0000
    const bytes = Buffer.allocUnsafe(to - from)
    readAll(fd, bytes, bytes.length, header.stringsOffset + from, this.path)
    const idBytes = bytes.readUInt16LE(0)
    const labelBytes = bytes.readUInt16LE(2)
    const labelLength = labelBytes === NO_LABEL ? 0 : labelBytes
    if (4 + idBytes + labelLength !== bytes.length) throw new BankFileError(this.path, `its strings of entry ${entry} do not add up (damaged)`)
    return { id: bytes.toString('utf8', 4, 4 + idBytes), label: labelBytes === NO_LABEL ? null : bytes.toString('utf8', 4 + idBytes) }
  }

  get closed(): boolean { return this.#closed }

  close(): void {
    if (this.#closed) return
    this.#closed = true
    closeSync(this.#fd)
  }
}

function readAll(fd: number, target: Buffer, length: number, position: number, path: string): void {
  let done = 0
  while (done < length) {
    const got = readSync(fd, target, done, length - done, position + done)
    if (got === 0) throw new BankFileError(path, 'it is shorter than when it was opened')
    done += got
  }
}
