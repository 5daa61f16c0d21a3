/**
 * Files of secrets or their hashes, one entry a line (API_KEYS_FILE, PEPPER_KEYS_FILE): `#` to the
 * end of a line is a comment, fields are separated by white space. Errors name the variable, the
 * file and the line, and describe a field rather than quote it, so a secret in the wrong place
 * never reaches a log. SIGHUP reads such a file again; a file that fails on reload is logged and the
 * entries already in force stay, so a typo during a rotation does not take the service down.
 */
import { readFileSync } from 'node:fs'
import type { FastifyBaseLogger } from 'fastify'
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

/**
 * Calls `reload` on every SIGHUP until the app closes. `reload` returns what to log about the
 * entries now in force (counts, ids: never secrets), or throws (a ConfigError's message is safe to
 * log; anything else is logged as unreadable).
 */
export function reloadOnHangup(
  app: { log: FastifyBaseLogger, addHook(name: 'onClose', hook: () => Promise<void>): unknown },
  what: string, file: string, reload: () => Record<string, unknown>,
): void {
  const onHangup = () => {
    try {
      app.log.info({ keysFile: file, ...reload() }, `${what} reloaded (SIGHUP)`)
    } catch (error) {
      app.log.warn({ keysFile: file, reason: error instanceof ConfigError ? error.message : 'unreadable' }, `${what} not reloaded: keeping the keys in force`)
    }
  }
  process.on('SIGHUP', onHangup)
  app.addHook('onClose', async () => { process.off('SIGHUP', onHangup) })
}
