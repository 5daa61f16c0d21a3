/**
 * OpenPGP (RFC 9580, and RFC 4880 keys and signatures as gpg makes them): a detached signature,
 * armored (`gpg --armor --detach-sign`, `.asc`) or binary (`gpg --detach-sign`, `.sig`/`.gpg`), of
 * the list's bytes, checked with the `openpgp` package (OpenPGP.js) against an armored or binary
 * public key (or several: a keyring export). Text-mode signatures (`gpg --textmode`) are checked
 * over the list with CRLF line ends, as RFC 9580 §5.2.1.2 says; OpenPGP.js does that itself.
 */
import * as openpgp from 'openpgp'
import { signatureProblems, type SignatureResult, type SignatureVerifier } from './types.js'

const ARMORED_SIGNATURE = '-----BEGIN PGP SIGNATURE-----'
const ARMORED_KEY = '-----BEGIN PGP PUBLIC KEY BLOCK-----'

const startsWithText = (bytes: Uint8Array, text: string): boolean =>
  Buffer.from(bytes.subarray(0, 64)).toString('latin1').trimStart().startsWith(text)

/**
 * A binary OpenPGP packet starts with a byte whose top bit is set (RFC 9580 §4.2); a signature
 * packet has tag 2 (old format 0x88–0x8b, new format 0xc2).
 */
const isBinarySignature = (bytes: Uint8Array): boolean => {
  const first = bytes[0] ?? 0
  return first === 0xc2 || (first & 0xfc) === 0x88
}

async function readKeys(bytes: Uint8Array): Promise<openpgp.Key[]> {
  try {
    return startsWithText(bytes, ARMORED_KEY)
      ? await openpgp.readKeys({ armoredKeys: Buffer.from(bytes).toString('utf8') })
      : await openpgp.readKeys({ binaryKeys: bytes })
  } catch {
    throw signatureProblems.malformed('publicKey', 'The public key is not an OpenPGP public key (gpg --armor --export)')
  }
}

async function readSignature(bytes: Uint8Array): Promise<openpgp.Signature> {
  try {
    return startsWithText(bytes, ARMORED_SIGNATURE)
      ? await openpgp.readSignature({ armoredSignature: Buffer.from(bytes).toString('utf8') })
      : await openpgp.readSignature({ binarySignature: bytes })
  } catch {
    throw signatureProblems.malformed('signature', 'The OpenPGP signature cannot be read')
  }
}

export const openpgpVerifier: SignatureVerifier = {
  scheme: 'openpgp',
  claims(signature) {
    return startsWithText(signature, ARMORED_SIGNATURE) || isBinarySignature(signature)
  },
  async verify(list, signatureBytes, keyBytes): Promise<SignatureResult> {
    const [signature, keys] = await Promise.all([readSignature(signatureBytes), readKeys(keyBytes)])
    let signedBy: openpgp.KeyID[]
    let known: openpgp.KeyID[]
    try {
      signedBy = signature.getSigningKeyIDs()
      known = keys.flatMap((key) => key.getKeyIDs())
    } catch {
      throw signatureProblems.malformed('signature', 'The OpenPGP signature names no signing key')
    }
    const signer = signedBy.find((id) => known.some((candidate) => candidate.equals(id)))
    if (!signer) {
      throw signatureProblems.wrongKey('openpgp', signedBy.map((id) => id.toHex().toUpperCase()).join(', ') || 'an unnamed key',
        keys.map((key) => key.getKeyID().toHex().toUpperCase()).join(', '))
    }
    try {
      const message = await openpgp.createMessage({ binary: list })
      const result = await openpgp.verify({ message, signature, verificationKeys: keys, format: 'binary' })
      const verification = result.signatures.find((candidate) => candidate.keyID.equals(signer))
      if (!verification || !(await verification.verified)) throw new Error('not verified')
    } catch (error) {
      // OpenPGP.js says why (a changed message, an expired or revoked key, a weak hash); the
      // message names no input bytes, so it is kept.
      const why = error instanceof Error && error.message !== 'not verified' ? error.message.replace(/^Signed digest did not match$/, 'the checksum list or the signature was changed') : undefined
      throw signatureProblems.bad('openpgp', why?.slice(0, 200))
    }
    const primary = keys.find((key) => key.getKeyIDs().some((id) => id.equals(signer)))
    const userId = primary?.getUserIDs()[0]
    return {
      verified: true, scheme: 'openpgp', keyId: signer.toHex().toUpperCase(),
      ...(primary ? { fingerprint: primary.getFingerprint().toUpperCase() } : {}),
      ...(userId ? { userId } : {}),
    }
  },
}
