/**
 * signify (OpenBSD's signify(1), signify.c): a `.sig` is an `untrusted comment:` line and
 * base64(`Ed` ‖ key number, 8 bytes ‖ Ed25519 signature, 64); the message is signed as it is. With
 * `signify -S -e` the message follows in the same file (an embedded signature, as OpenBSD's
 * SHA256.sig): then that text is the list.
 */
import { ED, ed25519Verify, readEd25519PublicKey, strictBase64, textLines } from './ed25519.js'
import { signatureProblems, type SignatureResult, type SignatureVerifier } from './types.js'

const signifyKeyId = (keyNumber: Uint8Array): string => Buffer.from(keyNumber).toString('hex')

/** The embedded message of a `signify -S -e` signature, or null for a detached one. */
export function signifyEmbeddedMessage(signature: Uint8Array): Buffer | null {
  const bytes = Buffer.from(signature)
  const first = bytes.indexOf(0x0a)
  const second = first < 0 ? -1 : bytes.indexOf(0x0a, first + 1)
  if (second < 0 || second + 1 >= bytes.length) return null
  return bytes.subarray(second + 1)
}

export const signify: SignatureVerifier = {
  scheme: 'signify',
  claims(signature) {
    const lines = textLines(signature)
    const blob = strictBase64(lines[1] ?? '')
    return lines[0]?.startsWith('untrusted comment:') === true && !(lines[2] ?? '').startsWith('trusted comment: ') &&
      blob !== null && blob.length === 74 && blob.subarray(0, 2).equals(ED)
  },
  async verify(list, signature, keyBytes): Promise<SignatureResult> {
    const blob = strictBase64(textLines(signature)[1] ?? '')
    if (!blob || blob.length !== 74 || !blob.subarray(0, 2).equals(ED)) {
      throw signatureProblems.malformed('signature', 'The signify signature is malformed (an untrusted comment line, then the base64 signature)')
    }
    const key = readEd25519PublicKey(keyBytes)
    const keyNumber = blob.subarray(2, 10)
    if (!keyNumber.equals(key.keyNumber)) throw signatureProblems.wrongKey('signify', signifyKeyId(keyNumber), signifyKeyId(key.keyNumber))
    if (!ed25519Verify(list, blob.subarray(10, 74), key.key)) throw signatureProblems.bad('signify')
    return { verified: true, scheme: 'signify', keyId: signifyKeyId(keyNumber) }
  },
}
