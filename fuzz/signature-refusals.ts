/**
 * What the three signature targets share: the input is three fields (the list, the signature,
 * the public key), and the refusals are the signature seam's documented ones
 * (src/checksums/signatures/types.ts): Problem 422 malformed-signature, wrong-key,
 * bad-signature or unsupported-signature. Anything else thrown is a finding.
 */
import { isProblem } from './support.js'

export const SIGNATURE_REFUSALS = ['malformed-signature', 'wrong-key', 'bad-signature', 'unsupported-signature'].map((slug) => `urn:hashd:problem:${slug}`)

export const isSignatureRefusal = (error: unknown): boolean => isProblem(error, [422], SIGNATURE_REFUSALS)
