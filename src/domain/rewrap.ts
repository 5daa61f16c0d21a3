/**
 * POST /api/pepper/rewrap: moves a stored password hash to the current pepper key without the
 * password, which the chosen construction allows (algorithms/password/pepper.ts: the pepper
 * encrypts the finished hash, so the server can decrypt under the old key and encrypt under the
 * new). A hash under the current key comes back unchanged; an unpeppered password hash is peppered,
 * so an existing table can be peppered in one pass. Nothing is hashed, so nothing goes to the pool.
 */
import { detectPasswordScheme } from '../algorithms/registry.js'
import { isPeppered, parsePeppered } from '../algorithms/password/pepper.js'
import { problems } from '../problem.js'
import { countKeyUse } from '../observe.js'
import type { Passwords } from './passwords.js'
import { openPeppered } from './verify.js'

export interface RewrapResult {
  hash: string
  pepperKey: string
  /** The key the hash was under, or null when it was not peppered. */
  previousPepperKey: string | null
  changed: boolean
}

export async function rewrap(passwords: Passwords, given: string): Promise<RewrapResult> {
  const keyring = passwords.keyring
  if (keyring === null) {
    throw problems.unprocessable('no-pepper-keys', 'No pepper keys configured', 'This server has no pepper keys (PEPPER_KEYS_FILE is not set), so it has nothing to rewrap under')
  }
  const hash = given.trim()
  const current = keyring.current
  if (isPeppered(hash)) {
    const peppered = parsePeppered(hash)
    const { inner, scheme } = await openPeppered(peppered, passwords)
    // Under the current key, or a staged one newer than it (made on a replica where it is already current): left as it is.
    if (peppered.keyId === current.id || !keyring.isOlder(peppered.keyId)) return { hash, pepperKey: peppered.keyId, previousPepperKey: peppered.keyId, changed: false }
    countKeyUse('pepper', 'pepper', current.id, 'rewrap')
    return { hash: await current.seal(scheme.name, inner), pepperKey: current.id, previousPepperKey: peppered.keyId, changed: true }
  }
  const scheme = detectPasswordScheme(hash)
  if (!scheme) {
    throw problems.unprocessable('not-a-password-hash', 'Not a password hash',
      'Only password hashes in a format hashd reads can be peppered; a bare digest has to be upgraded at login (POST /api/verify with "upgrade": true)')
  }
  const parsed = scheme.parse(hash)
  countKeyUse('pepper', 'pepper', current.id, 'rewrap')
  return { hash: await current.seal(parsed.scheme, hash), pepperKey: current.id, previousPepperKey: null, changed: true }
}
