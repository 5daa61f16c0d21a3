/**
 * Identify: the likely formats of a hash string, ranked by a calibrated confidence.
 *
 * The format table (formats.ts) is data; this module reads the input's plausible readings
 * (input.ts), tries only the rows whose prefix and length range admit each reading (table.ts),
 * validates structured matches with their parsers, and ranks what is left (ranking.ts).
 * No HTTP here: routes/identify.ts calls `identify`, and batch.ts calls it per line of a file.
 */
import type { CostCaps } from '../config.js'
import { findAlgorithm } from '../algorithms/registry.js'
import { nextCommands, type NextCommands } from './commands.js'
import { interpretations } from './input.js'
import { nearMisses } from './near-miss.js'
import { baseWeight, isAmbiguous, NEAR_MISS_FACTOR, POPULAR_PRIOR, rank, type Candidate, type RankedCandidate } from './ranking.js'
import { formats, formatsAdmitting, nearMissRows } from './table.js'
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
  /**
   * Parameters read from the text after the line's last colon and left out of `params`: that text
   * may be the plaintext of a potfile line (`hash:plain`), and a plaintext is never sent back.
   */
  withheld?: string[]
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
  /**
   * What /api/verify on this server would need to read a string, so that `verifiable` says whether
   * it would: its cost caps, and the ids of the keys it holds by kind (a `$pepper$` string opens
   * only under a key the server has). Plain data, so a batch can carry it to another thread.
   * Without it, `verifiable` judges the string alone: the caps are not applied and no key is held.
   */
  verifier?: VerifierFacts
  /** The line's plaintext was removed already (a potfile line): nothing after its last colon is one. */
  plaintextRemoved?: boolean
}

export interface VerifierFacts {
  caps: CostCaps
  /** Key ids by the kind of seal a row names (FormatSpec.sealedWith). */
  keys: { pepper: readonly string[] }
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
 * Whether /api/verify accepts this string, and the `algorithm` to give it. The name must be in the
 * registry; where it is a password scheme, that scheme must claim this exact syntax (the registry's
 * scrypt reads `$scrypt$`, not `$7$`) and read it as verify does: its parser takes it, and its
 * costs are within this server's caps (verify refuses others with 422 malformed-hash or
 * cost-above-cap). A sealed string (`$pepper$`) is verifiable, as the scheme it names, on a server
 * that holds its key.
 */
function verifyAs(format: HashFormat, hash: string, params: Params, verifier: VerifierFacts | undefined): string | undefined {
  if (!format.verifiable) return undefined
  if (format.sealedWith !== undefined) {
    const held = verifier?.keys[format.sealedWith] ?? []
    const scheme = findAlgorithm(String(params.scheme))
    return scheme?.kind === 'password' && held.includes(String(params.key)) ? scheme.name : undefined
  }
  const algorithm = format.registered
  if (algorithm === undefined) return undefined
  if (algorithm.kind !== 'password') return algorithm.name
  if (!algorithm.claims(hash)) return undefined
  try {
    const parsed = algorithm.parse(hash)
    if (verifier) algorithm.checkCaps(parsed.params, verifier.caps)
  } catch {
    return undefined
  }
  return algorithm.name
}

/**
 * Each row's regex again with `d` (match indices): run only to place a shown parameter in its
 * string. Built at load, as every pattern hashd runs, so the ReDoS gate sees them (V8 compiles a
 * RegExp on its first use, so the ones never run cost only the object).
 */
const withIndices = new Map<HashFormat, RegExp>(formats.map((format) => [format, new RegExp(format.regex.source, `${format.regex.flags}d`)]))

/** Where each named group of `format` lies in `text`, as [start, end). */
function groupSpans(format: HashFormat, text: string): Record<string, [number, number] | undefined> {
  return withIndices.get(format)?.exec(text)?.indices?.groups ?? {}
}

/**
 * A candidate's params as shown, less any read from the text after its string's last colon (a
 * `hash:salt` salt, a `hash:user` user name, a fixed-width salt that runs into it): a pasted
 * potfile line `hash:plain` reads as such a format too (an MD5 and a plaintext are
 * md5($pass.$salt), MyBB…), and hashd never sends a plaintext back. hashcat writes every
 * plaintext that holds a colon as `$HEX[…]`, so the plaintext is always after the last colon. A
 * named group counts by where it lies; a value a parser made counts when it holds that text. The
 * names left out are listed in `withheld`. Nothing is withheld once the plaintext is gone
 * (`plaintextRemoved`, a potfile line).
 */
function shownParams(candidate: Candidate, plaintextRemoved: boolean): { params: Params, withheld: string[] } {
  const { params, hash } = candidate
  const tailStart = hash.lastIndexOf(':') + 1
  if (plaintextRemoved || tailStart === 0 || tailStart === hash.length) return { params, withheld: [] }
  const tail = hash.slice(tailStart)
  let spans: Record<string, [number, number] | undefined> | undefined
  const kept: Params = {}
  const withheld: string[] = []
  for (const [name, value] of Object.entries(params)) {
    spans ??= groupSpans(candidate.format, hash)
    const span = spans[name]
    const fromTail = span !== undefined
      ? span[1] > tailStart
      : String(value) === tail || (typeof value === 'string' && value.includes(tail))
    if (fromTail) withheld.push(name)
    else kept[name] = value
  }
  return { params: withheld.length === 0 ? params : kept, withheld }
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

function toMatch(candidate: RankedCandidate, plaintextRemoved: boolean, verifier: VerifierFacts | undefined): IdentifyMatch {
  const { format } = candidate
  const verifyAlgorithm = candidate.problem === undefined ? verifyAs(format, candidate.hash, candidate.params, verifier) : undefined
  const match: IdentifyMatch = {
    algorithm: format.name,
    displayName: format.displayName,
    confidence: candidate.confidence,
    hashcat: format.hashcat,
    john: format.john,
    category: format.category,
    description: format.description,
    verifiable: verifyAlgorithm !== undefined,
  }
  if (verifyAlgorithm !== undefined) match.verifyAlgorithm = verifyAlgorithm
  const { params, withheld } = shownParams(candidate, plaintextRemoved)
  for (const _key in params) {
    match.params = params
    break
  }
  if (withheld.length > 0) match.withheld = withheld
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
  const plaintextRemoved = options.plaintextRemoved === true
  const matches = kept.map((candidate) => toMatch(candidate, plaintextRemoved, options.verifier))
  const identification: Identification = { length: reading.text.length, matches, ambiguous: isAmbiguous(ranked) }
  if (reading.normalized.length > 0) identification.normalized = reading.normalized
  const first = ranked[0]
  const shownUser = first === undefined ? undefined : shownParams(first, plaintextRemoved).params.user
  const user = first?.user ?? (typeof shownUser === 'string' ? shownUser : undefined)
  if (user !== undefined && user !== '') identification.user = user
  return identification
}

