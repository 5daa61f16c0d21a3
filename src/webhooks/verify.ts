/**
 * `verify(profile, payload, headers, key)`: the one seam in front of every webhook profile. The
 * profile's module reads its headers and says which bytes were signed; the signatures are then
 * checked against the key, and the signed timestamp against the time rule, the same way for all.
 *
 * The signature is checked before the time, so that the reason says what a receiver needs to know:
 * `signature-mismatch` is a forgery or the wrong key, `timestamp-too-old` an authentic webhook
 * delivered (or replayed) too late. HMACs are compared in constant time (crypto.timingSafeEqual)
 * against every entry of the header; Ed25519 (RFC 8032) is verified by OpenSSL through node:crypto.
 *
 * A verification is synchronous when its crypto is (a payload small enough to hash on the event
 * loop) and a promise only when the crypto went to the pool (domain/maybe-async.ts).
 */
import { timingSafeEqual, verify as cryptoVerify, type KeyObject } from 'node:crypto'
import { hmacOfPieces } from '../algorithms/hmac.js'
import { digestNamed } from '../algorithms/registry.js'
import { andThen, type MaybePromise } from '../domain/maybe-async.js'
import { headerValues, type ForwardedHeaders } from './headers.js'
import { headerNames, type WebhookProfile } from './profiles.js'
import type { HeaderSignature, HmacKeyVersion, SignatureKind, Verification, WebhookKey } from './types.js'

/** The crypto a verification runs; index.ts hands in the engine's, which moves large payloads off the event loop. */
export interface WebhookCrypto {
  /** HMAC-SHA256 of the pieces, in order, as one message: the bytes at once, or a promise of them when the work left the event loop. */
  hmacSha256(key: Uint8Array, content: readonly Uint8Array[]): MaybePromise<Uint8Array>
  ed25519Verify(content: Uint8Array, signature: Uint8Array, key: KeyObject): MaybePromise<boolean>
}

const SHA256 = digestNamed('sha256')

/** HMAC-SHA256 on this thread (hmacOfPieces: createHmac or two one-shot hashes, whichever this OpenSSL makes cheaper). */
export function hmacInline(key: Uint8Array, content: readonly Uint8Array[]): Uint8Array {
  return hmacOfPieces(SHA256, key, content)
}

/** Ed25519 on this thread; a key or signature OpenSSL refuses is a signature that does not verify. */
export function ed25519Inline(content: Uint8Array, signature: Uint8Array, key: KeyObject): boolean {
  try {
    return cryptoVerify(null, content, key, signature)
  } catch {
    return false
  }
}

export const inlineCrypto: WebhookCrypto = { hmacSha256: hmacInline, ed25519Verify: ed25519Inline }

/** The timestamp rule: a signed timestamp within `toleranceSeconds` of `referenceSeconds` (now, or when a queued event was received). */
export interface TimeRule {
  toleranceSeconds: number
  referenceSeconds: number
}

const KIND_NAMES: Record<SignatureKind, string> = { 'hmac-sha256': 'HMAC-SHA256 (v1)', ed25519: 'Ed25519 (v1a)' }

/**
 * Valid versions first, so that a retired one is reported only when no valid one matches. The key
 * sources already hand them out in that order (ring.ts; a secret is one valid version): they are
 * then used as they are, without a copy per request.
 */
function byStanding(versions: HmacKeyVersion[]): HmacKeyVersion[] {
  let sawInvalid = false
  for (const version of versions) {
    if (version.standing !== 'valid') sawInvalid = true
    else if (sawInvalid) return [...versions.filter((each) => each.standing === 'valid'), ...versions.filter((each) => each.standing !== 'valid')]
  }
  return versions
}

/** Whether `mac` equals any entry; every entry is compared, matched or not, each in constant time. */
function matchesAny(mac: Uint8Array, signatures: readonly HeaderSignature[]): boolean {
  let matched = false
  for (const signature of signatures) matched = timingSafeEqual(mac, signature.bytes) || matched
  return matched
}

