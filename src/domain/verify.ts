/**
 * /api/verify: does an input match an existing digest or password hash?
 * Without `algorithm`, the hash's own format decides: password formats by their prefixes, digests
 * in a standard text form by its pattern, bare hex/base64 digests by trying every digest of that
 * output length. Every comparison is constant-time.
 */
import { detectPasswordScheme, digestsByOutputBytes } from '../algorithms/registry.js'
import { digestAlgorithms } from '../algorithms/digests.js'
import type { DigestAlgorithm, PasswordScheme } from '../algorithms/types.js'
import { Problem, problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { constantTimeEqual, decodeDigestText, decodeInput, type InputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { countHashedBytes, countPasswordOperation } from '../observe.js'

export interface VerifyRequest {
  input: string
  hash: string
  algorithm?: string
  inputEncoding?: InputEncoding
}

export interface VerifyResult {
  match: boolean
  /** The algorithm that was checked (or matched, when it was detected); null when none matched. */
  algorithm: string | null
  /** The format variant read from the hash, e.g. `$2y$` or `Django`, for password hashes. */
  format?: string
  processingTimeMs: number
  /** True when the input matched but the hash should be replaced (weak scheme or parameters). */
  rehashRecommended: boolean
  reason?: string
  warnings: string[]
}

/** `whenClientGone` makes a signal that aborts queued password work when the client goes away (see hash.ts). */
export async function verify(engine: Engine, request: VerifyRequest, whenClientGone?: () => AbortSignal): Promise<VerifyResult> {
  const input = decodeInput(request.input, request.inputEncoding ?? 'utf8', 'input')
  const hash = request.hash.trim()
  if (request.algorithm !== undefined) {
    const algorithm = algorithmFor(request.algorithm, 'verify')
    return algorithm.kind === 'password'
      ? verifyPassword(engine, algorithm, input, hash, whenClientGone?.())
      : verifyDigest(engine, [algorithm], input, hash, true)
  }
  const scheme = detectPasswordScheme(hash)
  if (scheme) return verifyPassword(engine, scheme, input, hash, whenClientGone?.())
  const formatted = digestAlgorithms.filter((digest) => digest.formatPattern?.test(hash))
  if (formatted.length > 0) return verifyDigest(engine, formatted, input, hash, false)
  const bytes = decodeDigestText(hash)
  if (!bytes) {
    throw problems.unprocessable('unrecognized-hash', 'Unrecognized hash',
      'The hash is neither a password-hash format hashd reads nor a hex or base64 digest; name its algorithm, or ask POST /api/identify what it may be')
  }
  const candidates = digestsByOutputBytes(bytes.length)
  if (candidates.length === 0) {
    return { match: false, algorithm: null, processingTimeMs: 0, rehashRecommended: false, warnings: [`no digest hashd knows produces ${bytes.length} bytes`] }
  }
  return verifyDigest(engine, candidates, input, hash, false)
}

async function verifyPassword(engine: Engine, scheme: PasswordScheme, input: Buffer, hash: string, signal?: AbortSignal): Promise<VerifyResult> {
  // Parse and cap-check before any work: a hash asking for 2^31 bcrypt rounds must not cost a thing.
  const parsed = scheme.parse(hash)
  scheme.checkCaps(parsed.params, engine.config.caps)
  let outcome: { value: boolean, ms: number }
  try {
    outcome = await engine.run<boolean>({ op: 'password-verify', scheme: parsed.scheme, input, hash }, signal)
  } catch (error) {
    countPasswordOperation('verify', scheme.name, 'error')
    throw error
  }
  const { value: match, ms } = outcome
  countPasswordOperation('verify', scheme.name, match ? 'match' : 'mismatch')
  const reason = match ? scheme.rehashReason(parsed) : null
  return {
    match,
    algorithm: parsed.scheme,
    format: parsed.format,
    processingTimeMs: ms,
    rehashRecommended: reason !== null,
    ...(reason !== null ? { reason } : {}),
    warnings: scheme.verifyWarnings?.(input, parsed) ?? [],
  }
}

/** The bytes a digest hash string stands for under `algorithm`, or a 422 when it cannot be one. */
function expectedDigest(algorithm: DigestAlgorithm, hash: string): { bytes: Uint8Array, outputBytes: number } {
  if (algorithm.format) {
    if (algorithm.formatPattern && !algorithm.formatPattern.test(hash)) throw problems.malformedHash(algorithm.name, 'not in its standard text form')
    return { bytes: Buffer.from(hash.toUpperCase()), outputBytes: algorithm.outputBytes }
  }
  const bytes = decodeDigestText(hash)
  if (!bytes) throw problems.malformedHash(algorithm.name, 'expected hex, base64 or base64url')
  if (algorithm.outputLength) {
    const { min, max } = algorithm.outputLength
    if (bytes.length < min || bytes.length > max) throw problems.malformedHash(algorithm.name, `expected ${min} to ${max} bytes, got ${bytes.length}`)
    return { bytes, outputBytes: bytes.length }
  }
  if (bytes.length !== algorithm.outputBytes) {
    throw problems.malformedHash(algorithm.name, `expected ${algorithm.outputBytes} bytes (${algorithm.outputBytes * 2} hex characters), got ${bytes.length}`)
  }
  return { bytes, outputBytes: algorithm.outputBytes }
}

async function verifyDigest(engine: Engine, candidates: DigestAlgorithm[], input: Buffer, hash: string, named: boolean): Promise<VerifyResult> {
  let total = 0
  for (const algorithm of candidates) {
    const expected = expectedDigest(algorithm, hash)
    let outcome: { value: Uint8Array, ms: number }
    try {
      outcome = await engine.run<Uint8Array>({ op: 'digest', algorithm: algorithm.name, input, outputBytes: expected.outputBytes })
    } catch (error) {
      // A guessed candidate that cannot take this input (NTLM given bytes that are not UTF-8) is no match.
      if (!named && error instanceof Problem && error.status === 422) continue
      throw error
    }
    const { value, ms } = outcome
    countHashedBytes('verify', algorithm.name, input.length)
    total += ms
    const actual = algorithm.format ? Buffer.from(algorithm.format(value).toUpperCase()) : value
    if (constantTimeEqual(actual, expected.bytes)) {
      return {
        match: true, algorithm: algorithm.name, processingTimeMs: total,
        rehashRecommended: algorithm.weak !== undefined, ...(algorithm.weak ? { reason: algorithm.weak } : {}), warnings: [],
      }
    }
  }
  return {
    match: false, algorithm: named ? (candidates[0] as DigestAlgorithm).name : null, processingTimeMs: total, rehashRecommended: false,
    warnings: named ? [] : [`tried ${candidates.map((candidate) => candidate.name).join(', ')}`],
  }
}
