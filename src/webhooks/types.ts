/**
 * What every webhook profile shares: the headers read into one shape, the keys a signature is
 * checked against, and the reasons a webhook is refused. A profile module (standard-webhooks.ts,
 * github.ts, stripe.ts) only reads its headers, says what bytes were signed and how its secrets
 * are written; verify.ts does the rest the same way for all of them.
 */
import type { KeyObject } from 'node:crypto'

/**
 * Why a webhook is not valid: a fixed set a receiver can branch on (`reason` in the answer). The
 * text is the reference (docs/webhooks.md, the OpenAPI document), never shown with request content.
 */
export const WEBHOOK_REASONS = {
  'missing-header': 'A header the profile needs is absent or empty',
  'malformed-header': 'A header is not in the profile\'s form (a timestamp that is not whole seconds, a signature header with no entry of the profile\'s shape, a header given twice)',
  'unsupported-signature': 'The signature header holds no signature of the kind the key checks (v1 for a secret or named key, v1a for a public key; Stripe\'s v1)',
  'signature-mismatch': 'No signature in the header matches the payload under the key: the body, id or timestamp was changed, or another key signed it',
  'key-version-retired': 'The signature was made with a version of the named key that is retired',
  'key-version-below-minimum': 'The signature was made with a version of the named key below its min-verify-version',
  'timestamp-too-old': 'The signed timestamp is older than the tolerance before the reference time (now, or receivedAt)',
  'timestamp-too-new': 'The signed timestamp is further than the tolerance after the reference time',
  replayed: 'A webhook with this id (or, for profiles without one, this signed content) was already verified, and could still be accepted: it is remembered until then',
} as const

export type WebhookReason = keyof typeof WEBHOOK_REASONS

/** The signature kinds webhook profiles use. */
export type SignatureKind = 'hmac-sha256' | 'ed25519'

/** One signature from a signature header. */
export interface HeaderSignature {
  kind: SignatureKind
  bytes: Buffer
}

/** What a profile read from the headers. */
export interface SignedHeaders {
  /** The webhook's id (Standard Webhooks' webhook-id), signed with the payload. */
  id?: string
  /** Unix seconds, signed with the payload (absent for GitHub, which signs none). */
  timestamp?: number
  /** Every signature entry of a known shape, in header order; may be empty. */
  signatures: HeaderSignature[]
}

export type HeaderReading =
  | { ok: true, headers: SignedHeaders }
  | { ok: false, reason: 'missing-header' | 'malformed-header', detail: string }

/** A profile's header values by lowercase name; `null` for a header given more than once. */
export type HeaderValues = ReadonlyMap<string, string | null>

/** The one thing a profile module knows beyond its data in profiles.ts. */
export interface WebhookProfileModule {
  /** Reads the profile's headers (already looked up case-insensitively). */
  read(values: HeaderValues): HeaderReading
  /** The bytes the sender signed, in pieces (a prefix and the payload, so the payload is not copied). */
  signedContent(headers: SignedHeaders, payload: Buffer): Buffer[]
  /** The HMAC key a secret in the provider's own form stands for, or null when it is not in that form. */
  secretBytes(secret: string): Buffer | null
}

/** A version of an HMAC key, as a key source hands it out. */
export interface HmacKeyVersion {
  /** The version number of a named key; absent for a secret given in the request. */
  version?: number
  /** The HMAC key's bytes; empty for a key hashd does not hold (`inToken`). */
  secret: Buffer
  /** For a version whose secret is in a PKCS#11 token: the HMAC-SHA256 made there (keys/pkcs11/hmac.ts). */
  inToken?: (content: readonly Uint8Array[]) => Promise<Uint8Array>
  /**
   * Whether a signature made with it is accepted: `valid`, or why not (the key ring keeps retired
   * versions and those below min-verify-version, so that the answer can say why).
   */
  standing: 'valid' | 'retired' | 'below-minimum'
  /** A staged version of a named key: it verifies, but signs nothing until it is promoted (docs/keys.md, states). */
  staged?: boolean
}

/** What a webhook is checked against. */
export type WebhookKey =
  | {
    kind: 'hmac', keyName?: string, versions: HmacKeyVersion[],
    /** The named key's current version, which signs first. */
    current?: number,
    /** Separates one key's webhooks from another's in the replay store. */
    scope: Buffer,
  }
  | { kind: 'ed25519', publicKey: KeyObject, scope: Buffer }

/** The outcome of the signature and time checks (replays are the caller's: index.ts). */
export interface Verification {
  valid: boolean
  reason?: WebhookReason
  /** Which part was wrong, in words that quote no request content. */
  detail?: string
  keyVersion?: number
  timestamp?: number
  /** What identifies this delivery for replay protection: the id, or the signed content (in pieces). */
  replayToken?: Buffer[]
}
