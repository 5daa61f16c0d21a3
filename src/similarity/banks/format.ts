/**
 * The bank file, made by `npm run bank:import` (import.ts) and read by openBank (open.ts).
 *
 * ## Format version 1
 *
 * All integers are little-endian. A 256-byte header, then the data: three sections, one after the
 * other, with no gaps.
 *
 * | offset | bytes | field |
 * |---|---|---|
 * | 0 | 8 | magic `HASHDBNK` |
 * | 8 | 4 | format version: 1 |
 * | 12 | 1 | type: 1 pdq, 2 tlsh, 3 ssdeep, 4 md5, 5 sha1, 6 sha256 |
 * | 13 | 1 | reserved, 0 |
 * | 14 | 2 | bytes of one hash record (types.ts: 32, 35, 134, 16, 20, 32) |
 * | 16 | 8 | entries (count) |
 * | 24 | 8 | hashes offset (256) |
 * | 32 | 8 | hashes length: count · record bytes |
 * | 40 | 8 | entry table offset (hashes offset + hashes length) |
 * | 48 | 8 | entry table length: (count + 1) · 8 |
 * | 56 | 8 | strings offset (entry table offset + its length) |
 * | 64 | 8 | strings length |
 * | 72 | 8 | import date, ms since 1970 |
 * | 80 | 32 | SHA-256 of the data: every byte from offset 256 to the end of the file |
 * | 112 | 32 | SHA-256 of bytes 0 to 111 (the header up to here) |
 * | 144 | 112 | reserved, 0 |
 *
 * - **Hashes:** one fixed-width record per entry (types.ts), sorted by the record's bytes, then by
 *   id, then by label, so the same entries give the same file whatever their input order.
 * - **Entry table:** count + 1 unsigned 64-bit offsets into the strings section: entry i's strings
 *   are the bytes from offset i to offset i + 1; the last offset is the strings length.
 * - **Strings:** per entry, the id's UTF-8 length (u16), the label's UTF-8 length (u16, 0xFFFF when
 *   the entry has no label), the id's bytes, the label's bytes.
 *
 * The data SHA-256 can be checked by any tool: `tail -c +257 BANK | sha256sum` prints it.
 */
import { checkHeaderSeal, newHeader, sealHeader, type HeaderSeal } from '../../atomic-file.js'
import { bankTypeForCode, BankFileError, type BankTypeSpec } from './types.js'

export const BANK_MAGIC = Buffer.from('HASHDBNK', 'latin1')
export const BANK_FORMAT_VERSION = 1
export const BANK_HEADER_BYTES = 256
export const NO_LABEL = 0xffff
/** The magic, the version and the header checksum over bytes 0 to 111 (the table above). */
export const BANK_SEAL: HeaderSeal = { magic: BANK_MAGIC, version: BANK_FORMAT_VERSION, bytes: BANK_HEADER_BYTES, summed: 112 }

export interface BankHeader {
  version: number
  spec: BankTypeSpec
  count: number
  hashesOffset: number
  hashesLength: number
  entriesOffset: number
  entriesLength: number
  stringsOffset: number
  stringsLength: number
  importedAt: Date
  dataSha256: Buffer
}

const writeU64 = (bytes: Buffer, at: number, value: number) => bytes.writeBigUInt64LE(BigInt(value), at)
/** An unsigned 64-bit integer below 2^53, as a number; NaN beyond (refused by the checks). */
function readU64(bytes: Buffer, at: number): number {
  const high = bytes.readUInt32LE(at + 4)
  return high >= 0x20_0000 ? Number.NaN : bytes.readUInt32LE(at) + high * 0x1_0000_0000
}

/** The section layout for `count` entries of this type and this many bytes of strings. */
export function layout(spec: BankTypeSpec, count: number, stringsLength: number) {
  const hashesOffset = BANK_HEADER_BYTES
  const hashesLength = count * spec.recordBytes
  const entriesOffset = hashesOffset + hashesLength
  const entriesLength = (count + 1) * 8
  const stringsOffset = entriesOffset + entriesLength
  return { hashesOffset, hashesLength, entriesOffset, entriesLength, stringsOffset, stringsLength }
}

