/**
 * The pepper keys (from the key ring, plugins/keys.ts) and the password policy, loaded once at
 * start (a bad PEPPER_KEYS_FILE or policy is a ConfigError: the server does not start).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import { Passwords } from '../domain/passwords.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Pepper keys and the password policy (plugins/passwords.ts). */
    passwords: Passwords
  }
}

async function passwordsPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const passwords = new Passwords(options.config, app.keyRing.pepper)
  app.decorate('passwords', passwords)
  if (passwords.policy.unusable) app.log.warn({ reason: passwords.policy.unusable }, 'verify-and-upgrade disabled')
}

export default fp(passwordsPlugin, { name: 'passwords', dependencies: ['keys'] })
