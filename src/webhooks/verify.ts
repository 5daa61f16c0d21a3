/**
 * `verify(profile, payload, headers, key)`: the one seam in front of every webhook profile. The
 * profile's module reads its headers and says which bytes were signed; the signatures are then
 * checked against the key, and the signed timestamp against the time rule, the same way for all.
 *
 * The signature is checked before the time, so that the reason says what a receiver needs to know:
 * `signature-mismatch` is a forgery or the wrong key, `timestamp-too-old` an authentic webhook
 * delivered (or replayed) too late. HMACs are compared in constant time (crypto.timingSafeEqual)
 * against every entry of the header; Ed25519 (RFC 8032) is verified by OpenSSL through node:crypto.
 */
import { createHmac, timingSafeEqual, verify as cryptoVerify, type KeyObject } from 'node:crypto'
import { headerValues, type ForwardedHeaders } from './headers.js'
import { headerNames, type WebhookProfile } from './profiles.js'
import type { HeaderSignature, HmacKeyVersion, SignatureKind, Verification, WebhookKey } from './types.js'

/** The crypto a verification runs; index.ts hands in the engine's, which moves large payloads off the event loop. */
export interface WebhookCrypto {
  /** HMAC-SHA256 of the pieces, in order, as one message. */
  hmacSha256(key: Uint8Array, content: readonly Uint8Array[]): Promise<Uint8Array>
  ed25519Verify(content: Uint8Array, signature: Uint8Array, key: KeyObject): Promise<boolean>
}

/** HMAC-SHA256 on this thread, the pieces fed in turn (no copy of the payload). */
export function hmacInline(key: Uint8Array, content: readonly Uint8Array[]): Uint8Array {
  const hmac = createHmac('sha256', key)
  for (const piece of content) hmac.update(piece)
  return hmac.digest()
}

export const inlineCrypto: WebhookCrypto = {
  hmacSha256: async (key, content) => hmacInline(key, content),
  ed25519Verify: async (content, signature, key) => {
    try {
      return cryptoVerify(null, content, key, signature)
    } catch {
      return false
    }
  },
}

/** The timestamp rule: a signed timestamp within `toleranceSeconds` of `referenceSeconds` (now, or when a queued event was received). */
export interface TimeRule {
  toleranceSeconds: number
  referenceSeconds: number
}

const KIND_NAMES: Record<SignatureKind, string> = { 'hmac-sha256': 'HMAC-SHA256 (v1)', ed25519: 'Ed25519 (v1a)' }

/** Valid versions first, so that a retired one is reported only when no valid one matches. */
const byStanding = (versions: HmacKeyVersion[]): HmacKeyVersion[] =>
  [...versions.filter((version) => version.standing === 'valid'), ...versions.filter((version) => version.standing !== 'valid')]

async function matchHmac(versions: HmacKeyVersion[], signatures: HeaderSignature[], content: Buffer[], crypto: WebhookCrypto): Promise<HmacKeyVersion | undefined> {
  for (const version of byStanding(versions)) {
    const mac = await crypto.hmacSha256(version.secret, content)
    let matched = false
    // Every entry is compared, matched or not, each in constant time.
    for (const signature of signatures) matched = timingSafeEqual(mac, signature.bytes) || matched
    if (matched) return version
  }
  return undefined
}

async function matchEd25519(publicKey: KeyObject, signatures: HeaderSignature[], content: Buffer[], crypto: WebhookCrypto): Promise<boolean> {
  const message = Buffer.concat(content)
  for (const signature of signatures) {
    if (await crypto.ed25519Verify(message, signature.bytes, publicKey)) return true
  }
  return false
}

export async function verify(profile: WebhookProfile, payload: Buffer, headers: ForwardedHeaders, key: WebhookKey, time: TimeRule,
  crypto: WebhookCrypto = inlineCrypto): Promise<Verification> {
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
  let keyVersion: number | undefined
  if (key.kind === 'hmac') {
    const matched = await matchHmac(key.versions, signatures, content, crypto)
    if (!matched) return { valid: false, reason: 'signature-mismatch', detail: mismatchDetail(profile, key), timestamp }
    keyVersion = matched.version
    if (matched.standing === 'retired') {
      return { valid: false, reason: 'key-version-retired', detail: `signed with version ${keyVersion} of ${key.keyName}, which is retired`, keyVersion, timestamp }
    }
    if (matched.standing === 'below-minimum') {
      return { valid: false, reason: 'key-version-below-minimum', detail: `signed with version ${keyVersion} of ${key.keyName}, below its min-verify-version`, keyVersion, timestamp }
    }
  } else if (!await matchEd25519(key.publicKey, signatures, content, crypto)) {
    return { valid: false, reason: 'signature-mismatch', detail: mismatchDetail(profile, key), timestamp }
  }

  if (timestamp !== undefined) {
    const age = time.referenceSeconds - timestamp
    if (age > time.toleranceSeconds) {
      return { valid: false, reason: 'timestamp-too-old', detail: `signed ${age} s before the reference time; the tolerance is ${time.toleranceSeconds} s`, keyVersion, timestamp }
    }
    if (-age > time.toleranceSeconds) {
      return { valid: false, reason: 'timestamp-too-new', detail: `signed ${-age} s after the reference time; the tolerance is ${time.toleranceSeconds} s`, keyVersion, timestamp }
    }
  }
  return { valid: true, keyVersion, timestamp, replayToken: profile.replayBy === 'id' ? [Buffer.from(signed.id ?? '', 'utf8')] : content }
}

function mismatchDetail(profile: WebhookProfile, key: WebhookKey): string {
  const under = key.kind === 'hmac' && key.keyName !== undefined ? `any version of ${key.keyName}` : 'the key given'
  return `no signature in ${profile.headers.signature} matches the payload under ${under}: the payload${profile.headers.timestamp ? ', timestamp' : ''}${profile.headers.id ? ' or id' : ''} was changed, or another key signed it`
}
