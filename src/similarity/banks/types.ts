/**
 * What a similarity bank holds, by type: how a hash is written by clients, how it is stored in the
 * bank file (a fixed-width record per hash), and how two are compared. One row per type; the file
 * format (format.ts), the import (import.ts) and the searches (search-*.ts) all read this table.
 */
import { parseSsdeep } from '../ssdeep.js'
import { parseTlsh } from '../tlsh.js'

export type BankType = 'pdq' | 'tlsh' | 'ssdeep' | 'md5' | 'sha1' | 'sha256'

export const BANK_TYPES: readonly BankType[] = ['pdq', 'tlsh', 'ssdeep', 'md5', 'sha1', 'sha256']

/** One bank entry found by a search. */
export interface BankMatch {
  id: string
  label: string | null
  /** pdq and tlsh: the distance (0 is the same); md5, sha1, sha256: always 0. Absent for ssdeep. */
  distance?: number
  /** ssdeep: libfuzzy's score, 0–100 (100 is the same). Absent for the other types. */
  score?: number
  /** pdq with several query hashes: the index (in the query list) of the variant at the least distance. */
  variant?: number
}

/**
 * A search's answer: at most `limit` matches, sorted by distance ascending (score descending for
 * ssdeep), then by id (code-unit order), then label; `truncated` when more entries matched.
 */
export interface BankSearchResult {
  matches: BankMatch[]
  truncated: boolean
}

export interface BankSearchOptions {
  /** pdq, tlsh: the largest distance that matches; ssdeep: the smallest score that matches (≥ 1). Ignored for digests. */
  threshold: number
  /** The most matches to return (≥ 1); `truncated` says when more matched. */
  limit: number
  /** tlsh: include the length term (the reference's default, true); false is its `-xlen`. */
  lengthTerm?: boolean
}

/** A bank file that cannot be used: `file` names it, `reason` says what is wrong. */
export class BankFileError extends Error {
  readonly file: string
  readonly reason: string
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`)
    this.name = 'BankFileError'
    this.file = file
    this.reason = reason
  }
}

/** An import input refused: `line` is the 1-based line number (0: not about one line). */
export class BankImportError extends Error {
  readonly line: number
  readonly reason: string
  constructor(line: number, reason: string) {
    super(line > 0 ? `line ${line}: ${reason}` : reason)
    this.name = 'BankImportError'
    this.line = line
    this.reason = reason
  }
}

/** Limits of an entry, in UTF-8 bytes. */
export const MAX_ID_BYTES = 256
export const MAX_LABEL_BYTES = 1024
/** The most entries in one bank (ids are 32-bit in the indexes). */
export const MAX_ENTRIES = 0xffff_fffe

/** ssdeep's stored record: block size (u32 LE), the two lengths (u8 each), then 64 + 64 bytes, zero padded. */
export const SSDEEP_RECORD_BYTES = 4 + 1 + 1 + 64 + 64

export interface BankTypeSpec {
  type: BankType
  /** The type's code in the file header. */
  code: number
  /** Bytes of one stored hash record. */
  recordBytes: number
  /** What a hash of this type looks like, for error messages. */
  form: string
  /** The stored record of a hash in its text form, or null when the text is not a hash of this type. */
  encode(text: string): Buffer | null
}

const HEX = /^[0-9A-Fa-f]+$/

const hexOf = (digits: number) => (text: string): Buffer | null =>
  text.length === digits && HEX.test(text) ? Buffer.from(text, 'hex') : null

/** TLSH's record: checksum, lValue, q1 | q2 << 4, then the 32 code bytes in the reference's internal order. */
export const TLSH_RECORD_BYTES = 35

function encodeTlsh(text: string): Buffer | null {
  const digest = parseTlsh(text)
  if (digest === null) return null
  const record = Buffer.alloc(TLSH_RECORD_BYTES)
  record[0] = digest.checksum
  record[1] = digest.lValue
  record[2] = digest.q1Ratio | (digest.q2Ratio << 4)
  record.set(digest.code, 3)
  return record
}

function encodeSsdeep(text: string): Buffer | null {
  const parsed = parseSsdeep(text)
  if (parsed === null || parsed.blockSize > 0xffff_ffff) return null
  const record = Buffer.alloc(SSDEEP_RECORD_BYTES)
  record.writeUInt32LE(parsed.blockSize, 0)
  record[4] = parsed.hash1.length
  record[5] = parsed.hash2.length
  record.write(parsed.hash1, 6, 'latin1')
  record.write(parsed.hash2, 6 + 64, 'latin1')
  return record
}

export const BANK_TYPE_SPECS: Record<BankType, BankTypeSpec> = {
  pdq: { type: 'pdq', code: 1, recordBytes: 32, form: '64 hex digits, a 256-bit PDQ hash', encode: hexOf(64) },
  tlsh: { type: 'tlsh', code: 2, recordBytes: TLSH_RECORD_BYTES, form: 'T1 and 70 hex digits, or the 70 digits alone', encode: encodeTlsh },
  ssdeep: { type: 'ssdeep', code: 3, recordBytes: SSDEEP_RECORD_BYTES, form: 'blocksize:hash1:hash2, as ssdeep prints it', encode: encodeSsdeep },
  md5: { type: 'md5', code: 4, recordBytes: 16, form: '32 hex digits, an MD5 digest', encode: hexOf(32) },
  sha1: { type: 'sha1', code: 5, recordBytes: 20, form: '40 hex digits, a SHA-1 digest', encode: hexOf(40) },
  sha256: { type: 'sha256', code: 6, recordBytes: 32, form: '64 hex digits, a SHA-256 digest', encode: hexOf(64) },
}

export function bankTypeForCode(code: number): BankTypeSpec | undefined {
  return Object.values(BANK_TYPE_SPECS).find((spec) => spec.code === code)
}

export function isBankType(name: string): name is BankType {
  return (BANK_TYPES as readonly string[]).includes(name)
}

/** Whether `text` is a hash of this type as a client or an import line may write it. */
export function isBankHash(type: BankType, text: string): boolean {
  return text.length <= 200 && BANK_TYPE_SPECS[type].encode(text) !== null
}

/** The text form of a stored record (lower-case hex; TLSH with `T1`; ssdeep as printed). */
export function formatRecord(type: BankType, record: Uint8Array): string {
  const bytes = Buffer.from(record.buffer, record.byteOffset, record.byteLength)
  if (type === 'ssdeep') {
    const length1 = bytes[4]!
    const length2 = bytes[5]!
    return `${bytes.readUInt32LE(0)}:${bytes.toString('latin1', 6, 6 + length1)}:${bytes.toString('latin1', 70, 70 + length2)}`
  }
  if (type === 'tlsh') {
    const swap = (byte: number) => ((byte >> 4) | (byte << 4)) & 0xff
    const out = Buffer.alloc(TLSH_RECORD_BYTES)
    out[0] = swap(bytes[0]!)
    out[1] = swap(bytes[1]!)
    out[2] = swap(bytes[2]!)
    for (let i = 0; i < 32; i++) out[3 + i] = bytes[3 + 31 - i]!
    return `T1${out.toString('hex').toUpperCase()}`
  }
  return bytes.toString('hex')
}
