/**
 * Importing a list of hashes into a bank file (format.ts). `npm run bank:import -- INPUT BANK
 * --type TYPE` is a thin script over importBank (scripts/bank-import.ts).
 *
 * The input is read a line at a time (lines.ts); every entry is kept in flat buffers (the records,
 * then the id and label bytes), sorted by record then id then label, and written beside BANK under
 * a temporary name, synced, opened and checked as a server opens it, then renamed over BANK
 * (atomic-file.ts): a running server sees one complete file replace another, never a half-written one. A hash given
 * twice with the same id is refused, naming both lines.
 */
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { AtomicFileWriter } from '../../atomic-file.js'
import { encodeBankHeader, layout, NO_LABEL } from './format.js'
import { BankLineReader } from './lines.js'
import { openBank } from './open.js'
import { BANK_TYPE_SPECS, BankImportError, MAX_ENTRIES, type BankType } from './types.js'

export interface BankImportSummary {
  count: number
  dataSha256: string
  /** The bank file's size in bytes. */
  bytes: number
  /** Input lines read (skipped ones included). */
  lines: number
}

/** A growing byte buffer. */
class Bytes {
  buffer = Buffer.allocUnsafe(1 << 16)
  length = 0
  reserve(extra: number): void {
    if (this.length + extra <= this.buffer.length) return
    let size = this.buffer.length * 2
    while (size < this.length + extra) size *= 2
    const grown = Buffer.allocUnsafe(size)
    this.buffer.copy(grown, 0, 0, this.length)
    this.buffer = grown
  }
}

/** A growing array of numbers. */
class Numbers {
  array = new Float64Array(1 << 12)
  length = 0
  push(value: number): void {
    if (this.length === this.array.length) {
      const grown = new Float64Array(this.array.length * 2)
      grown.set(this.array)
      this.array = grown
    }
    this.array[this.length++] = value
  }
}

/**
 * Reads INPUT (a path; '-' is not special) and writes the bank to OUTPUT atomically. Throws
 * BankImportError for a refused input (with the line number) and lets I/O errors through.
 */
export async function importBank(inputPath: string, outputPath: string, type: BankType, options: { now?: Date } = {}): Promise<BankImportSummary> {
  const spec = BANK_TYPE_SPECS[type]
  const width = spec.recordBytes
  const records = new Bytes()
  const strings = new Bytes()
  const stringStarts = new Numbers()
  const lineNumbers = new Numbers()
  const reader = new BankLineReader(type)
  let number = 0
  const input = createInterface({ input: createReadStream(inputPath, { encoding: 'utf8', highWaterMark: 1 << 20 }), crlfDelay: Infinity })
  for await (const text of input) {
    number++
    const entry = reader.line(text, number)
    if (entry === null) continue
    if (lineNumbers.length >= MAX_ENTRIES) throw new BankImportError(number, `a bank holds at most ${MAX_ENTRIES.toLocaleString('en')} entries`)
    records.reserve(width)
    entry.record.copy(records.buffer, records.length)
    records.length += width
    const idBytes = Buffer.byteLength(entry.id, 'utf8')
    const labelBytes = entry.label === null ? 0 : Buffer.byteLength(entry.label, 'utf8')
    strings.reserve(4 + idBytes + labelBytes)
    stringStarts.push(strings.length)
    const at = strings.length
    strings.buffer.writeUInt16LE(idBytes, at)
    strings.buffer.writeUInt16LE(entry.label === null ? NO_LABEL : labelBytes, at + 2)
    strings.buffer.write(entry.id, at + 4, 'utf8')
    if (entry.label !== null) strings.buffer.write(entry.label, at + 4 + idBytes, 'utf8')
    strings.length += 4 + idBytes + labelBytes
    lineNumbers.push(number)
  }
  const count = lineNumbers.length
  stringStarts.push(strings.length)
  const order = sortedOrder(records.buffer, width, strings.buffer, stringStarts.array, count)
  for (let k = 1; k < count; k++) {
    const a = order[k - 1]!
    const b = order[k]!
    if (compareRecords(records.buffer, width, a, b) === 0 && compareIds(strings.buffer, stringStarts.array, a, b) === 0) {
      const [first, second] = [lineNumbers.array[a]!, lineNumbers.array[b]!].sort((x, y) => x - y) as [number, number]
      throw new BankImportError(second, `the same hash with the same id as line ${first}`)
    }
  }
  return await writeBank(outputPath, type, count, order, records.buffer, strings.buffer, stringStarts.array, number, options.now ?? new Date())
}

function compareRecords(records: Buffer, width: number, a: number, b: number): number {
  return records.compare(records, b * width, b * width + width, a * width, a * width + width)
}

function compareIds(strings: Buffer, starts: Float64Array, a: number, b: number): number {
  const atA = starts[a]!
  const atB = starts[b]!
  const idA = strings.readUInt16LE(atA)
  const idB = strings.readUInt16LE(atB)
  return strings.compare(strings, atB + 4, atB + 4 + idB, atA + 4, atA + 4 + idA)
}

