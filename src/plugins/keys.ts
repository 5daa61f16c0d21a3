/**
 * The key ring (src/keys/) for the app: loaded once at start (a bad keys file is a ConfigError and
 * the server does not start), kept up to date while it runs, closed with the app. The plugins and
 * routes that use secrets (auth, passwords, the HMAC routes, GET /api/keys) read `app.keyRing`;
 * a route hands the domain `app.keyContext(request)`: the named HMAC keys in force, the request's
 * right to each (its API key's hmac-keys=), and where the keys it uses are noted for the access
 * line (`"keys":["hmac:orders:v3"]`, plugins/logging.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { KeyContext } from '../domain/hmac.js'
import { KeyRing } from '../keys/index.js'
import { keyAccess } from './auth.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every secret the server holds, by kind (plugins/keys.ts). */
    keyRing: KeyRing
    /** What the domain needs to use the ring's keys for this request. */
    keyContext(request: FastifyRequest): KeyContext
  }
  interface FastifyRequest {
    /** The keys and versions this request used (`hmac:<name>:v<version>`, `pepper:<id>`), for the access line; null when none. */
    keyUses: string[] | null
  }
}

async function keysPlugin(app: FastifyInstance, options: { config: Config }): Promise<void> {
  const keyRing = new KeyRing(options.config, app.log)
  app.addHook('onClose', async () => { await keyRing.close() })
  await keyRing.start()
  app.decorate('keyRing', keyRing)
  app.decorateRequest('keyUses', null)
  app.decorate('keyContext', (request: FastifyRequest): KeyContext => {
    // A batch uses one key version for thousands of items: compare with the last one before making a string.
    let lastRing = ''
    let lastName = ''
    let lastVersion = ''
    return {
      hmacKeys: keyRing.hmac?.value ?? null,
      mayUse: keyAccess(request.apiKey),
      used(ring, name, version) {
        if (ring === lastRing && name === lastName && version === lastVersion) return
        lastRing = ring
        lastName = name
        lastVersion = version
        const entry = ring === 'pepper' ? `pepper:${version}` : `hmac:${name}:v${version}`
        const uses = request.keyUses ??= []
        if (!uses.includes(entry) && uses.length < 16) uses.push(entry)
      },
    }
  })
}

export default fp(keysPlugin, { name: 'keys' })
