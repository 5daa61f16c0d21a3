/** /api/hash: a digest of the input, or a new password hash with a fresh CSPRNG salt. */
import { performance } from 'node:perf_hooks'
import { oneShotDigest, plainOpensslName } from '../algorithms/hashers.js'
import type { DigestAlgorithm, PasswordScheme } from '../algorithms/types.js'
import { problems } from '../problem.js'
import { findContentHash, type ContentHash } from '../content-hashes/index.js'
import { algorithmFor } from './algorithm-lookup.js'
import { contentHashOptions } from './content-hashes.js'
import { decodeInput, encodeOutput, type InputEncoding, type OutputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { countHashedBytes, countKeyUse, countPasswordOperation } from '../observe.js'
import { digestOptionSpecs, resolveOptions } from './options.js'
import type { PepperKey } from '../algorithms/password/pepper.js'
import type { Passwords } from './passwords.js'
import { refusePasswordScheme, refusePasswordWork } from './batch.js'
import type { KeyContext } from './hmac.js'
import { passwordForHashing } from '../screening/normalize.js'
import type { Screened, Screening } from '../screening/screen.js'

export interface HashRequest {
  input: string
  algorithm?: string
  encoding?: OutputEncoding
  inputEncoding?: InputEncoding
  /** Per-algorithm options: integers for digests and password schemes; a content hash's parameters, some of them text (`partSize: "8MiB"`, `name`). */
  options?: Record<string, number | string>
  /** Password hashes only: pepper with the current key (the default when keys are configured) or not. */
  pepper?: boolean
  /** Password hashes only: the words screening compares the password with (user name, e-mail, service). */
  context?: string[]
}

export interface HashResult {
  hash: string
  length: number
  processingTimeMs: number
  algorithm: string
  /** The output encoding, or `standard` where the algorithm has its own text format. */
  encoding: OutputEncoding | 'standard'
  /** The id of the pepper key the hash is encrypted under, when it is peppered. */
  pepperKey?: string
  /** What screening found (PASSWORD_SCREENING=warn or reject, password schemes, text input). */
  screening?: Screened
}

/** What a hash may need beyond the request: a batch refuses password schemes; `keys` notes the pepper key used. */
export interface HashContext {
  batch?: boolean
  keys?: Pick<KeyContext, 'used'>
}

/**
 * `whenClientGone` makes a signal that aborts queued password work when the client goes away; it is
 * called only for password work, since an AbortController costs more than hashing a short input.
 */
export function hash(engine: Engine, request: HashRequest, whenClientGone?: () => AbortSignal, passwords?: Passwords, screening?: Screening, context: HashContext = {}): HashResult | Promise<HashResult> {
  const content = request.algorithm === undefined ? undefined : findContentHash(request.algorithm)
  if (content !== undefined) return hashContent(engine, content, request)
  const algorithm = algorithmFor(request.algorithm ?? 'sha256', 'hash')
  if (context.batch && algorithm.kind === 'password') refusePasswordScheme(algorithm, '/body/algorithm')
  if (request.pepper === true && algorithm.kind !== 'password') {
    throw problems.wrongOperation(algorithm.name, 'pepper', 'a pepper applies to password hashes only')
  }
  if (request.context !== undefined && algorithm.kind !== 'password') {
    throw problems.wrongOperation(algorithm.name, 'context', 'context words are for screening passwords, and apply to password hashes only', '/body/context')
  }
  const encoding = request.inputEncoding ?? 'utf8'
  if (algorithm.kind === 'password') {
    // Text passwords are hashed in their NFKC form (screening/normalize.ts) and screened first.
    const text = encoding === 'utf8' ? request.input : null
    const input = decodeInput(text === null ? request.input : passwordForHashing(text, engine.config.screening.normalization), encoding, 'input')
    const screen = text !== null && screening !== undefined && screening.policy.mode !== 'off' ? () => screening.check(text, request.context ?? []) : undefined
    return hashPassword(engine, algorithm, input, request.options, pepperKeyFor(request.pepper, passwords), whenClientGone?.(), screen, screening?.policy.mode, context.keys)
  }
  const input = decodeInput(request.input, encoding, 'input')
  const opensslName = plainOpensslName(algorithm)
  if (opensslName !== undefined && request.options === undefined && input.length < engine.config.inlineDigestMaxBytes) {
    return hashDigestNow(opensslName, algorithm.name, input, request.encoding ?? 'hex')
  }
  return hashDigest(engine, algorithm, input, request.encoding ?? 'hex', request.options)
}

/**
 * The fields at the top of a batch (routes/batch.ts), checked before any item runs: a password
 * algorithm, `"pepper": true` or `context` is password work, which no item of a batch may do, so
 * the batch is refused whole (422 password-in-batch). Options are read against each item's
 * algorithm (an item may name its own), so they stay the items'.
 */
export function checkHashBatchTop(top: Partial<HashRequest>): void {
  const algorithm = top.algorithm === undefined || findContentHash(top.algorithm) !== undefined ? undefined : algorithmFor(top.algorithm, 'hash')
  if (algorithm?.kind === 'password') refusePasswordScheme(algorithm, '/body/algorithm')
  if (top.pepper === true) refusePasswordWork('pepper (it seals a password hash)', '/body/pepper')
  if (top.context !== undefined) refusePasswordWork('context (words to screen a password with)', '/body/context')
}

/** 422 for a password PASSWORD_SCREENING=reject refuses to hash; the reasons go with it, never the password. */
export function passwordRejected(screened: Screened) {
  return problems.unprocessable('password-rejected', 'Password not acceptable',
    `This server screens passwords before hashing them (PASSWORD_SCREENING=reject) and this one is not acceptable: ${screened.reasons.map((reason) => reason.code).join(', ')}. ` +
    'Ask the user for another; POST /api/passwords/check says why, with messages for the user',
    { reasons: screened.reasons, ...(screened.breachCount === undefined ? {} : { breachCount: screened.breachCount }) })
}

/**
 * The key a new password hash is peppered with: the current one when keys are configured, unless the
 * request says `"pepper": false`; asking for a pepper on a server without keys is 422, not a silent
 * unpeppered hash.
 */
function pepperKeyFor(wanted: boolean | undefined, passwords: Passwords | undefined): PepperKey | null {
  const keyring = passwords?.keyring ?? null
  if (wanted === false) return null
  if (keyring === null) {
    if (wanted === true) {
      throw problems.unprocessable('no-pepper-keys', 'No pepper keys configured',
        'This server has no pepper keys (PEPPER_KEYS_FILE is not set); leave out "pepper" or set it to false')
    }
    return null
  }
  return keyring.current
}

async function hashPassword(engine: Engine, scheme: PasswordScheme, input: Buffer, given: HashRequest['options'], pepperKey: PepperKey | null,
  signal?: AbortSignal, screen?: () => Promise<Screened>, mode?: string, keys?: Pick<KeyContext, 'used'>): Promise<HashResult> {
  const options = resolveOptions(scheme.name, scheme.options, given, engine.config.caps)
  const screened = screen ? await screen() : undefined
  if (screened && !screened.acceptable && mode === 'reject') throw passwordRejected(screened)
  const { value, ms } = await newPasswordHash(engine, scheme, input, options, pepperKey, signal)
  if (pepperKey) keys?.used('pepper', 'pepper', pepperKey.id)
  return {
    hash: value, length: value.length, processingTimeMs: ms, algorithm: scheme.name, encoding: 'standard',
    ...(pepperKey ? { pepperKey: pepperKey.id } : {}), ...(screened ? { screening: screened } : {}),
  }
}

/**
 * A new password hash of `input` with resolved options, made in the worker pool, and sealed under
 * `pepperKey` on this thread (the keys never leave it; AES-GCM of a hash string takes microseconds).
 * Shared by /api/hash and verify-and-upgrade.
 */
export async function newPasswordHash(engine: Engine, scheme: PasswordScheme, input: Uint8Array, options: Record<string, number>, pepperKey: PepperKey | null, signal?: AbortSignal): Promise<{ value: string, ms: number }> {
  scheme.checkCaps(options, engine.config.caps)
  if (scheme.maxInputBytes !== undefined && input.length > scheme.maxInputBytes) {
    // No silent truncation of new hashes: the caller would believe every byte counts.
    throw problems.unprocessable('input-too-long', 'Input too long for this algorithm',
      `${scheme.name} uses only the first ${scheme.maxInputBytes} bytes of its input and this input has ${input.length}; ` +
      'use bcrypt-sha256 (bcrypt over an HMAC-SHA256 of the whole input, passlib\'s format) or argon2id, which have no such limit',
      { alternatives: ['bcrypt-sha256', 'argon2id'] })
  }
  let outcome: { value: string, ms: number }
  try {
    outcome = await engine.run<string>({ op: 'password-hash', scheme: scheme.name, input, options }, signal)
  } catch (error) {
    countPasswordOperation('hash', scheme.name, 'error')
    throw error
  }
  countPasswordOperation('hash', scheme.name, 'ok')
  if (!pepperKey) return outcome
  countKeyUse('pepper', 'pepper', pepperKey.id, 'seal')
  return { value: await pepperKey.seal(scheme.name, outcome.value), ms: outcome.ms }
}

/**
 * The common case, a short input to a fixed-length OpenSSL digest, answered on this tick with
 * one-shot `crypto.hash` (no hasher object, no promise): the CPU profile of /api/hash under load
 * showed the streaming path's objects and promise hops costing more than the hash itself.
 * An empty `options` object still goes the general way, which validates it.
 */
function hashDigestNow(opensslName: string, name: string, input: Buffer, encoding: OutputEncoding): HashResult {
  const started = performance.now()
  const text = oneShotDigest(opensslName, input, encoding)
  countHashedBytes('hash', name, input.length)
  return { hash: text, length: text.length, processingTimeMs: performance.now() - started, algorithm: name, encoding }
}

async function hashDigest(engine: Engine, algorithm: DigestAlgorithm, input: Buffer, encoding: OutputEncoding, given?: HashRequest['options']): Promise<HashResult> {
  const options = resolveOptions(algorithm.name, digestOptionSpecs(algorithm.outputBytes, algorithm.outputLength), given, engine.config.caps)
  const outputBytes = options.outputLength ?? algorithm.outputBytes
  const { value, ms } = await engine.run<Uint8Array>({ op: 'digest', algorithm: algorithm.name, input, outputBytes })
  countHashedBytes('hash', algorithm.name, input.length)
  const text = algorithm.format ? algorithm.format(value) : encodeOutput(value, encoding)
  return { hash: text, length: text.length, processingTimeMs: ms, algorithm: algorithm.name, encoding: algorithm.format ? 'standard' : encoding }
}

/**
 * A content hash (src/content-hashes) of the input, printed as its store shows it (`encoding` is
 * `standard`, whatever was asked): inline below INLINE_DIGEST_MAX_BYTES, on the pool above, as a
 * digest. Its parameters come in `options` (domain/content-hashes.ts); a pepper or context words
 * are for password hashes only.
 */
async function hashContent(engine: Engine, entry: ContentHash, request: HashRequest): Promise<HashResult> {
  if (request.pepper === true) throw problems.wrongOperation(entry.name, 'pepper', 'a pepper applies to password hashes only')
  if (request.context !== undefined) {
    throw problems.wrongOperation(entry.name, 'context', 'context words are for screening passwords, and apply to password hashes only', '/body/context')
  }
  const input = decodeInput(request.input, request.inputEncoding ?? 'utf8', 'input')
  const params = contentHashOptions(entry, request.options, input.length)
  const { value, ms } = await engine.run<string>({ op: 'content-hash', name: entry.name, params, input })
  countHashedBytes('hash', entry.name, input.length)
  return { hash: value, length: value.length, processingTimeMs: ms, algorithm: entry.name, encoding: 'standard' }
}
