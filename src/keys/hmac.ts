/**
 * HMAC_KEYS_FILE: named HMAC keys on the key ring, so that callers send a key's name instead of
 * holding its secret. One version a line:
 *
 *     <name> <version> <base64 secret> [purpose=hmac|webhooks] [algorithms=sha256,sha512] [min-verify-version=<n>] [state=staged|current|retired]
 *
 * Versions are whole numbers (1, 2, 3…), as in Vault's Transit keys; by default the highest
 * version that is neither staged nor retired is current (src/keys/ring.ts). Secrets are at least
 * 32 bytes. `algorithms` (default sha256) and `min-verify-version` belong to the key, not the
 * version: they may be written on any of its lines, and where written on several they must agree.
 *
 * **A key has one purpose** (key separation, as Vault's Transit keys have a type and the uses it
 * allows): `purpose=hmac` (the default) makes and checks HMACs (/api/hmac, /api/hmac/verify);
 * `purpose=webhooks` signs and checks webhooks (/api/webhooks/*). One secret under both would let
 * each forge the other: an HMAC of `<id>.<timestamp>.<body>` is a Standard Webhooks signature, and a
 * webhook signature is an HMAC of that message. The purpose is each line's (a line without it is
 * `hmac`), and every line of a key must say the same, so a version added without the word is
 * refused rather than a secret changing purpose.
 *
 * **A version's secret comes from a source** behind one seam (`HmacSecret`): the line's base64
 * (held in memory, its HMAC states prepared once per algorithm: algorithms/hmac.ts), or a PKCS#11
 * URI (RFC 7512, `orders 3 pkcs11:token=hashd;object=orders-v3`) naming a key in the token of
 * PKCS11_MODULE, which makes each HMAC itself (pkcs11/hmac.ts: sha256, sha384, sha512 only). The
 * ring, its versions and everything that reads them do not change with the source. Nothing here
 * ever logs or prints a secret, and messages about the file name lines and fields, never what
 * they hold (file.ts).
 */
import { findAlgorithm, refusal } from '../algorithms/registry.js'
import { prepareHmac, type PreparedHmac } from '../algorithms/hmac.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { isPkcs11Uri, parsePkcs11Uri, Pkcs11UriError } from './pkcs11/uri.js'
import { TOKEN_HMAC_MECHANISMS, TokenHmacKey } from './pkcs11/hmac.js'
import type { Pkcs11Token } from './pkcs11/token.js'
import { KEY_NAME, KEY_NAME_RULE, keysFileError, keysFileLines, readKeysFileText, secretField, splitFields, type KeysFileLine, type KeysFileOption } from './file.js'
import { versionedKey, writtenState, type MinVerify, type VersionEntry, type VersionedKey } from './ring.js'

export const HMAC_KEYS_VARIABLE = 'HMAC_KEYS_FILE'
const USAGE = '<name> <version> <base64 secret>'
const VERSION = /^[1-9]\d{0,8}$/

/**
 * The seam between a key version and where its secret is. `prepared` and `bytesForTask` serve a
 * secret held in memory; `external` is the HMAC made where the secret is (a token), or null when
 * the caller makes it from the other two.
 */
export interface HmacSecret {
  /** Whether hashd holds the secret's bytes (a file line) or not (a key in a token). */
  readonly inMemory: boolean
  /** The prepared in-memory HMAC for `algorithm`, or null (no prepared form, or not in memory). */
  prepared(algorithm: DigestAlgorithm): PreparedHmac | null
  /** The HMAC of the pieces made by the secret's holder, or null when the secret is in memory. */
  external(algorithm: DigestAlgorithm, pieces: readonly Uint8Array[]): Promise<Uint8Array> | null
  /** A copy of an in-memory secret for a worker task; throws for a secret hashd does not hold. */
  bytesForTask(): Uint8Array
}

