/** /api/hash: a digest of the input, or a new password hash with a fresh CSPRNG salt. */
import { performance } from 'node:perf_hooks'
import { oneShotDigest, plainOpensslName } from '../algorithms/hashers.js'
import type { DigestAlgorithm, PasswordScheme } from '../algorithms/types.js'
import { problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { decodeInput, encodeOutput, type InputEncoding, type OutputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { countHashedBytes, countKeyUse, countPasswordOperation } from '../observe.js'
import { digestOptionSpecs, resolveOptions } from './options.js'
import type { PepperKey } from '../algorithms/password/pepper.js'
import type { Passwords } from './passwords.js'
import { refusePasswordWork } from './batch.js'
import type { KeyContext } from './hmac.js'

export interface HashRequest {
  input: string
  algorithm?: string
  encoding?: OutputEncoding
  inputEncoding?: InputEncoding
  options?: Record<string, number>
  /** Password hashes only: pepper with the current key (the default when keys are configured) or not. */
  pepper?: boolean
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
export function hash(engine: Engine, request: HashRequest, whenClientGone?: () => AbortSignal, passwords?: Passwords, context: HashContext = {}): HashResult | Promise<HashResult> {
  const algorithm = algorithmFor(request.algorithm ?? 'sha256', 'hash')
  if (context.batch && algorithm.kind === 'password') refusePasswordWork(`${algorithm.name}, a password scheme,`, '/body/algorithm')
  if (request.pepper === true && algorithm.kind !== 'password') {
    throw problems.wrongOperation(algorithm.name, 'pepper', 'a pepper applies to password hashes only')
  }
  const input = decodeInput(request.input, request.inputEncoding ?? 'utf8', 'input')
  const opensslName = plainOpensslName(algorithm)
  if (opensslName !== undefined && request.options === undefined && input.length < engine.config.inlineDigestMaxBytes) {
    return hashDigestNow(opensslName, algorithm.name, input, request.encoding ?? 'hex')
  }
  return algorithm.kind === 'password'
    ? hashPassword(engine, algorithm, input, request.options, pepperKeyFor(request.pepper, passwords), whenClientGone?.(), context.keys)
    : hashDigest(engine, algorithm, input, request.encoding ?? 'hex', request.options)
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

async function hashPassword(engine: Engine, scheme: PasswordScheme, input: Buffer, given: Record<string, number> | undefined, pepperKey: PepperKey | null, signal?: AbortSignal, keys?: Pick<KeyContext, 'used'>): Promise<HashResult> {
  const options = resolveOptions(scheme.name, scheme.options, given, engine.config.caps)
  const { value, ms } = await newPasswordHash(engine, scheme, input, options, pepperKey, signal)
  if (pepperKey) keys?.used('pepper', 'pepper', pepperKey.id)
  return { hash: value, length: value.length, processingTimeMs: ms, algorithm: scheme.name, encoding: 'standard', ...(pepperKey ? { pepperKey: pepperKey.id } : {}) }
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
  return { value: pepperKey.seal(scheme.name, outcome.value), ms: outcome.ms }
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

async function hashDigest(engine: Engine, algorithm: DigestAlgorithm, input: Buffer, encoding: OutputEncoding, given?: Record<string, number>): Promise<HashResult> {
  const options = resolveOptions(algorithm.name, digestOptionSpecs(algorithm.outputBytes, algorithm.outputLength), given, engine.config.caps)
  const outputBytes = options.outputLength ?? algorithm.outputBytes
  const { value, ms } = await engine.run<Uint8Array>({ op: 'digest', algorithm: algorithm.name, input, outputBytes })
  countHashedBytes('hash', algorithm.name, input.length)
  const text = algorithm.format ? algorithm.format(value) : encodeOutput(value, encoding)
  return { hash: text, length: text.length, processingTimeMs: ms, algorithm: algorithm.name, encoding: algorithm.format ? 'standard' : encoding }
}
