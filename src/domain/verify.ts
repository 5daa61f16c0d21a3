/**
 * /api/verify: does an input match an existing digest or password hash?
 * Without `algorithm`, the hash's own format decides: password formats by their prefixes, digests
 * in a standard text form by its pattern, bare hex/base64 digests by trying every digest of that
 * output length. Every comparison is constant-time.
 *
 * Peppered hashes (`$pepper$…`, algorithms/password/pepper.ts) are opened with the key they name and
 * the hash inside is verified like any other; a key that is not configured is a 422 naming it,
 * never a silent mismatch. With `upgrade`, a match that should be rehashed also gets `newHash`,
 * made under the server's password policy (password-policy.ts) and current pepper key: passlib's
 * verify_and_update.
 */
import { detectPasswordScheme, digestsByOutputBytes, findAlgorithm, passwordSchemeNamed } from '../algorithms/registry.js'
import { digestAlgorithms } from '../algorithms/digests.js'
import type { DigestAlgorithm, ParsedPasswordHash, PasswordScheme } from '../algorithms/types.js'
import { Problem, problems } from '../problem.js'
import { algorithmFor } from './algorithm-lookup.js'
import { constantTimeEqual, decodeDigestText, decodeInput, type InputEncoding } from './encoding.js'
import type { Engine } from './engine.js'
import { unverifiableEnvelope, unwrapDigest, type Envelope } from './envelopes.js'
import { countHashedBytes, countKeyUse, countPasswordOperation } from '../observe.js'
import { isPeppered, parsePeppered, type PepperedHash } from '../algorithms/password/pepper.js'
import { newPasswordHash } from './hash.js'
import { policyShortfall } from './password-policy.js'
import type { Passwords } from './passwords.js'
import { refusePasswordScheme, refusePasswordWork } from './batch.js'
import type { HashContext } from './hash.js'
import type { Screened, Screening } from '../screening/screen.js'

export interface VerifyRequest {
  input: string
  hash: string
  algorithm?: string
  inputEncoding?: InputEncoding
  /** When the input matches and rehashing is recommended, also return `newHash` under the current policy. */
  upgrade?: boolean
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
  /** The pepper key id a peppered hash names. */
  pepperKey?: string
  /** With `upgrade`: the replacement hash, under the server's password policy and current pepper key. */
  newHash?: string
  /** With `upgrade` and a match: what screening found (PASSWORD_SCREENING=warn or reject, text input). */
  screening?: Screened
}

/** What a password verification needs to know beyond the hash: the policy, the keys, and the pepper found. */
interface PasswordContext {
  passwords: Passwords | undefined
  /** The key id of the `$pepper$` wrapper the hash came in, or null for a bare hash. */
  pepperKey: string | null
  /**
   * The NFKC form of a text input when it differs from the input (screening/normalize.ts): password
   * hashes are tried with it first, then with the input as given, which hashes made before hashd
   * normalized (or with PASSWORD_NORMALIZATION=none) were made from.
   */
  normalized: Buffer | null
  /** In a batch: password work is refused (batch.ts). */
  batch: boolean
}

