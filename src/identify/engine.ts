/**
 * Identify: the likely formats of a hash string, ranked by a calibrated confidence.
 *
 * The format table (formats.ts) is data; this module reads the input's plausible readings
 * (input.ts), tries only the rows whose prefix and length range admit each reading (table.ts),
 * validates structured matches with their parsers, and ranks what is left (ranking.ts).
 * No HTTP here: routes/identify.ts calls `identify`, and batch.ts calls it per line of a file.
 */
import { nextCommands, type NextCommands } from './commands.js'
import { interpretations } from './input.js'
import { nearMisses } from './near-miss.js'
import { baseWeight, isAmbiguous, NEAR_MISS_FACTOR, POPULAR_PRIOR, rank, type Candidate, type RankedCandidate } from './ranking.js'
import { formatsAdmitting, nearMissRows } from './table.js'
import type { HashcatVariant, HashFormat, Params } from './types.js'
import { unwrappings, type Normalization } from './unwrap.js'

export interface IdentifyMatch {
  algorithm: string
  displayName: string
  confidence: number
  hashcat: number | null
  john: string | null
  category: string
  description: string
  params?: Params
  verifiable: boolean
  /** Other hashcat modes that read this exact syntax as variants of the same format. */
  variants?: HashcatVariant[]
  /** The text form or wrapper around the digest named by `algorithm` (base64, sri, oci-digest…). */
  format?: string
  /** What is wrong with a string that almost has this format (a truncated checksum, say). */
  problem?: string
  /** The name to give /api/verify as `algorithm`, on a verifiable match (mysql41 for mysql41-bare). */
  verifyAlgorithm?: string
  /** The hashcat and John the Ripper command lines to run next (commands.ts). */
  commands?: NextCommands
}

export interface Identification {
  /** Length of the string identified: the trimmed input, less the layers `normalized` lists. */
  length: number
  matches: IdentifyMatch[]
  /** The first two candidates are close to tied (ranking.ts AMBIGUOUS_RATIO): do not trust the first blindly. */
  ambiguous: boolean
  /** The wrappers removed before matching (quotes, a trailing comma…), in the order peeled from the outside in; absent when none. */
  normalized?: Normalization[]
  /** The account name the line gives (pwdump, shadow, `user:hash`, NetNTLM, Kerberos). */
  user?: string
}

export interface IdentifyOptions {
  /** Keep only the common formats (prior ≥ POPULAR_PRIOR); confidences stay those of the full ranking. */
  popular?: boolean
}

/** Named groups reported as params; others (payload, header…) only feed the parsers. */
const PARAM_GROUPS = new Set(['salt', 'rounds', 'cost', 'user', 'N', 'r', 'p', 'ln', 'm', 't', 'variant', 'version'])

function groupsAsParams(groups: Record<string, string | undefined>): Params {
  const params: Params = {}
  for (const [key, value] of Object.entries(groups)) {
    // An anonymous NetNTLM capture has an empty user field: no user, rather than a user ''.
    if (value === undefined || !PARAM_GROUPS.has(key) || (key === 'user' && value === '')) continue
    params[key] = /^\d{1,15}$/.test(value) ? Number(value) : value
  }
  return params
}

/** The params of a match, or null when the row's parser rejects the string. */
function paramsOf(format: HashFormat, text: string, match: RegExpExecArray): Params | null {
  const groups = match.groups ?? {}
  if (!format.parse) return groupsAsParams(groups)
  const parsed = format.parse(text, groups)
  return parsed === null ? null : Object.assign(groupsAsParams(groups), parsed)
}

/**
 * Whether /api/verify accepts this string: the name must be in the registry, and where it is a
 * password scheme, that scheme must claim this exact syntax (the registry's scrypt reads
 * `$scrypt$`, not `$7$`).
 */
function isVerifiable(format: HashFormat, hash: string): boolean {
  const algorithm = format.registered
  if (algorithm === undefined || !format.verifiable) return false
  return algorithm.kind !== 'password' || algorithm.claims(hash)
}

