/**
 * An HMAC key version whose secret is an object in a PKCS#11 token: the MAC is a `C_Sign` with
 * CKM_SHA256_HMAC, CKM_SHA384_HMAC or CKM_SHA512_HMAC (PKCS#11 v2.40 §2.23), made by the token, so
 * hashd never holds the key's value. It is the same RFC 2104 HMAC a file key gives, so tags,
 * /api/hmac/verify, batches and webhooks do not change with the source.
 */
import type { DigestAlgorithm } from '../../algorithms/types.js'
import { problems } from '../../problem.js'
import { CKM, Pkcs11Error, rvName } from './binding.js'
import { Pkcs11Unavailable, type Pkcs11Token } from './token.js'
import type { Pkcs11Uri } from './uri.js'

/** The digests a token HMACs with, by registry name. */
export const TOKEN_HMAC_MECHANISMS: Readonly<Record<string, number>> = { sha256: CKM.SHA256_HMAC, sha384: CKM.SHA384_HMAC, sha512: CKM.SHA512_HMAC }

/** The 503 or 422 a token's failure is for the caller. */
export function tokenProblem(error: unknown): unknown {
  if (error instanceof Pkcs11Unavailable) return problems.keySourceUnavailable(error.reason, error.message)
  if (error instanceof Pkcs11Error) return problems.keyRefusedByToken(`the token refuses this operation with this key: ${error.fn} returned ${rvName(error.rv)}`)
  return error
}

/** The most HMACs one call to the token's thread makes (a group beyond it is split across sessions). */
const GROUP_MAX = 256

interface Waiting { message: Uint8Array, resolve: (mac: Uint8Array) => void, reject: (error: unknown) => void }

export class TokenHmacKey {
  readonly inMemory = false
  readonly uri: Pkcs11Uri
  readonly #token: Pkcs11Token
  /** HMACs asked for in this turn of the event loop, by algorithm: made together at its end. */
  readonly #waiting = new Map<DigestAlgorithm, Waiting[]>()

  constructor(uri: Pkcs11Uri, token: Pkcs11Token) {
    this.uri = uri
    this.#token = token
    // Its token's pool now, so that a pin-source at odds with another URI's is refused on its line.
    token.register(uri)
  }

  /** A token key has no prepared in-memory form. */
  prepared(): null { return null }

  /**
   * The HMAC of the message's pieces, made in the token. The HMACs asked for during one turn of the
   * event loop (the requests of that turn, a batch's items in flight: domain/batch.ts) go to the
   * token together, at most GROUP_MAX on a session in one hand-off to a thread (binding.ts
   * `signMany`), as the audit log's lines go out in one write(2): a hand-off per HMAC costs about
   * what SoftHSM2's HMAC itself costs.
   */
  external(algorithm: DigestAlgorithm, pieces: readonly Uint8Array[]): Promise<Uint8Array> {
    const mechanism = TOKEN_HMAC_MECHANISMS[algorithm.name]
    if (mechanism === undefined) return Promise.reject(problems.keyRefusedByToken(`a key in a token makes HMACs with ${Object.keys(TOKEN_HMAC_MECHANISMS).join(', ')} only`))
    const message = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
    return new Promise<Uint8Array>((resolve, reject) => {
      let waiting = this.#waiting.get(algorithm)
      if (waiting === undefined) {
        this.#waiting.set(algorithm, waiting = [])
        setImmediate(() => this.#flush(algorithm, mechanism))
      }
      waiting.push({ message, resolve, reject })
    })
  }

  #flush(algorithm: DigestAlgorithm, mechanism: number): void {
    const waiting = this.#waiting.get(algorithm) ?? []
    this.#waiting.delete(algorithm)
    for (let start = 0; start < waiting.length; start += GROUP_MAX) {
      const group = waiting.slice(start, start + GROUP_MAX)
      const messages = group.map((each) => each.message)
      this.#token.withKey(this.uri, (module, session, key) => module.signMany(session, mechanism, key, messages, algorithm.outputBytes))
        .then((macs) => { group.forEach((each, index) => each.resolve(macs[index]!)) }, (error: unknown) => {
          const problem = tokenProblem(error)
          for (const each of group) each.reject(problem)
        })
    }
  }

  bytesForTask(): never { throw new Error('a key in a token has no bytes to hand out') }

  toJSON(): string { return '[pkcs11]' }
  toString(): string { return '[pkcs11]' }
}
