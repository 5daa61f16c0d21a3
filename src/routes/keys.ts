/**
 * GET /api/keys: the key ring as its users may see it: key names, purposes, versions, their states,
 * the current version and the algorithms of each named HMAC key, and the pepper's key ids. Never a
 * secret. An API key limited by hmac-keys= sees only those keys.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { KEY_PURPOSES, type KeyPurpose } from '../keys/hmac.js'

const State = Type.Unsafe<'staged' | 'current' | 'previous' | 'retired'>({
  type: 'string', enum: ['staged', 'current', 'previous', 'retired'],
  description: 'staged: verifies, not used for new values yet; current: used for new values; previous: older, still verifies (rotateRecommended); retired: no longer verifies',
})

const KeysAnswer = Type.Object({
  hmac: Type.Array(Type.Object({
    name: Type.String(),
    purpose: Type.Unsafe<KeyPurpose>({
      type: 'string', enum: [...KEY_PURPOSES],
      description: 'What the key is for (its purpose= in HMAC_KEYS_FILE): hmac, POST /api/hmac and /api/hmac/verify; webhooks, POST /api/webhooks/verify and /api/webhooks/sign. Never both',
    }),
    algorithms: Type.Array(Type.String(), { description: 'The algorithms it may be used with; the first is the default' }),
    currentVersion: Type.Integer(),
    minVerifyVersion: Type.Union([Type.Integer(), Type.Null()], { description: 'Versions below it no longer verify; null when the key sets none' }),
    versions: Type.Array(Type.Object({
      version: Type.Integer(),
      state: State,
      verifies: Type.Boolean({ description: 'HMACs under this version verify (not retired, not below minVerifyVersion)' }),
    }), { description: 'Oldest first' }),
  }), { description: 'Named HMAC keys (HMAC_KEYS_FILE) this caller may use; empty without the file' }),
  pepper: Type.Union([Type.Object({
    currentKey: Type.String({ description: 'The key id new password hashes are peppered with' }),
    keys: Type.Array(Type.Object({ id: Type.String(), state: State, verifies: Type.Boolean() }), { description: 'In the order of PEPPER_KEYS_FILE' }),
  }), Type.Null()], { description: 'The pepper (PEPPER_KEYS_FILE), or null without it' }),
})

export const keysRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/keys', {
    schema: {
      tags: ['meta'],
      summary: 'The server\'s keys: names, purposes, versions and their states, current versions, algorithms; never a secret',
      response: { 200: KeysAnswer },
    },
  }, async (request) => {
    const allowed = request.apiKey?.hmacKeys ?? null
    const hmac = (app.keyRing.hmac?.value.keys ?? []).filter((key) => allowed === null || allowed.has(key.name)).map((key) => ({
      name: key.name,
      purpose: key.purpose,
      algorithms: [...key.algorithms],
      currentVersion: key.ring.current.ordinal,
      minVerifyVersion: key.ring.minVerify,
      versions: key.ring.versions.map((version) => ({ version: version.ordinal, state: version.state, verifies: version.verifies })),
    }))
    const keyring = app.keyRing.pepper?.value ?? null
    const pepper = keyring === null ? null : {
      currentKey: keyring.current.id,
      keys: keyring.ring.versions.map((version) => ({ id: version.id, state: version.state, verifies: version.verifies })),
    }
    return { hmac, pepper }
  })
}