function candidatesFor(trimmed: string): Candidate[] {
  const best = new Map<HashFormat, Candidate>()
  for (const reading of interpretations(trimmed)) {
    // Many rows share one pattern (32 hex digits: md5, NTLM, MD4…): run each regex once.
    const executed = new Map<RegExp, RegExpExecArray | null>()
    for (const format of formatsAdmitting(reading.text)) {
      if (reading.only !== undefined && format.name !== reading.only) continue
      let match = executed.get(format.regex)
      if (match === undefined) {
        match = format.regex.exec(reading.text)
        executed.set(format.regex, match)
      }
      if (match === null) continue
      const params = paramsOf(format, reading.text, match)
      if (params === null) continue
      const weight = baseWeight(format, reading.text) * reading.factor
      const existing = best.get(format)
      if (!existing || existing.weight < weight) {
        best.set(format, { format, weight, params, hash: reading.text, kind: reading.kind, user: reading.user })
      }
    }
    if (reading.only !== undefined) continue
    for (const { format, problem } of nearMisses(reading.text, nearMissRows)) {
      const weight = format.prior * NEAR_MISS_FACTOR * reading.factor
      const existing = best.get(format)
      if (!existing || (existing.problem !== undefined && existing.weight < weight)) best.set(format, { format, weight, params: {}, hash: reading.text, problem })
    }
  }
  return [...best.values()]
}

function toMatch(candidate: RankedCandidate): IdentifyMatch {
  const { format } = candidate
  const match: IdentifyMatch = {
    algorithm: format.name,
    displayName: format.displayName,
    confidence: candidate.confidence,
    hashcat: format.hashcat,
    john: format.john,
    category: format.category,
    description: format.description,
    verifiable: candidate.problem === undefined && isVerifiable(format, candidate.hash),
  }
  if (match.verifiable) match.verifyAlgorithm = format.registered!.name
  for (const _key in candidate.params) {
    match.params = candidate.params
    break
  }
  if (format.variants) match.variants = format.variants
  if (format.format !== undefined) match.format = format.format
  if (candidate.problem !== undefined) match.problem = candidate.problem
  else {
    const commands = nextCommands(format, candidate.kind)
    if (commands !== undefined) match.commands = commands
  }
  return match
}

const topWeight = (candidates: readonly Candidate[]): number => candidates.reduce((top, candidate) => Math.max(top, candidate.weight), 0)

/**
 * How much likelier a pasted line is to carry a wrapper (a quote, a bullet, an SQL terminator)
 * than to be a format whose free field happens to end with that character: `57ab…:4247;` is an
 * md5($pass.$salt) line pasted with its `;` far more often than an IPB hash whose 5-character salt
 * ends in `;`. A peeled form must still be a match: a string with no match inside stays as it is.
 * A format whose syntax includes the characters (a signature, weighed ×1000, such as `{SSHA}` or
 * Lotus Notes' `(G…)`) keeps its reading.
 */
const WRAPPER_LIKELIHOOD = 100

/**
 * The string to identify and its candidates: the trimmed input as it is, unless peeling wrappers
 * off it (unwrap.ts) gives a form whose best candidate weighs strictly more. A string that is a
 * format as it stands (`{SSHA}…`, Lotus Notes' `(G…)`) keeps its reading, since peeling only
 * wins by beating it; a quoted or bulleted hash, which matches nothing as it stands, is read
 * exactly as the bare string.
 */
function chooseReading(trimmed: string): { text: string, candidates: Candidate[], normalized: Normalization[] } {
  let chosen = { text: trimmed, candidates: candidatesFor(trimmed), normalized: [] as Normalization[] }
  let top = topWeight(chosen.candidates)
  for (const form of unwrappings(trimmed)) {
    const candidates = candidatesFor(form.text)
    const weight = topWeight(candidates) * WRAPPER_LIKELIHOOD
    if (weight > top) {
      chosen = { text: form.text, candidates, normalized: form.normalized }
      top = weight
    }
  }
  return chosen
}

export function identify(text: string, options: IdentifyOptions = {}): Identification {
  const reading = chooseReading(text.trim())
  const ranked = rank(reading.candidates)
  const kept = options.popular ? ranked.filter((candidate) => candidate.format.prior >= POPULAR_PRIOR) : ranked
  const identification: Identification = { length: reading.text.length, matches: kept.map(toMatch), ambiguous: isAmbiguous(ranked) }
  if (reading.normalized.length > 0) identification.normalized = reading.normalized
  const first = ranked[0]
  const user = first?.user ?? (typeof first?.params.user === 'string' ? first.params.user : undefined)
  if (user !== undefined && user !== '') identification.user = user
  return identification
}

