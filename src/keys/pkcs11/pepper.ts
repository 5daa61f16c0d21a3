/**
 * A pepper key version whose secret is an AES-256 key in a PKCS#11 token: the seal is
 * CKM_AES_GCM (PKCS#11 v2.40 §2.10.6) done by the token, with hashd's random 96-bit nonce as the IV,
 * the `$pepper$v=1,k=…,s=…$` header as the additional data and a 128-bit tag, so the stored string
 * is the one a file key writes (algorithms/password/pepper.ts), and a hash moves between a file
 * key and a token key with POST /api/pepper/rewrap. The token's key is the AES key itself (a file
 * key's secret goes through HKDF first): hashd never sees it.
 */
import { randomBytes } from 'node:crypto'
import { formatPeppered, PEPPER_NONCE_BYTES, PEPPER_TAG_BYTES, pepperHeader, type PepperedHash, type PepperKey } from '../../algorithms/password/pepper.js'
import { CKR, Pkcs11Error } from './binding.js'
import { tokenProblem } from './hmac.js'
import type { Pkcs11Token } from './token.js'
import type { Pkcs11Uri } from './uri.js'

const TAG_BITS = PEPPER_TAG_BYTES * 8
const NOT_OPENED: ReadonlySet<number> = new Set([CKR.ENCRYPTED_DATA_INVALID, CKR.ENCRYPTED_DATA_LEN_RANGE, CKR.GENERAL_ERROR])

export class TokenPepperKey implements PepperKey {
  readonly id: string
  readonly uri: Pkcs11Uri
  readonly #token: Pkcs11Token

  constructor(id: string, uri: Pkcs11Uri, token: Pkcs11Token) {
    this.id = id
    this.uri = uri
    this.#token = token
    // Its token's pool now, so that a pin-source at odds with another URI's is refused on its line.
    token.register(uri)
  }

  async seal(scheme: string, inner: string): Promise<string> {
    const header = pepperHeader(this.id, scheme)
    const nonce = randomBytes(PEPPER_NONCE_BYTES)
    const gcm = { iv: nonce, aad: Buffer.from(header), tagBits: TAG_BITS }
    try {
      const sealed = await this.#token.withKey(this.uri, (module, session, key) => module.encryptGcm(session, key, gcm, Buffer.from(inner, 'utf8')))
      return formatPeppered(header, nonce, sealed)
    } catch (error) {
      throw tokenProblem(error)
    }
  }

  async open(peppered: PepperedHash): Promise<string | null> {
    if (peppered.keyId !== this.id) return null
    const gcm = { iv: peppered.nonce, aad: Buffer.from(peppered.header), tagBits: TAG_BITS }
    try {
      const inner = await this.#token.withKey(this.uri, async (module, session, key) => {
        try {
          return await module.decryptGcm(session, key, gcm, peppered.sealed)
        } catch (error) {
          // A tag that does not verify: CKR_ENCRYPTED_DATA_INVALID by the standard, CKR_GENERAL_ERROR
          // from SoftHSM2. Either is "does not open" here, not a lost device: a changed string must
          // not make hashd reopen the module.
          if (error instanceof Pkcs11Error && NOT_OPENED.has(error.rv)) return null
          throw error
        }
      })
      return inner === null ? null : inner.toString('utf8')
    } catch (error) {
      throw tokenProblem(error)
    }
  }

  toJSON(): string { return this.id }
  toString(): string { return this.id }
}
