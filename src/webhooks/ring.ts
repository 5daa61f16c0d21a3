/**
 * The key ring's named HMAC keys (HMAC_KEYS_FILE, src/keys/hmac.ts) as the webhooks' `NamedKeySource`.
 *
 * - **The same ring, the same rules as /api/hmac** (domain/hmac.ts): a name outside the API key's
 *   `hmac-keys=` is 403 insufficient-scope (checked first, so it tells nothing of which names
 *   exist), a server without HMAC_KEYS_FILE is 422 no-hmac-keys, an unknown name 422 unknown-key
 *   (not echoed), and a key whose `algorithms=` leaves out sha256 is 422
 *   algorithm-not-allowed-for-key: webhooks are HMAC-SHA256, and a key kept for other digests is
 *   not lent to them.
 * - **Only keys written `purpose=webhooks`** (422 key-purpose otherwise), and those serve nothing
 *   else: a Standard Webhooks signature is the HMAC of `<id>.<timestamp>.<body>`, so a key that
 *   also made HMACs on request would sign any webhook for whoever may call /api/hmac, and its
 *   webhook signatures would pass /api/hmac/verify.
 * - **The secret's bytes are the HMAC key**, as Standard Webhooks uses the base64-decoded bytes of
 *   `whsec_…`: a version written `billing 3 <base64> purpose=webhooks` verifies what a sender
 *   signs with `whsec_<the same base64>`.
 * - **Looked up at call time:** each request reads the keyring in force (`context.hmacKeys`), so a
 *   reload of the file (a rotation, a retirement, a new floor) applies to the next request with no
 *   restart. The versions are made once per key object of a load and dropped with it.
 * - **Audited as /api/hmac is:** `hashd_key_uses_total{operation="webhook-verify"|"webhook-sign"}`
 *   and the access line's `keys` (`hmac:billing:v3`).
 */
import { keyAlgorithm, namedKey, type KeyContext } from '../domain/hmac.js'
import { findAlgorithm } from '../algorithms/registry.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import type { HmacKey, HmacSecret } from '../keys/index.js'

const SHA256 = findAlgorithm('sha256') as DigestAlgorithm
import { countKeyUse } from '../observe.js'
import type { NamedKey, NamedKeySource } from './keys.js'
import type { HmacKeyVersion } from './types.js'

/** A key of one load of the file as the webhooks see it; a reload makes new key objects, so this never outlives its versions. */
const asNamed = new WeakMap<HmacKey, NamedKey>()

function namedFrom(key: HmacKey): NamedKey {
  let named = asNamed.get(key)
  if (named === undefined) {
    // The versions that verify, newest first (the order /api/hmac/verify tries them in), then the
    // others, which are kept so that the answer can say a signature was made with a retired version.
    const ordered = [...key.ring.verifying, ...key.ring.versions.filter((version) => !version.verifies)]
    const versions = ordered.map((version): HmacKeyVersion => ({
      version: version.ordinal,
      ...inMemoryOrToken(version.material),
      standing: version.verifies ? 'valid' : version.state === 'retired' ? 'retired' : 'below-minimum',
      ...(version.state === 'staged' ? { staged: true } : {}),
    }))
    named = { name: key.name, current: key.ring.current.ordinal, versions }
    asNamed.set(key, named)
  }
  return named
}

/** A version's key as the webhooks take it: its bytes, or (a key in a PKCS#11 token) its HMAC made there. */
function inMemoryOrToken(material: HmacSecret): Pick<HmacKeyVersion, 'secret' | 'inToken'> {
  if (material.inMemory) return { secret: Buffer.from(material.bytesForTask()) }
  return { secret: Buffer.alloc(0), inToken: (content) => material.external(SHA256, content)! }
}

/** The named keys this request may use (its API key's hmac-keys=), with their uses noted for the audit. */
export function ringKeySource(context: KeyContext): NamedKeySource {
  return {
    namedKey(name) {
      const key = namedKey(name, context, 'webhooks')
      keyAlgorithm(key, 'sha256', '/body/keyName')
      return namedFrom(key)
    },
    used(name, version, operation) {
      const id = version === undefined ? 'any' : String(version)
      countKeyUse('hmac', name, id, operation === 'verify' ? 'webhook-verify' : 'webhook-sign')
      if (version !== undefined) context.used('hmac', name, id)
    },
  }
}
