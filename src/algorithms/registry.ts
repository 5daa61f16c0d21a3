/**
 * The algorithm registry: the one table every operation, the OpenAPI document and
 * `/api/algorithms` read. Lookups are case-insensitive and ignore the separators people use
 * (`SHA-256`, `sha_256`, `SHA256` and `sha 256` all name `sha256`).
 */
import { digestAlgorithms } from './digests.js'
import { passwordSchemes } from './password/index.js'
import { similarityAlgorithms } from '../similarity/index.js'
import type { Algorithm, DigestAlgorithm, Operation, PasswordScheme } from './types.js'

export const algorithms: readonly Algorithm[] = [...digestAlgorithms, ...similarityAlgorithms, ...passwordSchemes]

/** The key a name is looked up by: lowercase, without `-`, `_`, `/`, `.` or spaces. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_/. ]/g, '')
}

const byKey = new Map<string, Algorithm>()
for (const algorithm of algorithms) {
  for (const spelling of [algorithm.name, algorithm.displayName, ...algorithm.aliases]) {
    const key = normalizeName(spelling)
    const existing = byKey.get(key)
    if (existing && existing !== algorithm) {
      throw new Error(`registry: "${spelling}" names both ${existing.name} and ${algorithm.name}`)
    }
    byKey.set(key, algorithm)
  }
}

export function findAlgorithm(name: string): Algorithm | undefined {
  return name.length > 64 ? undefined : byKey.get(normalizeName(name))
}

/** Which operations accept an algorithm, and why not where they do not. */
export function refusal(algorithm: Algorithm, operation: Operation): string | null {
  switch (operation) {
    case 'hash':
    case 'verify':
      if (algorithm.kind === 'similarity' && operation === 'verify') return 'a similarity hash is compared by score or distance, not verified; POST /api/similarity/compare compares two'
      if (algorithm.kind === 'password' && operation === 'hash' && algorithm.writes === null) return 'it is a legacy format hashd verifies but does not generate'
      return null
    case 'filehash':
      return algorithm.kind === 'password' ? 'password hashes are for short secrets, not files' : null
    case 'hmac':
      if (algorithm.kind === 'password') return 'it is a password hash'
      if (algorithm.kind === 'checksum') return 'it is a checksum, not a cryptographic hash'
      if (algorithm.kind === 'similarity') return 'it is a similarity hash, not a cryptographic hash'
      if (algorithm.kind === 'xof') return 'HMAC (RFC 2104) is defined for fixed-length hashes; use KMAC for XOFs'
      return algorithm.blockBytes === undefined ? 'it has no defined HMAC construction' : null
  }
}

export function operationsFor(algorithm: Algorithm): Operation[] {
  return (['hash', 'verify', 'filehash', 'hmac'] as const).filter((operation) => refusal(algorithm, operation) === null)
}

/** Candidates for a bare digest of this many bytes; XOFs count at their default length (BLAKE3's 32). */
export const digestsByOutputBytes = (bytes: number): DigestAlgorithm[] =>
  digestAlgorithms.filter((digest) => digest.format === undefined && digest.outputBytes === bytes)

/** The scheme whose format this hash string claims, for `/api/verify` without `algorithm`. */
export function detectPasswordScheme(hash: string): PasswordScheme | undefined {
  return passwordSchemes.find((scheme) => scheme.claims(hash))
}

export function digestNamed(name: string): DigestAlgorithm {
  const found = findAlgorithm(name)
  if (!found || found.kind === 'password') throw new Error(`no digest named ${name}`)
  return found
}

export function passwordSchemeNamed(name: string): PasswordScheme {
  const found = findAlgorithm(name)
  if (!found || found.kind !== 'password') throw new Error(`no password scheme named ${name}`)
  return found
}
