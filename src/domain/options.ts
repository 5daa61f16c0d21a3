/**
 * Resolves the `options` object of /api/hash against an algorithm's option specs: unknown keys and
 * out-of-range values are 400, values above the server's configured caps are 422, and absent
 * options take their defaults.
 */
import type { CostCaps } from '../config.js'
import type { CostParams, OptionSpec } from '../algorithms/types.js'
import { problems } from '../problem.js'

export function resolveOptions(algorithmName: string, specs: Record<string, OptionSpec>, given: Readonly<Record<string, number | string>> | undefined, caps: CostCaps): CostParams {
  const resolved: CostParams = {}
  for (const key of Object.keys(given ?? {})) {
    if (!Object.hasOwn(specs, key)) {
      const known = Object.keys(specs)
      throw problems.invalidOption(key, known.length === 0
        ? `${algorithmName} takes no options`
        : `${algorithmName} has no option "${key.slice(0, 40)}"; it takes ${known.join(', ')}`)
    }
  }
  for (const [key, spec] of Object.entries(specs)) {
    const value = given !== undefined && Object.hasOwn(given, key) ? given[key] : spec.default
    const cap = spec.cap?.(caps)
    // A string is a content hash's kind of option (`partSize: "8MiB"`); no digest or password scheme takes one.
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < spec.min || value > spec.max) {
      // The range this server takes, so that the next attempt is not refused at the cap instead.
      throw problems.invalidOption(key, cap !== undefined && cap < spec.max
        ? `${algorithmName} ${key} must be an integer from ${spec.min} to ${cap} (this server's cap; the format allows up to ${spec.max})`
        : `${algorithmName} ${key} must be an integer from ${spec.min} to ${spec.max}`)
    }
    if (cap !== undefined && value > cap) {
      throw problems.costAboveCap(`${algorithmName} ${key} ${value} is above this server's cap of ${cap}`)
    }
    resolved[key] = value
  }
  return resolved
}

/** The option specs a digest takes: only XOFs and variable-length digests have `outputLength`. */
export function digestOptionSpecs(outputBytes: number, outputLength?: { min: number, max: number }): Record<string, OptionSpec> {
  return outputLength
    ? { outputLength: { default: outputBytes, min: outputLength.min, max: outputLength.max, description: 'output length in bytes' } }
    : {}
}

/** `min–max` of each option with this server's caps applied, e.g. `cost 4–15`: for the document. */
export function describeOptionBounds(specs: Record<string, OptionSpec>, caps: CostCaps): string {
  return Object.entries(specs).map(([key, spec]) => `${key} ${spec.min}–${Math.min(spec.max, spec.cap?.(caps) ?? spec.max)}`).join(', ')
}