/** `whenClientGone` makes a signal that aborts queued password work when the client goes away (see hash.ts). */
export async function verify(engine: Engine, request: VerifyRequest, whenClientGone?: () => AbortSignal, passwords?: Passwords, screening?: Screening, context: HashContext = {}): Promise<VerifyResult> {
  const input = decodeInput(request.input, request.inputEncoding ?? 'utf8', 'input')
  const text = (request.inputEncoding ?? 'utf8') === 'utf8' ? request.input : null
  const nfkc = text !== null && engine.config.screening.normalization === 'nfkc' ? text.normalize('NFKC') : null
  const normalized = nfkc !== null && nfkc !== text ? Buffer.from(nfkc, 'utf8') : null
  const hash = request.hash.trim()
  let signal: AbortSignal | undefined
  const gone = () => (signal ??= whenClientGone?.())
  const batch = context.batch === true
  if (batch && isPeppered(hash)) refusePasswordWork('A peppered password hash', '/body/hash')
  if (batch && request.upgrade === true) refuseUpgrade()
  const result = isPeppered(hash)
    ? await verifyPeppered(engine, request, input, hash, gone, passwords, normalized, context)
    : await verifyBare(engine, request, input, hash, gone, { passwords, pepperKey: null, normalized, batch })
  if (request.upgrade !== true || !result.match) return withoutKind(result)
  // A password that matched with `upgrade` is screened (the lists, not the length rules: it is
  // already the user's): the answer says what was found; under reject no new hash is made of it.
  const screened = text !== null && screening !== undefined && screening.policy.mode !== 'off' ? await screening.screen(text) : undefined
  const matched = { ...withoutKind(result), ...(screened ? { screening: screened } : {}) }
  if (!result.rehashRecommended && result.kind === 'password') return matched
  if (screened && !screened.acceptable && screening?.policy.mode === 'reject') {
    const reasons = result.rehashRecommended ? [result.reason ?? ''] : [`${result.algorithm ?? 'a digest'} is a fast unsalted digest, not a password hash`]
    return {
      ...matched, rehashRecommended: true, reason: reasons.filter((reason) => reason !== '').join('; '),
      warnings: [...matched.warnings, `no newHash: this password is not acceptable (${screened.reasons.map((reason) => reason.code).join(', ')}) and PASSWORD_SCREENING=reject makes no new hash of it; have the user choose a new password`],
    }
  }
  return upgrade(engine, matched, normalized ?? input, gone, passwords)
}

const refuseUpgrade = () => refusePasswordWork('upgrade (it makes a password hash)', '/body/upgrade')

/**
 * The fields at the top of a batch (routes/batch.ts), checked before any item runs: `"upgrade":
 * true` or a password algorithm asks every item for password work, which batches do not take (422
 * password-in-batch, whole). (`input` and `hash` are each item's own: the item schema requires them.)
 */
export function checkVerifyBatchTop(top: Partial<VerifyRequest>): void {
  if (top.upgrade === true) refuseUpgrade()
  const algorithm = top.algorithm === undefined ? undefined : algorithmFor(top.algorithm, 'verify')
  if (algorithm?.kind === 'password') refusePasswordScheme(algorithm, '/body/algorithm')
}

type Verified = VerifyResult & { kind?: 'password' | 'digest' }

function withoutKind(result: Verified): VerifyResult {
  const { kind: _kind, ...rest } = result
  return rest
}

/**
 * verify_and_update: a matched hash that should be replaced gets `newHash`. A bare digest that
 * matched a password (the caller asked to upgrade, so it is one) is always replaced: a fast
 * unsalted digest is not a password hash, whatever its name.
 */
async function upgrade(engine: Engine, result: VerifyResult, input: Buffer, gone: () => AbortSignal | undefined, passwords: Passwords | undefined): Promise<VerifyResult> {
  const reasons = result.rehashRecommended ? [result.reason ?? ''] : [`${result.algorithm ?? 'a digest'} is a fast unsalted digest, not a password hash`]
  const upgraded: VerifyResult = { ...result, rehashRecommended: true, reason: reasons.filter((reason) => reason !== '').join('; ') }
  if (!passwords) return upgraded
  if (passwords.policy.unusable) return { ...upgraded, warnings: [...upgraded.warnings, `no newHash: ${passwords.policy.unusable}`] }
  const { scheme, options } = passwords.policy
  try {
    const { value, ms } = await newPasswordHash(engine, scheme, input, options, passwords.keyring?.current ?? null, gone())
    return { ...upgraded, newHash: value, processingTimeMs: upgraded.processingTimeMs + ms }
  } catch (error) {
    // The policy's scheme cannot take this input (bcrypt and more than 72 bytes): say so, keep the match.
    if (error instanceof Problem && error.status === 422) {
      return { ...upgraded, warnings: [...upgraded.warnings, `no newHash: ${error.detail}`] }
    }
    throw error
  }
}

