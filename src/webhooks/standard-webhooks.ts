/**
 * Standard Webhooks (https://www.standardwebhooks.com, spec/standard-webhooks.md, "Signature
 * scheme" and "Webhook headers"): the sender signs `{webhook-id}.{webhook-timestamp}.{body}` and
 * sends the signatures space-separated in `webhook-signature`, each `<version>,<base64>`: `v1` is
 * HMAC-SHA256 under the secret (`whsec_` + base64 of its bytes), `v1a` is Ed25519 under a key pair
 * (`whpk_` + base64 of the 32-byte public key). Several signatures are how a sender rotates its key
 * without downtime; any one valid is enough. Versions hashd does not know are skipped, as the
 * spec's own libraries do, so a sender may add new kinds.
 */
import { headerText, strictBase64, unixSeconds } from './headers.js'
import type { HeaderReading, HeaderSignature, HeaderValues, SignedHeaders, WebhookProfileModule } from './types.js'

export const SECRET_PREFIX = 'whsec_'
export const PUBLIC_KEY_PREFIX = 'whpk_'
/** More entries than this in one webhook-signature header is not a rotation but an attempt to make the check cost more. */
export const MAX_SIGNATURES = 16

const KINDS = { v1: { kind: 'hmac-sha256', bytes: 32 }, v1a: { kind: 'ed25519', bytes: 64 } } as const

function readSignatures(text: string): { signatures: HeaderSignature[], shaped: number, unreadable: number } {
  const signatures: HeaderSignature[] = []
  let shaped = 0
  let unreadable = 0
  for (const entry of text.split(' ')) {
    const comma = entry.indexOf(',')
    if (comma <= 0) continue
    shaped++
    const version = entry.slice(0, comma)
    if (version !== 'v1' && version !== 'v1a') continue
    const bytes = strictBase64(entry.slice(comma + 1))
    if (bytes === null || bytes.length !== KINDS[version].bytes) {
      unreadable++
      continue
    }
    signatures.push({ kind: KINDS[version].kind, bytes })
  }
  return { signatures, shaped, unreadable }
}

export const standardWebhooks: WebhookProfileModule = {
  read(values: HeaderValues): HeaderReading {
    const id = headerText(values, 'webhook-id')
    if (!id.ok) return id
    const timestampText = headerText(values, 'webhook-timestamp')
    if (!timestampText.ok) return timestampText
    const signatureText = headerText(values, 'webhook-signature')
    if (!signatureText.ok) return signatureText
    const timestamp = unixSeconds(timestampText.text)
    if (timestamp === null) return { ok: false, reason: 'malformed-header', detail: 'webhook-timestamp is not whole Unix seconds' }
    const { signatures, shaped, unreadable } = readSignatures(signatureText.text)
    if (shaped > MAX_SIGNATURES) return { ok: false, reason: 'malformed-header', detail: `webhook-signature holds more than ${MAX_SIGNATURES} signatures` }
    if (shaped === 0) return { ok: false, reason: 'malformed-header', detail: 'webhook-signature holds no "<version>,<base64>" entry' }
    if (signatures.length === 0 && unreadable > 0) {
      return { ok: false, reason: 'malformed-header', detail: 'webhook-signature: a v1 entry is not 32 bytes of base64, or a v1a entry not 64' }
    }
    return { ok: true, headers: { id: id.text, timestamp, signatures } }
  },

  signedContent(headers: SignedHeaders, payload: Buffer): Buffer[] {
    return [Buffer.from(`${headers.id ?? ''}.${headers.timestamp ?? ''}.`), payload]
  },

  /** `whsec_` + base64, or the base64 alone (the spec's libraries take both). */
  secretBytes(secret: string): Buffer | null {
    const text = secret.trim()
    const bytes = strictBase64(text.startsWith(SECRET_PREFIX) ? text.slice(SECRET_PREFIX.length) : text, true)
    return bytes !== null && bytes.length > 0 ? bytes : null
  },
}

/** The webhook-signature entry of one HMAC: `v1,<base64>`. */
export const v1Signature = (mac: Uint8Array): string => `v1,${Buffer.from(mac).toString('base64')}`
