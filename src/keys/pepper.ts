/**
 * PEPPER_KEYS_FILE: the pepper on the key ring. One key version a line,
 * `<key id> <base64 secret> [state=staged|current|retired]`, `#` starts a comment. The pepper is one
 * key whose versions are the lines, in the order written: a key id is what `$pepper$v=1,k=<id>,…`
 * hashes carry, so hashes made before states existed keep verifying under their ids. Without
 * `state=`, the LAST line is current, as it always was; a rotation across replicas adds the new
 * line with `state=staged` everywhere first, then removes the word (docs/passwords.md).
 * The secret may be a PKCS#11 URI instead (`k3 pkcs11:token=hashd;object=pepper-k3`): an AES-256
 * key in the token of PKCS11_MODULE seals and opens the hashes of that version (pkcs11/pepper.ts).
 * A malformed line, a secret shorter than 32 bytes or a repeated id refuses the file; messages name
 * the line and the field's position and describe the field, never print it (file.ts). The keyring
 * prints as its key ids only.
 */
import { PEPPER_KEY_ID, SecretPepperKey, type PepperKey } from '../algorithms/password/pepper.js'
import { TokenPepperKey } from './pkcs11/pepper.js'
import type { Pkcs11Token } from './pkcs11/token.js'
import { isPkcs11Uri, parsePkcs11Uri, Pkcs11UriError } from './pkcs11/uri.js'
import { KEY_NAME_RULE, keysFileError, keysFileLines, readKeysFileText, secretField, splitFields, type KeysFileLine } from './file.js'
import { versionedKey, writtenState, type KeyVersion, type VersionEntry, type VersionedKey } from './ring.js'

const VARIABLE = 'PEPPER_KEYS_FILE'
const USAGE = '<key id> <base64 secret>'

export class PepperKeyring {
  readonly ring: VersionedKey<PepperKey>

  constructor(ring: VersionedKey<PepperKey>) {
    this.ring = ring
  }

  /** The key new hashes are sealed with. */
  get current(): PepperKey { return this.ring.current.material }

  /** The version with this id, in whatever state (retired included), or undefined. */
  version(id: string): KeyVersion<PepperKey> | undefined { return this.ring.version(id) }

  /** The key of this id when hashes under it verify (staged, current or previous), else undefined. */
  get(id: string): PepperKey | undefined {
    const version = this.ring.version(id)
    return version?.verifies ? version.material : undefined
  }

  /** Ids of the keys hashes verify under, oldest first (retired ones left out). */
  get ids(): string[] { return this.ring.versions.filter((version) => version.verifies).map((version) => version.id) }

  /** Whether a hash under `id` should move to the current key: it is older than the current one. */
  isOlder(id: string): boolean {
    const version = this.ring.version(id)
    return version !== undefined && version.ordinal < this.ring.current.ordinal
  }

  toJSON(): { current: string, keys: string[] } { return { current: this.current.id, keys: this.ids } }
}

export function parsePepperKeysFile(text: string, file: string, token: Pkcs11Token | null = null): PepperKeyring {
  const entries: VersionEntry<PepperKey>[] = []
  const lineOfId = new Map<string, number>()
  for (const entry of keysFileLines(text, VARIABLE, file, USAGE)) {
    const { fields, options } = splitFields(entry, { min: 2, max: 2 }, ['state'])
    const [id] = fields as [string, string]
    if (!PEPPER_KEY_ID.test(id)) throw entry.error(`the key id must be ${KEY_NAME_RULE} (the line is "${USAGE}")`, 1)
    const earlier = lineOfId.get(id)
    if (earlier !== undefined) throw entry.error(`the key id is the same as on line ${earlier}; each line is a key of its own`, 1)
    lineOfId.set(id, entry.line)
    entries.push({ id, ordinal: entries.length, written: writtenState(options.get('state'), entry), material: pepperSource(entry, id, token), place: entry })
  }
  if (entries.length === 0) throw keysFileError(VARIABLE, file, `holds no keys; add a line "${USAGE}"`)
  return new PepperKeyring(versionedKey('pepper', entries))
}

/** The key of field 2: the base64 of a secret, or a PKCS#11 URI naming an AES key in the token. */
function pepperSource(entry: KeysFileLine, id: string, token: Pkcs11Token | null): PepperKey {
  const field = entry.fields[1] ?? ''
  if (!isPkcs11Uri(field)) {
    const secret = secretField(entry, 2)
    const key = new SecretPepperKey(id, secret)
    secret.fill(0)
    return key
  }
  if (token === null) throw entry.error('a key in a PKCS#11 token (pkcs11:) needs PKCS11_MODULE and PKCS11_PIN_FILE', 2)
  try {
    return new TokenPepperKey(id, parsePkcs11Uri(field), token)
  } catch (error) {
    if (error instanceof Pkcs11UriError) throw entry.error(`not a PKCS#11 URI hashd takes (RFC 7512): ${error.message}`, 2)
    throw error
  }
}

export function readPepperKeysFile(file: string, token: Pkcs11Token | null = null): PepperKeyring {
  return parsePepperKeysFile(readKeysFileText(VARIABLE, file), file, token)
}
