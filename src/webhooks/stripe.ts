/**
 * Stripe (docs.stripe.com, "Verify webhook signatures manually"): `Stripe-Signature:
 * t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=…]`, where each v1 is the HMAC-SHA256 of
 * `{t}.{body}` under the endpoint's signing secret, the whole `whsec_…` text as its UTF-8 bytes
 * (unlike Standard Webhooks, the text is not decoded). Several v1 entries appear while a secret is
 * rolled; v0 (test mode's legacy scheme) and unknown schemes are skipped, as Stripe's libraries do.
 */
import { headerText, strictHex, unixSeconds } from './headers.js'
import type { HeaderReading, HeaderSignature, HeaderValues, SignedHeaders, WebhookProfileModule } from './types.js'

/** More items than this in one Stripe-Signature header is not a roll of secrets. */
export const MAX_ITEMS = 16

export const stripe: WebhookProfileModule = {
  read(values: HeaderValues): HeaderReading {
    const header = headerText(values, 'stripe-signature')
    if (!header.ok) return header
    const items = header.text.split(',')
    if (items.length > MAX_ITEMS + 1) return { ok: false, reason: 'malformed-header', detail: `stripe-signature holds more than ${MAX_ITEMS} signatures` }
    let timestamp: number | null | undefined
    const signatures: HeaderSignature[] = []
    let unreadable = 0
    for (const item of items) {
      const equals = item.indexOf('=')
      const name = item.slice(0, Math.max(equals, 0)).trim()
      const value = item.slice(equals + 1).trim()
      if (name === 't') {
        if (timestamp !== undefined) return { ok: false, reason: 'malformed-header', detail: 'stripe-signature gives t more than once' }
        timestamp = unixSeconds(value)
      } else if (name === 'v1') {
        const bytes = strictHex(value, 32)
        if (bytes === null) unreadable++
        else signatures.push({ kind: 'hmac-sha256', bytes })
      }
    }
    if (timestamp === undefined) return { ok: false, reason: 'malformed-header', detail: 'stripe-signature has no t=<timestamp>' }
    if (timestamp === null) return { ok: false, reason: 'malformed-header', detail: 'stripe-signature\'s t is not whole Unix seconds' }
    if (signatures.length === 0 && unreadable > 0) return { ok: false, reason: 'malformed-header', detail: 'stripe-signature: a v1 entry is not 64 hex digits' }
    return { ok: true, headers: { timestamp, signatures } }
  },

  signedContent(headers: SignedHeaders, payload: Buffer): Buffer[] {
    return [Buffer.from(`${headers.timestamp ?? ''}.`), payload]
  },

  secretBytes(secret: string): Buffer | null {
    return secret.length > 0 ? Buffer.from(secret, 'utf8') : null
  },
}