/**
 * The hash inside a `$pepper$` string and its scheme: a key the server does not have is 422
 * unknown-pepper-key naming it, a string that does not open under its key 422 pepper-key-mismatch.
 */
export async function openPeppered(peppered: PepperedHash, passwords: Passwords | undefined): Promise<{ inner: string, scheme: PasswordScheme }> {
  const version = passwords?.keyring?.version(peppered.keyId)
  if (version && !version.verifies) {
    throw problems.unprocessable('retired-pepper-key', 'Retired pepper key',
      `The hash is peppered with key "${peppered.keyId}", which this server's PEPPER_KEYS_FILE marks state=retired; ` +
      'it cannot be verified until that key is made to verify again (remove state=retired from its line)', { pepperKey: peppered.keyId })
  }
  const key = version?.material
  if (!key) {
    throw problems.unprocessable('unknown-pepper-key', 'Unknown pepper key',
      `The hash is peppered with key "${peppered.keyId}", which is not in this server's PEPPER_KEYS_FILE` +
      `${passwords?.keyring ? ` (it has ${passwords.keyring.ids.join(', ')})` : ' (no pepper keys are configured)'}; ` +
      'it cannot be verified until that key is configured again', { pepperKey: peppered.keyId })
  }
  const inner = await key.open(peppered)
  if (inner === null) {
    throw problems.unprocessable('pepper-key-mismatch', 'Peppered hash does not open',
      `The hash names pepper key "${peppered.keyId}" but does not decrypt under this server's key of that id: ` +
      'the string was changed, or the key was replaced under the same id', { pepperKey: peppered.keyId })
  }
  countKeyUse('pepper', 'pepper', key.id, 'open')
  const scheme = findAlgorithm(peppered.scheme)
  if (scheme?.kind !== 'password') throw problems.malformedHash('peppered', `the header names ${peppered.scheme}, which is not a password scheme`)
  if (!scheme.claims(inner)) throw problems.malformedHash('peppered', `the header names ${peppered.scheme} but the hash inside is not one`)
  return { inner, scheme }
}

/** A `$pepper$` string: open it with the key it names, then verify the hash inside. */
async function verifyPeppered(engine: Engine, request: VerifyRequest, input: Buffer, hash: string, gone: () => AbortSignal | undefined, passwords: Passwords | undefined, normalized: Buffer | null, context: HashContext): Promise<Verified> {
  const peppered = parsePeppered(hash)
  const { inner, scheme } = await openPeppered(peppered, passwords)
  context.keys?.used('pepper', 'pepper', peppered.keyId)
  if (request.algorithm !== undefined) {
    const named = algorithmFor(request.algorithm, 'verify')
    if (named.name !== scheme.name && named.name !== scheme.family) {
      throw problems.malformedHash(named.name, `the peppered hash holds a ${scheme.name} hash`)
    }
  }
  return { ...await verifyPassword(engine, scheme, input, inner, gone(), { passwords, pepperKey: peppered.keyId, normalized, batch: false }), pepperKey: peppered.keyId }
}

