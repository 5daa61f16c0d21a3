/**
 * The OpenAPI 3.1 document, generated from the route schemas by @fastify/swagger, served at
 * /api/openapi.json, and the interactive Swagger UI at /docs with its assets served from the
 * package itself (no CDN).
 *
 * The document must describe the server exactly: clients are generated from it, and tests check
 * every response against it (test/helpers/openapi.ts). What holds for every operation is added
 * here, once, so that routes need not repeat it and new routes cannot forget it:
 * - every error status is application/problem+json with the shared Problem schema (a $ref);
 * - every operation documents 503 (overload, shutdown) with Retry-After, and every rate-limited one
 *   429 with Retry-After and the optional RateLimit fields on all its responses;
 * - 401 (added by plugins/auth.ts with API keys) has WWW-Authenticate.
 */
import { readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import { algorithms } from '../algorithms/registry.js'
import { checksumsRequestBody } from '../routes/checksums.js'
import { fileHashPutBody, fileHashRequestBody } from '../routes/filehash.js'
import { fileVerifyRequestBody } from '../routes/filehash-verify.js'
import { fileMatchRequestBody } from '../routes/similarity-match.js'
import { documentView, HEADERS, Problem, PROBLEM_JSON } from '../routes/schemas.js'

/** The package version (dist/src/plugins/ → the repository root): info.version follows it. */
export const API_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version

/** Every other spelling the server accepts for an algorithm, to its canonical name (lowercase; any case works). */
const aliases = Object.fromEntries(algorithms.flatMap((algorithm) =>
  [algorithm.displayName, ...algorithm.aliases].filter((spelling) => spelling !== algorithm.name).map((spelling) => [spelling, algorithm.name])))

/** The upload routes, whose multipart bodies are read as a stream and described by hand (transformObject). */
const MULTIPART_ROUTES = new Set(['/api/filehash', '/api/filehash/verify', '/api/checksums', '/api/similarity/match/file'])

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' }

/** A small mark of hashd's own for the Swagger UI top bar, instead of the package's. */
const LOGO = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32">'
  + '<text x="0" y="24" font-family="monospace" font-size="24" font-weight="bold" fill="#ffffff">#hashd</text></svg>')

const DESCRIPTION = 'Digests, password hashes, HMACs, file checksums and hash identification over JSON.\n\n'
  + '**Errors** are RFC 9457 `application/problem+json` (schema `Problem`); `type` is `about:blank` or `urn:hashd:problem:<kind>`, '
  + 'and validation problems list each field at fault in `errors` with a JSON Pointer (`/body/<field>`, `/querystring/<field>`).\n\n'
  + '**Beyond the operations listed:** a method a path does not list (DELETE, PATCH, QUERY, …) is 405 with `Allow`; '
  + 'an unknown path is 404; malformed HTTP is 400, headers too slow 408, headers too large 431; all problem+json. '
  + 'Every GET also answers HEAD.\n\n'
  + '**Algorithm names** are enums of canonical names per operation. The server also accepts, in any case and ignoring "-", "_", "/", "." and spaces, '
  + 'the display names and aliases in `x-hashd-algorithm-aliases` (alias → canonical name) and GET /api/algorithms; responses always give the canonical name.\n\n'
  + '**Versioning:** `info.version` is the package version. Changes within /api are additive (new operations, new optional fields, new problem kinds); '
  + 'a breaking change would go under a new prefix. CHANGELOG.md records every API change.'

type Responses = Record<string, { description?: string, content?: Record<string, { schema?: unknown }>, headers?: Record<string, unknown> }>
type Operation = { responses?: Responses, operationId?: string, security?: unknown[] }

/** `post` `/api/identify/formats` → postIdentifyFormats. */
const operationId = (method: string, path: string): string => method.toLowerCase() + path.replace(/^\/api(?=\/)/, '')
  .split(/[^A-Za-z0-9]+/).filter((part) => part !== '').map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')

/** The rules above, applied to one operation of the generated document. */
function completeOperation(operation: Operation, rateLimited: boolean): void {
  const responses: Responses = operation.responses ?? {}
  operation.responses = responses
  if (rateLimited && !responses['429']) responses['429'] = { description: 'Rate limited; see Retry-After' }
  if (!responses['503']) responses['503'] = { description: 'Overloaded or shutting down; see Retry-After' }
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) >= 400) {
      // Problems only: whatever media type a route declared, the error handler sends problem+json,
      // and text/plain where the route declared it (plugins/errors.ts, problemsAsText).
      const text = response.content?.['text/plain']
      response.content = { [PROBLEM_JSON]: { schema: PROBLEM_REF }, ...(text === undefined ? {} : { 'text/plain': text }) }
    }
    const headers: Record<string, unknown> = { ...response.headers }
    if (status === '401') Object.assign(headers, HEADERS.wwwAuthenticate)
    if (status === '429' || status === '503') Object.assign(headers, HEADERS.retryAfter)
    if (rateLimited) Object.assign(headers, HEADERS.rateLimit)
    if (Object.keys(headers).length > 0) response.headers = headers
  }
}

