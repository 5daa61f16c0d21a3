/**
 * The keys files of the key ring (src/keys/): API_KEYS_FILE (api-keys.ts, `<name> <sha256 hex>
 * [<max>] [scopes=…] [hmac-keys=…]`), PEPPER_KEYS_FILE (pepper.ts, `<key id> <base64 secret>
 * [state=…]`) and HMAC_KEYS_FILE (hmac.ts, `<name> <version> <base64 secret> [options]`), all over
 * the loader of src/keys/file.ts (comments, white space, CRLF, `name=value` options) and the
 * states of src/keys/ring.ts.
 *
 * The loaders are reached through PARSERS alone, so that this target follows them when they move
 * by changing one line each.
 *
 * Input: a byte that picks the file kind (its value modulo 3), and the file's text (UTF-8).
 *
 * Invariants: an API keys file gives keys under 64-hex-digit lower-case hashes, names that
 * KEY_NAME allows, limits that are whole numbers and scopes from the table; a pepper or HMAC keys
 * file gives distinct ids per key, in order, with exactly one current version, which verifies,
 * and no version newer than it but staged or retired ones. A refusal quotes no field of the file:
 * not a hash or secret, and not a name, id or version either, since a field read as a name may be a
 * secret written in the wrong place (src/keys/file.ts).
 *
 * Expected refusals: ConfigError, and nothing else.
 */
import { KEY_NAME, parseKeysFile } from '../../src/keys/api-keys.js'
import { parseHmacKeysFile } from '../../src/keys/hmac.js'
import { parsePepperKeysFile } from '../../src/keys/pepper.js'
import type { VersionedKey } from '../../src/keys/ring.js'
import { SCOPE_NAMES } from '../../src/keys/scopes.js'
import { fields, invariant, isConfigError } from '../support.js'

const FILE = '/etc/hashd/fuzz-keys'

/** The one place each loader is named. */
export const PARSERS = {
  api: (text: string) => parseKeysFile(text, FILE),
  pepper: (text: string) => parsePepperKeysFile(text, FILE),
  hmac: (text: string) => parseHmacKeysFile(text, FILE),
}

/** One current version, that verifies, chosen by the rules of src/keys/ring.ts. */
function checkRing(ring: VersionedKey<unknown>): void {
  const ids = ring.versions.map((version) => version.id)
  invariant(new Set(ids).size === ids.length, `two versions with one id in key ${ring.name}`)
  const current = ring.versions.filter((version) => version.state === 'current')
  invariant(current.length === 1 && current[0] === ring.current, `key ${ring.name} has ${current.length} current versions`)
  invariant(ring.current.verifies, `the current version of ${ring.name} does not verify`)
  const ordinals = ring.versions.map((version) => version.ordinal)
  invariant(ordinals.every((ordinal, index) => index === 0 || ordinal > ordinals[index - 1]!), `the versions of ${ring.name} are not in order`)
  const newer = ring.versions.filter((version) => version.ordinal > ring.current.ordinal)
  invariant(newer.every((version) => version.state === 'staged' || version.state === 'retired'), `a version newer than the current one of ${ring.name} is neither staged nor retired`)
  invariant(ring.verifying.every((version) => version.verifies && version.state !== 'retired'), `a retired version of ${ring.name} verifies`)
}

/**
 * The fields of the file's lines (in any position, options' values included) that a message could
 * not hold by chance: 12 characters or more, letters and digits both (no word of a message is), and
 * not part of the file's name.
 */
const distinctiveFields = (text: string): string[] =>
  text.split(/\r?\n/).flatMap((line) => (line.split('#', 1)[0] ?? '').trim().split(/\s+/))
    .flatMap((field) => [field, field.slice(field.indexOf('=') + 1)])
    .filter((field) => field.length >= 12 && /[A-Za-z]/.test(field) && /[0-9]/.test(field) && !FILE.includes(field))

export function fuzz(data: Buffer): void {
  const [kind, body] = fields(data, 2) as [Buffer, Buffer]
  const text = body.toString('utf8')
  const which = (kind[0] ?? 0) % 3
  try {
    if (which === 0) {
      for (const [hash, key] of PARSERS.api(text)) {
        invariant(/^[0-9a-f]{64}$/.test(hash), 'an API key stored under something other than its sha256 in lower-case hex')
        invariant(KEY_NAME.test(key.name), 'an API key name KEY_NAME refuses')
        invariant(key.max === null || (Number.isInteger(key.max) && key.max >= 1), `an API key limit ${key.max}`)
        invariant([...key.scopes].every((scope) => SCOPE_NAMES.includes(scope)), 'a scope not in the table')
        invariant(key.hmacKeys === null || [...key.hmacKeys].every((name) => KEY_NAME.test(name)), 'an hmac-keys name KEY_NAME refuses')
      }
    } else if (which === 1) {
      checkRing(PARSERS.pepper(text).ring)
    } else {
      for (const key of PARSERS.hmac(text).keys) {
        checkRing(key.ring)
        invariant(key.algorithms.length > 0, `key ${key.name} has no algorithm`)
      }
    }
  } catch (error) {
    if (!isConfigError(error)) throw error
    for (const field of distinctiveFields(text)) invariant(!error.message.includes(field), 'a keys-file refusal quotes a field of the file')
  }
}
