/**
 * /api/verify: does an input match an existing digest or password hash?
 * Without `algorithm`, the hash's own format decides: password formats by their prefixes, digests
 * in a standard text form by its pattern, bare hex/base64 digests by trying every digest of that
 * output length. Every comparison is constant-time.
 */
import { detectPasswordScheme, digestsByOutputBytes, passwordSchemeNamed } from '../algorithms/registry.js'
import { digestAlgorithms } from '../algorithms/digests.js'
import type { DigestAlgorithm, PasswordScheme } from '../algorithms/types.js'
import { Problem, problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { constantTimeEqual, decodeDigestText, decodeInput, type InputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { unverifiableEnvelope, unwrapDigest, type Envelope } from './envelopes.js'
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
    if (algorithm.kind === 'password') return verifyPassword(engine, algorithm, input, hash, whenClientGone?.())
    const carrier = algorithm.passwordForm === undefined ? undefined : passwordSchemeNamed(algorithm.passwordForm)
    if (carrier?.claims(hash)) return verifyPassword(engine, carrier, input, hash, whenClientGone?.())
    return verifyDigest(engine, [algorithm], input, hash, true)
  }
  const scheme = detectPasswordScheme(hash)
  if (scheme) return verifyPassword(engine, scheme, input, hash, whenClientGone?.())
  const formatted = digestAlgorithms.filter((digest) => digest.formatPattern?.test(hash))
  if (formatted.length > 0) return verifyDigest(engine, formatted, input, hash, false)
  // A digest in a wrapper (SRI, OCI, Nix, OpenSSH, colon hex): the input is the content whose
  // digest the wrapper holds (see envelopes.ts).
  const envelope = unwrapDigest(hash)
  if (envelope) {
    const inner = envelope.algorithm === undefined ? digestsByOutputBytes(envelope.bytes.length) : digestAlgorithms.filter((digest) => digest.name === envelope.algorithm)
    if (inner.length === 0) {
      return { match: false, algorithm: null, processingTimeMs: 0, rehashRecommended: false, warnings: [`no digest hashd knows produces ${envelope.bytes.length} bytes`] }
    }
    return verifyDigest(engine, inner, input, hash, envelope.algorithm !== undefined)
  }
  throwIfUnverifiable(hash)
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

/** A wrapper identify recognises (go.sum h1:, S3 multipart ETag) that no single input verifies: 422. */
function throwIfUnverifiable(hash: string): void {
  const unverifiable = unverifiableEnvelope(hash)
  if (unverifiable) {
    throw problems.unprocessable('verify-not-supported', 'Verify not supported for this format',
      `/api/verify cannot check a ${unverifiable.format} value: ${unverifiable.why}`, { format: unverifiable.format })
  }
}

/** The digest bytes of a wrapped hash under a named algorithm, or a 422 when they disagree. */
function envelopeDigest(algorithm: DigestAlgorithm, envelope: Envelope): { bytes: Uint8Array, outputBytes: number } {
  if (envelope.algorithm !== undefined && envelope.algorithm !== algorithm.name) {
    throw problems.malformedHash(algorithm.name, `the ${envelope.format} value holds a ${envelope.algorithm} digest`)
  }
  const { min, max } = algorithm.outputLength ?? { min: algorithm.outputBytes, max: algorithm.outputBytes }
  if (envelope.bytes.length < min || envelope.bytes.length > max) {
    throw problems.malformedHash(algorithm.name, `the ${envelope.format} value holds ${envelope.bytes.length} bytes, not ${algorithm.outputBytes}`)
  }
  return { bytes: envelope.bytes, outputBytes: envelope.bytes.length }
}

/** The bytes a digest hash string stands for under `algorithm`, or a 422 when it cannot be one. */
function expectedDigest(algorithm: DigestAlgorithm, hash: string, named: boolean): { bytes: Uint8Array, outputBytes: number } {
  if (algorithm.format) {
    const text = (named ? algorithm.namedForm?.(hash) : null) ?? hash
    if (algorithm.formatPattern && !algorithm.formatPattern.test(text)) throw problems.malformedHash(algorithm.name, 'not in its standard text form')
    return { bytes: Buffer.from(text.toUpperCase()), outputBytes: algorithm.outputBytes }
  }
  const envelope = unwrapDigest(hash)
  if (envelope) return envelopeDigest(algorithm, envelope)
  throwIfUnverifiable(hash)
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
    const expected = expectedDigest(algorithm, hash, named)
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
