/**
 * Scoped API keys deny by default (src/keys/scopes.ts, plugins/auth.ts): every route the server
 * has (each noted as it is added, and each operation of the OpenAPI document it serves) is called with a key
 * whose one scope names no route; each must be 403, apart from the open routes docs/keys.md lists.
 * The same walk without a key (401 but on the routes open to anyone) and with a key without
 * scopes= (never 401 or 403), each scope against exactly the routes docs/keys.md gives it, and the
 * document's security requirements.
 */
import assert from 'node:assert/strict'
import diagnostics from 'node:diagnostics_channel'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { hashKey } from '../src/keys/api-keys.js'
import { startServer, toTestResponse, type TestServer, type TestResponse } from './helpers/server.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-scopes-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** The routes anyone may GET with API keys on, as docs/keys.md lists them: probes, the API's description, its browser and the web page. */
function openToAnyone(method: string, template: string): boolean {
  return method === 'GET' && (['/api/health', '/api/ready', '/api/openapi.json', '/docs', '/', '/index.html', '/favicon.svg'].includes(template)
    || template.startsWith('/docs/') || template.startsWith('/assets/'))
}
/** The descriptions: any valid key, whatever its scopes=. */
const OPEN_TO_ANY_KEY = ['GET /api/algorithms', 'GET /api/password-policy', 'GET /api/identify/formats']

/** Each scope and the routes it grants, as docs/keys.md's table gives them. */
const GRANTS: Record<string, string[]> = {
  hash: ['POST /api/hash'],
  verify: ['POST /api/verify'],
  hmac: ['POST /api/hmac'],
  'hmac:verify': ['POST /api/hmac/verify'],
  filehash: ['POST /api/filehash', 'PUT /api/filehash', 'POST /api/filehash/verify'],
  checksums: ['POST /api/checksums'],
  identify: ['POST /api/identify'],
  similarity: ['POST /api/similarity/compare'],
  'similarity:match': ['POST /api/similarity/match', 'POST /api/similarity/match/file'],
  'passwords:check': ['POST /api/passwords/check'],
  'passwords:range': ['GET /range/:prefix'],
  'pepper:rewrap': ['POST /api/pepper/rewrap'],
  calibrate: ['POST /api/calibrate'],
  'webhooks:verify': ['POST /api/webhooks/verify'],
  'webhooks:sign': ['POST /api/webhooks/sign'],
  keys: ['GET /api/keys'],
  audit: ['GET /api/audit/checkpoint'],
  metrics: ['GET /metrics'],
  health: [],
}

interface Route { method: string, template: string }

/**
 * Starts a server, noting every route as it is added: Fastify announces each new instance on the
 * diagnostics channel `fastify.initialization`, before any plugin or route is registered, so an
 * onRoute hook added there sees them all (HEAD left out: it is the GET it stands for).
 */
async function startNotingRoutes(env: Record<string, string>): Promise<{ server: TestServer, routes: Route[] }> {
  const routes: Route[] = []
  const noteRoutes = (message: unknown) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, template: route.url })
    })
  }
  diagnostics.subscribe('fastify.initialization', noteRoutes)
  try {
    return { server: await startServer(env), routes }
  } finally {
    diagnostics.unsubscribe('fastify.initialization', noteRoutes)
  }
}

