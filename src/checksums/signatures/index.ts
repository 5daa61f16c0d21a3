/**
 * `verifySignature(list, signature, key)`: the one seam in front of every scheme (one module each:
 * minisign.ts, signify.ts, openpgp.ts). The scheme is read from the signature's own format; a
 * signature no scheme claims is a 422, as is a bad one or one by another key, so nothing is hashed.
 */
import { minisign } from './minisign.js'
import { openpgpVerifier } from './openpgp.js'
import { signify } from './signify.js'
import { signatureProblems, type SignatureResult, type SignatureVerifier } from './types.js'

export { isClearsigned, readClearsigned } from './openpgp.js'
export { signifyEmbeddedMessage } from './signify.js'
export type { SignatureResult, SignatureScheme } from './types.js'

/** minisign before signify: a minisign signature is a signify one with a trusted comment. */
export const SIGNATURE_SCHEMES: readonly SignatureVerifier[] = [minisign, signify, openpgpVerifier]

export function signatureScheme(signature: Uint8Array): SignatureVerifier | undefined {
  return SIGNATURE_SCHEMES.find((scheme) => scheme.claims(signature))
}

export async function verifySignature(list: Uint8Array, signature: Uint8Array, key: Uint8Array): Promise<SignatureResult> {
  const scheme = signatureScheme(signature)
  if (!scheme) throw signatureProblems.unsupported()
  return scheme.verify(list, signature, key)
}
