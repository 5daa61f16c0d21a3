/**
 * POST /api/webhooks/verify and POST /api/webhooks/sign: thin routes over src/webhooks/. The
 * request is JSON that carries the webhook's body as its exact bytes (`payload` as text or
 * `payloadBase64`) and the headers as the receiver got them.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Engine } from '../domain/engine.js'
import {
  DEFAULT_TOLERANCE_SECONDS, engineCrypto, MAX_TOLERANCE_SECONDS, noNamedKeys, ringKeySource, signWebhook, verifyWebhook,
  WEBHOOK_PROFILES, WEBHOOK_REASONS, type NamedKeySource, type WebhookServices,
} from '../webhooks/index.js'
import { auditKeyed } from '../plugins/audit.js'
import { documentedAs, errorResponsesWith } from './schemas.js'

const Payload = Type.Optional(Type.String({ description: 'The webhook\'s body as text (its UTF-8 bytes are what was signed). Give this or payloadBase64; never logged' }))
/**
 * Canonical base64 (RFC 4648 §4) with its padding whole or left out, as webhooks/headers.ts
 * strictBase64 reads it: the last character of a partial group carries no stray bits. For the
 * document; the server decodes and compares.
 */
const CANONICAL_BASE64 = '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw](?:==)?|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=?)?$'
const PayloadBase64 = Type.Optional(documentedAs(Type.String({ description: 'The webhook\'s body as base64 (padding optional), for bodies that are not UTF-8 text or whose bytes must not pass through a JSON string; never logged' }), { pattern: CANONICAL_BASE64 }))

/** Exactly one of `fields`, for the document (the server says which are at fault: webhooks/index.ts exactlyOne). */
const exactlyOne = (...fields: string[]) => ({ oneOf: fields.map((field) => ({ required: [field] })) })
const KeyName = Type.Optional(Type.String({
  minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  description: 'A named key of the key ring kept for webhooks (HMAC_KEYS_FILE, purpose=webhooks; GET /api/keys lists them), whose versions\' raw secret bytes are the HMAC-SHA256 key, ' +
    'as Standard Webhooks uses the bytes of whsec_<base64>. Verify tries every version and says which matched; sign uses the current one. ' +
    'A name outside the API key\'s hmac-keys= is 403 insufficient-scope (scope hmac-keys, never the name); a key of another purpose is 422 key-purpose',
}))
const HeaderValue = Type.String({ maxLength: 16_384 })

const profileList = WEBHOOK_PROFILES.map((profile) => `\`${profile.name}\` (${[profile.headers.id, profile.headers.timestamp, profile.headers.signature].filter(Boolean).join(', ')})`).join('; ')

const VerifyBody = Type.Object({
  profile: Type.Unsafe<string>({ type: 'string', enum: WEBHOOK_PROFILES.map((profile) => profile.name), description: `The sender's scheme: ${profileList}` }),
  payload: Payload,
  payloadBase64: PayloadBase64,
  // Any names (no pattern over them): a schema of additionalProperties, not a TypeBox Record.
  headers: Type.Unsafe<Record<string, string | string[]>>({
    type: 'object',
    additionalProperties: Type.Union([HeaderValue, Type.Array(HeaderValue, { maxItems: 64 })]),
    maxProperties: 256,
    description: 'The request\'s headers as received, names in any case (all of them may be forwarded; only the profile\'s are read). ' +
      'A value may be an array, as Node gives repeated headers; a header the profile reads must have one value. Never logged',
  }),
  keyName: KeyName,
  secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The secret in the provider\'s own form: whsec_… for Standard Webhooks, the text as set for GitHub, the whole whsec_… signing secret for Stripe. Never logged' })),
  publicKey: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'standard-webhooks v1a: the sender\'s Ed25519 public key, whpk_… or PEM' })),
  toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOLERANCE_SECONDS, description: `How far the signed timestamp may be from the reference time, either way; ${DEFAULT_TOLERANCE_SECONDS} when absent. ` +
    'A verified webhook is remembered until its timestamp plus this tolerance plus WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS has passed; keep one tolerance for one sender' })),
  receivedAt: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999_999, description: 'Unix seconds when the webhook reached the receiver, for one read later from a queue: the timestamp is checked against it instead of now. ' +
    'When the webhook is to be remembered, at most WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS (300 by default) before now' })),
  remember: Type.Optional(Type.Boolean({ description: 'false: look for a replay without remembering this webhook (to check one by hand without spending its id); true when absent' })),
}, { additionalProperties: false, description: 'Exactly one of payload and payloadBase64; exactly one of keyName, secret and publicKey' })
documentedAs(VerifyBody, { allOf: [exactlyOne('payload', 'payloadBase64'), exactlyOne('keyName', 'secret', 'publicKey')] })

