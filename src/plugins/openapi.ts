/**
 * The OpenAPI 3.1 document, generated from the route schemas by @fastify/swagger, served at
 * /api/openapi.json, and the interactive Swagger UI at /docs with its assets served from the
 * package itself (no CDN).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { algorithms } from '../algorithms/registry.js'
import { checksumsRequestBody } from '../routes/checksums.js'
import { fileHashPutBody, fileHashRequestBody } from '../routes/filehash.js'

const VERSION = '0.1.0'

async function openapiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hashd',
        version: VERSION,
        description: 'Digests, password hashes, HMACs, file checksums and hash identification over JSON. ' +
          'Errors are RFC 9457 application/problem+json. Algorithm names are case-insensitive and accept common spellings; ' +
          `canonical names: ${algorithms.map((algorithm) => algorithm.name).join(', ')}.`,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      // Used only when the server sets API_KEYS_FILE: plugins/auth.ts then marks each operation
      // that needs a key with this scheme and a 401 response.
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `npm run apikey`, as `Authorization: Bearer hk_…` (RFC 6750); needed only when the server sets API_KEYS_FILE' },
        },
      },
      tags: [
        { name: 'hashing', description: 'Digests, password hashes and HMACs' },
        { name: 'files', description: 'Hashing uploads' },
        { name: 'identify', description: 'What kind of hash is this?' },
        { name: 'meta', description: 'Algorithms, health and this document' },
      ],
    },
    // The upload routes' bodies are multipart and read as a stream, so they have no JSON schema to
    // validate against; describe them here instead.
    transform: ({ schema, url }) => {
      if (url !== '/api/filehash' && url !== '/api/checksums') return { schema, url }
      return { schema: { ...schema, consumes: undefined, body: undefined } as typeof schema, url }
    },
    transformObject: (documentObject) => {
      const spec = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject
      const post = (spec as { paths?: Record<string, Record<string, Record<string, unknown>>> }).paths?.['/api/filehash']?.post
      if (post) post.requestBody = fileHashRequestBody
      const put = (spec as { paths?: Record<string, Record<string, Record<string, unknown>>> }).paths?.['/api/filehash']?.put
      if (put) put.requestBody = fileHashPutBody
      const checksums = (spec as { paths?: Record<string, Record<string, Record<string, unknown>>> }).paths?.['/api/checksums']?.post
      if (checksums) checksums.requestBody = checksumsRequestBody
      return spec
    },
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP: true,
    // The package's policy also allows fonts and styles from any https: origin and images from
    // validator.swagger.io, and says upgrade-insecure-requests, which breaks the page's own assets
    // when hashd is reached over plain HTTP on a LAN address. Everything is local, so 'self' it is.
    transformStaticCSP: (header) => header
      .replace(/ https:/g, '')
      .replace(/ validator\.swagger\.io/g, '')
      .replace(/\s*upgrade-insecure-requests;?/, '')
      .replace(/\s+;/g, ';'),
  })
  app.get('/api/openapi.json', { schema: { hide: true }, config: {} }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'openapi' })
