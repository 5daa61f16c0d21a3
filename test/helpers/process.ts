/**
 * The real hashd as a child process (`node dist/src/server.js`), for tests that need several
 * instances, signals (SIGHUP), a process's own memory figures (/proc/PID/status), or its exit
 * status. It binds an ephemeral loopback port; the URL is read from its "listening at" log line.
 *
 * Responses from the child are checked against the OpenAPI document (helpers/openapi.ts) like
 * those of helpers/server.ts, when the test asks through `fetch`, `post` or `get` of the
 * HashdProcess: they fail at once on a response the document does not describe, and `stop` fails
 * if any was not described (in case a test swallowed the error). The document is not fetched from
 * the child, since every request counts against its rate limits, which tests assert on: it is
 * built in this process from the child's own environment (see documentFor).
 * HASHD_CHECK_RESPONSES=0 turns the check off, as in helpers/server.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { sendPooled } from './blocked-loop.js'
import { OpenApiChecker, type CheckedResponse, type OpenApiDocument } from './openapi.js'
import { toTestResponse, type TestResponse } from './server.js'

const SERVER = fileURLToPath(new URL('../../src/server.js', import.meta.url))

export interface SpawnedHashd {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** Resolves when a log line whose `msg` matches has been written (counting from line `after`), within `timeoutMs` (15 s). */
  logged(message: RegExp, after?: number, timeoutMs?: number): Promise<void>
  /** Log lines so far. */
  lines(): number
  /** SIGTERM unless it has exited, then wait for the exit. */
  stop(): Promise<void>
}

export interface HashdProcess extends SpawnedHashd {
  url: string
  /** fetch(url + path, init), the response checked against the document (it throws if undescribed). */
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** POST a JSON body (a string is sent as is), checked. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>
  /** GET, checked. */
  get(path: string, headers?: Record<string, string>): Promise<TestResponse>
  /** Checks a response the test read another way (a raw socket); throws if undescribed. */
  check(response: CheckedResponse): void
}

/** The environment the child gets: only PATH from this process, then loopback, an ephemeral port, and `env`. */
function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_MAX: '0', WORKER_THREADS: '2', ...env }
}

/**
 * The OpenAPI document a child started with `env` serves, built in this process from the same
 * configuration (API keys, pepper keys and limits change the document). REDIS_URL is left out: it
 * only moves the rate-limit counters, and the document does not depend on it
 * (rate-limit-redis.test.ts compares the two), while building with it would open a connection;
 * AUDIT_LOG too (the document is the same), since building with it would write to the child's log.
 * Worker threads start on first use, so none starts here.
 */
export async function documentFor(env: Record<string, string>): Promise<OpenApiDocument> {
  const { REDIS_URL: _redisUrl, AUDIT_LOG: _auditLog, ...rest } = childEnv(env)
  const logStream = new Writable({ write(_chunk, _encoding, done) { done() } })
  const app = await buildApp(loadConfig(rest), { logStream })
  try {
    await app.ready()
    // As served: JSON, so that what JSON drops (undefined) is dropped here too.
    return JSON.parse(JSON.stringify(app.swagger())) as OpenApiDocument
  } finally {
    await app.close()
  }
}

/**
 * Spawns hashd with this environment (plus PATH, loopback and an ephemeral port) without waiting.
 * `nodeFlags` go to node before the script (e.g. npm start's --expose-gc); none by default.
 */
