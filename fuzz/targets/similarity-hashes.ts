/**
 * The similarity hashes' parsers and comparisons (src/similarity/): `parseSsdeep` and
 * `ssdeepCompare`, `parseTlsh` and `tlshDistance`, and /api/similarity/compare's `compareHashes`.
 *
 * Input: an options byte, then the fields `a` and `b` (split by FIELD_SEPARATOR), read as UTF-8 or,
 * when the options byte's bit 0x40 is set, as Latin-1. The options byte's low 2 bits choose
 * `algorithm` (none, ssdeep, tlsh, pdq), bit 0x04 sends a threshold (the next bits: 0, 30, 50, 256 or
 * 10,001), bit 0x20 sends `lengthTerm` (bit 0x80 its value).
 *
 * Invariants: a hash that parses compares with itself as the same (ssdeep score 100, TLSH distance
 * 0, with and without the length term); scores are integers from 0 to 100 and distances integers
 * from 0 up, the same both ways round; compareHashes answers with an algorithm it knows, the
 * measure that algorithm has, and `similar` as the threshold says, and comparing a hash with
 * itself is similar at the default threshold.
 *
 * Expected refusals: compareHashes' Problem 400 `validation` (a malformed hash, an unknown
 * algorithm, a threshold out of range, lengthTerm for other than TLSH) and 422
 * `similarity-mismatch`. The parsers and the comparisons themselves never throw. Anything else
 * thrown is a finding.
 */
import { COMPARE_ALGORITHMS, compareHashes, type CompareRequest, type CompareResult } from '../../src/similarity/compare.js'
import { parseSsdeep, ssdeepCompare } from '../../src/similarity/ssdeep.js'
import { parseTlsh, tlshDistance } from '../../src/similarity/tlsh.js'
import { fields, invariant, isProblem, refusing } from '../support.js'

const ALGORITHMS = [undefined, 'ssdeep', 'tlsh', 'pdq'] as const
const THRESHOLDS = [0, 30, 50, 256, 10_001] as const
const PROBLEM_TYPES = ['urn:hashd:problem:validation', 'urn:hashd:problem:similarity-mismatch']

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0

function checkSsdeep(text: string, other: string): void {
  const parsed = parseSsdeep(text)
  if (parsed === null) return
  invariant(ssdeepCompare(parsed, parsed) === 100, `${text} scores ${ssdeepCompare(parsed, parsed)} against itself`)
  const second = parseSsdeep(other)
  if (second === null) return
  const score = ssdeepCompare(parsed, second)
  invariant(isCount(score) && score <= 100, `score ${score}`)
  invariant(ssdeepCompare(second, parsed) === score, `${text} and ${other}: the score depends on the order`)
}

function checkTlsh(text: string, other: string): void {
  const parsed = parseTlsh(text)
  if (parsed === null) return
  invariant(tlshDistance(parsed, parsed) === 0 && tlshDistance(parsed, parsed, false) === 0, `${text} is at a distance from itself`)
  const second = parseTlsh(other)
  if (second === null) return
  for (const lengthTerm of [true, false]) {
    const distance = tlshDistance(parsed, second, lengthTerm)
    invariant(isCount(distance), `distance ${distance}`)
    invariant(tlshDistance(second, parsed, lengthTerm) === distance, `${text} and ${other}: the distance depends on the order`)
  }
}

function checkAnswer(request: CompareRequest, answer: CompareResult): void {
  invariant(COMPARE_ALGORITHMS.includes(answer.algorithm), `algorithm ${answer.algorithm}`)
  invariant(request.algorithm === undefined || answer.algorithm === request.algorithm, `asked for ${request.algorithm}, answered ${answer.algorithm}`)
  const isScore = answer.algorithm === 'ssdeep'
  const value = isScore ? answer.score : answer.distance
  invariant(isCount(value) && (isScore ? answer.distance === undefined && value <= 100 : answer.score === undefined), `measure of ${JSON.stringify(answer)}`)
  invariant(answer.threshold === (request.threshold ?? answer.threshold), 'threshold not the one asked for')
  invariant(answer.similar === (isScore ? value >= answer.threshold : value <= answer.threshold), `similar in ${JSON.stringify(answer)}`)
  invariant((answer.lengthTerm !== undefined) === (answer.algorithm === 'tlsh'), `lengthTerm in ${JSON.stringify(answer)}`)
}

const compare = (request: CompareRequest): CompareResult | undefined =>
  refusing(() => compareHashes(request), (error) => isProblem(error, [400, 422], PROBLEM_TYPES))

export function fuzz(data: Buffer): void {
  const [options, aBytes, bBytes] = fields(data, 3) as [Buffer, Buffer, Buffer]
  const flags = options[0] ?? 0
  const encoding = flags & 0x40 ? 'latin1' : 'utf8'
  const a = aBytes.toString(encoding)
  const b = bBytes.toString(encoding)

  checkSsdeep(a, b)
  checkTlsh(a, b)

  const request: CompareRequest = { a, b }
  const algorithm = ALGORITHMS[flags & 0x03]
  if (algorithm !== undefined) request.algorithm = algorithm
  if (flags & 0x04) request.threshold = THRESHOLDS[((flags >> 3) & 0x03) + ((options[1] ?? 0) & 1)]!
  if (flags & 0x20) request.lengthTerm = (flags & 0x80) !== 0
  const answer = compare(request)
  if (answer !== undefined) checkAnswer(request, answer)

  // A hash that compareHashes reads is the same as itself.
  const self = compare({ a, b: a, ...(algorithm === undefined ? {} : { algorithm }) })
  if (self !== undefined) {
    checkAnswer({ a, b: a }, self)
    invariant(self.similar && (self.score ?? 100) === 100 && (self.distance ?? 0) === 0, `${a} against itself: ${JSON.stringify(self)}`)
  }
}
