/**
 * HMAC under a key the server holds, prepared once (RFC 2104 §4, "Implementation note": the
 * inner and outer hash states after the padded key's block can be computed once per key). Named
 * HMAC keys (src/keys/hmac.ts) keep one prepared state per version and algorithm, so a request or
 * a batch item pays for its message only.
 *
 * For the SHA-2 family the states are noble-hashes' HMAC (`hmac.create`), copied into one scratch
 * object per key (`_cloneInto`) for each message: no allocation but the output, and no crossing
 * into native code. For a 32-byte message that is one compression for the inner hash and one
 * for the outer, where node:crypto's createHmac builds an OpenSSL context and hashes the key's
 * blocks again on every call (`npm run bench` compares the two: the batch row against a loop of
 * createHmac). Other digests with an OpenSSL name use createHmac; the rest have no prepared form
 * (null) and take the general path (workers/tasks.ts `hmac`).
 */
import { createHmac } from 'node:crypto'
import { hmac as nobleHmac, type _HMAC } from '@noble/hashes/hmac.js'
import { sha224, sha256, sha384, sha512, sha512_224, sha512_256 } from '@noble/hashes/sha2.js'
import type { CHash } from '@noble/hashes/utils.js'
import type { DigestAlgorithm } from './types.js'

/** The HMAC of a message under a fixed key; synchronous, and safe to call again before the result is used. */
export interface PreparedHmac {
  mac(message: Uint8Array): Uint8Array
}

/** Registry names with a noble-hashes implementation (FIPS 180-4), checked against OpenSSL by test/hmac.test.ts. */
const NOBLE: Readonly<Record<string, CHash>> = {
  sha224, sha256, sha384, sha512, 'sha512-224': sha512_224, 'sha512-256': sha512_256,
}

/** Whether `algorithm` has a prepared form (the rest need the worker task's general HMAC). */
export function canPrepareHmac(algorithm: DigestAlgorithm): boolean {
  return Object.hasOwn(NOBLE, algorithm.name) || algorithm.opensslName !== undefined
}

/** The prepared HMAC of `algorithm` under `key`, or null when it has none. The key is copied. */
export function prepareHmac(algorithm: DigestAlgorithm, key: Uint8Array): PreparedHmac | null {
  const noble = Object.hasOwn(NOBLE, algorithm.name) ? NOBLE[algorithm.name] : undefined
  if (noble) {
    const base: _HMAC<never> = nobleHmac.create(noble, key) as _HMAC<never>
    const scratch = base.clone()
    return {
      mac(message) {
        base._cloneInto(scratch)
        scratch.update(message)
        return scratch.digest()
      },
    }
  }
  const opensslName = algorithm.opensslName
  if (opensslName === undefined) return null
  const copy = Buffer.from(key)
  return { mac: (message) => createHmac(opensslName, copy).update(message).digest() }
}