export function spawnHashd(env: Record<string, string>, nodeFlags: string[] = []): SpawnedHashd {
  const child = spawn(process.execPath, [...nodeFlags, SERVER], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
  // A deadline, not a figure: a start or reload that never comes fails, and one slowed by a busy
  // machine (other test files starting processes at the same time) still passes.
  const logged = (message: RegExp, after = 0, timeoutMs = 60_000) => new Promise<void>((resolve, reject) => {
    const check = () => {
      const found = stdout.split('\n').slice(after).some((line) => {
        try { return message.test(String((JSON.parse(line) as { msg?: unknown }).msg)) } catch { return false }
      })
      if (found) { clearInterval(timer); clearTimeout(deadline); resolve() }
    }
    const timer = setInterval(check, 10)
    const deadline = setTimeout(() => { clearInterval(timer); reject(new Error(`no log line ${message}; stdout: ${stdout} stderr: ${stderr}`)) }, timeoutMs)
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return { child, stdout: () => stdout, stderr: () => stderr, exited, logged, lines: () => stdout.split('\n').length - 1, stop }
}

/** Spawns hashd and waits until it listens; returns its URL with the process. */
export async function startHashd(env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<HashdProcess> {
  const hashd = spawnHashd(env, nodeFlags)
  try {
    await Promise.race([
      hashd.logged(/listening at https?:\/\//),
      hashd.exited.then(() => { throw new Error(`hashd exited: ${hashd.stderr()} ${hashd.stdout()}`) }),
    ])
  } catch (error) {
    await hashd.stop()
    throw error
  }
  const url = /listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(hashd.stdout())?.[1]
  if (!url) {
    await hashd.stop()
    throw new Error(hashd.stdout())
  }
  let checker: OpenApiChecker | undefined
  if (process.env.HASHD_CHECK_RESPONSES !== '0') {
    try {
      checker = new OpenApiChecker(await documentFor(env))
    } catch (error) {
      await hashd.stop()
      throw error
    }
  }
  /** Failures not yet reported by `stop`. */
  const undescribed: string[] = []
  const check = (response: CheckedResponse) => {
    const messages = checker?.check(response) ?? []
    if (messages.length === 0) return
    undescribed.push(...messages)
    throw new Error(`response not described by /api/openapi.json:\n  ${messages.join('\n  ')}`)
  }
  const checkedFetch = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await sendPooled(() => fetch(url + path, init), init.body)
    if (checker === undefined) return response
    const method = (init.method ?? 'GET').toUpperCase()
    // A copy is read, so the test can still read the response as it likes.
    const body = method === 'HEAD' ? null : await response.clone().text()
    check({ method, url: path, status: response.status, headers: Object.fromEntries(response.headers), body })
    return response
  }
  return {
    ...hashd,
    url,
    fetch: checkedFetch,
    post: async (path, body, headers = {}) => toTestResponse(await checkedFetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })),
    get: async (path, headers = {}) => toTestResponse(await checkedFetch(path, { headers })),
    check,
    stop: async () => {
      await hashd.stop()
      if (undescribed.length > 0) throw new Error(`responses not described by /api/openapi.json:\n  ${undescribed.splice(0).join('\n  ')}`)
    },
  }
}

/**
 * A response read raw from a socket (one HTTP/1.1 message: status line, headers, body, chunked or
 * not) as the checker takes it, for `HashdProcess.check`.
 */
export function rawResponse(method: string, url: string, text: string): CheckedResponse {
  const end = text.indexOf('\r\n\r\n')
  const head = end === -1 ? text : text.slice(0, end)
  let body = end === -1 ? '' : text.slice(end + 4)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
  if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${text.slice(0, 200)}`)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    // RFC 9112 §7.1: size in hex, CRLF, data, CRLF, until a chunk of size 0.
    let decoded = ''
    for (let rest = body; ;) {
      const lineEnd = rest.indexOf('\r\n')
      const size = Number.parseInt(rest.slice(0, lineEnd), 16)
      if (lineEnd === -1 || !(size > 0)) break
      decoded += rest.slice(lineEnd + 2, lineEnd + 2 + size)
      rest = rest.slice(lineEnd + 2 + size + 2)
    }
    body = decoded
  }
  return { method, url, status, headers, body: method === 'HEAD' ? null : body }
}

/**
 * What a new client gets: 'refused' (the listener is closed), 'reset' (accepted by the kernel just
 * before the listener closed, then dropped unanswered) or the HTTP status of GET /api/ready, whose
 * response is given to `check` (HashdProcess.check) when there is one.
 */
export function newClientOutcome(url: string, check?: (response: CheckedResponse) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write('GET /api/ready HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'))
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? 'refused' : error.code === 'ECONNRESET' ? 'reset' : String(error.code)))
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]
      try {
        if (status !== undefined) check?.(rawResponse('GET', '/api/ready', received))
      } catch (error) {
        reject(error as Error)
        return
      }
      resolve(status ?? 'reset')
    })
  })
}

/**
 * Waits until new connections are refused: the listener closes a few event-loop turns after the
 * "shutting down" log line (Fastify runs the preClose hooks first), so a client connecting in
 * between is still answered, with 503.
 */
export async function untilRefused(url: string, check?: (response: CheckedResponse) => void): Promise<void> {
  for (let tries = 0; await newClientOutcome(url, check) !== 'refused'; tries++) {
    if (tries >= 500) throw new Error('new connections were still accepted')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
