/**
 * Starts the real hashd on loopback (an ephemeral port) for a test file, with its logs captured,
 * and talks HTTP to it with fetch. Every test file uses this; none uses app.inject.
 */
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'

export interface TestServer {
  url: string
  app: FastifyInstance
  /** Every log line written so far, as text. */
  logs(): string
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
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    app,
    logs: () => captured,
    post: async (path, body, headers = {}) => toTestResponse(await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })),
    get: async (path) => toTestResponse(await fetch(url + path)),
    close: () => app.close(),
  }
}

/**
 * How many tasks the server's worker pool has handed to a thread since it started (GET
 * /api/health). A request refused at a cost cap must leave it unchanged: proof that no work began,
 * without timing anything.
 */
export async function tasksStarted(server: TestServer): Promise<number> {
  const started = (await server.get('/api/health')).body?.work?.started
  if (typeof started !== 'number') throw new Error('GET /api/health has no work.started')
  return started
}
