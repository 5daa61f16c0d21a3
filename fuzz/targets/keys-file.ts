/**
 * The keys files: API_KEYS_FILE (src/plugins/auth.ts, `<name> <sha256 hex> [<max>]`) and
 * PEPPER_KEYS_FILE (src/domain/pepper-keys.ts, `<key id> <base64 secret>`), both over the line
 * reader of src/keys-file.ts (comments, white space, CRLF).
 *
 * The loaders are reached through PARSERS alone, so that this target follows them when they move
 * (to the key ring, for example) by changing one line each.
 *
 * Input: a byte that picks the file kind, and the file's text (UTF-8).
 *
 * Invariants: an API keys file gives keys under 64-hex-digit lower-case hashes, names that
 * KEY_NAME allows and limits that are whole numbers; a pepper keys file gives distinct ids with
 * the last one current. A refusal never quotes a line's second field (the hash or the secret).
 *
 * Expected refusals: ConfigError, and nothing else.
 */
import { KEY_NAME, parseKeysFile } from '../../src/plugins/auth.js'
import { parsePepperKeysFile } from '../../src/domain/pepper-keys.js'
import { fields, invariant, isConfigError } from '../support.js'

const FILE = '/etc/hashd/fuzz-keys'

/** The one place each loader is named. */
export const PARSERS = {
  api: (text: string) => parseKeysFile(text, FILE),
  pepper: (text: string) => parsePepperKeysFile(text, FILE),
}

/**
 * The second fields of the file's lines (the hash or the secret) that a message could not hold by
 * chance: 12 characters or more, letters and digits both (no word of a message is), and not part
 * of the file's name.
 */
const secondFields = (text: string): string[] =>
  text.split(/\r?\n/).map((line) => (line.split('#', 1)[0] ?? '').trim().split(/\s+/)[1] ?? '')
    .filter((field) => field.length >= 12 && /[A-Za-z]/.test(field) && /[0-9]/.test(field) && !FILE.includes(field))

export function fuzz(data: Buffer): void {
  const [kind, body] = fields(data, 2) as [Buffer, Buffer]
  const text = body.toString('utf8')
  try {
    if (((kind[0] ?? 0) & 1) === 0) {
      for (const [hash, key] of PARSERS.api(text)) {
        invariant(/^[0-9a-f]{64}$/.test(hash), 'an API key stored under something other than its sha256 in lower-case hex')
        invariant(KEY_NAME.test(key.name), 'an API key name KEY_NAME refuses')
        invariant(key.max === null || (Number.isInteger(key.max) && key.max >= 1), `an API key limit ${key.max}`)
      }
    } else {
      const ring = PARSERS.pepper(text)
      invariant(new Set(ring.ids).size === ring.ids.length, 'two pepper keys with one id')
      invariant(ring.current.id === ring.ids.at(-1), 'the current pepper key is not the last')
    }
  } catch (error) {
    if (!isConfigError(error)) throw error
    for (const field of secondFields(text)) {
      // A field that is also a first field (a name or id, which messages may name) can appear by that right.
      if (text.split(/\r?\n/).some((line) => line.trim().split(/\s+/)[0] === field)) continue
      invariant(!error.message.includes(field), 'a keys-file refusal quotes a line\'s hash or secret')
    }
  }
}