function compareLabels(strings: Buffer, starts: Float64Array, a: number, b: number): number {
  const atA = starts[a]!
  const atB = starts[b]!
  const labelA = strings.readUInt16LE(atA + 2)
  const labelB = strings.readUInt16LE(atB + 2)
  if (labelA === NO_LABEL || labelB === NO_LABEL) return (labelA === NO_LABEL ? 0 : 1) - (labelB === NO_LABEL ? 0 : 1)
  const fromA = atA + 4 + strings.readUInt16LE(atA)
  const fromB = atB + 4 + strings.readUInt16LE(atB)
  return strings.compare(strings, fromB, fromB + labelB, fromA, fromA + labelA)
}

/**
 * The entries' order in the file: by record bytes, then id, then label. A counting sort on the
 * record's first two bytes, then a comparison sort inside each of the 65,536 buckets (a few hundred
 * entries each at 10 M), which keeps a 10 M import's sort to seconds.
 */
function sortedOrder(records: Buffer, width: number, strings: Buffer, starts: Float64Array, count: number): Uint32Array {
  const bucketOf = (entry: number) => (records[entry * width]! << 8) | records[entry * width + 1]!
  const bucketStarts = new Uint32Array(65537)
  for (let entry = 0; entry < count; entry++) bucketStarts[bucketOf(entry) + 1]!++
  for (let bucket = 0; bucket < 65536; bucket++) bucketStarts[bucket + 1]! += bucketStarts[bucket]!
  const fill = bucketStarts.slice(0, 65536)
  const order = new Uint32Array(count)
  for (let entry = 0; entry < count; entry++) order[fill[bucketOf(entry)]!++] = entry
  const compare = (a: number, b: number) =>
    compareRecords(records, width, a, b) || compareIds(strings, starts, a, b) || compareLabels(strings, starts, a, b) || a - b
  for (let bucket = 0; bucket < 65536; bucket++) {
    const from = bucketStarts[bucket]!
    const to = bucketStarts[bucket + 1]!
    if (to - from > 1) order.subarray(from, to).sort(compare)
  }
  return order
}

const CHUNK_ENTRIES = 1 << 15

async function writeBank(outputPath: string, type: BankType, count: number, order: Uint32Array, records: Buffer, strings: Buffer,
  starts: Float64Array, lines: number, now: Date): Promise<BankImportSummary> {
  const spec = BANK_TYPE_SPECS[type]
  const width = spec.recordBytes
  const sections = layout(spec, count, stringsLengthOf(starts, count))
  const file = new AtomicFileWriter(outputPath, { dataOffset: sections.hashesOffset, temporaryTag: 'tmp' })
  try {
    // The hashes, in order.
    for (let from = 0; from < count; from += CHUNK_ENTRIES) {
      const to = Math.min(count, from + CHUNK_ENTRIES)
      const chunk = Buffer.allocUnsafe((to - from) * width)
      for (let k = from; k < to; k++) records.copy(chunk, (k - from) * width, order[k]! * width, order[k]! * width + width)
      file.appendData(chunk)
    }
    // The entry table: where each entry's strings begin in the strings section, as written in order.
    let offset = 0
    for (let from = 0; from <= count; from += CHUNK_ENTRIES) {
      const to = Math.min(count + 1, from + CHUNK_ENTRIES)
      const chunk = Buffer.allocUnsafe((to - from) * 8)
      for (let k = from; k < to; k++) {
        chunk.writeBigUInt64LE(BigInt(offset), (k - from) * 8)
        if (k < count) offset += starts[order[k]! + 1]! - starts[order[k]!]!
      }
      file.appendData(chunk)
    }
    // The strings, in order.
    for (let from = 0; from < count; from += CHUNK_ENTRIES) {
      const to = Math.min(count, from + CHUNK_ENTRIES)
      let bytes = 0
      for (let k = from; k < to; k++) bytes += starts[order[k]! + 1]! - starts[order[k]!]!
      const chunk = Buffer.allocUnsafe(bytes)
      let at = 0
      for (let k = from; k < to; k++) at += strings.copy(chunk, at, starts[order[k]!]!, starts[order[k]! + 1]!)
      file.appendData(chunk)
    }
    const dataSha256 = file.dataSha256()
    file.writeAt(encodeBankHeader({ spec, count, ...sections, importedAt: now, dataSha256 }), 0)
    file.finish()
    // Checked as a server checks it before it replaces anything.
    const bank = await openBank(file.temporary)
    bank.close()
    file.replaceTarget()
    return { count, dataSha256: dataSha256.toString('hex'), bytes: sections.hashesOffset + file.dataLength, lines }
  } catch (error) {
    file.abandon()
    throw error
  }
}

/** The strings section's length: each entry's strings, whatever their order. */
function stringsLengthOf(starts: Float64Array, count: number): number {
  return starts[count]! - starts[0]!
}
