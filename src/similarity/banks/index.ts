/**
 * Similarity banks: named, read-only sets of known hashes of one type (pdq, tlsh, ssdeep, md5,
 * sha1, sha256), imported offline into a checked file (format.ts, import.ts) and searched with exact
 * recall (open.ts and one module per type).
 */
export { openBank, type Bank } from './open.js'
export { importBank, type BankImportSummary } from './import.js'
export { BankLineReader, splitFields, type BankLine } from './lines.js'
export { BANK_FORMAT_VERSION, BANK_HEADER_BYTES } from './format.js'
export {
  BANK_TYPES, BankFileError, BankImportError, isBankHash, isBankType, formatRecord, MAX_ID_BYTES, MAX_LABEL_BYTES,
  type BankMatch, type BankSearchOptions, type BankSearchResult, type BankType,
} from './types.js'
