/**
 * The minisign reader and verifier (src/checksums/signatures/minisign.ts, ed25519.ts), behind
 * the seam that picks the scheme (signatures/index.ts).
 *
 * Input: the list, the `.minisig` file and the public key (a key file or its RW… line), as three
 * fields. Refusals: see fuzz/signature-refusals.ts. A signature that verifies must name the key's id.
 */
import { signatureScheme } from '../../src/checksums/signatures/index.js'
import { readEd25519PublicKey } from '../../src/checksums/signatures/ed25519.js'
import { minisign, minisignKeyId } from '../../src/checksums/signatures/minisign.js'
import { fields, invariant, refusing, refusingAsync } from '../support.js'
import { isSignatureRefusal } from '../signature-refusals.js'

export async function fuzz(data: Buffer): Promise<void> {
  const [list, signature, key] = fields(data, 3) as [Buffer, Buffer, Buffer]
  const scheme = signatureScheme(signature)
  const publicKey = refusing(() => readEd25519PublicKey(key), isSignatureRefusal)
  if (!minisign.claims(signature)) return
  invariant(scheme === minisign, `a signature minisign claims went to ${scheme?.scheme}`)
  const result = await refusingAsync(() => minisign.verify(list, signature, key), isSignatureRefusal)
  if (result) {
    invariant(publicKey !== undefined && result.keyId === minisignKeyId(publicKey.keyNumber), 'a minisign signature verified under another key id')
    invariant(result.scheme === 'minisign' && typeof result.trustedComment === 'string', 'a minisign result without its trusted comment')
  }
}
