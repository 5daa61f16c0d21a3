/**
 * The breached-password store: a file of Pwned Passwords hashes with their counts, made by
 * `npm run pwned:import` (import.ts) and read here with positioned reads. It is never loaded whole:
 * a lookup reads one prefix's records (the index is held in memory in 2.1 MB, CompactIndex), so a
 * 40 GB store of two billion hashes needs no more memory than a small one.
 *
 * ## The file format, version 1
 *
 * All integers are little-endian. Three parts, one after the other:
 *
 * | offset | bytes | field |
 * |---|---|---|
 * | 0 | 8 | magic `HASHDPWN` |
 * | 8 | 4 | format version: 1 |
 * | 12 | 1 | hash kind: 1 = SHA-1 (20 bytes), 2 = NTLM (16 bytes) |
 * | 13 | 1 | prefix bits: 20 (the five hex digits of HIBP's range API) |
 * | 14 | 2 | reserved, 0 |
 * | 16 | 8 | hashes in the store |
 * | 24 | 8 | occurrences: the sum of every count |
 * | 32 | 8 | data date, ms since 1970: the newest modification time of the imported files |
 * | 40 | 8 | import date, ms since 1970 |
 * | 48 | 8 | index offset (256) |
 * | 56 | 8 | index length: (2^20 + 1) · 8 bytes |
 * | 64 | 8 | data offset (index offset + index length) |
 * | 72 | 8 | data length |
 * | 80 | 32 | SHA-256 of the index |
 * | 112 | 32 | SHA-256 of the data |
 * | 144 | 32 | SHA-256 of bytes 0 to 143 (the header up to here) |
 * | 176 | 80 | reserved, 0 |
 *
 * - **Index:** 2^20 + 1 unsigned 64-bit byte offsets into the data, one per prefix: prefix p's
 *   records are the bytes from entry p to entry p + 1; the last entry is the data length.
 * - **Data:** each prefix's records, sorted by suffix, one per hash. The prefix (20 bits) is
 *   implied by the index, which leaves 140 bits of a SHA-1 (35 hex digits, 17.5 bytes) and 108 of
 *   an NTLM hash (27 hex digits, 13.5 bytes). A record is the suffix's whole bytes (17 or 13), then
 *   one byte holding the suffix's last hex digit in its high nibble and a count tag in its low
 *   nibble, then the count's extra bytes as the tag says:
 *
 *   | tag | extra bytes | count |
 *   |---|---|---|
 *   | 0–11 | 0 | tag + 1 (1 to 12) |
 *   | 12 | 1 | 13 + the byte (13 to 268) |
 *   | 13 | 2 | 269 + the u16 (269 to 65,804) |
 *   | 14 | 4 | the u32 |
 *   | 15 | 6 | the u48 |
 *
 *   The importer writes the shortest form. Most Pwned Passwords counts are small, so a SHA-1 hash
 *   takes 18 bytes and a little more on average, against about 45 in HIBP's text.
 *
 * ## What is checked, and when
 *
 * - **At open** (start-up and every reload): the magic, the version, the kind, the header's own
 *   checksum, the file's size against the header (a truncated copy is refused), the index's
 *   SHA-256, and that its offsets rise to the data length. That reads the header and the 8 MiB
 *   index, whatever the store's size. Any failure is a ConfigError naming the file and what is
 *   wrong: at start the server does not start (exit status 2); on a reload the store in force stays.
 * - **The data's SHA-256** is not read at open: it would mean reading 40 GB at every start of every
 *   replica. The importer computes it as it writes, and `npm run pwned:verify -- STORE` reads the
 *   whole file and checks it (run it after copying a store to a volume). A record that does not
 *   decode within its prefix's bounds is a read error, which PASSWORD_SCREENING_FAIL handles.
 */
