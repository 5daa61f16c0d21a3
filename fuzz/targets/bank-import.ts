/**
 * The bank import's line reader (src/similarity/banks/lines.ts): RFC 4180 field splitting, the
 * header line, the hash forms of every bank type, the id and label rules.
 *
 * Input: byte 0 picks the bank type (modulo six); the rest is the input file's text, read a line
 * at a time as bank:import reads it.
 *
 * Invariants: an entry's record has its type's width and is what the type's encoder makes of some
 * field of the line; ids are 1 to 256 bytes of UTF-8 and labels null or 1 to 1,024, neither with a
 * control character other than tab; fields split from a line, quoted again and split again, are
 * the same fields.
 *
 * Expected refusals: BankImportError naming the line it was given. Anything else thrown is a finding.
 */
import { BankImportError, BankLineReader, BANK_TYPES, MAX_ID_BYTES, MAX_LABEL_BYTES, splitFields, type BankType } from '../../src/similarity/banks/index.js'
import { BANK_TYPE_SPECS } from '../../src/similarity/banks/types.js'
import { invariant } from '../support.js'

const quoted = (field: string) => `"${field.replaceAll('"', '""')}"`

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c < 0x20 && c !== 0x09) || c === 0x7f) return true
  }
  return false
}

export function fuzz(data: Buffer): void {
  if (data.length === 0) return
  const type = BANK_TYPES[data[0]! % BANK_TYPES.length] as BankType
  const reader = new BankLineReader(type)
  const lines = data.subarray(1).toString('utf8').split('\n')
  for (const [at, line] of lines.entries()) {
    const number = at + 1
    // The reader drops a byte order mark before line 1 and a CR before the line end.
    let text = number === 1 && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line
    if (text.endsWith('\r')) text = text.slice(0, -1)
    const fields = splitFields(text)
    if (Array.isArray(fields)) {
      const again = splitFields(fields.map(quoted).join(','))
      invariant(Array.isArray(again) && again.length === fields.length && again.every((field, k) => field === fields[k]), `fields of line ${number} do not survive quoting`)
    }
    let entry
    try {
      entry = reader.line(line, number)
    } catch (error) {
      if (error instanceof BankImportError && error.line === number && error.reason.length > 0) return
      throw error
    }
    if (entry === null) continue
    const spec = BANK_TYPE_SPECS[type]
    invariant(entry.record.length === spec.recordBytes, `a ${type} record of ${entry.record.length} bytes`)
    invariant(Array.isArray(fields) && fields.some((field) => spec.encode(field)?.equals(entry.record)), 'a record no field of the line makes')
    const idBytes = Buffer.byteLength(entry.id)
    invariant(idBytes >= 1 && idBytes <= MAX_ID_BYTES && !hasControl(entry.id), `id of ${idBytes} bytes`)
    if (entry.label !== null) {
      const labelBytes = Buffer.byteLength(entry.label)
      invariant(labelBytes >= 1 && labelBytes <= MAX_LABEL_BYTES && !hasControl(entry.label), `label of ${labelBytes} bytes`)
    }
  }
}

/** Seeds (fuzz/make-corpus.ts): each type's lines as exported lists write them. */
export function seeds(): Array<[string, Buffer]> {
  const pdq = 'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22'
  const lines: Array<[string, BankType, string]> = [
    ['pdq csv with header and quotes', 'pdq', `hash,id,label\n${pdq},1,"a label, quoted"\n${pdq.toUpperCase()},"id ""2""",\n`],
    ['pdq plain lines, comments, crlf', 'pdq', `# exported\r\n${pdq}\r\n\r\n  ${pdq} , x , y \r\n`],
    ['tlsh both forms', 'tlsh', `T1${'A'.repeat(70)},a\n${'0123456789'.repeat(7)},b,label\n`],
    ['ssdeep with header columns reordered', 'ssdeep', 'label,ssdeep,id\nsome file,3:AXGBicFlgVNhBGcL6wCrFQEv:AXGHsNhxLsr2C,9\n,96:abcdefghijklmnop:abcdefgh,\n'],
    ['md5 sha1 sha256 lines', 'md5', 'd41d8cd98f00b204e9800998ecf8427e,empty\nda39a3ee5e6b4b0d3255bfef95601890afd80709,sha1 in md5\n'],
    ['sha256 bad lines', 'sha256', `${'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'},"unclosed\nx,y,z,w\n`],
  ]
  return lines.map(([label, type, text]) => [label, Buffer.concat([Buffer.from([BANK_TYPES.indexOf(type)]), Buffer.from(text)])])
}
