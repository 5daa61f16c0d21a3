/**
 * GitHub (docs.github.com, "Validating webhook deliveries"): `X-Hub-Signature-256: sha256=<hex>`,
 * the HMAC-SHA256 of the body under the webhook's secret, the secret being the text as typed in
 * the webhook's settings (its UTF-8 bytes). GitHub signs no timestamp and no id: replay protection
 * goes by the signed body, and an old delivery cannot be told from a new one. The legacy SHA-1
 * `X-Hub-Signature` is not read.
 */
import { headerText, strictHex } from './headers.js'
import type { HeaderReading, HeaderValues, SignedHeaders, WebhookProfileModule } from './types.js'

const PREFIX = 'sha256='

export const github: WebhookProfileModule = {
  read(values: HeaderValues): HeaderReading {
    const header = headerText(values, 'x-hub-signature-256')
    if (!header.ok) return header
    const bytes = header.text.startsWith(PREFIX) ? strictHex(header.text.slice(PREFIX.length), 32) : null
    if (bytes === null) return { ok: false, reason: 'malformed-header', detail: 'x-hub-signature-256 is not "sha256=" and 64 hex digits' }
    return { ok: true, headers: { signatures: [{ kind: 'hmac-sha256', bytes }] } }
  },

  signedContent(_headers: SignedHeaders, payload: Buffer): Buffer[] {
    return [payload]
  },

  secretBytes(secret: string): Buffer | null {
    return secret.length > 0 ? Buffer.from(secret, 'utf8') : null
  },
}
