/**
 * The signify reader and verifier (src/checksums/signatures/signify.ts, ed25519.ts), detached
 * and embedded (`signify -S -e`), behind the seam that picks the scheme (signatures/index.ts).
 *
 * Input: the list, the `.sig` file and the public key, as three fields. For an embedded
 * signature the list is the message after the signature, as the route reads it. Refusals: see
 * signature-support.ts. A signature that verifies must name the key's number.
 */
import { signatureScheme, signifyEmbeddedMessage } from '../../src/checksums/signatures/index.js'
import { readEd25519PublicKey } from '../../src/checksums/signatures/ed25519.js'
import { signify } from '../../src/checksums/signatures/signify.js'
import { fields, invariant, refusing, refusingAsync } from '../support.js'
import { isSignatureRefusal } from '../signature-refusals.js'

export async function fuzz(data: Buffer): Promise<void> {
  const [detachedList, signature, key] = fields(data, 3) as [Buffer, Buffer, Buffer]
  const scheme = signatureScheme(signature)
  const publicKey = refusing(() => readEd25519PublicKey(key), isSignatureRefusal)
  if (!signify.claims(signature)) return
  invariant(scheme === signify, `a signature signify claims went to ${scheme?.scheme}`)
  const embedded = signifyEmbeddedMessage(signature)
  if (embedded) invariant(signature.subarray(signature.length - embedded.length).equals(embedded), 'the embedded message is not the end of the file')
  const result = await refusingAsync(() => signify.verify(embedded ?? detachedList, signature, key), isSignatureRefusal)
  if (result) {
    invariant(publicKey !== undefined && result.keyId === publicKey.keyNumber.toString('hex'), 'a signify signature verified under another key number')
  }
}
