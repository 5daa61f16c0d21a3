/**
 * The pepper hash format (src/algorithms/password/pepper.ts): `$pepper$v=1,k=<key id>,s=<scheme>$
 * <nonce>$<ciphertext and tag>`, read by parsePeppered and opened with a key; and the digest
 * envelopes /api/verify reads (src/domain/envelopes.ts: SRI, OCI, Nix base32, OpenSSH
 * fingerprints, colon hex, and the forms it names as unverifiable).
 *
 * Input: the string (UTF-8). A key with the id `fuzz` opens what names it (the corpus holds
 * strings sealed with it), so the decryption path runs as well as the parsing.
 *
 * Invariants: a parsed string begins with the header it reports (the GCM additional data), its
 * nonce is 12 bytes and its ciphertext longer than the 16-byte tag; opening gives a string or
 * null, never an error; an envelope's bytes have its algorithm's length.
 *
 * Expected refusals: parsePeppered's Problem 422 malformed-hash. The other functions refuse
 * nothing (they answer null), so anything else thrown is a finding.
 */
import { isPeppered, parsePeppered, SecretPepperKey } from '../../src/algorithms/password/pepper.js'
import { findAlgorithm } from '../../src/algorithms/registry.js'
import { unverifiableEnvelope, unwrapDigest } from '../../src/domain/envelopes.js'
import { invariant, isProblem, refusing } from '../support.js'

/** The key the corpus's sealed strings were made with (fuzz/make-corpus.ts). */
export const FUZZ_PEPPER_KEY = new SecretPepperKey('fuzz', Buffer.alloc(32, 0x5a))

export function fuzz(data: Buffer): void {
  const text = data.toString('utf8')
  if (isPeppered(text)) {
    const parsed = refusing(() => parsePeppered(text), (error) => isProblem(error, [422], ['urn:hashd:problem:malformed-hash']))
    if (parsed) {
      invariant(text.startsWith(parsed.header), 'the header is not the start of the string')
      invariant(parsed.nonce.length === 12 && parsed.sealed.length > 16, 'a nonce or ciphertext of the wrong size was accepted')
      const opened = FUZZ_PEPPER_KEY.open(parsed)
      invariant(opened === null || typeof opened === 'string', 'open gave neither a string nor null')
      if (opened !== null) invariant(parsed.keyId === FUZZ_PEPPER_KEY.id, 'a string naming another key was opened')
    }
  }
  const envelope = unwrapDigest(text)
  if (envelope?.algorithm !== undefined) {
    const algorithm = findAlgorithm(envelope.algorithm)
    invariant(algorithm !== undefined && algorithm.kind !== 'password', `an envelope names ${envelope.algorithm}, no digest`)
    invariant(envelope.bytes.length === algorithm.outputBytes, `a ${envelope.algorithm} envelope holds ${envelope.bytes.length} bytes`)
  }
  const unverifiable = unverifiableEnvelope(text)
  if (unverifiable) invariant(unverifiable.why.length > 0, 'an unverifiable envelope without its reason')
}
