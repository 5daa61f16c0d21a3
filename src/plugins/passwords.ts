/**
 * The pepper keys and the password policy, loaded once at start (a bad PEPPER_KEYS_FILE or policy
 * is a ConfigError: the server does not start); the keys are reloaded when the file changes and on
 * SIGHUP (file-reload.ts). Logs name key ids and counts, never secrets.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { readPepperKeysFile, type PepperKeyring } from '../domain/pepper-keys.js'
import { Passwords } from '../domain/passwords.js'
import { reloadable } from '../file-reload.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Pepper keys and the password policy (plugins/passwords.ts). */
    passwords: Passwords
  }
}

async function passwordsPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const file = options.config.pepperKeysFile
  const describe = (keyring: PepperKeyring) => ({ keysFile: file, keys: keyring.ids.length, keyIds: keyring.ids, currentKey: keyring.current.id })
  const keys = file === null ? null : reloadable({
    source: 'pepper-keys', what: 'pepper keys', files: [file], log: app.log, describe, load: () => readPepperKeysFile(file),
  })
  if (keys) {
    app.addHook('onClose', async () => { keys.close() })
    app.log.info(describe(keys.value), 'pepper keys loaded')
  }
  const passwords = new Passwords(options.config, keys)
  app.decorate('passwords', passwords)
  if (passwords.policy.unusable) app.log.warn({ reason: passwords.policy.unusable }, 'verify-and-upgrade disabled')
}

export default fp(passwordsPlugin, { name: 'passwords' })