/** `ui: false` (WEB_UI=off) serves the document without the API browser at /docs. */
async function openapiPlugin(app: FastifyInstance, options: { ui?: boolean } = {}): Promise<void> {
  /** `METHOD url` of the operations the rate limit applies to (all but `config: { rateLimit: false }`). */
  const rateLimited = new Set<string>()
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hashd API',
        version: API_VERSION,
        description: DESCRIPTION,
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
        { name: 'similarity', description: 'What is this like? ssdeep and TLSH scores and distances' },
        { name: 'passwords', description: 'Screening new passwords (NIST SP 800-63B-4) and the Pwned Passwords range API' },
        { name: 'webhooks', description: 'Verify and sign webhooks: Standard Webhooks, GitHub, Stripe' },
        { name: 'meta', description: 'Algorithms, health and this document' },
      ],
    },
    transform: ({ schema, url, route }) => {
      if (route.config?.rateLimit !== false) for (const method of [route.method].flat()) rateLimited.add(`${method.toLowerCase()} ${url}`)
      // The document's view of each schema (schemas.ts documentedAs: algorithm enums).
      const documented = documentView(schema) as typeof schema
      // The upload routes' bodies are multipart and read as a stream, so it has no JSON schema to
      // validate against; it is described in transformObject instead.
      if (!MULTIPART_ROUTES.has(url)) return { schema: documented, url }
      return { schema: { ...documented, consumes: undefined, body: undefined } as typeof schema, url }
    },
    transformObject: (documentObject) => {
      const spec = ('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject) as {
        paths?: Record<string, Record<string, Operation & Record<string, unknown>>>
        components?: Record<string, Record<string, unknown>>
      } & Record<string, unknown>
      const upload = spec.paths?.['/api/filehash']
      if (upload?.post) upload.post.requestBody = fileHashRequestBody
      if (upload?.put) upload.put.requestBody = fileHashPutBody
      const verify = spec.paths?.['/api/filehash/verify']
      if (verify?.post) verify.post.requestBody = fileVerifyRequestBody
      const fileMatch = spec.paths?.['/api/similarity/match/file']
      if (fileMatch?.post) fileMatch.post.requestBody = fileMatchRequestBody
      const checksums = spec.paths?.['/api/checksums']
      if (checksums?.post) checksums.post.requestBody = checksumsRequestBody
      const secured = Object.values(spec.paths ?? {}).some((operations) => Object.values(operations).some((operation) => 'security' in operation))
      for (const [path, operations] of Object.entries(spec.paths ?? {})) {
        for (const [method, operation] of Object.entries(operations)) {
          completeOperation(operation, rateLimited.has(`${method} ${path}`))
          // A stable name for generated clients: postHash, putFilehash, getOpenapiJson…
          operation.operationId ??= operationId(method, path)
          // With API keys on, the operations that need none say so (an empty requirement).
          if (secured && !('security' in operation)) operation.security = []
        }
      }
      // Without API keys nothing needs one: say so at the root rather than leave it unstated.
      if (!secured) spec.security = []
      spec.components = { ...spec.components, schemas: { ...spec.components?.schemas, Problem } }
      spec['x-hashd-algorithm-aliases'] = aliases
      return spec as ReturnType<swagger.SwaggerTransformObject>
    },
  })
  if (options.ui !== false) await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: { title: 'hashd API' },
    logo: { type: 'image/svg+xml', content: LOGO, href: '/docs', target: '_self' },
    staticCSP: true,
    // The package's policy also allows fonts and styles from any https: origin and images from
    // validator.swagger.io, and says upgrade-insecure-requests, which breaks the page's own assets
    // when hashd is reached over plain HTTP on a LAN address. Everything is local, so 'self' it is.
    // Read as directives and words, not with regexes (`\s*upgrade…` was quadratic in a run of blanks).
    transformStaticCSP: (header) => header.split(';')
      .map((directive) => directive.trim().split(/[ \t]/).filter((word) => word !== '' && word !== 'https:' && word !== 'validator.swagger.io').join(' '))
      .filter((directive) => directive !== '' && directive !== 'upgrade-insecure-requests')
      .map((directive) => `${directive};`)
      .join(' '),
  })
  let served = Buffer.alloc(0)
  app.get('/api/openapi.json', {
    schema: {
      tags: ['meta'],
      summary: 'This document (OpenAPI 3.1)',
      response: { 200: Type.Object({ openapi: Type.String(), info: Type.Object({ version: Type.String() }, { additionalProperties: true }) }, { additionalProperties: true }) },
    },
  }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(served))
  // The document is built and serialized once, before the server listens: @fastify/swagger builds
  // it on its first call (about 100 ms of the event loop, which the first request would wait for
  // along with every other client) and keeps it. Serialized through the route's schema
  // (additionalProperties) on each request, its 120 KB took about 5 ms of the event loop each time,
  // and a few hundred requests queued on slow readers' connections kept /api/health waiting for
  // seconds. A Buffer is written as it is.
  app.addHook('onReady', async () => { served = Buffer.from(JSON.stringify(app.swagger())) })
}

export default fp(openapiPlugin, { name: 'openapi' })
