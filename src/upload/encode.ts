/** The encoding stage of the upload pipeline: raw digests become the response's text form. */
import type { DigestAlgorithm } from '../algorithms/types.js'
import { encodeOutput, type OutputEncoding } from '../domain/encoding.js'

export function encodeDigests(algorithms: readonly DigestAlgorithm[], digests: Map<string, Uint8Array>, encoding: OutputEncoding): Record<string, string> {
  const hashes: Record<string, string> = {}
  for (const algorithm of algorithms) {
    const digest = digests.get(algorithm.name)
    if (digest === undefined) throw new Error(`no digest for ${algorithm.name}`)
    hashes[algorithm.name] = algorithm.format ? algorithm.format(digest) : encodeOutput(digest, encoding)
  }
  return hashes
}
