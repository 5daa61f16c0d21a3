/**
 * The web page at `/`: the files Vite built from web/ into dist/web, served by @fastify/static
 * and nothing else. The page talks to the public API like any other client, so this plugin has no
 * routes of its own beyond the files.
 *
 * - Content-Security-Policy `default-src 'self'` with no inline scripts or styles and no eval:
 *   the build emits only external, same-origin files (web/vite.config.ts).
 * - `assets/` names carry a content hash, so they are cached for a year as immutable; the HTML
 *   and the favicon are `no-cache` (revalidated by ETag), so a new build shows up at once.
 * - Only files present at start-up become routes (`wildcard: false`): an unknown path stays the
 *   app's 404 problem, and GET on an API path still answers 405.
 * - Without a build (a checkout that ran only `tsc`), `/` says so in plain words rather than failing.
 *
 * Registered without fastify-plugin, so the headers below apply to these routes only (Swagger UI
 * at /docs keeps its own policy).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'

/** dist/src/plugins/web.js → dist/web, where `vite build` writes the page. */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url))

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

const YEAR_SECONDS = 365 * 24 * 60 * 60

const NOT_BUILT = `hashd's web page has not been built, so there is nothing to show here.

Run \`npm run build\` (it builds the server and the page into dist/web), then start hashd again.
The API works without the page: see /docs and /api/openapi.json.
`

export default async function webPlugin(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  const root = options.root ?? DEFAULT_WEB_ROOT

  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY)
    reply.header('referrer-policy', 'no-referrer')
    reply.header('cross-origin-opener-policy', 'same-origin')
    reply.header('cross-origin-resource-policy', 'same-origin')
    done(null, payload)
  })

  if (!existsSync(join(root, 'index.html'))) {
    app.log.warn({ root }, 'web page not built: GET / explains how to build it')
    app.get('/', { schema: { hide: true } }, async (_request, reply) => {
      return reply.code(503).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(NOT_BUILT)
    })
    return
  }

  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: false,
    index: false,
    schemaHide: true,
    cacheControl: false,
    // scripts/web-size.ts writes .br and .gz copies at build time; they are sent where accepted.
    preCompressed: true,
    globIgnore: ['**/*.gz', '**/*.br'],
    setHeaders: (response, path) => {
      const hashed = path.startsWith(join(root, 'assets'))
      response.setHeader('cache-control', hashed ? `public, max-age=${YEAR_SECONDS}, immutable` : 'no-cache')
    },
  })
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.sendFile('index.html'))
}
