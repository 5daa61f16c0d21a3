/**
 * What to run next: the hashcat and John the Ripper command lines for a match, as a user would
 * type them with the pasted lines saved in `hashes.txt` (after the layers listed in `normalized`
 * are removed) and a word list in `wordlist.txt`.
 *
 * hashcat reads one hash per line, with `--username` skipping a leading `user:` (hashcat's
 * `--username` option); it has no reader for pwdump or /etc/shadow lines, so for those the command
 * first cuts out the field the match read (`cut -d: -fN`). John the Ripper reads `user:hash`,
 * pwdump and shadow lines as they are (doc/OPTIONS, "--format"), so its command is the same for
 * all of them.
 */
import type { ReadingKind } from './input.js'
import type { HashFormat } from './types.js'

export interface NextCommands {
  hashcat?: string
  john?: string
}

export const HASHES_FILE = 'hashes.txt'
const WORDLIST = 'wordlist.txt'

/** The colon field hashcat must be given alone, for the line shapes it cannot read whole. */
const CUT_FIELD: Partial<Record<ReadingKind, number>> = { 'pwdump-nt': 4, 'pwdump-lm': 3, 'rc4-key': 3, shadow: 2 }

function hashcatCommand(mode: number, kind: ReadingKind | undefined): string {
  const field = kind === undefined ? undefined : CUT_FIELD[kind]
  if (field !== undefined) return `cut -d: -f${field} ${HASHES_FILE} > hashcat.txt && hashcat -m ${mode} -a 0 hashcat.txt ${WORDLIST}`
  if (kind === 'hex-prefix') return `sed 's/^0[xX]//' ${HASHES_FILE} > hashcat.txt && hashcat -m ${mode} -a 0 hashcat.txt ${WORDLIST}`
  return `hashcat -m ${mode} -a 0 ${kind === 'user' ? '--username ' : ''}${HASHES_FILE} ${WORDLIST}`
}

/** Built once per row and reading kind, and shared (frozen): a response only serializes them. */
const built = new WeakMap<HashFormat, Map<ReadingKind | undefined, NextCommands | undefined>>()

/** The commands for one match; a tool without a mode or format for it is left out. */
export function nextCommands(format: HashFormat, kind: ReadingKind | undefined): NextCommands | undefined {
  let byKind = built.get(format)
  if (byKind === undefined) built.set(format, byKind = new Map())
  if (byKind.has(kind)) return byKind.get(kind)
  const commands = buildCommands(format, kind)
  byKind.set(kind, commands === undefined ? undefined : Object.freeze(commands))
  return byKind.get(kind)
}

function buildCommands(format: HashFormat, kind: ReadingKind | undefined): NextCommands | undefined {
  if (kind === 'fingerprint') return undefined
  const commands: NextCommands = {}
  if (format.hashcat !== null) commands.hashcat = hashcatCommand(format.hashcat, kind)
  if (format.john !== null) commands.john = `john --format=${format.john} --wordlist=${WORDLIST} ${HASHES_FILE}`
  return commands.hashcat === undefined && commands.john === undefined ? undefined : commands
}