import { close as closeAsync, closeSync, fstat, fstatSync, open as openAsync, openSync, read, readSync } from 'node:fs'
import { promisify } from 'node:util'
import { createHash } from 'node:crypto'
import { checkHeaderSeal, newHeader, sealHeader, type HeaderSeal } from '../atomic-file.js'
import { ConfigError } from '../config.js'
import { pageCacheReader } from './page-cache-read.js'
import { noteStoreRead } from './status.js'
import type { HashKind, StoreFacts } from './store-facts.js'

export type { HashKind, StoreFacts }

export const MAGIC = Buffer.from('HASHDPWN', 'latin1')
export const FORMAT_VERSION = 1
export const HEADER_BYTES = 256
export const PREFIX_BITS = 20
export const PREFIXES = 1 << PREFIX_BITS
export const INDEX_BYTES = (PREFIXES + 1) * 8
/** The magic, the version and the header checksum over bytes 0 to 143 (the table above). */
export const STORE_SEAL: HeaderSeal = { magic: MAGIC, version: FORMAT_VERSION, bytes: HEADER_BYTES, summed: 144 }

export interface KindSpec {
  kind: HashKind
  code: number
  /** Bytes of the whole hash. */
  hashBytes: number
  /** Hex digits after the five of the prefix (35 for SHA-1, 27 for NTLM). */
  suffixDigits: number
  /** Whole bytes of the suffix in a record, before the byte shared with the tag. */
  suffixBytes: number
}

export const KINDS: Record<HashKind, KindSpec> = {
  sha1: { kind: 'sha1', code: 1, hashBytes: 20, suffixDigits: 35, suffixBytes: 17 },
  ntlm: { kind: 'ntlm', code: 2, hashBytes: 16, suffixDigits: 27, suffixBytes: 13 },
}

export function kindForCode(code: number): KindSpec | undefined {
  return Object.values(KINDS).find((spec) => spec.code === code)
}

/** What the header says. */
export interface StoreHeader {
  version: number
  kind: KindSpec
  hashes: number
  occurrences: number
  dataDate: Date
  importedAt: Date
  indexOffset: number
  indexLength: number
  dataOffset: number
  dataLength: number
  indexSha256: Buffer
  dataSha256: Buffer
}

/** Extra bytes after a record's tag byte, by tag. */
export const EXTRA_BYTES = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 4, 6]

/** The tag of a count, in the shortest form (see the table above). */
export function countTag(count: number): number {
  if (count <= 12) return count - 1
  if (count <= 268) return 12
  if (count <= 65_804) return 13
  if (count <= 0xffff_ffff) return 14
  return 15
}

/** Writes a count's extra bytes at `at` for its tag; returns the bytes written. */
export function writeCountExtra(target: Uint8Array, at: number, tag: number, count: number): number {
  switch (tag) {
    case 12: target[at] = count - 13; return 1
    case 13: { const value = count - 269; target[at] = value & 0xff; target[at + 1] = value >>> 8; return 2 }
    case 14: target[at] = count & 0xff; target[at + 1] = (count >>> 8) & 0xff; target[at + 2] = (count >>> 16) & 0xff; target[at + 3] = count >>> 24; return 4
    case 15: {
      const low = count % 0x1_0000_0000
      const high = Math.floor(count / 0x1_0000_0000)
      target[at] = low & 0xff; target[at + 1] = (low >>> 8) & 0xff; target[at + 2] = (low >>> 16) & 0xff; target[at + 3] = low >>> 24
      target[at + 4] = high & 0xff; target[at + 5] = (high >>> 8) & 0xff
      return 6
    }
    default: return 0
  }
}

/** The count a tag and its extra bytes at `at` stand for. */
export function readCount(source: Uint8Array, at: number, tag: number): number {
  switch (tag) {
    case 12: return 13 + (source[at] as number)
    case 13: return 269 + ((source[at] as number) | ((source[at + 1] as number) << 8))
    case 14: return ((source[at] as number) | ((source[at + 1] as number) << 8) | ((source[at + 2] as number) << 16)) + (source[at + 3] as number) * 0x100_0000
    case 15: return ((source[at] as number) | ((source[at + 1] as number) << 8) | ((source[at + 2] as number) << 16)) + (source[at + 3] as number) * 0x100_0000
      + ((source[at + 4] as number) + (source[at + 5] as number) * 0x100) * 0x1_0000_0000
    default: return tag + 1
  }
}