const Reason = Type.Unsafe<string>({
  type: 'string', enum: Object.keys(WEBHOOK_REASONS),
  description: `Why the webhook is not valid: ${Object.entries(WEBHOOK_REASONS).map(([reason, text]) => `\`${reason}\`: ${text}`).join('; ')}`,
})

const VerifyAnswer = Type.Object({
  valid: Type.Boolean({ description: 'true only when a signature matches, the timestamp is within the tolerance and the webhook was not seen before' }),
  reason: Type.Optional(Reason),
  detail: Type.Optional(Type.String({ description: 'The reason in words; it quotes no header, payload or key' })),
  keyName: Type.Optional(Type.String({ description: 'The named key given' })),
  keyVersion: Type.Optional(Type.Integer({ description: 'The version of the named key whose signature matched' })),
  timestamp: Type.Optional(Type.Integer({ description: 'The signed timestamp, Unix seconds (profiles that sign one)' })),
  replayed: Type.Boolean({ description: 'true when this webhook was already verified within the replay window' }),
})

const SignBody = Type.Object({
  payload: Payload,
  payloadBase64: PayloadBase64,
  keyName: KeyName,
  secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'A Standard Webhooks secret, whsec_ followed by base64. Never logged' })),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: '^[\\x21-\\x2d\\x2f-\\x7e]+$', description: 'The webhook id (printable ASCII without spaces or "."); msg_ and 22 random characters when absent. Keep it when delivering the same event again' })),
  timestamp: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999_999, description: 'Unix seconds of this delivery attempt; now when absent' })),
}, { additionalProperties: false, description: 'Exactly one of payload and payloadBase64; exactly one of keyName and secret' })
documentedAs(SignBody, { allOf: [exactlyOne('payload', 'payloadBase64'), exactlyOne('keyName', 'secret')] })

const SignAnswer = Type.Object({
  headers: Type.Object({
    'webhook-id': Type.String(),
    'webhook-timestamp': Type.String(),
    'webhook-signature': Type.String({ description: 'v1,<base64> entries separated by spaces: the current version\'s first, then those of other versions that still verify' }),
  }, { description: 'The headers to send with the body' }),
  keyName: Type.Optional(Type.String()),
  keyVersion: Type.Optional(Type.Integer({ description: 'The current version of the named key, whose signature is first' })),
})

/**
 * `keys`: where keyName is looked up; the key ring by default, read at each request (so a reload of
 * HMAC_KEYS_FILE applies at once) within the request's API key's hmac-keys= (webhooks/ring.ts).
 */
/** What the audit log keeps of a webhook with a named key: its payload, as its HMAC under the audit key (as given: text or base64). */
function auditedPayload(body: { payload?: string, payloadBase64?: string }): Record<string, string> {
  return body.payload !== undefined ? { payload: body.payload } : body.payloadBase64 !== undefined ? { payloadBase64: body.payloadBase64 } : {}
}

export const webhooksRoute: FastifyPluginAsyncTypebox<{ engine: Engine, config: Config, keys?: NamedKeySource }> = async (app, { engine, config, keys }) => {
  const shared = { replays: app.replayStore, crypto: engineCrypto(engine), receivedAtMaxAgeSeconds: config.webhookReceivedAtMaxAgeSeconds }
  // The key ring is consulted only for a keyName: a request with a secret or a public key gets
  // services made once, rather than a key context and a key source of its own.
  const withoutKeyName: WebhookServices = { ...shared, keys: keys ?? noNamedKeys }
  const services = (request: FastifyRequest, keyName: string | undefined): WebhookServices =>
    keyName === undefined ? withoutKeyName : { ...shared, keys: keys ?? ringKeySource(app.keyContext(request)) }

  // Not async: a small webhook with the replay store in memory is answered on this tick, no promise made (webhooks/index.ts).
  app.post('/api/webhooks/verify', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['webhooks'],
      summary: 'Verify a webhook\'s signature, timestamp and freshness (Standard Webhooks, GitHub, Stripe)',
      description: 'A receiver forwards the body and headers it got. The answer is 200 whether or not the webhook is valid: `valid` and `reason` say. ' +
        'A webhook with a valid signature is remembered (the rate-limit store: memory, or Redis shared by every instance) and a second one with the same id, ' +
        'or for profiles without an id the same signed content, is `replayed` for as long as the first could still pass the time rule. ' +
        'When Redis cannot be reached, or the store (or this client\'s share of it) is full, a webhook whose signature is valid gets 503 ' +
        '(urn:hashd:problem:replay-store-unavailable or replay-store-full, with Retry-After) rather than an answer that could let a replay through.',
      body: VerifyBody,
      response: {
        200: VerifyAnswer,
        ...errorResponsesWith({
          400: 'not exactly one of payload/payloadBase64 or of keyName/secret/publicKey, a payloadBase64 that is not base64, a secret not in the provider\'s form, ' +
            'a publicKey that is not an Ed25519 key or given to a profile without one, a receivedAt later than now by more than the tolerance, ' +
            'or (unless remember is false) earlier than now by more than WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS',
          422: 'a keyName without HMAC keys (no-hmac-keys), that no key has (unknown-key, the name not echoed), of a key not written purpose=webhooks (key-purpose, the name not echoed), or whose key\'s algorithms= leaves out sha256 (algorithm-not-allowed-for-key)',
          503: 'with keyName, AUDIT_FAIL=closed and the audit log cannot be written (urn:hashd:problem:audit-unavailable); ' +
            'for a webhook whose signature and time are valid: the replay store cannot be reached (urn:hashd:problem:replay-store-unavailable) or is full ' +
            '(urn:hashd:problem:replay-store-full: WEBHOOK_REPLAY_MEMORY_MAX or Redis\'s maxmemory reached, or this client\'s share, WEBHOOK_REPLAY_CALLER_MAX); ' +
            'nothing was remembered, and the sender\'s next delivery is checked afresh',
        }),
      },
    },
  }, (request) => {
    const run = () => verifyWebhook(request.body, services(request, request.body.keyName), app.clientBucket(request))
    if (request.body.keyName === undefined || app.audit === null) return run()
    return auditKeyed(app, request, { operation: 'webhooks.verify', inputs: auditedPayload(request.body) }, run, (result) => result.valid ? 'valid' : 'invalid')
  })

  app.post('/api/webhooks/sign', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['webhooks'],
      summary: 'Sign a webhook the Standard Webhooks way (v1, HMAC-SHA256), for senders',
      description: 'Returns the webhook-id, webhook-timestamp and webhook-signature headers to send with the body. ' +
        'With a named key, every version that still verifies signs, the current one first, so receivers holding any of them accept it during a rotation.',
      body: SignBody,
      response: {
        200: SignAnswer,
        ...errorResponsesWith({
          400: 'not exactly one of payload/payloadBase64 or of keyName/secret, a payloadBase64 that is not base64, a secret that is not whsec_ and base64',
          422: 'a keyName without HMAC keys (no-hmac-keys), that no key has (unknown-key, the name not echoed), of a key not written purpose=webhooks (key-purpose, the name not echoed), or whose key\'s algorithms= leaves out sha256 (algorithm-not-allowed-for-key)',
          503: 'with keyName, AUDIT_FAIL=closed and the audit log cannot be written (urn:hashd:problem:audit-unavailable)',
        }),
      },
    },
  }, async (request) => {
    const run = () => signWebhook(request.body, services(request, request.body.keyName))
    if (request.body.keyName === undefined || app.audit === null) return run()
    return auditKeyed(app, request, { operation: 'webhooks.sign', inputs: auditedPayload(request.body) }, run)
  })
}
