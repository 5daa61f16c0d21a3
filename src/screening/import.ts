/**
 * Importing Pwned Passwords into a store (the format is in store.ts), and checking a store whole.
 * `npm run pwned:import -- INPUT STORE [--ntlm]` and `npm run pwned:verify -- STORE` are thin
 * scripts over this module (scripts/pwned-import.ts, scripts/pwned-verify.ts).
 *
 * INPUT is what HIBP's downloader (PwnedPasswordsDownloader) writes, either layout:
 * - **a folder** of one file per prefix, `00000.txt` to `FFFFF.txt`, each of `SUFFIX:COUNT` lines
 *   (35 hex digits for SHA-1, 27 for NTLM): the API's range answers, one per file;
 * - **one file** of `HASH:COUNT` lines (40 or 32 hex digits), ordered by hash, as the downloader
 *   writes without `-s false`, or as `sort` makes of any such list.
 *
 * Lines end in CRLF or LF; hex digits may be in either case; a line with the count 0 (a padded
 * answer's filler) is skipped. The records of a prefix are sorted and a hash given twice has its
 * counts added, so a prefix file's order does not matter; across prefixes, one file must be
 * ordered (a prefix that comes back is an error naming the line). A folder missing prefix files is
 * refused (an unfinished download) unless `allowMissing` is set.
 *
 * The store is written beside STORE under a temporary name, synced, opened and checked as the
 * server checks it, then renamed over STORE (atomic-file.ts): a running server sees one complete
 * file replace another and swaps it in (file-reload.ts), never a half-written one.
 *
 * Speed: the parser works on bytes (no strings per line) and writes records straight into a 16 MiB
 * buffer that is hashed and written out a prefix boundary at a time.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { AtomicFileWriter } from '../atomic-file.js'
import {
  countTag, EXTRA_BYTES, encodeHeader, HEADER_BYTES, INDEX_BYTES, KINDS, PREFIXES, PwnedStore, readCount, writeCountExtra,
  type HashKind, type KindSpec,
} from './store.js'

export class ImportError extends Error {}

export interface ImportOptions {
  kind: HashKind
  /** A folder with prefix files missing is refused unless this is set (a partial or test corpus). */
  allowMissing?: boolean
  /** Called now and then with the hashes written so far. */
  progress?: (hashes: number) => void
  /** The import date written into the header (tests); now by default. */
  now?: Date
}

export interface ImportSummary {
  store: string
  kind: HashKind
  layout: 'folder' | 'file'
  hashes: number
  occurrences: number
  bytes: number
  bytesPerHash: number
  inputBytes: number
  /** Prefixes with no file in a folder (allowed with allowMissing). */
  missingPrefixFiles: number
  /** Hashes given more than once, whose counts were added. */
  duplicatesMerged: number
  /** Lines with the count 0 (padding), left out. */
  zeroCountLines: number
  seconds: number
  hashesPerSecond: number
  dataDate: string
  dataSha256: string
}

/** Hex digit values; 16 and above marks a byte that is not a hex digit. */
const HEX = new Uint8Array(256).fill(0xff)
for (let digit = 0; digit < 16; digit++) {
  HEX['0123456789abcdef'.charCodeAt(digit)] = digit
  HEX['0123456789ABCDEF'.charCodeAt(digit)] = digit
}
/** The byte two hex digits stand for, indexed by (first << 8) | second; 0x100 and above: not two hex digits. */
const HEX_PAIR = new Uint16Array(65536).fill(0xffff)
for (let high = 0; high < 256; high++) {
  for (let low = 0; low < 256; low++) {
    if ((HEX[high] as number) < 16 && (HEX[low] as number) < 16) HEX_PAIR[(high << 8) | low] = ((HEX[high] as number) << 4) | (HEX[low] as number)
  }
}
const COLON = 0x3a
const CR = 0x0d
const LF = 0x0a
const OUT_BYTES = 16 * 1024 * 1024
const IN_BYTES = 8 * 1024 * 1024

/** Writes records into the store being made, one prefix after another. */
class StoreWriter {
  readonly spec: KindSpec
  /** The file; its data length is the data bytes written before #out. */
  readonly file: AtomicFileWriter
  readonly #index = new Float64Array(PREFIXES + 1)
  #out = Buffer.allocUnsafe(OUT_BYTES)
  /** Bytes in #out not yet written. */
  #used = 0
  /** The prefix whose records are being added, −1 before the first. */
  #prefix = -1
  /** Where the current prefix's records start in #out, and the last record's start. */
  #prefixStart = 0
  #previous = -1
  #unsorted = false
  hashes = 0
  occurrences = 0
  duplicatesMerged = 0

