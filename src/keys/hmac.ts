/**
 * HMAC_KEYS_FILE: named HMAC keys on the key ring, so that callers send a key's name instead of
 * holding its secret. One version a line:
 *
 *     <name> <version> <base64 secret> [algorithms=sha256,sha512] [min-verify-version=<n>] [state=staged|current|retired]
 *
 * Versions are whole numbers (1, 2, 3…), as in Vault's Transit keys; by default the highest
 * version that is neither staged nor retired is current (src/keys/ring.ts). Secrets are at least
 * 32 bytes. `algorithms` (default sha256) and `min-verify-version` belong to the key, not the
 * version: they may be written on any of its lines, and where written on several they must agree.
 * Each version holds its secret in a private field and prepares its HMAC states once per algorithm
 * (algorithms/hmac.ts); nothing here ever logs or prints a secret.
 */
import { ConfigError } from '../config.js'
import { findAlgorithm, refusal } from '../algorithms/registry.js'
import { prepareHmac, type PreparedHmac } from '../algorithms/hmac.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { KEY_NAME, KEY_NAME_RULE, keysFileLines, readKeysFileText, secretField, splitFields } from './file.js'
import { versionedKey, writtenState, type VersionEntry, type VersionedKey } from './ring.js'

export const HMAC_KEYS_VARIABLE = 'HMAC_KEYS_FILE'
const USAGE = '<name> <version> <base64 secret>'
const VERSION = /^[1-9]\d{0,8}$/

/** The secret of one version. It prints as nothing but its place; its bytes never leave this object but to a worker task. */
export class HmacSecret {
  readonly #secret: Buffer
  readonly #prepared = new Map<string, PreparedHmac | null>()

  constructor(secret: Uint8Array) {
    this.#secret = Buffer.from(secret)
  }

  /** The prepared HMAC for `algorithm` (made on first use), or null when it has none. */
  prepared(algorithm: DigestAlgorithm): PreparedHmac | null {
    let prepared = this.#prepared.get(algorithm.name)
    if (prepared === undefined) this.#prepared.set(algorithm.name, prepared = prepareHmac(algorithm, this.#secret))
    return prepared
  }

  /** A copy of the secret for a worker task (long messages, algorithms without a prepared form). */
  bytesForTask(): Uint8Array { return Buffer.from(this.#secret) }

  toJSON(): string { return '[secret]' }
  toString(): string { return '[secret]' }
  [Symbol.for('nodejs.util.inspect.custom')](): string { return 'HmacSecret([secret])' }
}

export interface HmacKey {
  readonly name: string
  /** Canonical algorithm names this key may be used with; the first is the default. */
  readonly algorithms: readonly string[]
  readonly ring: VersionedKey<HmacSecret>
}

export class HmacKeyring {
  readonly #keys: ReadonlyMap<string, HmacKey>

  constructor(keys: HmacKey[]) {
    this.#keys = new Map(keys.map((key) => [key.name, key]))
  }

  /** The key of this name (exact), or undefined. */
  get(name: string): HmacKey | undefined { return this.#keys.get(name) }

  get names(): string[] { return [...this.#keys.keys()] }

  get keys(): HmacKey[] { return [...this.#keys.values()] }

  toJSON(): Record<string, string> {
    return Object.fromEntries(this.keys.map((key) => [key.name, `v${key.ring.current.id}`]))
  }
}

/** `algorithms=`: registry names (aliases allowed) of digests that have an HMAC, canonical names out. */
function algorithmsOption(value: string, where: string): string[] {
  const names: string[] = []
  for (const given of value.split(',')) {
    const algorithm = findAlgorithm(given)
    if (!algorithm || algorithm.kind === 'password' || refusal(algorithm, 'hmac') !== null) {
      throw new ConfigError(`${where}: algorithms= must list digests with an HMAC (GET /api/algorithms, operation hmac), separated by commas`)
    }
    if (!names.includes(algorithm.name)) names.push(algorithm.name)
  }
  if (names.length === 0) throw new ConfigError(`${where}: algorithms= names no algorithm`)
  return names
}

interface KeyLines {
  entries: VersionEntry<HmacSecret>[]
  algorithms: { value: string[], text: string, where: string } | null
  minVerify: { ordinal: number, where: string } | null
}

export function parseHmacKeysFile(text: string, file: string): HmacKeyring {
  const byName = new Map<string, KeyLines>()
  for (const entry of keysFileLines(text, HMAC_KEYS_VARIABLE, file)) {
    const { where } = entry
    const { fields, options } = splitFields(entry, { min: 3, max: 3 }, ['algorithms', 'min-verify-version', 'state'], USAGE)
    const [name, versionText, secretText] = fields as [string, string, string]
    if (!KEY_NAME.test(name)) throw new ConfigError(`${where}: the key name must be ${KEY_NAME_RULE}`)
    // The name is not quoted: a line whose second field is no version is a line whose fields are
    // not where the format says, and its first may be a secret written without its name.
    if (!VERSION.test(versionText)) throw new ConfigError(`${where}: the second field, the key's version, must be a whole number from 1 to 999999999 ("${USAGE}")`)
    const lines = byName.get(name) ?? { entries: [], algorithms: null, minVerify: null }
    byName.set(name, lines)
    if (lines.entries.some((each) => each.id === versionText)) throw new ConfigError(`${where}: version ${versionText} of key ${name} is already on an earlier line`)
    const secret = secretField(secretText, where, `key ${name} version ${versionText}`)

    const algorithmsText = options.get('algorithms')
    if (algorithmsText !== undefined) {
      const value = algorithmsOption(algorithmsText, where)
      if (lines.algorithms && lines.algorithms.value.join(',') !== value.join(',')) {
        throw new ConfigError(`${where}: algorithms= of key ${name} differs from ${lines.algorithms.where.replace(/^.* line /, 'line ')}; it belongs to the key, so write it once`)
      }
      lines.algorithms = { value, text: algorithmsText, where }
    }
    const minText = options.get('min-verify-version')
    if (minText !== undefined) {
      if (!VERSION.test(minText)) throw new ConfigError(`${where}: min-verify-version must be a whole number from 1 to 999999999`)
      if (lines.minVerify && lines.minVerify.ordinal !== Number(minText)) {
        throw new ConfigError(`${where}: min-verify-version of key ${name} differs from ${lines.minVerify.where.replace(/^.* line /, 'line ')}; it belongs to the key, so write it once`)
      }
      lines.minVerify = { ordinal: Number(minText), where }
    }
    lines.entries.push({ id: versionText, ordinal: Number(versionText), written: writtenState(options.get('state'), where), material: new HmacSecret(secret), where })
    secret.fill(0)
  }
  const keys = [...byName].map(([name, lines]): HmacKey => ({
    name,
    algorithms: lines.algorithms?.value ?? ['sha256'],
    ring: versionedKey(name, lines.entries, lines.minVerify),
  }))
  if (keys.length === 0) throw new ConfigError(`${HMAC_KEYS_VARIABLE} ${file} holds no keys; add a line "${USAGE}"`)
  return new HmacKeyring(keys)
}

export function readHmacKeysFile(file: string): HmacKeyring {
  return parseHmacKeysFile(readKeysFileText(HMAC_KEYS_VARIABLE, file), file)
}
