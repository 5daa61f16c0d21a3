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

/**
 * Edit distance with adjacent transpositions (optimal string alignment), so that sha265 is one
 * step from sha256; names are at most 64 characters.
 */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[]
      const above = rows[i - 1] as number[]
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, ((rows[i - 2] as number[])[j - 2] as number) + 1)
      row[j] = value
    }
  }
  return (rows[a.length] as number[])[b.length] as number
}

/**
 * "Did you mean": canonical names of algorithms this operation takes whose name, display name or
 * an alias is nearest to the one given (within 1 edit for short names, 2 otherwise, after the
 * same normalisation the lookup uses), at most three. `sha-265` → sha256.
 */
export function suggestAlgorithms(name: string, operation: Operation): string[] {
  const wanted = normalizeName(name.slice(0, 64))
  if (wanted.length === 0) return []
  const limit = wanted.length <= 4 ? 1 : 2
  const scored: Array<[number, string]> = []
  for (const algorithm of algorithms) {
    if (refusal(algorithm, operation) !== null) continue
    const best = Math.min(...[algorithm.name, algorithm.displayName, ...algorithm.aliases].map((spelling) => distance(wanted, normalizeName(spelling))))
    if (best <= limit) scored.push([best, algorithm.name])
  }
  // Only the nearest: sha265 is one step from sha256 and two from sha224.
  const nearest = Math.min(...scored.map(([score]) => score))
  return scored.filter(([score]) => score === nearest).slice(0, 3).map(([, canonical]) => canonical)
}
