import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { describePolicy } from '../domain/password-policy.js'

const Policy = Type.Object({
  algorithm: Type.String({ description: 'PASSWORD_ALGORITHM: the scheme of every newHash', examples: ['argon2id'] }),
  options: Type.Record(Type.String(), Type.Integer(), { description: 'PASSWORD_OPTIONS with every default filled in' }),
  format: Type.String({ description: 'The format the scheme writes' }),
  pepperKey: Type.Union([Type.String(), Type.Null()], { description: 'The current pepper key id (new hashes are peppered with it), or null without PEPPER_KEYS_FILE', examples: ['k2'] }),
  unusable: Type.Optional(Type.String({ description: 'Present when the built-in default policy exceeds this server\'s caps: verify-and-upgrade then gives no newHash' })),
  pepperKeys: Type.Array(Type.String(), { description: 'Ids of every pepper key in force, oldest first; hashes under any of them verify. Never the secrets.' }),
})

export const passwordPolicyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/password-policy', {
    schema: {
      tags: ['meta'],
      summary: 'The password policy: algorithm and options of upgraded hashes, and the pepper key ids in force',
      response: { 200: Policy },
    },
  }, async () => {
    const keyring = app.passwords.keyring
    return { ...describePolicy(app.passwords.policy, keyring?.current.id ?? null), pepperKeys: keyring?.ids ?? [] }
  })
}
