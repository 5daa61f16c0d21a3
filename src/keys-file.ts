/**
 * Files of secrets or their hashes, one entry a line (API_KEYS_FILE, PEPPER_KEYS_FILE): `#` to the
 * end of a line is a comment, fields are separated by white space. Errors name the variable, the
 * file and the line, and describe a field rather than quote it, so a secret in the wrong place
 * never reaches a log. file-reload.ts reads such a file again when it changes and on SIGHUP.
 */
import { readFileSync } from 'node:fs'
import { ConfigError } from './config.js'

export interface KeysFileLine {
  /** 1-based line number, for messages. */
  line: number
  /** `<variable> <file> line <n>`, the prefix of every message about this line. */
  where: string
  fields: string[]
}

/** The non-empty lines of a keys file, comments removed, split into fields. */
export function keysFileLines(text: string, variable: string, file: string): KeysFileLine[] {
  const lines: KeysFileLine[] = []
  text.split(/\r?\n/).forEach((raw, index) => {
    const fields = (raw.split('#', 1)[0] ?? '').trim().split(/\s+/).filter((field) => field !== '')
    if (fields.length > 0) lines.push({ line: index + 1, where: `${variable} ${file} line ${index + 1}`, fields })
  })
  return lines
}

/** The file's text, or a ConfigError naming it with the errno code (never its contents). */
export function readKeysFileText(variable: string, file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${variable} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}