/** The secret of one version, from its line. It prints as nothing but its place; its bytes never leave this object but to a worker task. */
export class FileHmacSecret implements HmacSecret {
  readonly inMemory = true
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

  external(): null { return null }

  /** A copy of the secret for a worker task (long messages, algorithms without a prepared form). */
  bytesForTask(): Uint8Array { return Buffer.from(this.#secret) }

  toJSON(): string { return '[secret]' }
  toString(): string { return '[secret]' }
  [Symbol.for('nodejs.util.inspect.custom')](): string { return 'HmacSecret([secret])' }
}

/** What a named key is for: HMACs (/api/hmac and its verify) or webhooks (/api/webhooks/*), never both. */
export const KEY_PURPOSES = ['hmac', 'webhooks'] as const
export type KeyPurpose = typeof KEY_PURPOSES[number]

export interface HmacKey {
  readonly name: string
  readonly purpose: KeyPurpose
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
function algorithmsOption(option: KeysFileOption, entry: KeysFileLine): string[] {
  const names: string[] = []
  for (const given of option.value.split(',')) {
    const algorithm = findAlgorithm(given)
    if (!algorithm || algorithm.kind === 'password' || refusal(algorithm, 'hmac') !== null) {
      throw entry.error('algorithms= must list digests with an HMAC (GET /api/algorithms, operation hmac), separated by commas', option.field)
    }
    if (!names.includes(algorithm.name)) names.push(algorithm.name)
  }
  if (names.length === 0) throw entry.error('algorithms= names no algorithm', option.field)
  return names
}

function purposeOption(option: KeysFileOption | undefined, entry: KeysFileLine): KeyPurpose {
  if (option === undefined) return 'hmac'
  if ((KEY_PURPOSES as readonly string[]).includes(option.value)) return option.value as KeyPurpose
  throw entry.error(`purpose= must be ${KEY_PURPOSES.join(' or ')}`, option.field)
}

/** A key-wide option as first written, to compare the key's other lines with. */
interface KeyOption<T> { value: T, line: number }

interface KeyLines {
  entries: VersionEntry<HmacSecret>[]
  /** The first line whose secret is in a token, which limits the key's algorithms. */
  tokenLine: KeysFileLine | null
  /** The purpose of its first line (written or not). */
  purpose: KeyOption<KeyPurpose>
  algorithms: KeyOption<string> & { names: string[] } | null
  minVerify: MinVerify | null
}

/** A key-wide option written on several lines must be written the same; the message names the lines, not the key. */
function sameAsEarlier(earlier: KeyOption<unknown> | null, value: unknown, entry: KeysFileLine, option: KeysFileOption, name: string): void {
  if (earlier && earlier.value !== value) {
    throw entry.error(`${name}= differs from the one on line ${earlier.line} for the same key; it belongs to the key, so write it once`, option.field)
  }
}

/** The secret of field 3: the base64 of a secret, or a PKCS#11 URI read with the token of PKCS11_MODULE. */
function secretSource(entry: KeysFileLine, token: Pkcs11Token | null): HmacSecret {
  const field = entry.fields[2] ?? ''
  if (!isPkcs11Uri(field)) {
    const secret = secretField(entry, 3)
    const material = new FileHmacSecret(secret)
    secret.fill(0)
    return material
  }
  if (token === null) throw entry.error('a key in a PKCS#11 token (pkcs11:) needs PKCS11_MODULE and PKCS11_PIN_FILE', 3)
  try {
    return new TokenHmacKey(parsePkcs11Uri(field), token)
  } catch (error) {
    if (error instanceof Pkcs11UriError) throw entry.error(`not a PKCS#11 URI hashd takes (RFC 7512): ${error.message}`, 3)
    throw error
  }
}

/**
 * `token` is the PKCS#11 token of PKCS11_MODULE (null without one) that versions written as a
 * `pkcs11:` URI use; their keys are found in it on first use, not here, so a token that is away
 * makes those keys answer 503 rather than keeping hashd from starting.
 */
export function parseHmacKeysFile(text: string, file: string, token: Pkcs11Token | null = null): HmacKeyring {
  const byName = new Map<string, KeyLines>()
  for (const entry of keysFileLines(text, HMAC_KEYS_VARIABLE, file, USAGE)) {
    const { fields, options } = splitFields(entry, { min: 3, max: 3 }, ['purpose', 'algorithms', 'min-verify-version', 'state'])
    const [name, versionText] = fields as [string, string, string]
    if (!KEY_NAME.test(name)) throw entry.error(`the key name must be ${KEY_NAME_RULE} (the line is "${USAGE}")`, 1)
    if (!VERSION.test(versionText)) throw entry.error(`the key's version must be a whole number from 1 to 999999999 (the line is "${USAGE}")`, 2)
    const purposeGiven = options.get('purpose')
    const purpose = purposeOption(purposeGiven, entry)
    const lines = byName.get(name) ?? { entries: [], tokenLine: null, purpose: { value: purpose, line: entry.line }, algorithms: null, minVerify: null }
    byName.set(name, lines)
    const earlier = lines.entries.find((each) => each.id === versionText)
    if (earlier) throw entry.error(`this version of the same key is already on line ${earlier.place.line}`, 2)
    if (purpose !== lines.purpose.value) {
      throw entry.error(`the purpose differs from line ${lines.purpose.line} of the same key (a line without purpose= is purpose=hmac): `
        + 'a key has one purpose, so write the same purpose= on each of its lines', purposeGiven?.field)
    }
    const material = secretSource(entry, token)
    if (material instanceof TokenHmacKey) lines.tokenLine ??= entry

    const algorithmsGiven = options.get('algorithms')
    if (algorithmsGiven !== undefined) {
      const names = algorithmsOption(algorithmsGiven, entry)
      sameAsEarlier(lines.algorithms, names.join(','), entry, algorithmsGiven, 'algorithms')
      lines.algorithms = { value: names.join(','), names, line: entry.line }
    }
    const minGiven = options.get('min-verify-version')
    if (minGiven !== undefined) {
      if (!VERSION.test(minGiven.value)) throw entry.error('min-verify-version must be a whole number from 1 to 999999999', minGiven.field)
      sameAsEarlier(lines.minVerify && { value: lines.minVerify.ordinal, line: lines.minVerify.place.line }, Number(minGiven.value), entry, minGiven, 'min-verify-version')
      lines.minVerify = { ordinal: Number(minGiven.value), place: entry, field: minGiven.field }
    }
    lines.entries.push({ id: versionText, ordinal: Number(versionText), written: writtenState(options.get('state'), entry), material, place: entry })
  }
  for (const lines of byName.values()) {
    const names = lines.algorithms?.names ?? ['sha256']
    if (lines.tokenLine && names.some((each) => TOKEN_HMAC_MECHANISMS[each] === undefined)) {
      throw lines.tokenLine.error(`a key with a version in a PKCS#11 token takes algorithms= of ${Object.keys(TOKEN_HMAC_MECHANISMS).join(', ')} only (the token's HMAC mechanisms)`, 3)
    }
  }
  const keys = [...byName].map(([name, lines]): HmacKey => ({
    name,
    purpose: lines.purpose.value,
    algorithms: lines.algorithms?.names ?? ['sha256'],
    ring: versionedKey(name, lines.entries, lines.minVerify),
  }))
  if (keys.length === 0) throw keysFileError(HMAC_KEYS_VARIABLE, file, `holds no keys; add a line "${USAGE}"`)
  return new HmacKeyring(keys)
}

export function readHmacKeysFile(file: string, token: Pkcs11Token | null = null): HmacKeyring {
  return parseHmacKeysFile(readKeysFileText(HMAC_KEYS_VARIABLE, file), file, token)
}