  constructor(store: string, spec: KindSpec) {
    this.spec = spec
    this.file = new AtomicFileWriter(store, { dataOffset: HEADER_BYTES + INDEX_BYTES, temporaryTag: 'importing' })
  }

  /** Starts prefix `prefix` (it must come after the current one); the prefixes between are empty. */
  begin(prefix: number): boolean {
    if (prefix <= this.#prefix) return false
    this.end()
    const offset = this.file.dataLength + this.#used
    for (let skipped = this.#prefix + 1; skipped <= prefix; skipped++) this.#index[skipped] = offset
    this.#prefix = prefix
    this.#prefixStart = this.#used
    this.#previous = -1
    this.#unsorted = false
    return true
  }

  get prefix(): number { return this.#prefix }

  /**
   * Adds the record of one line: `line` holds the suffix's hex digits from `at`, already checked;
   * returns false if a digit is not hex.
   */
  add(line: Uint8Array, at: number, count: number): boolean {
    const spec = this.spec
    const size = spec.suffixBytes + 1 + 6
    if (this.#used + size > this.#out.length) this.#grow()
    const out = this.#out
    const start = this.#used
    const suffixBytes = spec.suffixBytes
    let bad = 0
    for (let index = 0, digit = at; index < suffixBytes; index++, digit += 2) {
      const byte = HEX_PAIR[((line[digit] as number) << 8) | (line[digit + 1] as number)] as number
      bad |= byte
      out[start + index] = byte
    }
    const lastDigit = HEX[line[at + 2 * suffixBytes] as number] as number
    if (((bad & 0xff00) | (lastDigit & 0xf0)) !== 0) return false
    let length = suffixBytes + 1
    if (count <= 12) {
      out[start + suffixBytes] = (lastDigit << 4) | (count - 1)
    } else {
      const tag = countTag(count)
      out[start + suffixBytes] = (lastDigit << 4) | tag
      length += writeCountExtra(out, start + suffixBytes + 1, tag, count)
    }
    // Sorted input is the rule: compare with the record before, and sort the prefix at its end if not.
    const previous = this.#previous
    if (previous >= 0 && !this.#unsorted && compareSuffix(out, previous, start, spec) >= 0) this.#unsorted = true
    this.#previous = start
    this.#used = start + length
    this.hashes++
    this.occurrences += count
    return true
  }

  /** Ends the current prefix: sorts it if needed, and writes the buffer out if it is getting full. */
  end(): void {
    if (this.#prefix < 0) return
    if (this.#unsorted) this.#sortPrefix()
    this.#unsorted = false
    if (this.#used > OUT_BYTES - 1024 * 1024) this.#flush()
  }

  /** Finishes the file (synced, not yet in STORE's place): the remaining prefixes (empty), the index, the header; returns the data's SHA-256. */
  finish(dataDate: Date, importedAt: Date): Buffer {
    this.begin(PREFIXES)
    this.#flush()
    const dataLength = this.file.dataLength
    this.#index[PREFIXES] = dataLength
    const index = Buffer.allocUnsafe(INDEX_BYTES)
    for (let entry = 0; entry <= PREFIXES; entry++) {
      const offset = this.#index[entry] as number
      index.writeUInt32LE(offset % 0x1_0000_0000, entry * 8)
      index.writeUInt32LE(Math.floor(offset / 0x1_0000_0000), entry * 8 + 4)
    }
    this.file.writeAt(index, HEADER_BYTES)
    const dataSha256 = this.file.dataSha256()
    const header = encodeHeader({
      kind: this.spec, hashes: this.hashes, occurrences: this.occurrences, dataDate, importedAt,
      indexOffset: HEADER_BYTES, indexLength: INDEX_BYTES, dataOffset: HEADER_BYTES + INDEX_BYTES, dataLength,
      indexSha256: createHash('sha256').update(index).digest(), dataSha256,
    })
    this.file.writeAt(header, 0)
    this.file.finish()
    return dataSha256
  }

  #flush(): void {
    if (this.#used === 0) return
    this.file.appendData(this.#out.subarray(0, this.#used))
    this.#used = 0
    this.#prefixStart = 0
    this.#previous = -1
  }

  /** Makes room in the middle of a prefix (a prefix larger than the buffer's free space). */
  #grow(): void {
    if (this.#prefixStart > 0) {
      // Write out the earlier prefixes and move this one to the front.
      this.file.appendData(this.#out.subarray(0, this.#prefixStart))
      this.#out.copy(this.#out, 0, this.#prefixStart, this.#used)
      this.#used -= this.#prefixStart
      if (this.#previous >= 0) this.#previous -= this.#prefixStart
      this.#prefixStart = 0
      if (this.#used + 64 <= this.#out.length) return
    }
    const bigger = Buffer.allocUnsafe(this.#out.length * 2)
    this.#out.copy(bigger, 0, 0, this.#used)
    this.#out = bigger
  }

  /** Sorts the current prefix's records by suffix and adds the counts of equal suffixes. */
  #sortPrefix(): void {
    const spec = this.spec
    const out = this.#out
    const records: Array<{ key: Buffer, count: number }> = []
    for (let at = this.#prefixStart; at < this.#used;) {
      const tagByte = out[at + spec.suffixBytes] as number
      const key = Buffer.from(out.subarray(at, at + spec.suffixBytes + 1))
      key[spec.suffixBytes] = tagByte & 0xf0
      records.push({ key, count: readCount(out, at + spec.suffixBytes + 1, tagByte & 0x0f) })
      at += spec.suffixBytes + 1 + (EXTRA_BYTES[tagByte & 0x0f] as number)
    }
    records.sort((a, b) => Buffer.compare(a.key, b.key))
    let at = this.#prefixStart
    for (let index = 0; index < records.length; index++) {
      const { key } = records[index] as { key: Buffer, count: number }
      let count = (records[index] as { count: number }).count
      while (index + 1 < records.length && (records[index + 1] as { key: Buffer }).key.equals(key)) {
        index++
        count += (records[index] as { count: number }).count
        this.duplicatesMerged++
        this.hashes--
      }
      key.copy(out, at)
      const tag = countTag(count)
      out[at + spec.suffixBytes] = (key[spec.suffixBytes] as number) | tag
      at += spec.suffixBytes + 1 + writeCountExtra(out, at + spec.suffixBytes + 1, tag, count)
    }
    this.#used = at
    this.#previous = -1
  }
}

/** Compares two records' suffixes (the tag's nibble left out). */
function compareSuffix(bytes: Uint8Array, a: number, b: number, spec: KindSpec): number {
  for (let index = 0; index < spec.suffixBytes; index++) {
    const difference = (bytes[a + index] as number) - (bytes[b + index] as number)
    if (difference !== 0) return difference
  }
  return ((bytes[a + spec.suffixBytes] as number) >>> 4) - ((bytes[b + spec.suffixBytes] as number) >>> 4)
}

/** What a malformed line is told. */
function badLine(source: string, line: number, expected: string): ImportError {
  return new ImportError(`${source} line ${line}: expected ${expected}`)
}

/**
 * Parses the complete lines of `chunk` from `start` to `end` into `writer`. `hashDigits` is the hex
 * digits before the ':' (40/32 with the prefix in each line, 35/27 in a prefix file); with the
 * prefix in the line, each line's first five digits choose the prefix. Returns where the first
 * incomplete line starts (end, when `final`), and the lines counted.
 */
function parseLines(writer: StoreWriter, chunk: Uint8Array, start: number, end: number, final: boolean, withPrefix: boolean,
  source: string, firstLine: number, stats: { zeroCountLines: number }): { consumed: number, lines: number } {
  const spec = writer.spec
  const hashDigits = withPrefix ? spec.suffixDigits + 5 : spec.suffixDigits
  const suffixAt = withPrefix ? 5 : 0
  const expected = `${hashDigits} hex digits, ":" and a count`
  let at = start
  let lines = 0
  // Each line is walked once, byte by byte: the hash, ':', the count's digits, then CRLF or LF (or
  // the end of a final chunk). A line cut off by the chunk's end is left for the next chunk.
  while (at < end) {
    const first = chunk[at] as number
    if (first === LF) { lines++; at++; continue }
    if (first === CR && at + 1 < end && chunk[at + 1] === LF) { lines++; at += 2; continue }
    const colon = at + hashDigits
    if (colon >= end) {
      if (!final) break
      throw badLine(source, firstLine + lines + 1, expected)
    }
    lines++
    if (chunk[colon] !== COLON) throw badLine(source, firstLine + lines, expected)
    let index = colon + 1
    let count = 0
    while (index < end) {
      const digit = (chunk[index] as number) - 0x30
      if (digit < 0 || digit > 9) break
      count = count * 10 + digit
      index++
    }
    const digits = index - colon - 1
    let next: number
    if (index === end) {
      if (!final) { lines--; break }
      next = end
    } else {
      let terminator = chunk[index] as number
      if (terminator === CR) {
        if (index + 1 === end && !final) { lines--; break }
        terminator = index + 1 === end ? LF : chunk[index + 1] as number
        index++
      }
      if (terminator !== LF) throw badLine(source, firstLine + lines, expected)
      next = index + 1
    }
    if (digits === 0) throw badLine(source, firstLine + lines, expected)
    if (digits > 15) throw badLine(source, firstLine + lines, `${expected} of at most 15 digits`)
    if (count === 0) { stats.zeroCountLines++; at = next; continue }
    if (withPrefix) {
      const d0 = HEX[chunk[at] as number] as number, d1 = HEX[chunk[at + 1] as number] as number, d2 = HEX[chunk[at + 2] as number] as number
      const d3 = HEX[chunk[at + 3] as number] as number, d4 = HEX[chunk[at + 4] as number] as number
      if (((d0 | d1 | d2 | d3 | d4) & 0xf0) !== 0) throw badLine(source, firstLine + lines, expected)
      const prefix = (d0 << 16) | (d1 << 12) | (d2 << 8) | (d3 << 4) | d4
      if (prefix !== writer.prefix && !writer.begin(prefix)) {
        throw new ImportError(`${source} line ${firstLine + lines}: the hashes are not ordered (prefix ${prefixName(prefix)} comes after ${prefixName(writer.prefix)}); ` +
          'sort the file first (LC_ALL=C sort -t: -k1,1 INPUT > SORTED)')
      }
    }
    if (!writer.add(chunk, at + suffixAt, count)) throw badLine(source, firstLine + lines, expected)
    at = next
  }
  return { consumed: Math.min(at, end), lines }
}

export function prefixName(prefix: number): string {
  return prefix.toString(16).toUpperCase().padStart(5, '0')
}

/** Reads a whole file of lines in IN_BYTES pieces. Returns its size and modification time. */
function parseFile(writer: StoreWriter, path: string, withPrefix: boolean, buffer: { bytes: Buffer }, stats: { zeroCountLines: number }): { size: number, mtimeMs: number } {
  const fd = openSync(path, 'r')
  try {
    const info = fstatSync(fd)
    let carried = 0
    let lineBase = 0
    let position = 0
    for (;;) {
      if (carried === buffer.bytes.length) {
        const bigger = Buffer.allocUnsafe(buffer.bytes.length * 2)
        buffer.bytes.copy(bigger, 0, 0, carried)
        buffer.bytes = bigger
      }
      const got = readSync(fd, buffer.bytes, carried, buffer.bytes.length - carried, position)
      position += got
      const end = carried + got
      // A file read to its size needs no further read to find its end.
      const final = got === 0 || position >= info.size
      const { consumed, lines } = parseLines(writer, buffer.bytes, 0, end, final, withPrefix, path, lineBase, stats)
      lineBase += lines
      if (final) break
      carried = end - consumed
      if (carried > 0) buffer.bytes.copy(buffer.bytes, 0, consumed, end)
    }
    return { size: info.size, mtimeMs: info.mtimeMs }
  } finally {
    closeSync(fd)
  }
}

const PREFIX_FILE = /^([0-9A-Fa-f]{5})\.txt$/

/** Imports INPUT (a folder or one file) into STORE. */
export function importPwned(input: string, store: string, options: ImportOptions): ImportSummary {
  const started = performance.now()
  const spec = KINDS[options.kind]
  let info
  try {
    info = statSync(input)
  } catch (error) {
    throw new ImportError(`${input} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const writer = new StoreWriter(store, spec)
  const stats = { zeroCountLines: 0 }
  const buffer = { bytes: Buffer.allocUnsafe(IN_BYTES) }
  let newest = 0
  let inputBytes = 0
  let missing = 0
  const layout = info.isDirectory() ? 'folder' : 'file'
  try {
    if (layout === 'folder') {
      const files = new Map<number, string>()
      for (const name of readdirSync(input)) {
        const match = PREFIX_FILE.exec(name)
        if (match) files.set(Number.parseInt(match[1] as string, 16), name)
      }
      if (files.size === 0) throw new ImportError(`${input} holds no prefix files (00000.txt … FFFFF.txt): is it the downloader's output folder?`)
      missing = PREFIXES - files.size
      if (missing > 0 && !options.allowMissing) {
        const first = Array.from({ length: PREFIXES }, (_, prefix) => prefix).find((prefix) => !files.has(prefix)) ?? 0
        throw new ImportError(`${input} lacks ${missing} of the ${PREFIXES} prefix files (the first: ${prefixName(first)}.txt): an unfinished download? ` +
          'Run the downloader again, or pass --allow-missing to import it as it is')
      }
      for (let prefix = 0; prefix < PREFIXES; prefix++) {
        const name = files.get(prefix)
        if (name === undefined) continue
        writer.begin(prefix)
        const file = parseFile(writer, join(input, name), false, buffer, stats)
        inputBytes += file.size
        newest = Math.max(newest, file.mtimeMs)
        if ((prefix & 0xffff) === 0xffff) options.progress?.(writer.hashes)
      }
    } else {
      const file = parseFile(writer, input, true, buffer, stats)
      inputBytes = file.size
      newest = file.mtimeMs
    }
    if (writer.hashes === 0) throw new ImportError(`${input} holds no hashes with a count`)
    const dataSha256 = writer.finish(new Date(Math.floor(newest)), options.now ?? new Date())
    // Opened and checked as the server will, before it takes STORE's place.
    PwnedStore.open(writer.file.temporary, 'the new store', options.kind).retire()
    writer.file.replaceTarget()
    const bytes = statSync(store).size
    const seconds = (performance.now() - started) / 1000
    return {
      store, kind: options.kind, layout, hashes: writer.hashes, occurrences: writer.occurrences, bytes,
      bytesPerHash: bytes / writer.hashes, inputBytes, missingPrefixFiles: missing, duplicatesMerged: writer.duplicatesMerged,
      zeroCountLines: stats.zeroCountLines, seconds, hashesPerSecond: writer.hashes / seconds,
      dataDate: new Date(Math.floor(newest)).toISOString(), dataSha256: dataSha256.toString('hex'),
    }
  } catch (error) {
    writer.file.abandon()
    throw error
  }
}

export interface VerifySummary {
  store: string
  kind: HashKind
  hashes: number
  ok: boolean
  /** What is wrong, when not ok. */
  problem?: string
  seconds: number
}

/**
 * Reads a whole store: the header and index checks of every open, the data's SHA-256 against the
 * header, and every record decoded (suffixes rising within each prefix, the hash count matching).
 */
export function verifyStore(file: string, progress?: (fraction: number) => void): VerifySummary {
  const started = performance.now()
  const store = PwnedStore.open(file, 'STORE')
  const { header } = store
  const spec = header.kind
  const fd = openSync(file, 'r')
  try {
    const index = Buffer.allocUnsafe(INDEX_BYTES)
    readSync(fd, index, 0, INDEX_BYTES, header.indexOffset)
    const hash = createHash('sha256')
    const chunk = Buffer.allocUnsafe(IN_BYTES)
    let hashes = 0
    let problem: string | undefined
    // Walk prefix by prefix, reading the data in large pieces.
    let bufferStart = 0
    let bufferEnd = 0
    let pending = Buffer.alloc(0)
    for (let prefix = 0; prefix < PREFIXES && problem === undefined; prefix++) {
      const start = Number(index.readBigUInt64LE(prefix * 8))
      const end = Number(index.readBigUInt64LE(prefix * 8 + 8))
      while (bufferEnd < end) {
        const got = readSync(fd, chunk, 0, Math.min(chunk.length, header.dataLength - bufferEnd), header.dataOffset + bufferEnd)
        if (got === 0) { problem = 'the data ends early'; break }
        hash.update(chunk.subarray(0, got))
        pending = Buffer.concat([pending, chunk.subarray(0, got)])
        bufferEnd += got
      }
      if (problem !== undefined) break
      const records = pending.subarray(start - bufferStart, end - bufferStart)
      let previous = -1
      for (let at = 0; at < records.length;) {
        const length = spec.suffixBytes + 1 + (EXTRA_BYTES[(records[at + spec.suffixBytes] as number) & 0x0f] as number)
        if (at + length > records.length) { problem = `prefix ${prefixName(prefix)}: a record runs past the prefix`; break }
        if (previous >= 0 && compareSuffix(records, previous, at, spec) >= 0) { problem = `prefix ${prefixName(prefix)}: records out of order`; break }
        previous = at
        at += length
        hashes++
      }
      // Drop what is behind this prefix.
      pending = pending.subarray(end - bufferStart)
      bufferStart = end
      if ((prefix & 0xffff) === 0xffff) progress?.(prefix / PREFIXES)
    }
    if (problem === undefined && !hash.digest().equals(header.dataSha256)) problem = 'the data checksum does not match the header (the data is damaged)'
    if (problem === undefined && hashes !== header.hashes) problem = `the header says ${header.hashes} hashes and the data holds ${hashes}`
    return { store: file, kind: spec.kind, hashes, ok: problem === undefined, ...(problem ? { problem } : {}), seconds: (performance.now() - started) / 1000 }
  } finally {
    closeSync(fd)
    store.retire()
  }
}
