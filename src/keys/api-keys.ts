/**
 * API_KEYS_FILE: the hashes of the API keys, on the key ring's loader. One key a line:
 *
 *     <name> <sha256 of the key, 64 hex> [<requests per window>] [scopes=<scope>,…] [hmac-keys=<name>,…]
 *
 * Only hashes are stored, never keys. `scopes=` limits the key to some operations (src/keys/scopes.ts
 * lists them): `scopes=verify,hmac:verify` allows those two only, `scopes=*,-pepper:rewrap` (or just
 * `scopes=-pepper:rewrap`) everything but rewrapping. `hmac-keys=orders,users` limits the named HMAC
 * keys the key may use (`*`, the default, is every one); `banks=csam,malware` the similarity banks
 * it may search (`*`, the default, is every one). A line without options may do everything,
 * as before these options existed. plugins/auth.ts holds the keys in force.
 */
import { createHash } from 'node:crypto'
import { KEY_NAME, KEY_NAME_RULE, keysFileLines, readKeysFileText, splitFields, type KeysFileLine, type KeysFileOption } from './file.js'
import { SCOPE_NAMES } from './scopes.js'
import { BANK_NAME, BANK_NAME_RULE } from '../similarity/bank-names.js'

export { KEY_NAME } from './file.js'

export const API_KEYS_VARIABLE = 'API_KEYS_FILE'
const USAGE = '<name> <sha256 of the key, 64 hex> [<requests per window>]'
const SHA256_HEX = /^[0-9a-fA-F]{64}$/

export interface ApiKey {
  /** The name from the file: logged, and the rate-limit key. Never the key itself. */
  name: string
  /** Requests per RATE_LIMIT_WINDOW_MS for this key, overriding RATE_LIMIT_MAX; null keeps the default. */
  max: number | null
  /** Batch items per RATE_LIMIT_WINDOW_MS for this key (`items=`), overriding RATE_LIMIT_ITEMS_MAX; null keeps the default. */
  itemsMax: number | null
  /** The scopes it may use (every one when the line has no scopes=). */
  scopes: ReadonlySet<string>
  /** The named HMAC keys it may use; null for all of them. */
  hmacKeys: ReadonlySet<string> | null
  /** The similarity banks it may search (`banks=`); null for all of them. */
  banks: ReadonlySet<string> | null
}

/** The sha256 of a key, hex: what the file stores and the Map is keyed by. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The file's line for a key. */
export function keyLine(name: string, key: string, max?: number): string {
  return `${name} ${hashKey(key)}${max === undefined ? '' : ` ${max}`}`
}

/** `scopes=`: names, `*` for all, `-name` to take one away; only removals start from all. */
function scopesOption(option: KeysFileOption | undefined, entry: KeysFileLine): Set<string> {
  if (option === undefined) return new Set(SCOPE_NAMES)
  const parts = option.value.split(',')
  const granted = new Set<string>(parts.every((part) => part.startsWith('-')) ? SCOPE_NAMES : [])
  for (const part of parts) {
    const removal = part.startsWith('-')
    const name = removal ? part.slice(1) : part
    if (name === '*' && !removal) {
      for (const each of SCOPE_NAMES) granted.add(each)
      continue
    }
    if (!SCOPE_NAMES.includes(name)) throw entry.error(`scopes= takes ${SCOPE_NAMES.join(', ')} or *, each optionally preceded by - to take it away`, option.field)
    if (removal) granted.delete(name)
    else granted.add(name)
  }
  return granted
}

function hmacKeysOption(option: KeysFileOption | undefined, entry: KeysFileLine): Set<string> | null {
  if (option === undefined || option.value === '*') return null
  const names = option.value.split(',')
  if (!names.every((name) => KEY_NAME.test(name))) {
    throw entry.error(`hmac-keys= takes * or HMAC key names separated by commas, each ${KEY_NAME_RULE}`, option.field)
  }
  return new Set(names)
}

/** `banks=`: the similarity banks the key may search, by name; `*` (the default) for every one. */
function banksOption(option: KeysFileOption | undefined, entry: KeysFileLine): Set<string> | null {
  if (option === undefined || option.value === '*') return null
  const names = option.value.split(',')
  if (!names.every((name) => BANK_NAME.test(name))) {
    throw entry.error(`banks= takes * or bank names separated by commas, each ${BANK_NAME_RULE}`, option.field)
  }
  return new Set(names)
}

/**
 * Parses a keys file. Errors name the file, line and field and describe it, never quote it: a
 * key pasted where its hash belongs must not end up in a log (file.ts).
 */
export function parseKeysFile(text: string, file: string): Map<string, ApiKey> {
  const keys = new Map<string, ApiKey>()
  const lineOfName = new Map<string, number>()
  const lineOfHash = new Map<string, number>()
  for (const entry of keysFileLines(text, API_KEYS_VARIABLE, file, USAGE)) {
    const { fields, options } = splitFields(entry, { min: 2, max: 3 }, ['scopes', 'hmac-keys', 'items', 'banks'])
    const [name, hash, max] = fields as [string, string, string | undefined]
    if (!KEY_NAME.test(name)) throw entry.error(`the name must be ${KEY_NAME_RULE} (the line is "${USAGE}")`, 1)
    if (!SHA256_HEX.test(hash)) throw entry.error('the key\'s sha256 must be here as 64 hex digits (npm run apikey prints it), not the key', 2)
    if (max !== undefined && !/^[1-9]\d{0,8}$/.test(max)) throw entry.error('requests per window must be a whole number from 1 to 999999999', 3)
    const itemsMax = options.get('items')
    if (itemsMax !== undefined && !/^(0|[1-9]\d{0,8})$/.test(itemsMax.value)) {
      throw entry.error('items= must be a whole number from 0 to 999999999 (batch items per window; 0 counts a batch as one request)', itemsMax.field)
    }
    const nameLine = lineOfName.get(name)
    if (nameLine !== undefined) throw entry.error(`this name is already used on line ${nameLine}`, 1)
    const digest = hash.toLowerCase()
    const hashLine = lineOfHash.get(digest)
    if (hashLine !== undefined) throw entry.error(`this hash is already used on line ${hashLine}`, 2)
    lineOfName.set(name, entry.line)
    lineOfHash.set(digest, entry.line)
    keys.set(digest, {
      name,
      max: max === undefined ? null : Number(max),
      itemsMax: itemsMax === undefined ? null : Number(itemsMax.value),
      scopes: scopesOption(options.get('scopes'), entry),
      hmacKeys: hmacKeysOption(options.get('hmac-keys'), entry),
      banks: banksOption(options.get('banks'), entry),
    })
  }
  return keys
}

export function readKeysFile(file: string): Map<string, ApiKey> {
  return parseKeysFile(readKeysFileText(API_KEYS_VARIABLE, file), file)
}