/** The header's bytes for these fields (the header checksum filled in). */
export function encodeHeader(header: Omit<StoreHeader, 'version'>): Buffer {
  const bytes = newHeader(STORE_SEAL)
  bytes.writeUInt8(header.kind.code, 12)
  bytes.writeUInt8(PREFIX_BITS, 13)
  bytes.writeBigUInt64LE(BigInt(header.hashes), 16)
  bytes.writeBigUInt64LE(BigInt(header.occurrences), 24)
  bytes.writeBigUInt64LE(BigInt(header.dataDate.getTime()), 32)
  bytes.writeBigUInt64LE(BigInt(header.importedAt.getTime()), 40)
  bytes.writeBigUInt64LE(BigInt(header.indexOffset), 48)
  bytes.writeBigUInt64LE(BigInt(header.indexLength), 56)
  bytes.writeBigUInt64LE(BigInt(header.dataOffset), 64)
  bytes.writeBigUInt64LE(BigInt(header.dataLength), 72)
  header.indexSha256.copy(bytes, 80)
  header.dataSha256.copy(bytes, 112)
  return sealHeader(STORE_SEAL, bytes)
}

/** An unsigned 64-bit little-endian integer below 2^53, as a number. */
const u64 = (bytes: Buffer, at: number): number => bytes.readUInt32LE(at) + bytes.readUInt32LE(at + 4) * 0x1_0000_0000

const STORE_REFUSALS = {
  notThisFormat: 'it is not a hashd breached-password store (no HASHDPWN header); make one with npm run pwned:import',
  otherVersion: (version: number) =>
    `it is a store of format version ${version}, and this hashd reads version ${FORMAT_VERSION}; import the data again with this version's npm run pwned:import`,
}

/** Reads and checks a header; `refuse` makes the error (it names the file). */
export function decodeHeader(bytes: Buffer, refuse: (why: string) => Error): StoreHeader {
  if (bytes.length < HEADER_BYTES) throw refuse(`it is ${bytes.length} bytes long, shorter than a store's ${HEADER_BYTES}-byte header (truncated, or not a store)`)
  checkHeaderSeal(STORE_SEAL, bytes, STORE_REFUSALS, refuse)
  const version = FORMAT_VERSION
  const kind = kindForCode(bytes.readUInt8(12))
  if (!kind) throw refuse(`its hash kind ${bytes.readUInt8(12)} is unknown`)
  if (bytes.readUInt8(13) !== PREFIX_BITS) throw refuse(`its prefix is ${bytes.readUInt8(13)} bits, not ${PREFIX_BITS}`)
  const header: StoreHeader = {
    version, kind,
    hashes: u64(bytes, 16), occurrences: u64(bytes, 24),
    dataDate: new Date(u64(bytes, 32)), importedAt: new Date(u64(bytes, 40)),
    indexOffset: u64(bytes, 48), indexLength: u64(bytes, 56), dataOffset: u64(bytes, 64), dataLength: u64(bytes, 72),
    indexSha256: Buffer.from(bytes.subarray(80, 112)), dataSha256: Buffer.from(bytes.subarray(112, 144)),
  }
  if (header.indexOffset !== HEADER_BYTES || header.indexLength !== INDEX_BYTES || header.dataOffset !== HEADER_BYTES + INDEX_BYTES) {
    throw refuse('its header gives an index or data offset this version does not write')
  }
  return header
}

/** A store's records for one prefix: the raw bytes, and how to walk them. */
export interface PrefixRecords {
  bytes: Buffer
  spec: KindSpec
}

/**
 * One open store. Reads are positioned reads on its file descriptor: from the page cache on the
 * event loop when the pages are there (page-cache-read.ts, which never waits for the disk), else
 * through libuv's thread pool. A replaced store is retired: its descriptor is closed once no read
 * is in flight.
 */