/** A request for a route template: parameters filled, and a body the route cannot accept (so no work is done once through). */
async function call(server: TestServer, route: Route, document: { paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>> }, key?: string): Promise<TestResponse> {
  const url = route.template.replace(/:[A-Za-z]+/g, '5BAA6').replace(/\*$/, 'swagger-ui.css')
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` }
  if (route.method === 'GET') return toTestResponse(await server.fetch(url, { headers }))
  const documented = document.paths[route.template.replace(/:([A-Za-z]+)/g, '{$1}')]?.[route.method.toLowerCase()]
  const type = Object.keys(documented?.requestBody?.content ?? {})[0] ?? 'application/json'
  return toTestResponse(await server.fetch(url, {
    method: route.method,
    headers: { ...headers, 'content-type': type === 'multipart/form-data' ? 'multipart/form-data; boundary=x' : type },
    body: type === 'application/json' ? '{' : '',
  }))
}

describe('scoped API keys deny by default', () => {
  const keys = {
    narrow: `hk_${randomBytes(32).toString('base64url')}`,
    full: `hk_${randomBytes(32).toString('base64url')}`,
    ...Object.fromEntries(Object.keys(GRANTS).map((scope) => [scope, `hk_${randomBytes(32).toString('base64url')}`])),
  } as Record<string, string>
  let server: TestServer
  let routes: Route[]
  let document: Parameters<typeof call>[2] & { paths: Record<string, Record<string, { security?: unknown[] }>> }
  before(async () => {
    const file = join(dir, 'api-keys')
    writeFileSync(file, [
      // health is a scope that names no route: a key with it alone may call only the open routes.
      `narrow ${hashKey(keys.narrow!)} scopes=health`,
      `full ${hashKey(keys.full!)}`,
      ...Object.keys(GRANTS).map((scope) => `${scope.replace(':', '-')} ${hashKey(keys[scope]!)} scopes=${scope}`),
    ].join('\n'))
    const started = await startNotingRoutes({ API_KEYS_FILE: file })
    server = started.server
    routes = started.routes
    document = (await server.get('/api/openapi.json')).body
  })
  after(() => server.close())

  it('finds every route: the app\'s router holds every operation of the document, and more (the pages, /docs)', () => {
    const seen = new Set(routes.map(({ method, template }) => `${method} ${template}`))
    const documented = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path.replace(/\{([A-Za-z]+)\}/g, ':$1')}`))
    assert.ok(documented.length > 20, 'the document lists the operations')
    assert.deepEqual(documented.filter((route) => !seen.has(route)), [], 'operations the router does not have')
    for (const route of ['POST /api/passwords/check', 'GET /range/:prefix', 'GET /metrics', 'GET /api/keys', 'GET /docs/static/*']) assert.ok(seen.has(route), route)
    // Every route is in the scope table or open: none is refused to every key (and logged so at start).
    assert.doesNotMatch(server.logs(), /no scope names this route/)
  })

  it('a key whose scopes name none of the routes is 403 on every route but the open ones', async () => {
    const wrong: string[] = []
    for (const route of routes) {
      const { status, body } = await call(server, route, document, keys.narrow)
      const open = openToAnyone(route.method, route.template) || OPEN_TO_ANY_KEY.includes(`${route.method} ${route.template}`)
      if (open ? status === 401 || status === 403 : status !== 403 || body.type !== 'urn:hashd:problem:insufficient-scope') wrong.push(`${route.method} ${route.template}: ${status}`)
    }
    assert.deepEqual(wrong, [])
  })

  it('without a key, 401 on every route but those open to anyone; a key without scopes= is never refused', async () => {
    const wrong: string[] = []
    for (const route of routes) {
      const anonymous = (await call(server, route, document)).status
      if ((anonymous === 401) === openToAnyone(route.method, route.template)) wrong.push(`${route.method} ${route.template} without a key: ${anonymous}`)
      const full = (await call(server, route, document, keys.full)).status
      if (full === 401 || full === 403) wrong.push(`${route.method} ${route.template} with every scope: ${full}`)
    }
    assert.deepEqual(wrong, [])
  })

  it('each scope grants exactly the routes docs/keys.md gives it', async () => {
    const table = readFileSync(new URL('../../docs/keys.md', import.meta.url), 'utf8')
    const wrong: string[] = []
    for (const [scope, granted] of Object.entries(GRANTS)) {
      assert.ok(new RegExp(`^\\| \`${scope}\` \\|`, 'm').test(table), `docs/keys.md lists ${scope}`)
      for (const route of routes) {
        if (openToAnyone(route.method, route.template) || OPEN_TO_ANY_KEY.includes(`${route.method} ${route.template}`)) continue
        const status = (await call(server, route, document, keys[scope])).status
        if ((status === 403) === granted.includes(`${route.method} ${route.template}`)) wrong.push(`${scope}: ${route.method} ${route.template} ${status}`)
      }
    }
    assert.deepEqual(wrong, [])
    // Its section on scoped keys names every open route.
    const section = table.slice(table.indexOf('## Scoped API keys'), table.indexOf('## Audit'))
    for (const path of ['/api/health', '/api/ready', '/api/openapi.json', '/docs', '/api/algorithms', '/api/password-policy', '/api/identify/formats']) {
      assert.ok(section.includes(`\`GET ${path}\``) || section.includes(`\`${path}\``), path)
    }
  })

  it('the document gives each operation what it needs: the scope, a key without one, or nothing', () => {
    const wrong: string[] = []
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path.replace(/\{([A-Za-z]+)\}/g, ':$1')}`
        const scope = Object.entries(GRANTS).find(([, granted]) => granted.includes(route))?.[0]
        const expected = route === 'GET /api/health' ? [{}, { apiKey: ['health'] }, { apiKey: ['metrics'] }]
          : openToAnyone(method.toUpperCase(), path) ? []
            : [{ apiKey: scope === undefined ? [] : [scope] }]
        if (JSON.stringify(operation.security) !== JSON.stringify(expected)) wrong.push(`${route}: ${JSON.stringify(operation.security)}`)
      }
    }
    assert.deepEqual(wrong, [])
  })
})
