/**
 * POST /api/webhooks/verify and /api/webhooks/sign as domain operations: the request's payload and
 * key are read, the profile's verification runs behind its seam (verify.ts), and a valid webhook
 * is checked against the replay store. Nothing here logs: the payload, the headers and the key stay
 * in the request's own objects, and answers and problems quote none of them.
 */
import { randomBytes, verify as cryptoVerify } from 'node:crypto'
import type { Engine } from '../domain/engine.js'
import { andThen, type MaybePromise } from '../domain/maybe-async.js'
import { Problem, problems } from '../problem.js'
import { strictBase64 } from './headers.js'
import type { ForwardedHeaders } from './headers.js'
import { exactlyOne, resolveKey, type KeyChoice, type NamedKeySource } from './keys.js'
import { webhookProfile, WEBHOOK_PROFILE_NAMES, type WebhookProfile } from './profiles.js'
import { replayKey, ReplayStoreFull, ReplayStoreUnavailable, type ReplayStore } from './replay.js'
import { v1Signature } from './standard-webhooks.js'
import type { HmacKeyVersion, Verification, WebhookKey, WebhookReason } from './types.js'
import { ed25519Inline, hmacInline, inlineCrypto, verify, type WebhookCrypto } from './verify.js'

export { WEBHOOK_PROFILES, WEBHOOK_PROFILE_NAMES, webhookProfile } from './profiles.js'
export { WEBHOOK_REASONS, type WebhookReason } from './types.js'
export { MemoryReplayStore, ReplayStoreFull, ReplayStoreUnavailable, type ReplayLimit, type ReplayStore, type ReplayStoreState } from './replay.js'
export { noNamedKeys, type NamedKey, type NamedKeySource } from './keys.js'
export { ringKeySource } from './ring.js'
export { inlineCrypto, type WebhookCrypto } from './verify.js'

/** The timestamp tolerance without `toleranceSeconds`: five minutes, as Standard Webhooks' and Stripe's libraries. */
export const DEFAULT_TOLERANCE_SECONDS = 300
/** The largest `toleranceSeconds`: a day. */
export const MAX_TOLERANCE_SECONDS = 86_400
/** How far behind the clock `receivedAt` may be when the webhook is remembered, without WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS. */
export const DEFAULT_RECEIVED_AT_MAX_AGE_SECONDS = 300

export interface WebhookServices {
  keys: NamedKeySource
  replays: ReplayStore
  crypto?: WebhookCrypto
  /** Milliseconds since the epoch (tests move the clock). */
  now?: () => number
  /**
   * How far behind now a `receivedAt` may be when the webhook is to be remembered
   * (WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS); DEFAULT_RECEIVED_AT_MAX_AGE_SECONDS when absent.
   */
  receivedAtMaxAgeSeconds?: number
}

export interface PayloadChoice {
  payload?: string
  payloadBase64?: string
}

export interface VerifyWebhookRequest extends PayloadChoice, KeyChoice {
  profile: string
  headers: ForwardedHeaders
  toleranceSeconds?: number
  receivedAt?: number
  remember?: boolean
}

export interface VerifyWebhookAnswer {
  valid: boolean
  reason?: WebhookReason
  detail?: string
  keyName?: string
  keyVersion?: number
  timestamp?: number
  replayed: boolean
}

export interface SignWebhookRequest extends PayloadChoice {
  keyName?: string
  secret?: string
  id?: string
  timestamp?: number
}

export interface SignWebhookAnswer {
  headers: { 'webhook-id': string, 'webhook-timestamp': string, 'webhook-signature': string }
  keyName?: string
  keyVersion?: number
}

const PAYLOAD_FIELDS: readonly string[] = ['payload', 'payloadBase64']

/** The payload's exact bytes: `payload` as UTF-8 text, or `payloadBase64` for any bytes. */
export function payloadBytes(choice: PayloadChoice): Buffer {
  const field = exactlyOne(choice as Record<string, unknown>, PAYLOAD_FIELDS)
  if (field === 'payload') return Buffer.from(choice.payload as string, 'utf8')
  const bytes = strictBase64(choice.payloadBase64 as string, true)
  if (bytes === null) throw problems.invalidEncoding('payloadBase64', 'base64')
  return bytes
}

function profileNamed(name: string): WebhookProfile {
  const profile = webhookProfile(name)
  // The schema's enum refuses other names first; this is for callers of the domain function.
  if (!profile) throw problems.validation(`profile must be one of ${WEBHOOK_PROFILE_NAMES.join(', ')}`, [{ pointer: '/body/profile', message: 'unknown profile' }])
  return profile
}

export const replayStoreUnavailable = () => new Problem(503, 'urn:hashd:problem:replay-store-unavailable', 'Replay store unavailable',
  'The signature is valid, but the replay store (Redis) cannot be reached to check that this webhook was not seen before; ' +
  'answer the sender with a 5xx so that it delivers again, and hashd will check it then', { headers: { 'retry-after': '1' } })

