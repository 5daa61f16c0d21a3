/**
 * /api/hmac and /api/hmac/verify: HMAC (RFC 2104) of a message, under a key the caller sends
 * (`key`) or one the server holds (`keyName`, from HMAC_KEYS_FILE: src/keys/hmac.ts), over any
 * digest with a block size.
 *
 * With a named key the answer names the key and version; `format: "tagged"` writes the HMAC as
 * `hashd:v<version>:<base64>`, after Vault Transit's `vault:v<version>:` prefix, so that a verify
 * needs no version. The key's name is not in the tag, as in Vault, where it is in the path: the
 * request names it, a stored tag does not change when a key is renamed, and a tag read without
 * the request says nothing about which key to try.
 *
 * Verifying compares in constant time. Under a version older than the current one a valid HMAC
 * has `rotateRecommended`; under a retired version, or one below the key's min-verify-version, it
 * is not valid and `reason` says why; a version the file does not have is a 422 problem. Short
 * messages are handled on this thread with the version's prepared state (algorithms/hmac.ts),
 * long ones on the worker pool (engine.ts).
 */
import { timingSafeEqual } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { hmacOfPieces } from '../algorithms/hmac.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import type { HmacKey, HmacKeyring, HmacSecret, KeyPurpose } from '../keys/hmac.js'
import type { KeyVersion } from '../keys/ring.js'
import { problems } from '../problem.js'
import { countHashedBytes, countKeyUse } from '../observe.js'
import { algorithmFor } from './algorithm-lookup.js'
import { decodeDigestText, decodeInput, encodeOutput, type InputEncoding, type OutputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { andThen } from './maybe-async.js'

export interface HmacRequest {
  message: string
  /** The caller's own secret; exactly one of key and keyName. */
  key?: string
  /** A key the server holds (HMAC_KEYS_FILE). */
  keyName?: string
  /** A version of the named key other than the current one. */
  keyVersion?: number
  algorithm?: string
  encoding?: OutputEncoding
  /** `tagged`: `hashd:v<version>:<base64>` (named keys only). */
  format?: 'raw' | 'tagged'
  keyEncoding?: InputEncoding
  inputEncoding?: InputEncoding
}

export interface HmacResult {
  hmac: string
  algorithm: string
  encoding: OutputEncoding
  format?: 'tagged'
  keyName?: string
  keyVersion?: number
  processingTimeMs: number
}

export interface HmacVerifyRequest {
  message: string
  /** hex, base64 or base64url, or a `hashd:v<version>:` tag. */
  hmac: string
  key?: string
  keyName?: string
  keyVersion?: number
  algorithm?: string
  keyEncoding?: InputEncoding
  inputEncoding?: InputEncoding
}

export interface HmacVerifyResult {
  valid: boolean
  algorithm: string
  keyName?: string
  /** The version checked (named, tagged, or the one that matched); null when no version matched. */
  keyVersion?: number | null
  /** Valid, and under a version older than the key's current one: make it again with the current version. */
  rotateRecommended: boolean
  /** Why it is not valid (or which version matched), for logs and people. */
  reason?: string
  processingTimeMs: number
}

/**
 * What a request may do with the server's keys, and where their use is recorded: `mayUse` throws
 * 403 for a named key outside the API key's hmac-keys=; `used` notes a key and version for the
 * access log (plugins/logging.ts).
 */
export interface KeyContext {
  hmacKeys: HmacKeyring | null
  mayUse(name: string): void
  used(ring: 'hmac' | 'pepper', name: string, version: string): void
  /**
   * The last named key resolved for /api/hmac (resolveNamed): a batch resolves its key once, and
   * counts its uses and bytes here, into the metrics when another key is resolved or at the end of
   * the request (`flushKeyCounts`).
   */
  memo?: NamedMemo
}

interface NamedMemo {
  keyring: HmacKeyring | null
  keyName: string | undefined
  keyVersion: number | undefined
  algorithmName: string | undefined
  resolved: { key: HmacKey, algorithm: DigestAlgorithm, version: KeyVersion<HmacSecret> }
  /** HMACs made under `resolved` and bytes hashed, not yet in the metrics. */
  uses: number
  bytes: number
}

/** Puts the HMACs a request made under its last named key into the metrics (the route calls it once the request's items are done). */
export function flushKeyCounts(context: KeyContext): void {
  const memo = context.memo
  if (memo === undefined || memo.uses === 0) return
  const { key, algorithm, version } = memo.resolved
  countHashedBytes('hmac', algorithm.name, memo.bytes)
  countKeyUse('hmac', key.name, version.id, 'hmac', memo.uses)
  memo.uses = 0
  memo.bytes = 0
}

/** Anything goes, nothing is noted: tests and benches that call the domain directly. */
export const OPEN_KEY_CONTEXT: Omit<KeyContext, 'hmacKeys' | 'memo'> = { mayUse() {}, used() {} }

export const TAG_PREFIX = 'hashd:v'
/** `hashd:v<version>:<standard base64>`: bounded quantifiers only (the version's digits, the payload up to 1024 characters). */
const TAG = /^hashd:v([1-9]\d{0,8}):([A-Za-z0-9+/]{2,1024}={0,2})$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** A tag's version and bytes, or null when the text is not a well-formed tag. */
export function parseTag(text: string): { version: string, mac: Buffer } | null {
  const match = TAG.exec(text)
  if (!match || !BASE64.test(match[2]!)) return null
  return { version: match[1]!, mac: Buffer.from(match[2]!, 'base64') }
}

const both = () => problems.validation('Send either key (a secret of your own) or keyName (a key this server holds), not both',
  [{ pointer: '/body/key', message: 'not with keyName' }, { pointer: '/body/keyName', message: 'not with key' }])
const neither = () => problems.validation('Send key (a secret of your own) or keyName (a key this server holds; GET /api/keys lists them)',
  [{ pointer: '/body', message: 'must have exactly one of key, keyName' }])
const onlyWith = (field: string, other: string) => problems.validation(`${field} applies to ${other} only`, [{ pointer: `/body/${field}`, message: `only with ${other}` }])

/** What each purpose of a named key is for, in the words of a refusal. */
const PURPOSE_USES: Record<KeyPurpose, string> = {
  hmac: 'HMACs (POST /api/hmac, /api/hmac/verify)',
  webhooks: 'webhooks (POST /api/webhooks/verify, /api/webhooks/sign)',
}

/**
 * A named key of another purpose than the operation's (keys/hmac.ts: one secret serving both would
 * let each forge the other). The name is not echoed, as for unknown-key; `purpose` is the one needed.
 */
function wrongPurpose(needed: KeyPurpose, has: KeyPurpose) {
  return problems.unprocessable('key-purpose', 'Key kept for another purpose',
    `keyName names a key kept for ${PURPOSE_USES[has]}; this operation takes a key written purpose=${needed} in HMAC_KEYS_FILE. GET /api/keys shows each key's purpose`,
    { purpose: needed, errors: [{ pointer: '/body/keyName', message: `not a purpose=${needed} key` }] })
}

/**
 * The named key, checked against the caller's scope first (so a name outside it says nothing about
 * whether it exists). No problem about a named key repeats its name, found or not: the caller knows
 * which it sent and the pointer says which field, and a secret pasted into keyName by mistake must
 * never come back in a problem, a header or a log. Then it must be kept for `purpose`.
 */
export function namedKey(name: string, context: KeyContext, purpose: KeyPurpose): HmacKey {
  context.mayUse(name)
  const keyring = context.hmacKeys
  if (keyring === null) {
    throw problems.unprocessable('no-hmac-keys', 'No HMAC keys configured',
      'This server holds no HMAC keys (HMAC_KEYS_FILE is not set); send your own key in key instead of keyName',
      { errors: [{ pointer: '/body/keyName', message: 'no HMAC keys on this server' }] })
  }
  const key = keyring.get(name)
  if (!key) {
    // The name is not echoed: a secret pasted into keyName by mistake must not come back in a problem or a log.
    throw problems.unprocessable('unknown-key', 'Unknown key', 'keyName names no key of this server; GET /api/keys lists the keys you may use',
      { errors: [{ pointer: '/body/keyName', message: 'unknown key' }] })
  }
  if (key.purpose !== purpose) throw wrongPurpose(purpose, key.purpose)
  return key
}

/**
 * The algorithm of an HMAC under a named key: the one asked for if the key allows it, else the key's
 * first. `pointer` names the field at fault (webhooks, which are always SHA-256, point at keyName).
 */
export function keyAlgorithm(key: HmacKey, requested: string | undefined, pointer = '/body/algorithm'): DigestAlgorithm {
  const algorithm = algorithmFor(requested ?? key.algorithms[0]!, 'hmac') as DigestAlgorithm
  if (!key.algorithms.includes(algorithm.name)) {
    throw problems.unprocessable('algorithm-not-allowed-for-key', 'Algorithm not allowed for this key',
      `This key may be used with ${key.algorithms.join(', ')} (its algorithms= in HMAC_KEYS_FILE), not ${algorithm.name}`,
      { algorithms: [...key.algorithms], errors: [{ pointer, message: 'not allowed for this key' }] })
  }
  return algorithm
}

function unknownVersion(key: HmacKey, version: string): never {
  throw problems.unprocessable('unknown-key-version', 'Unknown key version',
    `The key has no version ${version} (it has ${key.ring.versions.map((each) => each.id).join(', ')}); a version removed from HMAC_KEYS_FILE cannot be used or verified until it is configured again`,
    { keyVersion: Number(version) })
}

/**
 * The HMAC of `message` under a version of a named key: on this thread with its prepared form
 * when the message is short and the algorithm has one, else on the pool.
 */
function macUnder(engine: Engine, secret: HmacSecret, algorithm: DigestAlgorithm, message: Buffer): Uint8Array | Promise<Uint8Array> {
  // A secret hashd does not hold (a key in a PKCS#11 token) is used where it is.
  const external = secret.external(algorithm, [message])
  if (external !== null) return external
  const prepared = message.length < engine.config.inlineDigestMaxBytes ? secret.prepared(algorithm) : null
  if (prepared !== null) return prepared.mac(message)
  return engine.run<Uint8Array>({ op: 'hmac', algorithm: algorithm.name, key: secret.bytesForTask(), message }).then(({ value }) => value)
}

/** The same, written in `encoding`: the prepared form writes it directly. */
function textUnder(engine: Engine, secret: HmacSecret, algorithm: DigestAlgorithm, message: Buffer, encoding: OutputEncoding): string | Promise<string> {
  const prepared = message.length < engine.config.inlineDigestMaxBytes ? secret.prepared(algorithm) : null
  if (prepared !== null) return prepared.text(message, encoding)
  return andThen(macUnder(engine, secret, algorithm, message), (mac) => encodeOutput(mac, encoding))
}

/** The HMAC under the caller's own key: OpenSSL on this thread when short, else the pool. */
function macWithKey(engine: Engine, algorithm: DigestAlgorithm, key: Buffer, message: Buffer): Uint8Array | Promise<Uint8Array> {
  if (algorithm.opensslName !== undefined && message.length + key.length < engine.config.inlineDigestMaxBytes) {
    return hmacOfPieces(algorithm, key, [message])
  }
  return engine.run<Uint8Array>({ op: 'hmac', algorithm: algorithm.name, key, message }).then(({ value }) => value)
}

function callerKey(request: { key: string, keyEncoding?: InputEncoding }): Buffer {
  const key = decodeInput(request.key, request.keyEncoding ?? 'utf8', 'key')
  if (key.length === 0) throw problems.validation('key must not be empty', [{ pointer: '/body/key', message: 'must not be empty' }])
  return key
}

/** How a batch item is made (routes/hmac.ts): without reading the clock, since its result has no time of its own (routes/batch.ts). */
export const IN_BATCH = { batch: true } as const

/** `started` of a batch item, whose processingTimeMs is never written (0). */
const UNTIMED = -1
const sinceStart = (started: number): number => started === UNTIMED ? 0 : performance.now() - started

export function hmac(engine: Engine, request: HmacRequest, context: KeyContext, options: { batch?: boolean } = {}): HmacResult | Promise<HmacResult> {
  const started = options.batch ? UNTIMED : performance.now()
  if (request.key !== undefined && request.keyName !== undefined) throw both()
  const encoding = request.encoding ?? 'hex'
  if (request.keyName === undefined) {
    if (request.key === undefined) throw neither()
    if (request.keyVersion !== undefined) throw onlyWith('keyVersion', 'keyName')
    if (request.format === 'tagged') {
      throw problems.validation('format "tagged" needs a named key: the tag carries the key\'s version', [{ pointer: '/body/format', message: 'only with keyName' }])
    }
    const algorithm = algorithmFor(request.algorithm ?? 'sha256', 'hmac') as DigestAlgorithm
    const key = callerKey({ key: request.key, ...(request.keyEncoding ? { keyEncoding: request.keyEncoding } : {}) })
    const message = decodeInput(request.message, request.inputEncoding ?? 'utf8', 'message')
    return andThen(macWithKey(engine, algorithm, key, message), (mac) => {
      countHashedBytes('hmac', algorithm.name, message.length)
      return { hmac: encodeOutput(mac, encoding), algorithm: algorithm.name, encoding, processingTimeMs: sinceStart(started) }
    })
  }
  const memo = resolveNamed(request, context)
  const { algorithm, version } = memo.resolved
  const tagged = request.format === 'tagged'
  const outputEncoding = tagged ? 'base64' : encoding
  // The common case, short text (batch items): written straight behind the key block, answered on
  // this tick, without a Buffer, a promise or a closure.
  if ((request.inputEncoding ?? 'utf8') === 'utf8' && request.message.length * 3 < engine.config.inlineDigestMaxBytes) {
    if (!request.message.isWellFormed()) throw problems.invalidEncoding('message', 'Unicode (it contains a lone surrogate)')
    const prepared = version.material.prepared(algorithm)
    const direct = prepared?.textOfUtf8(request.message, outputEncoding)
    if (direct) return namedResult(direct, prepared!.lastUtf8Bytes, memo, tagged, encoding, context, started)
  }
  const message = decodeInput(request.message, request.inputEncoding ?? 'utf8', 'message')
  const text = textUnder(engine, version.material, algorithm, message, outputEncoding)
  if (typeof text === 'string') return namedResult(text, message.length, memo, tagged, encoding, context, started)
  return text.then((written) => namedResult(written, message.length, memo, tagged, encoding, context, started))
}

function namedResult(written: string, bytes: number, memo: NamedMemo, tagged: boolean, encoding: OutputEncoding, context: KeyContext, started: number): HmacResult {
  const { key, algorithm, version } = memo.resolved
  // Counted into the metrics once per request (flushKeyCounts), not once per batch item.
  memo.uses++
  memo.bytes += bytes
  context.used('hmac', key.name, version.id)
  return tagged
    ? { hmac: `${TAG_PREFIX}${version.id}:${written}`, algorithm: algorithm.name, encoding: 'base64', format: 'tagged', keyName: key.name, keyVersion: version.ordinal, processingTimeMs: sinceStart(started) }
    : { hmac: written, algorithm: algorithm.name, encoding, keyName: key.name, keyVersion: version.ordinal, processingTimeMs: sinceStart(started) }
}

/**
 * The key, algorithm and version a request names. A batch names the same ones item after item:
 * the context keeps the last answer (keyed by the request's own strings and the keyring in force),
 * so the lookups and checks run once per batch rather than once per item.
 */
function resolveNamed(request: { keyName?: string, keyVersion?: number, algorithm?: string }, context: KeyContext): NamedMemo {
  const memo = context.memo
  if (memo && memo.keyring === context.hmacKeys && memo.keyName === request.keyName && memo.keyVersion === request.keyVersion && memo.algorithmName === request.algorithm) return memo
  flushKeyCounts(context)
  const key = namedKey(request.keyName!, context, 'hmac')
  const algorithm = keyAlgorithm(key, request.algorithm)
  const version = request.keyVersion === undefined ? key.ring.current : usableVersion(key, String(request.keyVersion))
  const resolved = { key, algorithm, version }
  return context.memo = { keyring: context.hmacKeys, keyName: request.keyName, keyVersion: request.keyVersion, algorithmName: request.algorithm, resolved, uses: 0, bytes: 0 }
}

/** A version new HMACs may be made with on request: any that verifies (staged, current, previous). */
function usableVersion(key: HmacKey, id: string): KeyVersion<HmacSecret> {
  const version = key.ring.version(id)
  if (!version) return unknownVersion(key, id)
  if (key.ring.refusal(version) !== null) {
    const why = version.state === 'retired' ? 'is retired' : `is below the key's min-verify-version ${key.ring.minVerify}`
    throw problems.unprocessable('key-version-retired', 'Key version retired', `Version ${version.id} of this key ${why}: new HMACs are not made with it`,
      { keyVersion: version.ordinal, errors: [{ pointer: '/body/keyVersion', message: 'retired' }] })
  }
  return version
}

/**
 * The key the top of a batch chooses (routes/batch.ts), checked before any item runs: `key`,
 * `keyName`, `keyVersion` and `keyEncoding` go to an item together or not at all (domain/batch.ts),
 * so a choice no item could use is the whole batch's 4xx, as a single request's would be: key and
 * keyName both; keyVersion without keyName; a key of no bytes; a keyName outside the API key's
 * hmac-keys= (403), on a server without HMAC keys or unknown (422; the name is not echoed); a
 * keyVersion the key does not have (or, to make HMACs, a retired one). What depends on another
 * field an item may give itself (the algorithm, the format) stays the item's. Nothing is counted
 * or noted: no item has run.
 */
export function checkHmacBatchTop(top: Partial<HmacRequest>, context: KeyContext, operation: 'hmac' | 'verify'): void {
  if (top.key !== undefined && top.keyName !== undefined) throw both()
  if (top.keyName === undefined && top.keyVersion !== undefined) throw onlyWith('keyVersion', 'keyName')
  if (top.key !== undefined) callerKey({ key: top.key, ...(top.keyEncoding ? { keyEncoding: top.keyEncoding } : {}) })
  if (top.keyName === undefined) return
  const key = namedKey(top.keyName, context, 'hmac')
  if (top.keyVersion === undefined) return
  const version = String(top.keyVersion)
  // Making HMACs takes a version that verifies; checking them takes any the key has (under a retired one an HMAC is `valid: false`).
  if (operation === 'hmac') usableVersion(key, version)
  else if (!key.ring.version(version)) unknownVersion(key, version)
}

/** The bytes an untagged HMAC stands for: hex, base64 or base64url, as decodeDigestText reads them. */
function macBytes(text: string): Buffer {
  const bytes = decodeDigestText(text)
  if (!bytes) {
    throw problems.validation('hmac is neither hex, base64, base64url nor a hashd:v<version>: tag',
      [{ pointer: '/body/hmac', message: 'not hex, base64 or a tag' }])
  }
  return bytes
}

/** Constant-time: time depends on the lengths only (both are public: the algorithm's output size). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

export function verifyHmac(engine: Engine, request: HmacVerifyRequest, context: KeyContext): HmacVerifyResult | Promise<HmacVerifyResult> {
  const started = performance.now()
  if (request.key !== undefined && request.keyName !== undefined) throw both()
  const text = request.hmac.trim()
  const tag = text.startsWith(TAG_PREFIX) ? parseTag(text) : null
  if (text.startsWith(TAG_PREFIX) && tag === null) {
    throw problems.validation('hmac starts like a tag but is not hashd:v<version>:<base64>', [{ pointer: '/body/hmac', message: 'malformed tag' }])
  }
  const finish = (result: Omit<HmacVerifyResult, 'processingTimeMs'>): HmacVerifyResult => ({ ...result, processingTimeMs: performance.now() - started })

  if (request.keyName === undefined) {
    if (request.key === undefined) throw neither()
    if (request.keyVersion !== undefined) throw onlyWith('keyVersion', 'keyName')
    if (tag) throw problems.validation('A tagged HMAC names a version of a key this server holds: send keyName, not key', [{ pointer: '/body/hmac', message: 'tagged: needs keyName' }])
    const algorithm = algorithmFor(request.algorithm ?? 'sha256', 'hmac') as DigestAlgorithm
    const key = callerKey({ key: request.key, ...(request.keyEncoding ? { keyEncoding: request.keyEncoding } : {}) })
    const expected = macBytes(text)
    const message = decodeInput(request.message, request.inputEncoding ?? 'utf8', 'message')
    return andThen(macWithKey(engine, algorithm, key, message), (mac) => {
      countHashedBytes('hmac', algorithm.name, message.length)
      const valid = same(mac, expected)
      return finish({ valid, algorithm: algorithm.name, rotateRecommended: false, ...(valid ? {} : { reason: mismatch(expected, algorithm) }) })
    })
  }
  if (tag && request.keyVersion !== undefined && String(request.keyVersion) !== tag.version) {
    throw problems.validation(`keyVersion ${request.keyVersion} disagrees with the tag's v${tag.version}; leave keyVersion out with a tagged HMAC`,
      [{ pointer: '/body/keyVersion', message: 'disagrees with the tag' }])
  }
  const key = namedKey(request.keyName, context, 'hmac')
  const algorithm = keyAlgorithm(key, request.algorithm)
  const expected = tag ? tag.mac : macBytes(text)
  const message = decodeInput(request.message, request.inputEncoding ?? 'utf8', 'message')
  const named = tag?.version ?? (request.keyVersion === undefined ? undefined : String(request.keyVersion))
  const base = { algorithm: algorithm.name, keyName: key.name }

  if (named !== undefined) {
    const version = key.ring.version(named) ?? unknownVersion(key, named)
    const why = key.ring.refusal(version)
    countKeyUse('hmac', key.name, version.id, 'verify')
    context.used('hmac', key.name, version.id)
    if (why !== null) return finish({ ...base, valid: false, keyVersion: version.ordinal, rotateRecommended: false, reason: `${why}: HMACs under it are no longer valid` })
    return andThen(macUnder(engine, version.material, algorithm, message), (mac) => {
      countHashedBytes('hmac', algorithm.name, message.length)
      const valid = same(mac, expected)
      const rotate = valid && key.ring.rotateRecommended(version)
      return finish({
        ...base, valid, keyVersion: version.ordinal, rotateRecommended: rotate,
        ...(valid ? rotate ? { reason: `valid under version ${version.id}; the current version is ${key.ring.current.id}` } : {} : { reason: mismatch(expected, algorithm) }),
      })
    })
  }
  // No version named: the versions that verify, newest first, until one matches.
  return andThen(firstMatch(engine, key, algorithm, message, expected), (version) => {
    countHashedBytes('hmac', algorithm.name, message.length)
    countKeyUse('hmac', key.name, version?.id ?? 'any', 'verify')
    if (version) context.used('hmac', key.name, version.id)
    if (!version) {
      return finish({
        ...base, valid: false, keyVersion: null, rotateRecommended: false,
        reason: `${mismatch(expected, algorithm)} under any version of key ${key.name} that verifies (${key.ring.verifying.map((each) => each.id).join(', ')}); a tagged HMAC (format "tagged") names its version`,
      })
    }
    const rotate = key.ring.rotateRecommended(version)
    return finish({ ...base, valid: true, keyVersion: version.ordinal, rotateRecommended: rotate, ...(rotate ? { reason: `valid under version ${version.id}; the current version is ${key.ring.current.id}` } : {}) })
  })
}

function mismatch(expected: Uint8Array, algorithm: DigestAlgorithm): string {
  return expected.length === algorithm.outputBytes
    ? 'the HMAC does not match'
    : `the HMAC has ${expected.length} bytes, and HMAC-${algorithm.name} gives ${algorithm.outputBytes}`
}

function firstMatch(engine: Engine, key: HmacKey, algorithm: DigestAlgorithm, message: Buffer, expected: Uint8Array): KeyVersion<HmacSecret> | null | Promise<KeyVersion<HmacSecret> | null> {
  const versions = key.ring.verifying
  type Found = KeyVersion<HmacSecret> | null
  const step = (index: number): Found | Promise<Found> => {
    const version = versions[index]
    if (version === undefined) return null
    const mac = macUnder(engine, version.material, algorithm, message)
    if (mac instanceof Promise) return mac.then((value) => (same(value, expected) ? version : step(index + 1)))
    return same(mac, expected) ? version : step(index + 1)
  }
  return step(0)
}
