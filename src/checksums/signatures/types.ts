/**
 * The one seam every signature scheme sits behind: `verify(list, signature, key)` resolves with
 * what was verified, or throws a 4xx problem (signatureProblems) and nothing else is read.
 */
import { problems } from '../../problem.js'

export type SignatureScheme = 'minisign' | 'signify' | 'openpgp'

export interface SignatureResult {
  verified: true
  scheme: SignatureScheme
  /** The signing key's id: minisign's as `minisign -V` prints it, signify's key number in hex, OpenPGP's 16-hex-digit key id. */
  keyId: string
  /** minisign's trusted comment, verified by its global signature. */
  trustedComment?: string
  /** OpenPGP: the primary key's fingerprint and user id, for the reader. */
  fingerprint?: string
  userId?: string
}

export interface SignatureVerifier {
  scheme: SignatureScheme
  /** Whether this signature is in this scheme's format (a cheap look, no verification). */
  claims(signature: Uint8Array): boolean
  verify(list: Uint8Array, signature: Uint8Array, key: Uint8Array): Promise<SignatureResult>
}

/** The signature problems: 422 with a URN a client can branch on; the detail never quotes the input. */
export const signatureProblems = {
  bad: (scheme: SignatureScheme, why = 'the checksum list or the signature was changed, or it was made by another key') =>
    problems.unprocessable('bad-signature', 'Signature does not verify', `The ${scheme} signature does not verify: ${why}; no file was checked`,
      { errors: [{ pointer: '/body/signature', message: 'does not verify' }] }),
  wrongKey: (scheme: SignatureScheme, signedBy: string, given: string) =>
    problems.unprocessable('wrong-key', 'Signed by another key',
      `The ${scheme} signature was made by key ${signedBy}, not by the public key given (${given}); no file was checked`,
      { errors: [{ pointer: '/body/publicKey', message: 'not the signing key' }] }),
  malformed: (field: 'signature' | 'publicKey', detail: string) =>
    problems.unprocessable('malformed-signature', 'Malformed signature or key', `${detail}; no file was checked`,
      { errors: [{ pointer: `/body/${field}`, message: detail }] }),
  unsupported: () =>
    problems.unprocessable('unsupported-signature', 'Unsupported signature',
      'The signature is not one hashd reads: minisign (.minisig), signify (.sig) or OpenPGP (armored or binary); no file was checked',
      { errors: [{ pointer: '/body/signature', message: 'unsupported scheme' }] }),
}