export const replayStoreFull = (full: ReplayStoreFull) => new Problem(503, 'urn:hashd:problem:replay-store-full', 'Replay store full',
  `The signature is valid, but ${full.limit === 'caller'
    ? 'this client already has as many webhooks remembered as its share of the replay store allows (WEBHOOK_REPLAY_CALLER_MAX)'
    : `the replay store is full (${full.storeBound})`}, and hashd does not forget a webhook that could still be accepted; ` +
  'answer the sender with a 5xx so that it delivers again, and hashd will check it then', { headers: { 'retry-after': String(full.retryAfterSeconds) } })

/**
 * Until when (milliseconds, this server's clock) a verified webhook must be remembered: until no
 * request for it could pass the time rule again, so that a replay is refused for as long as the
 * original could be accepted. A request passes while its reference (receivedAt, or now) is at most
 * the tolerance after the signed timestamp; a remembering request's receivedAt may be at most
 * `receivedAtMaxAgeSeconds` behind now, so the last second at which any such request can pass is
 * timestamp + tolerance + that age. Whole seconds, as the rule compares them (the second ends one
 * millisecond before the next). This covers every later request with the same tolerance or a
 * smaller one; a receiver keeps one tolerance per sender (docs/webhooks.md).
 *
 * A profile that signs no time (GitHub) can always be accepted, at any time: it is remembered as
 * if signed when it was received (its reference time).
 */
function rememberUntil(timestamp: number | undefined, referenceSeconds: number, toleranceSeconds: number, receivedAtMaxAgeSeconds: number): number {
  return ((timestamp ?? referenceSeconds) + toleranceSeconds + receivedAtMaxAgeSeconds + 1) * 1000
}

/**
 * Synchronous when the HMAC runs on the event loop (a payload under INLINE_DIGEST_MAX_BYTES) and
 * the replay store is this process's memory: the common request then makes no promise. A payload
 * hashed on the pool, an Ed25519 check above that size, or a replay check in Redis makes it a promise.
 *
 * `caller` names whose share of the replay store a remembered webhook counts against (the rate
 * limit's bucket: an API key, or a client address).
 */
export function verifyWebhook(request: VerifyWebhookRequest, services: WebhookServices, caller = ''): MaybePromise<VerifyWebhookAnswer> {
  const profile = profileNamed(request.profile)
  const payload = payloadBytes(request)
  const key = resolveKey(profile, request, services.keys)
  const now = services.now?.() ?? Date.now()
  const nowSeconds = Math.floor(now / 1000)
  const toleranceSeconds = request.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const maxAgeSeconds = services.receivedAtMaxAgeSeconds ?? DEFAULT_RECEIVED_AT_MAX_AGE_SECONDS
  if (request.receivedAt !== undefined && request.receivedAt > nowSeconds + toleranceSeconds) {
    throw problems.validation('receivedAt is later than now by more than the tolerance: it must be when the webhook was received, in Unix seconds',
      [{ pointer: '/body/receivedAt', message: 'in the future' }])
  }
  // A receivedAt may be chosen freely, and with it any old webhook would pass the time rule at any
  // time: remembered webhooks could then never be forgotten. So a webhook to be remembered may
  // have been received at most WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS ago; a look (remember: false)
  // spends nothing, and may check a webhook of any age (a published vector, an event kept for years).
  if (request.receivedAt !== undefined && (request.remember ?? true) && request.receivedAt < nowSeconds - maxAgeSeconds) {
    throw problems.validation(`receivedAt is more than ${maxAgeSeconds} s before now (WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS): hashd remembers a webhook only for as long as ` +
      'such a receivedAt could let it pass again; verify it sooner after it arrives, ask the operator for a longer age, or check it with remember: false',
    [{ pointer: '/body/receivedAt', message: 'too far in the past to remember' }])
  }
  const referenceSeconds = request.receivedAt ?? nowSeconds
  const verification = verify(profile, payload, request.headers, key, { toleranceSeconds, referenceSeconds }, services.crypto ?? inlineCrypto)
  return andThen(verification, (verified) => judged(verified, profile, key, request,
    rememberUntil(verified.timestamp, referenceSeconds, toleranceSeconds, maxAgeSeconds), caller, services))
}

/** The answer to a verification: refused as it stands, or checked against the replay store. */
function judged(verification: Verification, profile: WebhookProfile, key: WebhookKey, request: VerifyWebhookRequest, expiresAtMs: number,
  caller: string, services: WebhookServices): MaybePromise<VerifyWebhookAnswer> {
  const keyName = key.kind === 'hmac' ? key.keyName : undefined
  if (keyName !== undefined) noteUse(services.keys, keyName, verification)
  if (!verification.valid || verification.replayToken === undefined) {
    return answerOf(false, verification.reason, verification.detail, keyName, verification, false)
  }
  const storeKey = replayKey(profile.name, key.scope, verification.replayToken)
  const fresh = (replayed: boolean): VerifyWebhookAnswer => replayed
    ? answerOf(false, 'replayed', `a webhook with this ${profile.replayBy === 'id' ? 'id' : 'signed content'} was already verified, and is remembered while it could be accepted again`,
      keyName, verification, true)
    : answerOf(true, undefined, undefined, keyName, verification, false)
  let seen: MaybePromise<boolean>
  try {
    seen = services.replays.seen(storeKey, expiresAtMs, request.remember ?? true, caller)
  } catch (error) {
    throw storeProblem(error)
  }
  return seen instanceof Promise ? seen.then(fresh, (error: unknown) => { throw storeProblem(error) }) : fresh(seen)
}