export class PwnedStore {
  readonly file: string
  readonly header: StoreHeader
  readonly id: string
  readonly bytes: number
  /** The data date as HTTP writes it (Last-Modified of /range answers). */
  readonly lastModified: string
  #fd: number
  #inFlight = 0
  #retired = false

  /** The index in memory, when every prefix fits CompactIndex; null: read from the file. */
  readonly #index: CompactIndex | null
  /** Reads that never wait, where the platform has them (null: every read goes to the pool). */
  readonly #pageCacheRead = pageCacheReader()

  private constructor(file: string, fd: number, header: StoreHeader, bytes: number, index: CompactIndex | null) {
    this.file = file
    this.#fd = fd
    this.header = header
    this.bytes = bytes
    this.#index = index
    this.lastModified = header.dataDate.toUTCString()
    this.id = header.dataSha256.subarray(0, 8).toString('hex')
  }

  /**
   * Opens and checks a store (see "What is checked" above). `variable` names the setting in
   * errors (PWNED_STORE); `expected` is the kind that setting must hold. Synchronous: for the
   * start, before the server listens, and for the importer's check of what it wrote.
   */
  static open(file: string, variable: string, expected?: HashKind): PwnedStore {
    const refuse = refusal(file, variable)
    let fd: number
    try {
      fd = openSync(file, 'r')
    } catch (error) {
      throw refuse(`cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    try {
      const head = Buffer.alloc(HEADER_BYTES)
      const header = checkHeader(head.subarray(0, readSync(fd, head, 0, HEADER_BYTES, 0)), fstatSync(fd).size, variable, expected, refuse)
      const index = new IndexCheck(header, refuse)
      const piece = Buffer.allocUnsafe(INDEX_PIECE_BYTES)
      while (!index.done) index.feed(piece.subarray(0, readSync(fd, piece, 0, index.nextPieceBytes(piece.length), index.position)))
      return new PwnedStore(file, fd, header, header.dataOffset + header.dataLength, index.finish())
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /**
   * The same checks with reads through libuv, for a store opened while the server runs (a reload):
   * the 8 MiB index is read and checked a 64 KiB piece at a time, each piece after its own read,
   * so the event loop serves requests between them instead of waiting for the whole index
   * (some 70 ms of the main thread, 300 ms on a loaded machine, done at once).
   */
  static async openAsync(file: string, variable: string, expected?: HashKind): Promise<PwnedStore> {
    const refuse = refusal(file, variable)
    let fd: number
    try {
      fd = await openFile(file, 'r')
    } catch (error) {
      throw refuse(`cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
    }
    try {
      const head = Buffer.alloc(HEADER_BYTES)
      const { bytesRead } = await readFile(fd, head, 0, HEADER_BYTES, 0)
      const header = checkHeader(head.subarray(0, bytesRead), (await statFile(fd)).size, variable, expected, refuse)
      const index = new IndexCheck(header, refuse)
      const piece = Buffer.allocUnsafe(INDEX_PIECE_BYTES)
      while (!index.done) {
        const { bytesRead: got } = await readFile(fd, piece, 0, index.nextPieceBytes(piece.length), index.position)
        index.feed(piece.subarray(0, got))
      }
      return new PwnedStore(file, fd, header, header.dataOffset + header.dataLength, index.finish())
    } catch (error) {
      await closeFile(fd).catch(() => {})
      throw error
    }
  }

  /** Whether this store's descriptor is still open (false once retired and drained). */
  get open(): boolean { return this.#fd !== -1 }

  facts(): StoreFacts {
    const { header } = this
    return {
      kind: header.kind.kind, file: this.file, hashes: header.hashes, occurrences: header.occurrences, bytes: this.bytes,
      dataDate: header.dataDate.toISOString(), importedAt: header.importedAt.toISOString(), id: this.id,
    }
  }

  /**
   * The records of one prefix (0 to 2^20 − 1) when they can be had at once, on this tick: the index
   * is in memory and the page cache holds the records. Null: ask `prefix`, which reads through
   * libuv's pool.
   */
  prefixNow(prefix: number): PrefixRecords | null {
    const index = this.#index
    if (index === null || this.#fd === -1 || this.#pageCacheRead === null) return null
    const bytes = Buffer.allocUnsafe(index.lengths[prefix] as number)
    if (bytes.length > 0 && this.#pageCacheRead(this.#fd, bytes, this.header.dataOffset + index.start(prefix)) !== bytes.length) return null
    noteStoreRead(this.header.kind.kind, true, true)
    return { bytes, spec: this.header.kind }
  }

  /**
   * The records of one prefix (0 to 2^20 − 1), read through libuv's pool: for a caller that has
   * tried `prefixNow` first. Rejects when the file cannot be read.
   */
  prefix(prefix: number): Promise<PrefixRecords> {
    if (this.#fd === -1) return Promise.reject(new Error('store closed'))
    const index = this.#index
    if (index === null) return this.#prefixFromDisk(prefix)
    // The common case, one read and one promise (the CPU profile of /range showed the second
    // promise and the async function's bookkeeping beside the read itself).
    const start = index.start(prefix)
    const bytes = Buffer.allocUnsafe(index.lengths[prefix] as number)
    if (bytes.length === 0) {
      noteStoreRead(this.header.kind.kind, true)
      return Promise.resolve({ bytes, spec: this.header.kind })
    }
    this.#inFlight++
    return new Promise((resolve, reject) => {
      this.#read(bytes, this.header.dataOffset + start, (error) => {
        this.#inFlight--
        if (this.#retired && this.#inFlight === 0) this.#close()
        noteStoreRead(this.header.kind.kind, error === null)
        if (error === null) resolve({ bytes, spec: this.header.kind })
        else reject(error)
      })
    })
  }

  /** prefix() for a store whose index stays on disk: the two index entries, then the records. */
  async #prefixFromDisk(prefix: number): Promise<PrefixRecords> {
    this.#inFlight++
    try {
      const entries = Buffer.allocUnsafe(16)
      await this.#readExactly(entries, this.header.indexOffset + prefix * 8)
      const start = u64(entries, 0)
      const end = u64(entries, 8)
      if (end < start || end > this.header.dataLength || end - start > 64 * 1024 * 1024) throw new Error(`index entry ${prefix} is out of bounds`)
      const bytes = Buffer.allocUnsafe(end - start)
      if (bytes.length > 0) await this.#readExactly(bytes, this.header.dataOffset + start)
      noteStoreRead(this.header.kind.kind, true)
      return { bytes, spec: this.header.kind }
    } catch (error) {
      noteStoreRead(this.header.kind.kind, false)
      throw error
    } finally {
      this.#inFlight--
      if (this.#retired && this.#inFlight === 0) this.#close()
    }
  }

  /** The count of a whole hash (`hashBytes` bytes), 0 when absent. */
  async count(hash: Uint8Array): Promise<number> {
    const prefix = ((hash[0] as number) << 12) | ((hash[1] as number) << 4) | ((hash[2] as number) >>> 4)
    return findCount(this.prefixNow(prefix) ?? await this.prefix(prefix), hash)
  }

  /** Closes the descriptor now if no read is in flight, else when the last one ends. */
  retire(): void {
    this.#retired = true
    if (this.#inFlight === 0) this.#close()
  }

  #close(): void {
    if (this.#fd === -1) return
    const fd = this.#fd
    this.#fd = -1
    closeSync(fd)
  }

  /** Fills `target` from `position` (a positioned read through libuv, repeated after a short read). */
  #read(target: Buffer, position: number, done: (error: Error | null) => void): void {
    const fd = this.#fd
    const step = (filled: number): void => {
      read(fd, target, filled, target.length - filled, position + filled, (error, got) => {
        if (error) done(error)
        else if (got === 0) done(new Error('unexpected end of the store file'))
        else if (filled + got < target.length) step(filled + got)
        else done(null)
      })
    }
    step(0)
  }

  #readExactly(target: Buffer, position: number): Promise<void> {
    return new Promise((resolve, reject) => this.#read(target, position, (error) => { if (error) reject(error); else resolve() }))
  }
}

/**
 * The index kept in memory in 2.1 MB instead of its 8 MiB on disk, so that a lookup is one read:
 * each prefix's length in bytes (16 bits: a prefix of two billion hashes' store holds about
 * 35 KB), and the offset of every 64th prefix. A store with a prefix of 64 KiB or more (some four
 * billion hashes) keeps its index on disk and reads the two entries it needs first.
 */
export class CompactIndex {
  static readonly STRIDE = 64
  readonly lengths: Uint16Array
  readonly #bases: Float64Array

  constructor(lengths: Uint16Array, bases: Float64Array) {
    this.lengths = lengths
    this.#bases = bases
  }

  /** The data offset of a prefix's first record. */
  start(prefix: number): number {
    const block = prefix >>> 6
    let offset = this.#bases[block] as number
    for (let each = block << 6; each < prefix; each++) offset += this.lengths[each] as number
    return offset
  }
}

const openFile = promisify(openAsync)
const readFile = promisify(read)
const statFile = promisify(fstat)
const closeFile = promisify(closeAsync)

/** The error for what is wrong with a store file: a ConfigError naming the setting and the file. */
const refusal = (file: string, variable: string) => (why: string) => new ConfigError(`${variable} ${file}: ${why}`)

/** The header's checks, and the file's size against it (`got`: the header's bytes as read). */
function checkHeader(got: Buffer, size: number, variable: string, expected: HashKind | undefined, refuse: (why: string) => Error): StoreHeader {
  const header = decodeHeader(got, refuse)
  if (expected !== undefined && header.kind.kind !== expected) {
    throw refuse(`it holds ${header.kind.kind === 'sha1' ? 'SHA-1' : 'NTLM'} hashes; ${variable} takes a ${expected === 'sha1' ? 'SHA-1 store (import without --ntlm)' : 'NTLM store (import with --ntlm)'}`)
  }
  const expectedSize = header.dataOffset + header.dataLength
  if (size < expectedSize) throw refuse(`it is ${size} bytes and its header says ${expectedSize}: the file is truncated (an unfinished copy?)`)
  if (size > expectedSize) throw refuse(`it is ${size} bytes and its header says ${expectedSize}: there are bytes after the end of the store`)
  return header
}

/**
 * The index is read in pieces of this size (hashed as they come) rather than as one 8 MiB buffer,
 * which would stay in the process's memory after the open.
 */
const INDEX_PIECE_BYTES = 64 * 1024

/**
 * Reading the index once, piece by piece (by a synchronous or an asynchronous reader): its
 * SHA-256, and that its offsets rise to the data length. `finish` gives it compacted, or null when
 * a prefix is too long for that.
 */
class IndexCheck {
  readonly #header: StoreHeader
  readonly #refuse: (why: string) => Error
  readonly #digest = createHash('sha256')
  readonly #lengths = new Uint16Array(PREFIXES)
  readonly #bases = new Float64Array(PREFIXES / CompactIndex.STRIDE)
  #compact = true
  #previous = 0
  #entry = 0
  #read = 0
  /** The first thing wrong in the offsets, reported after the checksum (which says "damaged" first). */
  #wrong: string | undefined

  constructor(header: StoreHeader, refuse: (why: string) => Error) {
    this.#header = header
    this.#refuse = refuse
  }

  get done(): boolean { return this.#read >= this.#header.indexLength }
  /** Where the next piece starts in the file. */
  get position(): number { return this.#header.indexOffset + this.#read }
  /** How many bytes the next read should ask for, at most `room`. */
  nextPieceBytes(room: number): number { return Math.min(room, this.#header.indexLength - this.#read) }

  feed(piece: Buffer): void {
    const got = piece.length
    if (got === 0 || got % 8 !== 0) throw this.#refuse('its index ends early (truncated)')
    this.#digest.update(piece)
    const lengths = this.#lengths
    let previous = this.#previous
    let entry = this.#entry
    for (let at = 0; at < got; at += 8, entry++) {
      const offset = u64(piece, at)
      if (entry === 0 && offset !== 0) this.#wrong ??= 'its index does not start at the data'
      if (offset < previous) this.#wrong ??= `its index goes backwards at prefix ${entry.toString(16).toUpperCase().padStart(5, '0')}`
      if (entry > 0) {
        if (offset - previous > 0xffff) this.#compact = false
        lengths[entry - 1] = offset - previous
      }
      if (entry < PREFIXES && entry % CompactIndex.STRIDE === 0) this.#bases[entry / CompactIndex.STRIDE] = offset
      previous = offset
    }
    this.#previous = previous
    this.#entry = entry
    this.#read += got
  }

  finish(): CompactIndex | null {
    if (!this.#digest.digest().equals(this.#header.indexSha256)) throw this.#refuse('its index checksum does not match (the index is damaged)')
    if (this.#wrong !== undefined) throw this.#refuse(this.#wrong)
    if (this.#previous !== this.#header.dataLength) throw this.#refuse('its index does not span the data')
    return this.#compact ? new CompactIndex(this.#lengths, this.#bases) : null
  }
}

/** The length in bytes of the record at `at` (its suffix, tag byte and count bytes). */
export function recordLength(bytes: Uint8Array, at: number, spec: KindSpec): number {
  return spec.suffixBytes + 1 + (EXTRA_BYTES[(bytes[at + spec.suffixBytes] as number) & 0x0f] as number)
}

/**
 * The count of `hash` among one prefix's records, 0 when absent. The records are sorted, so the
 * walk stops at the first record past the hash. A record running past the end is a damaged store.
 */
export function findCount({ bytes, spec }: PrefixRecords, hash: Uint8Array): number {
  // The suffix starts at the hash's low nibble of byte 2; compare nibble-aligned: the record holds
  // suffix digits d0 d1 … packed two per byte, so record byte j = hash nibbles (5 + 2j, 6 + 2j).
  const target = suffixBytesOf(hash, spec)
  const last = spec.suffixBytes
  let at = 0
  while (at < bytes.length) {
    if (at + last + 1 > bytes.length) throw new Error('a record runs past its prefix (damaged store)')
    let order = 0
    for (let index = 0; index < last; index++) {
      const difference = (bytes[at + index] as number) - (target[index] as number)
      if (difference !== 0) { order = difference; break }
    }
    const tagByte = bytes[at + last] as number
    if (order === 0) order = (tagByte >>> 4) - ((target[last] as number) >>> 4)
    if (order === 0) return readCount(bytes, at + last + 1, tagByte & 0x0f)
    if (order > 0) return 0
    at += last + 1 + (EXTRA_BYTES[tagByte & 0x0f] as number)
  }
  return 0
}

/** A hash's suffix as a record packs it: digits 5 onwards, two per byte, the last in a high nibble. */
export function suffixBytesOf(hash: Uint8Array, spec: KindSpec): Uint8Array {
  const out = new Uint8Array(spec.suffixBytes + 1)
  // Nibble n of the hash is (hash[n >> 1] >> (n & 1 ? 0 : 4)) & 15; the suffix starts at nibble 5.
  for (let index = 0; index <= spec.suffixBytes; index++) {
    const high = nibble(hash, 5 + 2 * index)
    const low = index < spec.suffixBytes ? nibble(hash, 6 + 2 * index) : 0
    out[index] = (high << 4) | low
  }
  return out
}

function nibble(hash: Uint8Array, n: number): number {
  const byte = hash[n >> 1] as number
  return (n & 1) === 0 ? byte >>> 4 : byte & 0x0f
}
