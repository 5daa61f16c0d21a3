/**
 * The keys-file loader: every file of secrets or their hashes (PEPPER_KEYS_FILE, HMAC_KEYS_FILE,
 * API_KEYS_FILE) is read by this module and nothing else. One entry a line; `#` to the end of a
 * line is a comment; fields are separated by white space. A line has its positional fields first
 * (an id, a version, a secret or a hash: what each kind says), then options written `name=value`
 * (`state=staged`, `algorithms=sha256,sha512`, `scopes=verify`). Errors name the variable, the
 * file and the line, and describe a field rather than quote it, so a secret in the wrong place
 * never reaches a log. file-reload.ts reads such a file again when it changes and on SIGHUP
 * (src/keys/source.ts ties the two together).
 */
import { readFileSync } from 'node:fs'
import { ConfigError } from '../config.js'

export interface KeysFileLine {
  /** 1-based line number, for messages. */
  line: number
  /** `<variable> <file> line <n>`, the prefix of every message about this line. */
  where: string
  fields: string[]
}

/** The non-empty lines of a keys file, comments removed, split into fields. */
export function keysFileLines(text: string, variable: string, file: string): KeysFileLine[] {
  const lines: KeysFileLine[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const fields = (raw.split('#', 1)[0] ?? '').trim().split(/\s+/).filter((field) => field !== '')
    if (fields.length > 0) lines.push({ line: index + 1, where: `${variable} ${file} line ${index + 1}`, fields })
  })
  return lines
}

/** The file's text, or a ConfigError naming it with the errno code (never its contents). */
export function readKeysFileText(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${variable} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** An option field: a lowercase name, `=`, and a value of plain characters (never a secret's alphabet alone). */
const OPTION = /^([a-z][a-z-]{0,31})=([A-Za-z0-9.,:_*-]{0,1024})$/

/**
 * Splits a line into its positional fields and its `name=value` options. `positional` is how many
 * fields come first (a range: the API keys file's limit is optional); every field after them must
 * be an option this kind of file takes, each at most once. Messages name the option or the field's
 * position, never its text.
 */
export function splitFields(entry: KeysFileLine, positional: { min: number, max: number }, allowed: readonly string[], usage: string): { fields: string[], options: Map<string, string> } {
  const fields: string[] = []
  const options = new Map<string, string>()
  entry.fields.forEach((field, index) => {
    const option = OPTION.exec(field)
    // A field that looks like an option where a positional one is due is still positional (a
    // secret or hash is never of this shape in practice, and its own check refuses it if it is).
    if (option && index >= positional.min) {
      const [, name, value] = option as unknown as [string, string, string]
      if (!allowed.includes(name)) {
        throw new ConfigError(`${entry.where}: unknown option ${name}=; this file takes ${allowed.map((each) => `${each}=`).join(', ')}`)
      }
      if (options.has(name)) throw new ConfigError(`${entry.where}: the option ${name}= is given twice`)
      options.set(name, value)
      return
    }
    if (options.size > 0 || fields.length >= positional.max) {
      throw new ConfigError(`${entry.where}: expected "${usage}", got ${entry.fields.length} field(s); field ${index + 1} is not an option name=value this file takes`)
    }
    fields.push(field)
  })
  if (fields.length < positional.min) throw new ConfigError(`${entry.where}: expected "${usage}", got ${entry.fields.length} field(s)`)
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
 * A secret field: base64 of at least MIN_SECRET_BYTES bytes, or a ConfigError saying which key's
 * secret is wrong and how to make one.
 */
export function secretField(text: string, where: string, what: string): Buffer {
  const secret = decodeSecret(text)
  if (!secret) throw new ConfigError(`${where}: the secret of ${what} is not base64`)
  if (secret.length < MIN_SECRET_BYTES) {
    throw new ConfigError(`${where}: the secret of ${what} is ${secret.length} bytes; at least ${MIN_SECRET_BYTES} are required (openssl rand -base64 32)`)
  }
  return secret
}

/** Names and ids appear in logs, metrics labels, hashes and responses: a plain, bounded alphabet. */
export const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const KEY_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'
