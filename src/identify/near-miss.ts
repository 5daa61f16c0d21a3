/**
 * Near misses: strings that have a structured format's signature and fields but a checksum that
 * is too short, which is what a truncated paste looks like (a terminal that cut the line, a
 * column too narrow). They get the format with a low confidence and a `problem` saying what is
 * wrong, rather than no answer at all.
 *
 * Only truncation is a near miss: a string that is too long, or whose parameters are out of
 * range (a bcrypt cost of 99), is not that format, and the table's parsers already say so.
 * The rules are data, like formats.ts: the signature, the loose syntax with the checksum field
 * of any shorter length, and the length the format requires.
 */
import type { HashFormat } from './types.js'

export interface NearMissRule {
  /** The table row this is a near miss of: its name, and its format where names repeat. */
  name: string
  format?: string
  /** A literal every such string starts with: rules are only tried on strings that have it. */
  prefix: string
  /** The loose syntax: `checksum` is the field that is too short (bounded below the real length). */
  pattern: RegExp
  /** What the `checksum` group holds, and how many characters the format has there. */
  field: string
  expected: number
  /** How the format is named in the problem ("sha512-crypt", "an OCI sha256 digest"). */
  label: string
}

const C64 = '[./0-9A-Za-z]'
const B64 = '[A-Za-z0-9+/]'
const short = (alphabet: string, expected: number): string => `(?<checksum>${alphabet}{0,${expected - 1}})`

/** Drepper's sha-crypt and PHK's md5crypt: prefix, optional rounds, salt, then the checksum. */
const cryptRule = (name: string, prefix: string, saltMax: number, expected: number, rounds: boolean): NearMissRule => ({
  name,
  prefix,
  pattern: new RegExp(`^${prefix.replaceAll('$', '\\$')}${rounds ? '(?:rounds=\\d{1,9}\\$)?' : ''}[^$:\\s]{0,${saltMax}}\\$${short(C64, expected)}$`),
  field: 'checksum',
  expected,
  label: name,
})

export const nearMissRules: readonly NearMissRule[] = [
  cryptRule('sha512-crypt', '$6$', 16, 86, true),
  cryptRule('sha256-crypt', '$5$', 16, 43, true),
  cryptRule('md5-crypt', '$1$', 8, 22, false),
  cryptRule('apr1', '$apr1$', 8, 22, false),
  // bcrypt (OpenBSD bcrypt.c): 22 characters of salt then 31 of checksum, after $2b$NN$.
  { name: 'bcrypt', prefix: '$2', pattern: new RegExp(`^\\$2[abxy]\\$\\d{2}\\$${short(C64, 53)}$`), field: 'salt and checksum', expected: 53, label: 'bcrypt (22 + 31)' },
  { name: 'yescrypt', prefix: '$y$', pattern: new RegExp(`^\\$y\\$${C64}{3,32}\\$${C64}{1,86}\\$${short(C64, 43)}$`), field: 'checksum', expected: 43, label: 'yescrypt' },
  { name: 'phpass', prefix: '$', pattern: new RegExp(`^\\$[PH]\\$${short(C64, 31)}$`), field: 'cost, salt and checksum', expected: 31, label: 'phpass (1 + 8 + 22)' },
  { name: 'drupal7', prefix: '$S$', pattern: new RegExp(`^\\$S\\$${short(C64, 52)}$`), field: 'cost, salt and checksum', expected: 52, label: 'Drupal 7 (1 + 8 + 43)' },
  { name: 'sha256', format: 'oci-digest', prefix: 'sha256:', pattern: /^sha256:(?<checksum>[0-9a-f]{16,63})$/, field: 'hex digest', expected: 64, label: 'an OCI sha256 digest' },
  { name: 'sha512', format: 'oci-digest', prefix: 'sha512:', pattern: /^sha512:(?<checksum>[0-9a-f]{16,127})$/, field: 'hex digest', expected: 128, label: 'an OCI sha512 digest' },
  { name: 'sha512', format: 'sri', prefix: 'sha512-', pattern: new RegExp(`^sha512-(?<checksum>${B64}{8,85})$`), field: 'base64 digest', expected: 86, label: 'an SRI sha512 value (without padding)' },
  { name: 'sha256', format: 'openssh-fingerprint', prefix: 'SHA256:', pattern: new RegExp(`^SHA256:(?<checksum>${B64}{8,42})$`), field: 'base64 digest', expected: 43, label: 'an OpenSSH SHA256 fingerprint' },
]

export interface NearMiss {
  format: HashFormat
  problem: string
}

/** The rows `text` is a truncated form of, each with what is wrong, given the compiled table. */
export function nearMisses(text: string, rows: ReadonlyMap<NearMissRule, HashFormat>): NearMiss[] {
  const found: NearMiss[] = []
  for (const [rule, format] of rows) {
    if (!text.startsWith(rule.prefix)) continue
    const checksum = rule.pattern.exec(text)?.groups?.checksum
    if (checksum === undefined) continue
    const verb = rule.field.includes(' and ') ? 'have' : 'has'
    found.push({ format, problem: `${rule.field} ${verb} ${checksum.length} characters; ${rule.label} has ${rule.expected}` })
  }
  return found
}
