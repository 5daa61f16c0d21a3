/**
 * Resolves the `options` object of /api/hash against an algorithm's option specs: unknown keys and
 * out-of-range values are 400, values above the server's configured caps are 422, and absent
 * options take their defaults.
 */
import type { CostCaps } from '../config.js'
import type { CostParams, OptionSpec } from '../algorithms/types.js'
import { problems } from '../problem.js'

export function resolveOptions(algorithmName: string, specs: Record<string, OptionSpec>, given: Record<string, number> | undefined, caps: CostCaps): CostParams {
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
    const value = given !== undefined && Object.hasOwn(given, key) ? given[key] as number : spec.default
    if (!Number.isSafeInteger(value) || value < spec.min || value > spec.max) {
      throw problems.invalidOption(key, `${algorithmName} ${key} must be an integer from ${spec.min} to ${spec.max}`)
    }
    const cap = spec.cap?.(caps)
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
