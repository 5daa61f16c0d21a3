/**
 * The import's input, one line at a time: `hash[,id[,label]]` lines or CSV with a header line.
 *
 * - **Fields** are split on commas as RFC 4180 says: a field in double quotes may hold commas, and
 *   `""` inside it is one quote. A quoted field must end on its line (a bank's ids and labels hold
 *   no line breaks), and a quote inside an unquoted field is refused. Unquoted fields have spaces and
 *   tabs around them trimmed; quoted fields are taken as written.
 * - **A header line** is recognised on the first line that is not blank or a comment, when its first
 *   field is not a hash of the bank's type and every field is a plain name (letters, digits, `_`, `-`,
 *   spaces). It names the columns: `hash` (or the type's name, e.g. `pdq`) is required, `id` and
 *   `label` are optional, other columns are ignored. Without a header a line holds at most three
 *   fields, in the order hash, id, label.
 * - **Blank lines** and lines whose first character is `#` are skipped; a UTF-8 byte order mark
 *   before the first line is dropped; lines end in LF or CRLF.
 * - **An entry:** an empty or missing id is the line's number (1-based, as `sed -n Np` counts); an
 *   empty or missing label is no label. Ids are at most 256 bytes of UTF-8 and labels 1,024, and
 *   neither may hold a control character other than tab.
 *
 * Everything refused throws BankImportError naming the line number and why.
 */
import { BANK_TYPE_SPECS, BankImportError, MAX_ID_BYTES, MAX_LABEL_BYTES, type BankType } from './types.js'

/** One entry read from a line: the hash record (types.ts), its id and its label. */
export interface BankLine {
  record: Buffer
  id: string
  label: string | null
}

/**
 * Splits one line (no line break) into its fields, RFC 4180 quoting; a string is the reason it is
 * refused. Blanks (spaces, tabs) around a quoted field are allowed and dropped.
 */
export function splitFields(line: string): string[] | string {
  const fields: string[] = []
  let at = 0
  for (;;) {
    let first = at
    while (isBlank(line.charCodeAt(first))) first++
    if (line.charCodeAt(first) === 0x22) {
      let value = ''
      let from = first + 1
      for (;;) {
        const quote = line.indexOf('"', from)
        if (quote === -1) return `field ${fields.length + 1} opens a quote that is not closed on its line (fields holding line breaks are not accepted)`
        value += line.slice(from, quote)
        if (line.charCodeAt(quote + 1) === 0x22) {
          value += '"'
          from = quote + 2
          continue
        }
        at = quote + 1
        break
      }
      fields.push(value)
      while (isBlank(line.charCodeAt(at))) at++
      if (at === line.length) return fields
      if (line.charCodeAt(at) !== 0x2c) return `field ${fields.length} has characters after its closing quote`
      at++
    } else {
      const comma = line.indexOf(',', at)
      const value = trimBlanks(comma === -1 ? line.slice(at) : line.slice(at, comma))
      if (value.includes('"')) return `field ${fields.length + 1} has a quote inside it without being quoted as a whole`
      fields.push(value)
      if (comma === -1) return fields
      at = comma + 1
    }
  }
}

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09

/** Spaces and tabs off both ends (no regular expression: the line is the client's). */
function trimBlanks(text: string): string {
  let start = 0
  let end = text.length
  while (start < end && isBlank(text.charCodeAt(start))) start++
  while (end > start && isBlank(text.charCodeAt(end - 1))) end--
  return text.slice(start, end)
}

function isPlainName(field: string): boolean {
  if (field.length === 0 || field.length > 64) return false
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i)
    const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d || c === 0x20
    if (!ok) return false
  }
  return true
}

/** The first control character other than tab in a text, or -1. */
function controlAt(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return i
  }
  return -1
}

interface Columns { hash: number, id: number, label: number }

/**
 * Reads a bank's input a line at a time: `line(text, number)` returns the entry of that line, or
 * null for a skipped line (blank, comment, header), and throws BankImportError for a bad one.
 */
export class BankLineReader {
  readonly type: BankType
  #columns: Columns | null = null
  #sawFirst = false

  constructor(type: BankType) {
    this.type = type
  }

  line(text: string, number: number): BankLine | null {
    if (number === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (trimBlanks(text).length === 0 || text.charCodeAt(0) === 0x23) return null
    if (text.length > 8192) throw new BankImportError(number, `the line is ${text.length} characters long, longer than any entry can be (8,192)`)
    const fields = splitFields(text)
    if (typeof fields === 'string') throw new BankImportError(number, fields)
    const spec = BANK_TYPE_SPECS[this.type]
    if (!this.#sawFirst) {
      this.#sawFirst = true
      if (spec.encode(fields[0]!) === null && fields.every(isPlainName)) {
        this.#columns = this.#header(fields, number)
        return null
      }
    }
    const columns = this.#columns
    if (columns === null && fields.length > 3) {
      throw new BankImportError(number, `the line has ${fields.length} fields; a line is hash[,id[,label]] (or begin the file with a header line naming the hash, id and label columns)`)
    }
    const hashText = fields[columns?.hash ?? 0]
    if (hashText === undefined) throw new BankImportError(number, `the line has ${fields.length} fields and the header puts the hash in field ${columns!.hash + 1}`)
    const record = spec.encode(hashText)
    if (record === null) {
      const other = Object.values(BANK_TYPE_SPECS).find((candidate) => candidate.type !== this.type && candidate.encode(hashText) !== null)
      const shown = hashText.length > 80 ? `${JSON.stringify(hashText.slice(0, 80))}…` : JSON.stringify(hashText)
      throw new BankImportError(number, `${shown} is not a ${this.type} hash (${spec.form})${other ? `; it looks like ${other.type}` : ''}`)
    }
    const idIndex = columns === null ? 1 : columns.id
    const labelIndex = columns === null ? 2 : columns.label
    const idText = idIndex < 0 ? '' : fields[idIndex] ?? ''
    const labelText = labelIndex < 0 ? '' : fields[labelIndex] ?? ''
    const id = idText === '' ? String(number) : idText
    checkText(id, 'id', MAX_ID_BYTES, number)
    if (labelText !== '') checkText(labelText, 'label', MAX_LABEL_BYTES, number)
    return { record, id, label: labelText === '' ? null : labelText }
  }

  #header(fields: string[], number: number): Columns {
    const names = fields.map((field) => field.trim().toLowerCase())
    let hash = names.indexOf('hash')
    if (hash === -1) hash = names.indexOf(this.type)
    if (hash === -1) throw new BankImportError(number, `the first line is not a ${this.type} hash, and as a header it names no hash column (hash or ${this.type})`)
    return { hash, id: names.indexOf('id'), label: names.indexOf('label') }
  }
}

function checkText(text: string, what: 'id' | 'label', maxBytes: number, number: number): void {
  const bytes = Buffer.byteLength(text, 'utf8')
  if (bytes > maxBytes) throw new BankImportError(number, `the ${what} is ${bytes} bytes of UTF-8, more than ${maxBytes.toLocaleString('en')}`)
  const control = controlAt(text)
  if (control !== -1) throw new BankImportError(number, `the ${what} holds a control character (U+${text.charCodeAt(control).toString(16).toUpperCase().padStart(4, '0')}) at character ${control + 1}`)
}
