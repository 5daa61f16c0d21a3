/**
 * Comparing two similarity hashes: one row per algorithm (what its hashes look like, how two are
 * compared, whether the answer is a distance or a score, and the default threshold with its
 * anchor), and one `compareHashes` over the table. A new hash is one more row here and one more
 * branch of the answer's schema (routes/similarity.ts). The forms do not overlap: ssdeep has colons,
 * TLSH 70 hex digits (or `T1` and 70), PDQ 64.
 */
import { normalizeName } from '../algorithms/registry.js'
import { problems } from '../problem.js'
import { parseSsdeep, ssdeepCompare } from './ssdeep.js'
import { parseTlsh, tlshDistance } from './tlsh.js'

export interface CompareOptions {
  /** TLSH only: include the length term (the reference's default; false is its `-xlen`). */
  lengthTerm: boolean
}

export interface SimilarityComparer<Parsed = unknown> {
  name: string
  aliases: readonly string[]
  /** A distance (0 is the same; similar when at most the threshold) or a score (similar when at least). */
  measure: 'distance' | 'score'
  defaultThreshold: number
  /** The thresholds a request may ask for. */
  thresholdRange: { min: number, max: number }
  /** What the form looks like, for error messages. */
  form: string
  /** Whether the comparison reads `lengthTerm`. */
  lengthTerm: boolean
  parse(hash: string): Parsed | null
  compare(a: Parsed, b: Parsed, options: CompareOptions): number
}

const PDQ_FORM = /^[0-9a-fA-F]{64}$/

/** A PDQ hash's 256 bits, or null when it is not 64 hex digits. */
function parsePdq(hash: string): Buffer | null {
  return PDQ_FORM.test(hash) ? Buffer.from(hash, 'hex') : null
}

/** The Hamming distance of two PDQ hashes: how many of their 256 bits differ (pdq/cpp/common/pdqhashtypes.cpp). */
function pdqDistance(a: Buffer, b: Buffer): number {
  let distance = 0
  for (let index = 0; index < a.length; index++) {
    let bits = (a[index]! ^ b[index]!) & 0xff
    while (bits !== 0) { bits &= bits - 1; distance++ }
  }
  return distance
}

const row = <Parsed>(comparer: SimilarityComparer<Parsed>): SimilarityComparer => comparer as SimilarityComparer

export const comparers: readonly SimilarityComparer[] = [
  row({
    name: 'ssdeep', aliases: ['ctph', 'spamsum', 'fuzzy'], measure: 'score',
    // The ssdeep tool lists every score above 0; hashd calls two files similar from 50, where
    // libfuzzy's edit distance says half the pieces of the shorter hash are shared (docs/similarity.md).
    defaultThreshold: 50, thresholdRange: { min: 0, max: 100 },
    form: 'blocksize:hash1:hash2, as ssdeep prints it', lengthTerm: false,
    parse: parseSsdeep, compare: (a, b) => ssdeepCompare(a, b),
  }),
  row({
    name: 'pdq', aliases: ['pdq-photo'], measure: 'distance',
    // Meta's threshold for PDQ matches (ThreatExchange's pdq/README: 31 of 256 bits, where its
    // false-positive rate on distinct photos becomes negligible).
    defaultThreshold: 31, thresholdRange: { min: 0, max: 256 },
    form: '64 hex digits (256 bits), as /api/filehash gives it', lengthTerm: false,
    parse: parsePdq, compare: pdqDistance,
  }),
  row({
    name: 'tlsh', aliases: ['trendmicro-tlsh'], measure: 'distance',
    // Strelka's TLSH scanner matches at a distance of 30 or less.
    defaultThreshold: 30, thresholdRange: { min: 0, max: 10_000 },
    form: 'T1 and 70 hex digits (or the 70 digits alone)', lengthTerm: true,
    parse: parseTlsh, compare: (a, b, options) => tlshDistance(a, b, options.lengthTerm),
  }),
]

const byKey = new Map<string, SimilarityComparer>()
for (const comparer of comparers) for (const name of [comparer.name, ...comparer.aliases]) byKey.set(normalizeName(name), comparer)

export const COMPARE_ALGORITHMS = comparers.map((comparer) => comparer.name)

export interface CompareRequest {
  a: string
  b: string
  algorithm?: string
  threshold?: number
  lengthTerm?: boolean
}

export interface CompareResult {
  algorithm: string
  distance?: number
  score?: number
  similar: boolean
  threshold: number
  /** TLSH: whether the distance includes the length term. */
  lengthTerm?: boolean
}

const malformed = (field: 'a' | 'b', detail: string) =>
  problems.validation(`${field} is not ${detail}`, [{ pointer: `/body/${field}`, message: `not ${detail}` }])

function comparerNamed(name: string): SimilarityComparer {
  const comparer = name.length > 64 ? undefined : byKey.get(normalizeName(name))
  if (!comparer) {
    throw problems.validation(`algorithm must be one of ${COMPARE_ALGORITHMS.join(', ')}`, [{ pointer: '/body/algorithm', message: `not one of ${COMPARE_ALGORITHMS.join(', ')}` }])
  }
  return comparer
}

/** The comparer whose form the hash has; the forms do not overlap. */
function comparerOf(hash: string, field: 'a' | 'b'): SimilarityComparer {
  const found = comparers.find((comparer) => comparer.parse(hash) !== null)
  if (!found) throw malformed(field, `a similarity hash hashd knows (${comparers.map((comparer) => `${comparer.name}: ${comparer.form}`).join('; ')})`)
  return found
}

export function compareHashes(request: CompareRequest): CompareResult {
  let comparer: SimilarityComparer
  if (request.algorithm !== undefined) {
    comparer = comparerNamed(request.algorithm)
  } else {
    comparer = comparerOf(request.a, 'a')
    const other = comparerOf(request.b, 'b')
    if (other !== comparer) {
      throw problems.unprocessable('similarity-mismatch', 'Hashes of different kinds',
        `a is a ${comparer.name} hash and b a ${other.name} hash; only hashes of one kind can be compared`)
    }
  }
  const a = comparer.parse(request.a)
  if (a === null) throw malformed('a', `a ${comparer.name} hash (${comparer.form})`)
  const b = comparer.parse(request.b)
  if (b === null) throw malformed('b', `a ${comparer.name} hash (${comparer.form})`)
  if (request.lengthTerm !== undefined && !comparer.lengthTerm) {
    throw problems.validation(`lengthTerm applies to TLSH only, not ${comparer.name}`, [{ pointer: '/body/lengthTerm', message: 'not for this algorithm' }])
  }
  const threshold = request.threshold ?? comparer.defaultThreshold
  const { min, max } = comparer.thresholdRange
  if (!Number.isInteger(threshold) || threshold < min || threshold > max) {
    throw problems.validation(`threshold for ${comparer.name} is an integer from ${min} to ${max}`, [{ pointer: '/body/threshold', message: `not an integer from ${min} to ${max}` }])
  }
  const lengthTerm = request.lengthTerm ?? true
  const value = comparer.compare(a, b, { lengthTerm })
  const similar = comparer.measure === 'distance' ? value <= threshold : value >= threshold
  return {
    algorithm: comparer.name,
    ...(comparer.measure === 'distance' ? { distance: value } : { score: value }),
    similar,
    threshold,
    ...(comparer.lengthTerm ? { lengthTerm } : {}),
  }
}