async function verifyBare(engine: Engine, request: VerifyRequest, input: Buffer, hash: string, gone: () => AbortSignal | undefined, context: PasswordContext): Promise<Verified> {
  if (request.algorithm !== undefined) {
    const algorithm = algorithmFor(request.algorithm, 'verify')
    if (algorithm.kind === 'password') return verifyPassword(engine, algorithm, input, hash, gone(), context)
    const carrier = algorithm.passwordForm === undefined ? undefined : passwordSchemeNamed(algorithm.passwordForm)
    if (carrier?.claims(hash)) return verifyPassword(engine, carrier, input, hash, gone(), context)
    return verifyDigest(engine, [algorithm], input, hash, true)
  }
  const scheme = detectPasswordScheme(hash)
  if (scheme) return verifyPassword(engine, scheme, input, hash, gone(), context)
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

async function verifyPassword(engine: Engine, scheme: PasswordScheme, input: Buffer, hash: string, signal: AbortSignal | undefined, context: PasswordContext): Promise<Verified> {
  if (context.batch) refusePasswordScheme(scheme, '/body/hash')
  // Parse and cap-check before any work: a hash asking for 2^31 bcrypt rounds must not cost a thing.
  const parsed = scheme.parse(hash)
  scheme.checkCaps(parsed.params, engine.config.caps)
  const run = async (bytes: Buffer) => {
    try {
      return await engine.run<boolean>({ op: 'password-verify', scheme: parsed.scheme, input: bytes, hash }, signal)
    } catch (error) {
      countPasswordOperation('verify', scheme.name, 'error')
      throw error
    }
  }
  let outcome = await run(context.normalized ?? input)
  let unnormalized = false
  if (!outcome.value && context.normalized !== null) {
    // Made from the password as typed rather than its NFKC form: it matches, and is upgraded.
    const asGiven = await run(input)
    outcome = { value: asGiven.value, ms: outcome.ms + asGiven.ms }
    unnormalized = asGiven.value
  }
  const { value: match, ms } = outcome
  countPasswordOperation('verify', scheme.name, match ? 'match' : 'mismatch')
  const reasons = match ? [rehashReasons(scheme, parsed, context), unnormalized ? 'made from the password as typed, not its NFKC form, which this server hashes (PASSWORD_NORMALIZATION)' : null].filter((each) => each !== null) : []
  const reason = reasons.length > 0 ? reasons.join('; ') : null
  return {
    kind: 'password',
    match,
    algorithm: parsed.scheme,
    format: parsed.format,
    processingTimeMs: ms,
    rehashRecommended: reason !== null,
    ...(reason !== null ? { reason } : {}),
    warnings: scheme.verifyWarnings?.(input, parsed) ?? [],
  }
}

/**
 * Why a matching password hash should be replaced, or null: the scheme's own judgement (weak scheme,
 * parameters below OWASP), parameters below the server's policy, and the pepper: a hash under a key
 * that is no longer current, or none when the server has keys.
 */
function rehashReasons(scheme: PasswordScheme, parsed: ParsedPasswordHash, { passwords, pepperKey }: PasswordContext): string | null {
  const reasons = [scheme.rehashReason(parsed)]
  if (passwords) {
    reasons.push(policyShortfall(passwords.policy, parsed))
    const current = passwords.keyring?.current.id
    // A key newer than the current one (staged during a rotation) is not a reason: it is about to be current.
    if (pepperKey !== null && current !== undefined && passwords.keyring?.isOlder(pepperKey)) {
      reasons.push(`peppered with key ${pepperKey}, which is no longer current; the current pepper key is ${current}`)
    } else if (pepperKey === null && current !== undefined) {
      reasons.push(`not peppered; this server peppers new hashes with key ${current}`)
    }
  }
  const found = reasons.filter((reason): reason is string => reason !== null)
  return found.length === 0 ? null : found.join('; ')
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

async function verifyDigest(engine: Engine, candidates: DigestAlgorithm[], input: Buffer, hash: string, named: boolean): Promise<Verified> {
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
        kind: 'digest', match: true, algorithm: algorithm.name, processingTimeMs: total,
        rehashRecommended: algorithm.weak !== undefined, ...(algorithm.weak ? { reason: algorithm.weak } : {}), warnings: [],
      }
    }
  }
  return {
    match: false, algorithm: named ? (candidates[0] as DigestAlgorithm).name : null, processingTimeMs: total, rehashRecommended: false,
    warnings: named ? [] : [`tried ${candidates.map((candidate) => candidate.name).join(', ')}`],
  }
}
