/**
 * OpenPGP (RFC 9580, and RFC 4880 keys and signatures as gpg makes them): a detached signature,
 * armored (`gpg --armor --detach-sign`, `.asc`) or binary (`gpg --detach-sign`, `.sig`/`.gpg`), of
 * the list's bytes, checked with the `openpgp` package (OpenPGP.js) against an armored or binary
 * public key (or several: a keyring export). Text-mode signatures (`gpg --textmode`) are checked
 * over the list with CRLF line ends, as RFC 9580 §5.2.1.2 says; OpenPGP.js does that itself.
 */
import type * as openpgp from 'openpgp'
import { signatureProblems, type SignatureResult, type SignatureVerifier } from './types.js'

/**
 * OpenPGP.js is loaded on first use, not at start: it is the largest module hashd has (a 1.3 MB
 * bundle, its source held in the JS heap as long as it is loaded), for a feature most servers
 * never use (docs/operations.md, "Memory"). Once loaded it stays loaded.
 */
let loading: Promise<typeof openpgp> | undefined
const library = async (): Promise<typeof openpgp> => (loading ??= import('openpgp'))

const ARMORED_SIGNATURE = '-----BEGIN PGP SIGNATURE-----'
const CLEARSIGNED = '-----BEGIN PGP SIGNED MESSAGE-----'
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
  const pgp = await library()
  try {
    return startsWithText(bytes, ARMORED_KEY)
      ? await pgp.readKeys({ armoredKeys: Buffer.from(bytes).toString('utf8') })
      : await pgp.readKeys({ binaryKeys: bytes })
  } catch {
    throw signatureProblems.malformed('publicKey', 'The public key is not an OpenPGP public key (gpg --armor --export)')
  }
}

async function readSignature(bytes: Uint8Array): Promise<openpgp.Signature> {
  const pgp = await library()
  try {
    return startsWithText(bytes, ARMORED_SIGNATURE)
      ? await pgp.readSignature({ armoredSignature: Buffer.from(bytes).toString('utf8') })
      : await pgp.readSignature({ binarySignature: bytes })
  } catch {
    throw signatureProblems.malformed('signature', 'The OpenPGP signature cannot be read')
  }
}

/**
 * The checks both forms share: the signature must name a key given (else wrong-key), then verify
 * (else bad-signature, with OpenPGP.js's reason: a changed list, an expired or revoked key, a
 * weak hash; its messages name no input bytes).
 */
async function verifyWith(signingKeyIds: ReadonlyArray<openpgp.KeyID | undefined>, keys: openpgp.Key[], verify: () => Promise<openpgp.VerifyMessageResult<unknown>>): Promise<SignatureResult> {
  // A signature packet OpenPGP.js cannot parse (an unknown version) is kept unparsed, and names no key.
  const signedBy = signingKeyIds.filter((id): id is openpgp.KeyID => id !== undefined && id !== null)
  if (signedBy.length === 0) throw signatureProblems.malformed('signature', 'The OpenPGP signature names no signing key')
  const known = keys.flatMap((key) => key.getKeyIDs())
  const signer = signedBy.find((id) => known.some((candidate) => candidate.equals(id)))
  if (!signer) {
    throw signatureProblems.wrongKey('openpgp', signedBy.map((id) => id.toHex().toUpperCase()).join(', '),
      keys.map((key) => key.getKeyID().toHex().toUpperCase()).join(', '))
  }
  try {
    const result = await verify()
    const verification = result.signatures.find((candidate) => candidate.keyID.equals(signer))
    if (!verification || !(await verification.verified)) throw new Error('not verified')
  } catch (error) {
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
}

export const openpgpVerifier: SignatureVerifier = {
  scheme: 'openpgp',
  claims(signature) {
    return startsWithText(signature, ARMORED_SIGNATURE) || isBinarySignature(signature)
  },
  async verify(list, signatureBytes, keyBytes): Promise<SignatureResult> {
    const pgp = await library()
    const [signature, keys] = await Promise.all([readSignature(signatureBytes), readKeys(keyBytes)])
    let signedBy: openpgp.KeyID[]
    try {
      signedBy = signature.getSigningKeyIDs()
    } catch {
      throw signatureProblems.malformed('signature', 'The OpenPGP signature names no signing key')
    }
    return verifyWith(signedBy, keys, async () =>
      pgp.verify({ message: await pgp.createMessage({ binary: list }), signature, verificationKeys: keys, format: 'binary' }))
  },
}

/** A list in an OpenPGP cleartext signature (`gpg --clearsign`, as Fedora's CHECKSUM files). */
export const isClearsigned = (bytes: Uint8Array): boolean => startsWithText(bytes, CLEARSIGNED)

/**
 * The text of a clearsigned list (RFC 9580 §7: dash-escaping undone), verified first when a key is
 * given; without one it is read unverified and the answer has no `signature`.
 */
export async function readClearsigned(bytes: Uint8Array, keyBytes: Uint8Array | undefined): Promise<{ text: string, signature?: SignatureResult }> {
  const pgp = await library()
  let message: openpgp.CleartextMessage
  try {
    message = await pgp.readCleartextMessage({ cleartextMessage: Buffer.from(bytes).toString('utf8') })
  } catch {
    throw signatureProblems.malformed('signature', 'The clearsigned checksum list cannot be read (gpg --clearsign)')
  }
  if (keyBytes === undefined) return { text: message.getText() }
  const keys = await readKeys(keyBytes)
  const signature = await verifyWith(message.getSigningKeyIDs(), keys, () => pgp.verify({ message, verificationKeys: keys }))
  return { text: message.getText(), signature }
}
