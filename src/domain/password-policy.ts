/**
 * The server's password policy: the scheme and parameters of every hash it makes on its own
 * initiative (the `newHash` of verify-and-upgrade), plus the current pepper key when
 * PEPPER_KEYS_FILE is set. PASSWORD_ALGORITHM and PASSWORD_OPTIONS choose it; it is checked at start
 * against the scheme's option bounds and the server's caps, so a policy that could never hash is a
 * start-up error, not a 422 at some user's login. The built-in default (argon2id at OWASP's
 * minimum) is not forced on a server whose caps are below it: there the policy is marked unusable,
 * verify-and-upgrade says so in a warning instead of giving newHash, and the server still starts.
 */
import { findAlgorithm } from '../algorithms/registry.js'
import type { CostParams, ParsedPasswordHash, PasswordScheme } from '../algorithms/types.js'
import { ConfigError, type Config } from '../config.js'
import { Problem } from '../problem.js'
import { yescryptCostParams } from '../algorithms/password/crypt.js'
import { resolveOptions } from './options.js'

export interface PasswordPolicy {
  scheme: PasswordScheme
  /** Every option of the scheme, defaults filled in. */
  options: CostParams
  /** The same costs as a parsed hash of the policy would show them (yescrypt's cost as N and r). */
  params: CostParams
  /** Why the default policy cannot hash on this server (its caps are below it); absent when it can. */
  unusable?: string
}

export function resolvePasswordPolicy(config: Pick<Config, 'passwordPolicy' | 'caps'>): PasswordPolicy {
  const { algorithm, options } = config.passwordPolicy
  const scheme = findAlgorithm(algorithm)
  if (!scheme || scheme.kind !== 'password') throw new ConfigError(`PASSWORD_ALGORITHM must name a password scheme (argon2id, bcrypt, scrypt, …), got "${algorithm.slice(0, 64)}"`)
  if (scheme.writes === null) throw new ConfigError(`PASSWORD_ALGORITHM ${scheme.name} is a legacy format hashd verifies but does not generate`)
  try {
    const resolved = resolveOptions(scheme.name, scheme.options, options, config.caps)
    scheme.checkCaps(resolved, config.caps)
    const params = policyParams(scheme, resolved)
    const weak = scheme.rehashReason({ scheme: scheme.name, params, format: scheme.writes })
    if (weak !== null) throw new ConfigError(`PASSWORD_ALGORITHM and PASSWORD_OPTIONS make hashes hashd would itself recommend replacing: ${weak}`)
    return { scheme, options: resolved, params }
  } catch (error) {
    if (!(error instanceof Problem)) throw error
    if (config.passwordPolicy.explicit) throw new ConfigError(`PASSWORD_OPTIONS: ${error.detail}`)
    const defaults = Object.fromEntries(Object.entries(scheme.options).map(([name, spec]) => [name, spec.default]))
    return {
      scheme, options: defaults, params: policyParams(scheme, defaults),
      unusable: `the default password policy (${scheme.name} at its defaults) exceeds this server's caps (${error.detail}); set PASSWORD_ALGORITHM and PASSWORD_OPTIONS`,
    }
  }
}

/**
 * The options of a new hash as the parameters its parsed form would show (scrypt's `N`, argon2's
 * `memoryCost` …): most schemes use the same names for both; yescrypt's `cost` stands for N and r.
 */
function policyParams(scheme: PasswordScheme, options: CostParams): CostParams {
  if ((scheme.name === 'yescrypt' || scheme.name === 'gost-yescrypt') && options.cost !== undefined) {
    return { ...yescryptCostParams(options.cost), p: 1, t: 0 }
  }
  // The version of the format hashd writes (argon2 0x13 = 19; bcrypt-sha256 v2).
  return { version: scheme.family === 'argon2' ? 19 : 2, ...options }
}

/** Parameters compared against the policy: more of them is more work for an attacker. */
const COST_PARAMS = ['memoryCost', 'timeCost', 'cost', 'iterations', 'rounds', 'N', 'r']

/**
 * Why a hash of the policy's own scheme falls short of the policy (cost parameters below it), or
 * null. Hashes of other schemes are judged by their own rehashReason only: a sound bcrypt hash is
 * not replaced just because the policy now says argon2id (passlib's CryptContext does the same for
 * schemes not marked deprecated).
 */
export function policyShortfall(policy: PasswordPolicy, parsed: ParsedPasswordHash): string | null {
  if (parsed.scheme !== policy.scheme.name) return null
  const below = COST_PARAMS.filter((name) => parsed.params[name] !== undefined && policy.params[name] !== undefined && (parsed.params[name] as number) < (policy.params[name] as number))
  if (below.length === 0) return null
  return `${parsed.scheme} ${below.map((name) => `${name} ${parsed.params[name]}`).join(', ')} is below this server's password policy (${below.map((name) => `${name} ${policy.params[name]}`).join(', ')})`
}

/** What GET /api/password-policy shows. */
export function describePolicy(policy: PasswordPolicy, currentPepperKey: string | null) {
  return {
    algorithm: policy.scheme.name, options: policy.options, pepperKey: currentPepperKey, format: policy.scheme.writes ?? '',
    ...(policy.unusable ? { unusable: policy.unusable } : {}),
  }
}
