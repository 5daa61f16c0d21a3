/**
 * The webhook profiles, as data: the headers each reads, the keys it takes, how its secret is
 * written and what identifies a delivery for replay protection. Everything else (the routes' enums,
 * the document's enums and descriptions) is read from here; a new provider is one entry and one
 * small module (its headers in, the signed bytes out), plus a line in the web page's picker
 * (web/src/tabs/webhook.tsx, which speaks only the public API) and docs/webhooks.md.
 */
import { github } from './github.js'
import { standardWebhooks } from './standard-webhooks.js'
import { stripe } from './stripe.js'
import type { WebhookProfileModule } from './types.js'

export interface WebhookProfile {
  name: string
  title: string
  /** Where the scheme is defined. */
  reference: string
  /** The headers it reads, lowercase: the signature's, and the signed timestamp's and id's where it has them. */
  headers: { signature: string, timestamp?: string, id?: string }
  /** Which keys it verifies with: a secret (or named key) for HMAC, a public key for Ed25519. */
  keys: ReadonlyArray<'secret' | 'publicKey'>
  /** How the provider hands out the secret, and what hashd makes of it. */
  secretForm: string
  /** What replay protection remembers: the signed id, or (without one) the signed content. */
  replayBy: 'id' | 'signed-content'
  module: WebhookProfileModule
}

export const WEBHOOK_PROFILES: readonly WebhookProfile[] = [
  {
    name: 'standard-webhooks',
    title: 'Standard Webhooks',
    reference: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
    headers: { signature: 'webhook-signature', timestamp: 'webhook-timestamp', id: 'webhook-id' },
    keys: ['secret', 'publicKey'],
    secretForm: '`whsec_` followed by base64 (or the base64 alone): the HMAC key is the decoded bytes. A public key is `whpk_` followed by the base64 of the 32-byte Ed25519 key, or a PEM public key',
    replayBy: 'id',
    module: standardWebhooks,
  },
  {
    name: 'github',
    title: 'GitHub',
    reference: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
    headers: { signature: 'x-hub-signature-256' },
    keys: ['secret'],
    secretForm: 'the text typed into the webhook\'s settings: the HMAC key is its UTF-8 bytes',
    replayBy: 'signed-content',
    module: github,
  },
  {
    name: 'stripe',
    title: 'Stripe',
    reference: 'https://docs.stripe.com/webhooks#verify-manually',
    headers: { signature: 'stripe-signature' },
    keys: ['secret'],
    secretForm: 'the endpoint\'s signing secret `whsec_…` as a whole: the HMAC key is its UTF-8 bytes (not decoded)',
    replayBy: 'signed-content',
    module: stripe,
  },
]

export const WEBHOOK_PROFILE_NAMES = WEBHOOK_PROFILES.map((profile) => profile.name)

export function webhookProfile(name: string): WebhookProfile | undefined {
  return WEBHOOK_PROFILES.find((profile) => profile.name === name)
}

/** The header names a profile reads. */
export const headerNames = (profile: WebhookProfile): string[] =>
  [profile.headers.id, profile.headers.timestamp, profile.headers.signature].filter((name): name is string => name !== undefined)
