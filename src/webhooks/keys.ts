/**
 * The key a webhook is checked with, from one of three places: a named key of the key ring
 * (`keyName`: every version that may verify, and those that may not, so the answer can say why),
 * a secret in the provider's own form (`secret`), or an Ed25519 public key (`publicKey`). The ring
 * is reached only through `NamedKeySource`, so this room never reads a keys file itself.
 */
import { createPublicKey, type KeyObject } from 'node:crypto'
import { problems } from '../problem.js'
import { strictBase64 } from './headers.js'
import type { WebhookProfile } from './profiles.js'
import { PUBLIC_KEY_PREFIX } from './standard-webhooks.js'
import type { HmacKeyVersion, WebhookKey } from './types.js'

/** A named key as the ring holds it: its versions (each with its standing) and the current one, which signs. */
export interface NamedKey {
  name: string
  current: number
  versions: HmacKeyVersion[]
}

/**
 * The seam to the key ring: a named key, or undefined when no key has that name. A source may also
 * refuse with a problem of its own (the caller's API key may not use the name, the key does not
 * allow HMAC-SHA256), and is told which versions were used, for the audit (webhooks/ring.ts).
 */
export interface NamedKeySource {
  namedKey(name: string): NamedKey | undefined
  /** A version of the key verified (or signed) a webhook; `undefined`: a verification that matched no version. */
  used?(name: string, version: number | undefined, operation: 'verify' | 'sign'): void
}

/** The source while no named keys are configured. */
export const noNamedKeys: NamedKeySource = { namedKey: () => undefined }

export interface KeyChoice {
  keyName?: string
  secret?: string
  publicKey?: string
}

const PEM_PUBLIC_KEY = '-----BEGIN PUBLIC KEY-----'

/** The name is not echoed: a secret pasted into keyName by mistake must not come back in a problem or a log. */
export function unknownKey() {
  return problems.unprocessable('unknown-key', 'Unknown key', 'keyName names no key of this server; GET /api/keys lists the keys you may use',
    { errors: [{ pointer: '/body/keyName', message: 'unknown key' }] })
}

/** Exactly one of the fields, or a 400 naming them. */
export function exactlyOne(body: Record<string, unknown>, fields: readonly string[]): string {
  // Counted first without an array: every request asks, and nearly all give exactly one.
  let count = 0
  let only = ''
  for (const field of fields) {
    if (body[field] !== undefined) {
      count++
      only = field
    }
  }
  if (count === 1) return only
  const given = fields.filter((field) => body[field] !== undefined)
  const list = fields.join(', ')
  throw problems.validation(given.length === 0 ? `Give one of ${list}` : `Give only one of ${list}, not ${given.join(' and ')}`,
    (given.length === 0 ? fields : given).map((field) => ({ pointer: `/body/${field}`, message: given.length === 0 ? 'one of these is required' : 'only one of these may be given' })))
}

/** A public key as Standard Webhooks writes it (`whpk_` + base64, or the base64 alone) or as PEM. */
function readPublicKey(text: string): KeyObject {
  const trimmed = text.trim()
  let key: KeyObject | undefined
  try {
    if (trimmed.startsWith(PEM_PUBLIC_KEY)) {
      key = createPublicKey(trimmed)
    } else {
      const raw = strictBase64(trimmed.startsWith(PUBLIC_KEY_PREFIX) ? trimmed.slice(PUBLIC_KEY_PREFIX.length) : trimmed, true)
      if (raw?.length === 32) key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
    }
  } catch {
    key = undefined
  }
  if (key?.asymmetricKeyType !== 'ed25519') {
    throw problems.validation('publicKey is not an Ed25519 public key: whpk_ followed by the base64 of 32 bytes, or a PEM public key',
      [{ pointer: '/body/publicKey', message: 'not an Ed25519 public key' }])
  }
  return key
}

/** What keeps one key's webhooks apart from another's in the replay store; replay.ts hashes it into the store key, so no secret is stored. */
const scopeOf = (kind: string, material: Uint8Array): Buffer => Buffer.concat([Buffer.from(`${kind}:`), material])

/** The key fields a request may give, by whether the profile takes a public key. */
const WITH_PUBLIC_KEY: readonly string[] = ['keyName', 'secret', 'publicKey']
const HMAC_ONLY: readonly string[] = ['keyName', 'secret']

export function resolveKey(profile: WebhookProfile, choice: KeyChoice, source: NamedKeySource, purpose: 'verify' | 'sign' = 'verify'): WebhookKey {
  const fields = purpose === 'verify' && profile.keys.includes('publicKey') ? WITH_PUBLIC_KEY : HMAC_ONLY
  if (choice.publicKey !== undefined && !fields.includes('publicKey')) {
    throw problems.validation(purpose === 'sign'
      ? 'hashd signs with HMAC only (v1): give keyName or secret'
      : `${profile.name} signs with HMAC only: give keyName or secret`, [{ pointer: '/body/publicKey', message: 'not taken by this profile' }])
  }
  const field = exactlyOne(choice as Record<string, unknown>, fields)
  if (field === 'publicKey') {
    const publicKey = readPublicKey(choice.publicKey as string)
    return { kind: 'ed25519', publicKey, scope: scopeOf('ed25519', publicKey.export({ format: 'der', type: 'spki' })) }
  }
  if (field === 'secret') {
    const secret = profile.module.secretBytes(choice.secret as string)
    if (secret === null) {
      throw problems.validation(`secret is not in the form ${profile.title} hands out: ${profile.secretForm}`, [{ pointer: '/body/secret', message: 'not in the provider\'s form' }])
    }
    return { kind: 'hmac', versions: [{ secret, standing: 'valid' }], scope: scopeOf('secret', secret) }
  }
  const name = choice.keyName as string
  const named = source.namedKey(name)
  if (!named) throw unknownKey()
  return { kind: 'hmac', keyName: named.name, versions: named.versions, current: named.current, scope: Buffer.from(`name:${named.name}`) }
}