/** The first version (valid ones first) whose HMAC is among the signatures. */
function matchHmac(versions: HmacKeyVersion[], signatures: HeaderSignature[], content: Buffer[], crypto: WebhookCrypto): MaybePromise<HmacKeyVersion | undefined> {
  const ordered = byStanding(versions)
  const step = (index: number): MaybePromise<HmacKeyVersion | undefined> => {
    const version = ordered[index]
    if (version === undefined) return undefined
    return andThen(version.inToken ? version.inToken(content) : crypto.hmacSha256(version.secret, content), (mac) => (matchesAny(mac, signatures) ? version : step(index + 1)))
  }
  return step(0)
}

function matchEd25519(publicKey: KeyObject, signatures: HeaderSignature[], content: Buffer[], crypto: WebhookCrypto): MaybePromise<boolean> {
  const message = Buffer.concat(content)
  const step = (index: number): MaybePromise<boolean> => {
    const signature = signatures[index]
    if (signature === undefined) return false
    return andThen(crypto.ed25519Verify(message, signature.bytes, publicKey), (valid) => valid || step(index + 1))
  }
  return step(0)
}

export function verify(profile: WebhookProfile, payload: Buffer, headers: ForwardedHeaders, key: WebhookKey, time: TimeRule,
  crypto: WebhookCrypto = inlineCrypto): MaybePromise<Verification> {
  const reading = profile.module.read(headerValues(headers, headerNames(profile)))
  if (!reading.ok) return { valid: false, reason: reading.reason, detail: reading.detail }
  const signed = reading.headers
  const timestamp = signed.timestamp
  const kind: SignatureKind = key.kind === 'hmac' ? 'hmac-sha256' : 'ed25519'
  const signatures = signed.signatures.filter((signature) => signature.kind === kind)
  if (signatures.length === 0) {
    return { valid: false, reason: 'unsupported-signature', detail: `${profile.headers.signature} holds no ${KIND_NAMES[kind]} signature, the kind this key checks`, timestamp }
  }

  const content = profile.module.signedContent(signed, payload)
  const replayToken = profile.replayBy === 'id' ? [Buffer.from(signed.id ?? '', 'utf8')] : content
  if (key.kind === 'hmac') {
    return andThen(matchHmac(key.versions, signatures, content, crypto), (matched): Verification => {
      if (!matched) return { valid: false, reason: 'signature-mismatch', detail: mismatchDetail(profile, key), timestamp }
      const keyVersion = matched.version
      if (matched.standing === 'retired') {
        return { valid: false, reason: 'key-version-retired', detail: `signed with version ${keyVersion} of ${key.keyName}, which is retired`, keyVersion, timestamp }
      }
      if (matched.standing === 'below-minimum') {
        return { valid: false, reason: 'key-version-below-minimum', detail: `signed with version ${keyVersion} of ${key.keyName}, below its min-verify-version`, keyVersion, timestamp }
      }
      return timely(timestamp, time, keyVersion, replayToken)
    })
  }
  return andThen(matchEd25519(key.publicKey, signatures, content, crypto), (matched): Verification => matched
    ? timely(timestamp, time, undefined, replayToken)
    : { valid: false, reason: 'signature-mismatch', detail: mismatchDetail(profile, key), timestamp })
}

/** The time rule, for an authentic webhook: valid, or too old or too new for the tolerance. */
function timely(timestamp: number | undefined, time: TimeRule, keyVersion: number | undefined, replayToken: Buffer[]): Verification {
  if (timestamp !== undefined) {
    const age = time.referenceSeconds - timestamp
    if (age > time.toleranceSeconds) {
      return { valid: false, reason: 'timestamp-too-old', detail: `signed ${age} s before the reference time; the tolerance is ${time.toleranceSeconds} s`, keyVersion, timestamp }
    }
    if (-age > time.toleranceSeconds) {
      return { valid: false, reason: 'timestamp-too-new', detail: `signed ${-age} s after the reference time; the tolerance is ${time.toleranceSeconds} s`, keyVersion, timestamp }
    }
  }
  return { valid: true, keyVersion, timestamp, replayToken }
}

function mismatchDetail(profile: WebhookProfile, key: WebhookKey): string {
  const under = key.kind === 'hmac' && key.keyName !== undefined ? `any version of ${key.keyName}` : 'the key given'
  return `no signature in ${profile.headers.signature} matches the payload under ${under}: the payload${profile.headers.timestamp ? ', timestamp' : ''}${profile.headers.id ? ' or id' : ''} was changed, or another key signed it`
}
