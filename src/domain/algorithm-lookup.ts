/** Turning a requested algorithm name into a registry entry an operation accepts, or a 400. */
import { findAlgorithm, refusal } from '../algorithms/registry.js'
import type { Algorithm, Operation } from '../algorithms/types.js'
import { problems } from '../problem.js'

export function algorithmFor(name: string, operation: Operation, field = 'algorithm'): Algorithm {
  const algorithm = findAlgorithm(name)
  if (!algorithm) throw problems.unknownAlgorithm(name, field)
  const why = refusal(algorithm, operation)
  if (why !== null) throw problems.wrongOperation(algorithm.name, `/api/${operation}`, why)
  return algorithm
}
