/**
 * Identify: the likely formats of a hash string, ranked by a calibrated confidence.
 *
 * The format table (formats.ts) is data; this module reads the input's plausible readings
 * (input.ts), tries only the rows whose prefix and length range admit each reading (table.ts),
 * validates structured matches with their parsers, and ranks what is left (ranking.ts).
 * No HTTP here: routes/identify.ts calls `identify` / `identifyMany`.
 */
import { interpretations } from './input.js'
import { nearMisses } from './near-miss.js'
import { baseWeight, NEAR_MISS_FACTOR, rank, type Candidate, type RankedCandidate } from './ranking.js'
import { formatsAdmitting, nearMissRows } from './table.js'
import type { HashcatVariant, HashFormat, Params } from './types.js'

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
}

export interface Identification {
  length: number
  matches: IdentifyMatch[]
}

/** Named groups reported as params; others (payload, header…) only feed the parsers. */
const PARAM_GROUPS = new Set(['salt', 'rounds', 'cost', 'user', 'N', 'r', 'p', 'ln', 'm', 't', 'variant', 'version'])

function groupsAsParams(groups: Record<string, string | undefined>): Params {
  const params: Params = {}
  for (const [key, value] of Object.entries(groups)) {
    if (value === undefined || !PARAM_GROUPS.has(key)) continue
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
      if (!existing || existing.weight < weight) best.set(format, { format, weight, params, hash: reading.text })
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
  for (const _key in candidate.params) {
    match.params = candidate.params
    break
  }
  if (format.variants) match.variants = format.variants
  if (format.format !== undefined) match.format = format.format
  if (candidate.problem !== undefined) match.problem = candidate.problem
  return match
}

export function identify(text: string): Identification {
  const trimmed = text.trim()
  return { length: trimmed.length, matches: rank(candidatesFor(trimmed)).map(toMatch) }
}

export function identifyMany(texts: readonly string[]): Identification[] {
  return texts.map(identify)
}
