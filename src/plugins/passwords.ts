/**
 * The pepper keys and the password policy, loaded once at start (a bad PEPPER_KEYS_FILE or policy
 * is a ConfigError: the server does not start) and the keys reloaded on SIGHUP, as API keys are
 * (see keys-file.ts). Logs name key ids and counts, never secrets.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { Passwords } from '../domain/passwords.js'
import { reloadOnHangup } from '../keys-file.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Pepper keys and the password policy (plugins/passwords.ts). */
    passwords: Passwords
  }
}

async function passwordsPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const passwords = new Passwords(options.config)
  app.decorate('passwords', passwords)
  if (passwords.policy.unusable) app.log.warn({ reason: passwords.policy.unusable }, 'verify-and-upgrade disabled')
  const file = passwords.keysFile
  if (file === null) return
  app.log.info({ keysFile: file, keys: passwords.keyring?.ids.length, currentKey: passwords.keyring?.current.id }, 'pepper keys loaded')
  reloadOnHangup(app, 'pepper keys', file, () => {
    const keys = passwords.reload()
    return { keys, keyIds: passwords.keyring?.ids, currentKey: passwords.keyring?.current.id }
  })
}

export default fp(passwordsPlugin, { name: 'passwords' })
