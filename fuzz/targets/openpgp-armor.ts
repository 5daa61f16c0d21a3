/**
 * The OpenPGP readers (src/checksums/signatures/openpgp.ts over OpenPGP.js): armored and binary
 * detached signatures, armored and binary public keys (keyrings too), and clearsigned lists.
 *
 * Input: the list, the signature (detached, or a whole clearsigned list) and the public key, as
 * three fields; an empty key field reads a clearsigned list without verifying it, as the route
 * does when no key is given. Refusals: see fuzz/signature-refusals.ts. A signature that verifies must
 * name a key id of the key given.
 */
import { isClearsigned, readClearsigned, signatureScheme } from '../../src/checksums/signatures/index.js'
import { openpgpVerifier } from '../../src/checksums/signatures/openpgp.js'
import { fields, invariant, refusingAsync } from '../support.js'
import { isSignatureRefusal } from '../signature-refusals.js'

// OpenPGP.js is loaded here, before the first input: hashd loads it on first use, and under
// Jazzer.js's instrumentation that first load takes seconds, which would count as the input's.
await import('openpgp')

export async function fuzz(data: Buffer): Promise<void> {
  const [list, signature, key] = fields(data, 3) as [Buffer, Buffer, Buffer]
  if (isClearsigned(signature)) {
    const read = await refusingAsync(() => readClearsigned(signature, key.length > 0 ? key : undefined), isSignatureRefusal)
    if (read && key.length > 0) invariant(read.signature?.verified === true && read.signature.scheme === 'openpgp', 'a clearsigned list read with a key but not verified')
    return
  }
  if (!openpgpVerifier.claims(signature)) return
  const scheme = signatureScheme(signature)
  invariant(scheme !== undefined, 'a signature OpenPGP claims has no scheme')
  const result = await refusingAsync(() => openpgpVerifier.verify(list, signature, key), isSignatureRefusal)
  if (result) invariant(/^[0-9A-F]{16}$/.test(result.keyId), `an OpenPGP key id ${result.keyId} is not 16 hex digits`)
}
