/**
 * The keys-file loader: every file of secrets or their hashes (PEPPER_KEYS_FILE, HMAC_KEYS_FILE,
 * API_KEYS_FILE) is read by this module and nothing else. One entry a line; `#` to the end of a
 * line is a comment; fields are separated by white space. A line has its positional fields first
 * (an id, a version, a secret or a hash: what each kind says), then options written `name=value`
 * (`state=staged`, `algorithms=sha256,sha512`, `scopes=verify`). file-reload.ts reads such a file
 * again when it changes and on SIGHUP.
 *
 * **A message about a keys file quotes none of it.** A field written in the wrong place is the
 * usual mistake (a pepper line written `<secret> k3`, an API key pasted where its hash goes), so
 * the field a check reads as a name may hold a secret; and these messages go to stderr at start,
 * to the log and to `GET /api/health` on a reload. Every message is made by `KeysFileLine.error`
 * or `keysFileError`: the variable, the file, the line number and the field's position, then a
 * reason that describes what the field should be. The reason names options and values of this
 * code's own vocabulary (`state=`, `sha256`), never a key name, id, version, secret or hash as
 * written, from this line or another; another line is named by its number. A new kind of line
 * (a PKCS#11 object's, say) reads through keysFileLines and reports through the same two.
 */
import { readFileSync } from 'node:fs'
import { ConfigError } from '../config.js'

/** One line of a keys file: its fields, and the place every message about it names. */
export class KeysFileLine {
  readonly variable: string
  readonly file: string
  /** 1-based line number. */
  readonly line: number
  readonly fields: readonly string[]
  /** The line's positional fields as the kind writes them (`<key id> <base64 secret>`), for messages. */
  readonly usage: string

  constructor(variable: string, file: string, line: number, fields: readonly string[], usage: string) {
    this.variable = variable
    this.file = file
    this.line = line
    this.fields = fields
    this.usage = usage
  }

  /**
   * A ConfigError about this line, and about its field at `field` (1-based) when one is at fault.
   * `reason` says what is wrong and what the field should be; it never includes a field's text.
   */
  error(reason: string, field?: number): ConfigError {
    return new ConfigError(`${this.variable} ${this.file} line ${this.line}${field === undefined ? '' : `, field ${field}`}: ${reason}`)
  }
}

/** A ConfigError about a keys file as a whole (unreadable, empty); `reason` quotes none of it. */
export function keysFileError(variable: string, file: string, reason: string): ConfigError {
  return new ConfigError(`${variable} ${file} ${reason}`)
}

/** The non-empty lines of a keys file, comments removed, split into fields. */
export function keysFileLines(text: string, variable: string, file: string, usage: string): KeysFileLine[] {
  const lines: KeysFileLine[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const fields = (raw.split('#', 1)[0] ?? '').trim().split(/\s+/).filter((field) => field !== '')
    if (fields.length > 0) lines.push(new KeysFileLine(variable, file, index + 1, fields, usage))
  })
  return lines
}

/** The file's text, or a ConfigError naming it with the errno code (never its contents). */
export function readKeysFileText(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw keysFileError(variable, file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** An option of a line: its value, and its position for messages. */
export interface KeysFileOption {
  value: string
  /** 1-based position of the field among the line's fields. */
  field: number
}

/** An option field: a lowercase name, `=`, and a value of plain characters (never a secret's alphabet alone). */
const OPTION = /^([a-z][a-z-]{0,31})=([A-Za-z0-9.,:_*-]{0,1024})$/

/**
 * Splits a line into its positional fields and its `name=value` options. `positional` is how many
 * fields come first (a range: the API keys file's limit is optional); every field after them must
 * be an option this kind of file takes, each at most once.
 */
export function splitFields(entry: KeysFileLine, positional: { min: number, max: number }, allowed: readonly string[]): { fields: string[], options: Map<string, KeysFileOption> } {
  const fields: string[] = []
  const options = new Map<string, KeysFileOption>()
  const takes = allowed.map((each) => `${each}=`).join(', ')
  entry.fields.forEach((text, index) => {
    const field = index + 1
    const option = OPTION.exec(text)
    // A field that looks like an option where a positional one is due is still positional (a
    // secret or hash is never of this shape in practice, and its own check refuses it if it is).
    if (option && index >= positional.min) {
      const name = option[1]!
      // The name is not repeated: a field of this shape may still be a secret's text.
      if (!allowed.includes(name)) throw entry.error(`not an option this file takes; it takes ${takes}`, field)
      const earlier = options.get(name)
      if (earlier) throw entry.error(`the option ${name}= is already given as field ${earlier.field}`, field)
      options.set(name, { value: option[2]!, field })
      return
    }
    if (options.size > 0 || fields.length >= positional.max) {
      throw entry.error(`expected "${entry.usage}", then options ${takes}; got ${entry.fields.length} fields, and this one is neither`, field)
    }
    fields.push(text)
  })
  if (fields.length < positional.min) throw entry.error(`expected "${entry.usage}", got ${entry.fields.length} field(s)`)
  return { fields, options }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/** The bytes of a base64 (or base64url) secret, or null when it is neither. */
export function decodeSecret(text: string): Buffer | null {
  if (BASE64.test(text)) return Buffer.from(text, 'base64')
  if (BASE64URL.test(text)) return Buffer.from(text, 'base64url')
  return null
}

/** OWASP and NIST SP 800-107 §5.3.4: a key at least as long as the hash's output; 32 bytes covers SHA-256. */
export const MIN_SECRET_BYTES = 32

/**
 * The secret at `field`: base64 of at least MIN_SECRET_BYTES bytes, or a ConfigError saying how to
 * make one and where the line wants it (not its length: a short "secret" is often another field
 * written in the wrong place, and its length would say something of that field).
 */
export function secretField(entry: KeysFileLine, field: number): Buffer {
  const secret = decodeSecret(entry.fields[field - 1] ?? '')
  const rule = `the secret must be base64 or base64url of at least ${MIN_SECRET_BYTES} bytes (openssl rand -base64 32), on a line "${entry.usage}"`
  if (!secret) throw entry.error(`${rule} (this field is not base64)`, field)
  if (secret.length < MIN_SECRET_BYTES) {
    secret.fill(0)
    throw entry.error(`${rule} (this field decodes to fewer bytes)`, field)
  }
  return secret
}

/** Names and ids appear in logs, metrics labels, hashes and responses: a plain, bounded alphabet. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const KEY_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'
