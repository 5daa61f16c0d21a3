/**
 * The compiled format table: each row of formats.ts with its anchored regex, literal prefix,
 * length range and whether hashd's registry can verify it, plus the indexes the engine uses to
 * reach only the rows that can possibly match.
 */
import { findAlgorithm, refusal } from '../algorithms/registry.js'
import { formatSpecs } from './formats.js'
import { nearMissRules, type NearMissRule } from './near-miss.js'
import { lengthRange, literalPrefix } from './pattern.js'
import type { FormatSpec, HashFormat } from './types.js'

/** Rows with a literal prefix are indexed by up to this many of its first characters. */
const PREFIX_KEY_LENGTH = 4

/** Rows with the same pattern share one RegExp, so the engine runs it once per input. */
const compiled = new Map<string, RegExp>()

export function compileFormat(spec: FormatSpec): HashFormat {
  const range = lengthRange(spec.pattern)
  const prefix = literalPrefix(spec.pattern)
  // Names other engineers are still adding to the registry become verifiable when they land.
  const registered = findAlgorithm(spec.verifyAs ?? spec.name)
  if (spec.verifyAs !== undefined && registered === undefined) throw new Error(`identify table: ${spec.name} verifies as ${spec.verifyAs}, which the registry lacks`)
  if (!(spec.prior > 0)) throw new Error(`identify table: ${spec.name} needs a positive prior`)
  if (spec.typical) {
    lengthRange(spec.typical.pattern) // bounded quantifiers only, as for patterns
    if (!(spec.typical.otherwise > 0 && spec.typical.otherwise < 1)) throw new Error(`identify table: ${spec.name}: typical.otherwise must be in (0, 1)`)
  }
  return {
    ...spec,
    regex: compiled.get(spec.pattern) ?? compiled.set(spec.pattern, new RegExp(`^(?:${spec.pattern})$`)).get(spec.pattern)!,
    prefix,
    minLength: range.min,
    maxLength: range.max,
    // `$id$` (modular crypt, PHC) and `{SCHEME}` (RFC 2307) openings are signatures even when the
    // literal part is short, as are literal prefixes of three or more characters.
    signature: spec.signature ?? (prefix.length >= 3 || /^(?:\$|\{|U\$)/.test(prefix)),
    // A sealed row is one /api/verify reads given its key (whether this server holds it is the engine's to say).
    verifiable: spec.sealedWith !== undefined || (registered !== undefined && spec.unverifiable === undefined && refusal(registered, 'verify') === null),
    registered,
    wideAlphabet: /A-Z|a-z|\[\^|\[!-~\]|\\[sSwW]/.test(spec.pattern),
    lettersOnlyAlphabet: /A-Z/.test(spec.pattern) && /a-z/.test(spec.pattern) && !/0-9|\\d|\\w|[./+]/.test(spec.pattern),
    typicalRegex: spec.typical ? new RegExp(`^(?:${spec.typical.pattern})$`) : undefined,
  }
}

export const formats: readonly HashFormat[] = formatSpecs.map(compileFormat)

/** Rows that start with a literal, keyed by its first PREFIX_KEY_LENGTH (or fewer) characters. */
const byPrefixKey = new Map<string, HashFormat[]>()
/** Rows without a literal prefix (bare hex, base64, hash:salt), sorted by minimum length. */
const unprefixed: HashFormat[] = []

for (const format of formats) {
  if (format.prefix.length === 0) {
    unprefixed.push(format)
    continue
  }
  const key = format.prefix.slice(0, PREFIX_KEY_LENGTH)
  const bucket = byPrefixKey.get(key)
  if (bucket) bucket.push(format)
  else byPrefixKey.set(key, [format])
}
unprefixed.sort((a, b) => a.minLength - b.minLength)

/** Every row whose prefix and length range admit this string (the regex still has to match). */
export function formatsAdmitting(text: string): HashFormat[] {
  const admitted: HashFormat[] = []
  const length = text.length
  for (let keyLength = 1; keyLength <= Math.min(PREFIX_KEY_LENGTH, length); keyLength += 1) {
    const bucket = byPrefixKey.get(text.slice(0, keyLength))
    if (!bucket) continue
    for (const format of bucket) {
      if (length >= format.minLength && length <= format.maxLength && text.startsWith(format.prefix)) admitted.push(format)
    }
  }
  for (const format of unprefixed) {
    if (format.minLength > length) break
    if (length <= format.maxLength) admitted.push(format)
  }
  return admitted
}

/** The distinct hashcat modes the table covers. */
export const hashcatModes: ReadonlySet<number> = new Set(formats.flatMap((format) => (format.hashcat === null ? [] : [format.hashcat])))

/** Each near-miss rule with the table row it points at (checked at load: a typo fails fast). */
export const nearMissRows: ReadonlyMap<NearMissRule, HashFormat> = new Map(nearMissRules.map((rule) => {
  const row = formats.find((format) => format.name === rule.name && format.format === rule.format && format.prefix.startsWith(rule.prefix.slice(0, 2)))
    ?? formats.find((format) => format.name === rule.name && format.format === rule.format)
  if (row === undefined) throw new Error(`identify table: near-miss rule for ${rule.name} has no row`)
  return [rule, row]
}))
