/**
 * PEPPER_KEYS_FILE: the pepper keys in force. One key a line, `<key id> <base64 secret>`, `#` starts
 * a comment; the LAST key is the current one, so a rotation appends a line (see docs/passwords.md).
 * A malformed line, a secret shorter than 32 bytes or a repeated id refuses the file; messages name
 * the line and describe the field, never print it. The keyring prints as its key ids only.
 */
import { ConfigError } from '../config.js'
import { keysFileLines, readKeysFileText } from '../keys-file.js'
import { PEPPER_KEY_ID, PEPPER_MIN_SECRET_BYTES, PepperKey } from '../algorithms/password/pepper.js'

const VARIABLE = 'PEPPER_KEYS_FILE'
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

export class PepperKeyring {
  readonly #keys: ReadonlyMap<string, PepperKey>
  readonly current: PepperKey

  constructor(keys: PepperKey[]) {
    const last = keys.at(-1)
    if (!last) throw new ConfigError(`${VARIABLE} holds no keys`)
    this.#keys = new Map(keys.map((key) => [key.id, key]))
    this.current = last
  }

  get(id: string): PepperKey | undefined { return this.#keys.get(id) }

  /** Key ids, oldest first; the last is current. */
  get ids(): string[] { return [...this.#keys.keys()] }

  toJSON(): { current: string, keys: string[] } { return { current: this.current.id, keys: this.ids } }
}

/** The bytes of a base64 (or base64url) secret, or null when it is neither. */
function decodeSecret(text: string): Buffer | null {
  if (BASE64.test(text)) return Buffer.from(text, 'base64')
  if (BASE64URL.test(text)) return Buffer.from(text, 'base64url')
  return null
}

export function parsePepperKeysFile(text: string, file: string): PepperKeyring {
  const keys: PepperKey[] = []
  const ids = new Set<string>()
  for (const { where, fields } of keysFileLines(text, VARIABLE, file)) {
    const [id, secretText] = fields as [string, string | undefined]
    if (fields.length !== 2 || secretText === undefined) {
      throw new ConfigError(`${where}: expected "<key id> <base64 secret>", got ${fields.length} field(s)`)
    }
    if (!PEPPER_KEY_ID.test(id)) throw new ConfigError(`${where}: the key id must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`)
    if (ids.has(id)) throw new ConfigError(`${where}: the key id ${id} is already used on an earlier line`)
    const secret = decodeSecret(secretText)
    if (!secret) throw new ConfigError(`${where}: the secret of key ${id} is not base64`)
    if (secret.length < PEPPER_MIN_SECRET_BYTES) {
      throw new ConfigError(`${where}: the secret of key ${id} is ${secret.length} bytes; at least ${PEPPER_MIN_SECRET_BYTES} are required (openssl rand -base64 32)`)
    }
    ids.add(id)
    keys.push(new PepperKey(id, secret))
    secret.fill(0)
  }
  if (keys.length === 0) throw new ConfigError(`${VARIABLE} ${file} holds no keys; add a line "<key id> <base64 secret>"`)
  return new PepperKeyring(keys)
}

export function readPepperKeysFile(file: string): PepperKeyring {
  return parsePepperKeysFile(readKeysFileText(VARIABLE, file), file)
}
