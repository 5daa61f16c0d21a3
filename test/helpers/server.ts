/**
 * Starts the real hashd on loopback (an ephemeral port) for a test file, with its logs captured,
 * and talks HTTP to it with fetch. Every test file uses this; none uses app.inject.
 *
 * Every response the server sends is checked against the OpenAPI document it serves
 * (helpers/openapi.ts), whoever made the request (these helpers, fetch, a raw socket): `post` and
 * `get` fail at once on a response the document does not describe, and `close` fails if any other
 * response was not described. So a route's schema that drifts from what the route sends fails
 * every test that meets it. HASHD_CHECK_RESPONSES=0 turns the check off (to debug something else).
 */
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { sendPooled } from './blocked-loop.js'
import { OpenApiChecker, type OpenApiDocument } from './openapi.js'

export interface TestServer {
  url: string
  app: FastifyInstance
  /** Every log line written so far, as text. */
  logs(): string
  /** fetch(url + path, init), failing at once if the response is not described. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>
  get(path: string): Promise<TestResponse>
  close(): Promise<void>
}

export interface TestResponse {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
  text: string
}

export async function toTestResponse(response: Response): Promise<TestResponse> {
  const text = await response.text()
  let body: unknown = text
  try { body = JSON.parse(text) } catch { /* not JSON */ }
  return { status: response.status, headers: response.headers, body, text }
}

/** Rate limiting is off unless a test asks for it, so suites can send many requests. */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const config = loadConfig({ RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info', ...env, HOST: '127.0.0.1', PORT: '0' })
  let captured = ''
  const logStream = new Writable({ write(chunk, _encoding, done) { captured += String(chunk); done() } })
  const app = await buildApp(config, { logStream })
  const undescribed = watchResponses(app)
  const checkedResponse = async (response: Response): Promise<TestResponse> => {
    const result = await toTestResponse(response)
    undescribed.assertDescribed(result.headers.get('x-request-id'))
    return result
  }
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const url = `${config.tls ? 'https' : 'http'}://127.0.0.1:${address.port}`
  const send = (path: string, init?: RequestInit): Promise<Response> => sendPooled(() => fetch(url + path, init), init?.body)
  return {
    url,
    app,
    logs: () => captured,
    fetch: async (path, init) => {
      const response = await send(path, init)
      undescribed.assertDescribed(response.headers.get('x-request-id'))
      return response
    },
    post: async (path, body, headers = {}) => checkedResponse(await send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })),
    get: async (path) => checkedResponse(await send(path)),
    close: async () => {
      await app.close()
      undescribed.assertNone()
    },
  }
}

/**
 * Checks every response `app` sends against the document it serves, in an onSend hook (added
 * before the server starts, so it runs for every route, the not-found handler and every error).
 */
export function watchResponses(app: FastifyInstance): { assertDescribed(requestId: string | null): void, assertNone(): void } {
  const failures = new Map<string, string[]>()
  if (process.env.HASHD_CHECK_RESPONSES === '0') return { assertDescribed: () => {}, assertNone: () => {} }
  let checker: OpenApiChecker | undefined
  app.addHook('onSend', (request, reply, payload, done) => {
    try {
      checker ??= new OpenApiChecker(app.swagger() as unknown as OpenApiDocument)
      const body = request.method === 'HEAD' ? null
        : typeof payload === 'string' ? payload
          : Buffer.isBuffer(payload) ? payload.toString('utf8')
            : payload === null || payload === undefined ? '' : null
      const messages = checker.check({ method: request.method, url: request.url, status: reply.statusCode, headers: reply.getHeaders(), body })
      if (messages.length > 0) failures.set(String(request.id), messages)
    } catch (error) {
      failures.set(String(request.id), [`the response check failed: ${String(error)}`])
    }
    done(null, payload)
  })
  const report = (messages: string[]) => new Error(`response not described by /api/openapi.json:\n  ${messages.join('\n  ')}`)
  return {
    assertDescribed(requestId) {
      const messages = requestId === null ? undefined : failures.get(requestId)
      if (!messages || requestId === null) return
      failures.delete(requestId)
      throw report(messages)
    },
    assertNone() {
      const messages = [...failures.values()].flat()
      failures.clear()
      if (messages.length > 0) throw report(messages)
    },
  }
}

/**
 * One scrape of GET /metrics, as Prometheus reads it, and a function giving a sample's value by
 * name (`hashd_work_in_flight`) or name and labels (`hashd_file_reload_failing{source="tls"}`):
 * the pool's load and the files' state, which GET /api/health shows only to a key with the health
 * scope. For a server without API_KEYS_FILE, in this process or spawned (helpers/process.ts).
 */
export async function readMetrics(server: { fetch(path: string, init?: RequestInit): Promise<Response> }): Promise<(sample: string) => number> {
  const response = await server.fetch('/metrics')
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`)
  const lines = text.split('\n')
  return (sample) => {
    const line = lines.find((each) => each.startsWith(`${sample} `))
    if (line === undefined) throw new Error(`GET /metrics has no ${sample}`)
    return Number(line.slice(sample.length + 1))
  }
}

/** One sample of GET /metrics (readMetrics). */
export async function metricValue(server: { fetch(path: string, init?: RequestInit): Promise<Response> }, sample: string): Promise<number> {
  return (await readMetrics(server))(sample)
}

/**
 * How many tasks the server's worker pool has handed to a thread since it started
 * (`hashd_work_started_total`). A request refused at a cost cap must leave it unchanged: proof
 * that no work began, without timing anything.
 */
export async function tasksStarted(server: TestServer): Promise<number> {
  return await metricValue(server, 'hashd_work_started_total')
}
