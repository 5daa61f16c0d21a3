/**
 * minisign (https://jedisct1.github.io/minisign/, the format section): a `.minisig` is
 *
 *     untrusted comment: <text>
 *     base64(<sig alg, 2 bytes> ‖ <key number, 8> ‖ <Ed25519 signature, 64>)
 *     trusted comment: <text>
 *     base64(<global signature, 64>)
 *
 * The sig alg is `Ed` for the legacy form (the file itself is signed) and `ED` for the prehashed
 * form, minisign's default since 0.8 (BLAKE2b-512 of the file is signed). The global signature
 * signs the signature bytes followed by the trusted comment, so the comment is authenticated too;
 * both are checked, as `minisign -V` does.
 */
import { createHash } from 'node:crypto'
import { ED, ed25519Verify, readEd25519PublicKey, strictBase64, textLines } from './ed25519.js'
import { signatureProblems, type SignatureResult, type SignatureVerifier } from './types.js'

const PREHASHED = Buffer.from('ED')
const TRUSTED_PREFIX = 'trusted comment: '

/** minisign prints a key id as the key number read as a little-endian 64-bit integer, in upper-case hex. */
export const minisignKeyId = (keyNumber: Uint8Array): string => Buffer.from(keyNumber).reverse().toString('hex').toUpperCase()

export const minisign: SignatureVerifier = {
  scheme: 'minisign',
  claims(signature) {
    const lines = textLines(signature)
    return lines[0]?.startsWith('untrusted comment:') === true && lines[2]?.startsWith(TRUSTED_PREFIX) === true
  },
  async verify(list, signature, keyBytes): Promise<SignatureResult> {
    const lines = textLines(signature)
    const blob = strictBase64(lines[1] ?? '')
    const trustedComment = (lines[2] ?? '').slice(TRUSTED_PREFIX.length)
    const globalSignature = strictBase64(lines[3] ?? '')
    if (!blob || blob.length !== 74 || !globalSignature || globalSignature.length !== 64) {
      throw signatureProblems.malformed('signature', 'The minisign signature is malformed (four lines: untrusted comment, signature, trusted comment, global signature)')
    }
    const algorithm = blob.subarray(0, 2)
    if (!algorithm.equals(ED) && !algorithm.equals(PREHASHED)) throw signatureProblems.malformed('signature', 'The minisign signature names an unknown algorithm')
    const key = readEd25519PublicKey(keyBytes)
    const keyNumber = blob.subarray(2, 10)
    if (!keyNumber.equals(key.keyNumber)) throw signatureProblems.wrongKey('minisign', minisignKeyId(keyNumber), minisignKeyId(key.keyNumber))
    const signed = algorithm.equals(PREHASHED) ? createHash('blake2b512').update(list).digest() : list
    const fileSignature = blob.subarray(10, 74)
    if (!ed25519Verify(signed, fileSignature, key.key)) throw signatureProblems.bad('minisign')
    if (!ed25519Verify(Buffer.concat([fileSignature, Buffer.from(trustedComment, 'utf8')]), globalSignature, key.key)) {
      throw signatureProblems.bad('minisign', 'the trusted comment was changed')
    }
    return { verified: true, scheme: 'minisign', keyId: minisignKeyId(keyNumber), trustedComment }
  },
}