/** The answer, the fields without a value left out (the route's serializer writes them in the schema's order, `valid` and `replayed` first). */
function answerOf(valid: boolean, reason: WebhookReason | undefined, detail: string | undefined, keyName: string | undefined,
  verification: Verification, replayed: boolean): VerifyWebhookAnswer {
  const answer = { valid } as VerifyWebhookAnswer
  if (reason !== undefined) answer.reason = reason
  if (detail !== undefined) answer.detail = detail
  if (keyName !== undefined) answer.keyName = keyName
  if (verification.keyVersion !== undefined) answer.keyVersion = verification.keyVersion
  if (verification.timestamp !== undefined) answer.timestamp = verification.timestamp
  answer.replayed = replayed
  return answer
}

/** A replay store that cannot answer, or is full, is a 503 (fail closed); anything else is the error it was. */
function storeProblem(error: unknown): unknown {
  if (error instanceof ReplayStoreUnavailable) return replayStoreUnavailable()
  if (error instanceof ReplayStoreFull) return replayStoreFull(error)
  return error
}

/**
 * The audit of a named key's use: the version whose signature matched (valid or not: a retired
 * version still in use is what an operator needs to see), or none for a signature that matched no
 * version. A webhook refused before any signature was compared used no key.
 */
function noteUse(source: NamedKeySource, name: string, verification: Verification): void {
  if (verification.keyVersion !== undefined) source.used?.(name, verification.keyVersion, 'verify')
  else if (verification.reason === 'signature-mismatch') source.used?.(name, undefined, 'verify')
}

/** A new webhook id: `msg_` and 128 random bits, the shape Standard Webhooks' examples use. */
const newWebhookId = (): string => `msg_${randomBytes(16).toString('base64url')}`

export async function signWebhook(request: SignWebhookRequest, services: WebhookServices): Promise<SignWebhookAnswer> {
  const profile = profileNamed('standard-webhooks')
  const payload = payloadBytes(request)
  const key = resolveKey(profile, request, services.keys, 'sign')
  if (key.kind !== 'hmac') throw new Error('signing takes an HMAC key')
  const id = request.id ?? newWebhookId()
  const timestamp = request.timestamp ?? Math.floor((services.now?.() ?? Date.now()) / 1000)
  const content = profile.module.signedContent({ id, timestamp, signatures: [] }, payload)
  const crypto = services.crypto ?? inlineCrypto
  // The current version signs first; previous versions that still verify sign too, so a receiver
  // holding either secret accepts it during a rotation (the spec's "Webhook headers" section). A
  // staged version signs nothing: staging is for every verifier to learn a version before it is used.
  const signing = key.keyName === undefined ? key.versions : signingVersions(key.versions, key.current)
  const signatures: string[] = []
  for (const version of signing) signatures.push(v1Signature(await (version.inToken ? version.inToken(content) : crypto.hmacSha256(version.secret, content))))
  if (key.keyName !== undefined) for (const version of signing) services.keys.used?.(key.keyName, version.version, 'sign')
  const current = signing[0]?.version
  return {
    headers: { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') },
    ...(key.keyName !== undefined ? { keyName: key.keyName } : {}),
    ...(current !== undefined ? { keyVersion: current } : {}),
  }
}

function signingVersions(versions: HmacKeyVersion[], current: number | undefined): HmacKeyVersion[] {
  const first = versions.filter((version) => version.version === current)
  return [...first, ...versions.filter((version) => version.version !== current && version.standing === 'valid' && version.staged !== true)]
}

/**
 * The engine's HMAC (inline for small payloads, on the pool above INLINE_DIGEST_MAX_BYTES, as
 * /api/hmac) and Ed25519 on libuv's threads above the same size, so a large payload never holds
 * the event loop.
 */
export function engineCrypto(engine: Engine): WebhookCrypto {
  const inlineMax = engine.config.inlineDigestMaxBytes
  const size = (content: readonly Uint8Array[]) => content.reduce((total, piece) => total + piece.length, 0)
  return {
    hmacSha256: (key, content) => size(content) < inlineMax
      ? hmacInline(key, content)
      : engine.run<Uint8Array>({ op: 'hmac', algorithm: 'sha256', key, message: Buffer.concat(content) }).then(({ value }) => value),
    ed25519Verify: (content, signature, key) => {
      if (content.length < inlineMax) return ed25519Inline(content, signature, key)
      return new Promise((resolve) => {
        try {
          cryptoVerify(null, content, key, signature, (error, valid) => resolve(error === null && valid))
        } catch {
          resolve(false)
        }
      })
    },
  }
}
