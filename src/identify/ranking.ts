/**
 * Ranking: turns the rows a string matched into calibrated confidences.
 *
 * weight = prior × (signature ? SIGNATURE_FACTOR : 1) / (length span) × clue factors × interpretation factor
 *
 * The clue factors are likelihood ratios read from the string: uppercase hex for the formats tools
 * print in uppercase, hex-only input for wide-alphabet formats, and a row's `typical` shape (the
 * salt size or initial value its application always writes) where the string lacks it.
 *
 * A row with a signature (a `$id$` prefix, `{SCHEME}`, a fixed field structure) is practically
 * never matched by chance, so it takes almost all the mass; bare hex, base64 and `hash:salt`
 * candidates share theirs by prior. Confidences are weight / (Σ weights + unknown mass), where
 * the unknown mass stands for formats outside the table: it is small next to a signature and
 * noticeable next to a lone generic match. Rounded down to 4 decimals, so a response's
 * confidences sum to at most 1.
 */
import type { ReadingKind } from './input.js'
import type { HashFormat, Params } from './types.js'

export const SIGNATURE_FACTOR = 1000
/** Uppercase hex is how pwdump-style tools print NT and LM hashes (and Oracle, SAP, MySQL). */
export const UPPERCASE_HEX_FACTOR = 8
/**
 * A near miss (a truncated crypt string, say) is weighed as its format's prior times this, with
 * no signature bonus: it leads when nothing else matches, but with a low confidence (about 0.1
 * for the commonest formats), and any real match outranks it.
 */
export const NEAR_MISS_FACTOR = 0.002
/**
 * A string of hex digits only is unlikely to come from a format with a 64-character alphabet:
 * 10 random crypt64 characters are all hex with probability (22/64)^10 ≈ 2e-5. Damped, as
 * priors are rough too.
 */
export const HEX_INPUT_WIDE_ALPHABET_FACTOR = 0.02
const ALL_HEX = /^[0-9a-fA-F]{8,}$/
/**
 * Likewise, a string of letters only (and not all hex) is unlikely to come from an alphabet with
 * digits and symbols as well: 16 random crypt64 or base64 characters are all letters with
 * probability (52/64)^16 ≈ 0.036, while an application that writes letters only (OpenEdge's
 * ENCODE: module_26200 refuses anything outside A-Z and a-z) always does. The ratio is applied as
 * a boost to the letters-only rows (capped like the hex clue), not as a penalty to the others:
 * the unknown mass stands for strings from wide alphabets too, so a letters-only DES crypt string
 * (one in fifteen of them) keeps its confidence when no letters-only row matches.
 */
const LETTERS_ONLY = /^[A-Za-z]{8,}$/
export const LETTERS_OF_64 = 52 / 64
/**
 * The leading hex digest (the whole string, or the part before `:salt` / `:user`) is uppercase:
 * only the digest is looked at, since a salt or user name after it has its own letters.
 */
const UPPERCASE_DIGEST = /^(?=[0-9A-F]{0,512}[A-F])[0-9A-F]{8,512}(?![0-9a-f])/
/** Mass reserved for formats the table does not know: a share of the total plus a floor. */
const UNKNOWN_SHARE = 0.02
const UNKNOWN_FLOOR = 20

export interface Candidate {
  format: HashFormat
  weight: number
  params: Params
  /** The part of the input this candidate read (the hash inside `user:hash`, say). */
  hash: string
  /** Set on a near miss: what keeps the string from being this format (near-miss.ts). */
  problem?: string
  /** The part of the line the reading took (input.ts), where it is not the whole string. */
  kind?: ReadingKind
  /** The account name of the line the reading took it from. */
  user?: string
}

export interface RankedCandidate extends Candidate {
  confidence: number
}

/** Orders by weight, then the more common format, then hashcat mode, then name: never by chance. */
export function compareCandidates(a: Candidate, b: Candidate): number {
  return b.weight - a.weight
    || b.format.prior - a.format.prior
    || (a.format.hashcat ?? Number.MAX_SAFE_INTEGER) - (b.format.hashcat ?? Number.MAX_SAFE_INTEGER)
    || (a.format.name < b.format.name ? -1 : a.format.name > b.format.name ? 1 : 0)
    || (a.format.displayName < b.format.displayName ? -1 : a.format.displayName > b.format.displayName ? 1 : 0)
}

/**
 * A row that admits few lengths concentrates its probability on them: when "32 hex : 3
 * characters" matches both vBulletin (salt of exactly 3) and the md5($pass.$salt) family (any
 * salt up to 256), P(length | format) is 1 for vBulletin and about 1/span for the family. The span
 * is capped at 64 because real salts of the generic modes spread over the lengths from 1 to 64
 * characters (up to the hex of a 32-byte salt), not over all 257; so a family whose priors add up
 * to 25 times vBulletin's still comes second on a 3-character salt, an application that fixes its
 * salt's length and alphabet (Redmine's 32 hex, PrestaShop's 56 characters) comes first on its own
 * length, and the family comes first on any length no application owns.
 */
const MAX_SPAN = 64

export function baseWeight(format: HashFormat, text: string): number {
  const span = Math.min(format.maxLength - format.minLength + 1, MAX_SPAN)
  let weight = format.prior * (format.signature ? SIGNATURE_FACTOR : 1) / span
  if (format.upperHex && UPPERCASE_DIGEST.test(text)) weight *= UPPERCASE_HEX_FACTOR
  if (!format.signature && format.wideAlphabet && ALL_HEX.test(text)) weight *= HEX_INPUT_WIDE_ALPHABET_FACTOR
  else if (!format.signature && format.lettersOnlyAlphabet && LETTERS_ONLY.test(text)) weight /= Math.max(HEX_INPUT_WIDE_ALPHABET_FACTOR, LETTERS_OF_64 ** text.length)
  if (format.typicalRegex && format.typical && !format.typicalRegex.test(text)) weight *= format.typical.otherwise
  return weight
}

export function rank(candidates: Candidate[]): RankedCandidate[] {
  const sorted = [...candidates].sort(compareCandidates)
  const total = sorted.reduce((sum, candidate) => sum + candidate.weight, 0)
  const denominator = total * (1 + UNKNOWN_SHARE) + UNKNOWN_FLOOR
  // Objects of one shape (no spread): this runs for every match of every request.
  return sorted.map((candidate) => ({
    format: candidate.format,
    weight: candidate.weight,
    params: candidate.params,
    hash: candidate.hash,
    problem: candidate.problem,
    kind: candidate.kind,
    user: candidate.user,
    confidence: Math.floor((candidate.weight / denominator) * 10_000) / 10_000,
  }))
}

/**
 * The first answer is a coin toss when the second candidate's confidence is at least this share
 * of the first's: 32 hex digits (MD5 about 0.70, NTLM 0.20: a ratio of 0.28) is one, a SHA-256
 * digest (0.83 against SHA3-256's 0.05) or any structured format is not. A quarter is where
 * trusting the first answer blindly fails at least one time in five among the two.
 */
export const AMBIGUOUS_RATIO = 0.25

export function isAmbiguous(ranked: readonly RankedCandidate[]): boolean {
  const [first, second] = ranked
  return first !== undefined && second !== undefined && second.confidence >= AMBIGUOUS_RATIO * first.confidence
}

/**
 * `popular: true` keeps the formats of this prior or above: on the table's scale (types.ts), the
 * digests everyone meets (1000) and the widespread formats (100), not the niche ones.
 */
export const POPULAR_PRIOR = 100
