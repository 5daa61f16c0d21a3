/**
 * PASSWORD_BLOCKLIST_FILE: an organization's own words to refuse (its name, products, places,
 * words of its trade), one entry per line, UTF-8. White space at either end of a line is ignored,
 * lines starting with `#` are comments, and entries are compared as the built-in list is
 * (NFKC, any case, and with digits or symbols added at either end). Read at start (an error is a
 * ConfigError) and again when it changes (file-reload.ts).
 */
import { readFileSync, statSync } from 'node:fs'
import { ConfigError } from '../config.js'
import { WordList } from './word-list.js'

/** Largest blocklist file read: it is held in memory. */
export const MAX_BLOCKLIST_BYTES = 64 * 1024 * 1024

export function readBlocklistFile(file: string): WordList {
  let text: string
  try {
    const size = statSync(file).size
    if (size > MAX_BLOCKLIST_BYTES) throw new ConfigError(`PASSWORD_BLOCKLIST_FILE ${file} is ${size} bytes; at most ${MAX_BLOCKLIST_BYTES} are read (use the breached-password store for large lists)`)
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if (error instanceof ConfigError) throw error
    throw new ConfigError(`PASSWORD_BLOCKLIST_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const entries = text.split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
  return WordList.from(entries)
}
