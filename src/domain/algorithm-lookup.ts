/** Turning a requested algorithm name into a registry entry an operation accepts, or a 400. */
import { algorithms, findAlgorithm, normalizeName, refusal } from '../algorithms/registry.js'
import type { Algorithm, Operation } from '../algorithms/types.js'
import { problems } from '../problem.js'

/** `pointer` is where the name was, e.g. `/body/algorithm` or `/querystring/algorithms`. */
export function algorithmFor(name: string, operation: Operation, pointer = '/body/algorithm'): Algorithm {
  const algorithm = findAlgorithm(name)
  if (!algorithm) throw problems.unknownAlgorithm(name, pointer, suggestAlgorithms(name, operation))
  const why = refusal(algorithm, operation)
  if (why !== null) throw problems.wrongOperation(algorithm.name, `/api/${operation}`, why, pointer)
  return algorithm
}

/** Levenshtein distance, stopping early past `limit` (names are at most 64 characters). */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
      current.push(value)
      best = Math.min(best, value)
    }
    if (best > limit) return limit + 1
    previous = current
  }
  return previous[b.length] ?? limit + 1
}

/**
 * "Did you mean": canonical names of algorithms this operation takes whose name, display name or
 * an alias is within a small edit distance of the one given (after the same normalisation the
 * lookup uses), nearest first, at most three. `sha-265` → sha256.
 */
export function suggestAlgorithms(name: string, operation: Operation): string[] {
  const wanted = normalizeName(name.slice(0, 64))
  if (wanted.length === 0) return []
  const limit = wanted.length <= 4 ? 1 : 2
  const scored: Array<[number, string]> = []
  for (const algorithm of algorithms) {
    if (refusal(algorithm, operation) !== null) continue
    const best = Math.min(...[algorithm.name, algorithm.displayName, ...algorithm.aliases].map((spelling) => distance(wanted, normalizeName(spelling), limit)))
    if (best <= limit) scored.push([best, algorithm.name])
  }
  return scored.sort((a, b) => a[0] - b[0]).slice(0, 3).map(([, canonical]) => canonical)
}