export function encodeBankHeader(header: Omit<BankHeader, 'version'>): Buffer {
  const bytes = newHeader(BANK_SEAL)
  bytes.writeUInt8(header.spec.code, 12)
  bytes.writeUInt16LE(header.spec.recordBytes, 14)
  writeU64(bytes, 16, header.count)
  writeU64(bytes, 24, header.hashesOffset)
  writeU64(bytes, 32, header.hashesLength)
  writeU64(bytes, 40, header.entriesOffset)
  writeU64(bytes, 48, header.entriesLength)
  writeU64(bytes, 56, header.stringsOffset)
  writeU64(bytes, 64, header.stringsLength)
  writeU64(bytes, 72, header.importedAt.getTime())
  header.dataSha256.copy(bytes, 80)
  return sealHeader(BANK_SEAL, bytes)
}

const BANK_REFUSALS = {
  notThisFormat: 'it is not a hashd similarity bank (no HASHDBNK header); make one with npm run bank:import',
  otherVersion: (version: number) =>
    `it is a bank of format version ${version}, and this hashd reads version ${BANK_FORMAT_VERSION}; import it again with this version's npm run bank:import`,
}

/**
 * Reads and checks a header against the file's size: everything but the data's SHA-256, which
 * needs the whole file (open.ts checks it while reading the hashes). Throws BankFileError.
 */
export function decodeBankHeader(file: string, bytes: Buffer, fileSize: number): BankHeader {
  const refuse = (reason: string) => new BankFileError(file, reason)
  if (bytes.length < BANK_HEADER_BYTES || fileSize < BANK_HEADER_BYTES) {
    throw refuse(`it is ${fileSize} bytes long, shorter than a bank's ${BANK_HEADER_BYTES}-byte header (truncated, or not a bank)`)
  }
  checkHeaderSeal(BANK_SEAL, bytes, BANK_REFUSALS, refuse)
  const version = BANK_FORMAT_VERSION
  const spec = bankTypeForCode(bytes.readUInt8(12))
  if (!spec) throw refuse(`its type code ${bytes.readUInt8(12)} is unknown`)
  if (bytes.readUInt16LE(14) !== spec.recordBytes) throw refuse(`its ${spec.type} records are ${bytes.readUInt16LE(14)} bytes, not ${spec.recordBytes}`)
  const count = readU64(bytes, 16)
  const header: BankHeader = {
    version, spec, count,
    hashesOffset: readU64(bytes, 24), hashesLength: readU64(bytes, 32),
    entriesOffset: readU64(bytes, 40), entriesLength: readU64(bytes, 48),
    stringsOffset: readU64(bytes, 56), stringsLength: readU64(bytes, 64),
    importedAt: new Date(readU64(bytes, 72)),
    dataSha256: Buffer.from(bytes.subarray(80, 112)),
  }
  if (!Number.isSafeInteger(count) || count > 0xffff_fffe) throw refuse(`its entry count ${count} is out of range`)
  const expected = layout(spec, count, header.stringsLength)
  if (!Number.isSafeInteger(header.stringsLength) || header.hashesOffset !== expected.hashesOffset || header.hashesLength !== expected.hashesLength
    || header.entriesOffset !== expected.entriesOffset || header.entriesLength !== expected.entriesLength || header.stringsOffset !== expected.stringsOffset) {
    throw refuse('its header gives section offsets or lengths this version does not write')
  }
  const size = header.stringsOffset + header.stringsLength
  if (fileSize < size) throw refuse(`it is ${fileSize} bytes long and its header says ${size} (truncated)`)
  if (fileSize > size) throw refuse(`it is ${fileSize} bytes long and its header says ${size} (bytes after the end)`)
  return header
}
