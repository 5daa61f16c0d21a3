/**
 * Keep-alive behind a load balancer (docs/deployment.md, "Keep-alive"): a balancer pools idle
 * connections to hashd and reuses them until its own idle timeout (AWS ALB and nginx's upstream
 * keepalive: 60 s). hashd must keep an idle connection open longer than that, so that the balancer
 * is the one that closes it; and when hashd does close one, it closes it cleanly (a FIN the client
 * reads before it sends again), after the time it advertised (`Keep-Alive: timeout=N`).
 *
 * Over raw sockets to a real server with a short KEEP_ALIVE_TIMEOUT_MS, and a HEADERS_TIMEOUT_MS
 * shorter still: the header deadline counts from a request's first byte, so a connection may sit
 * idle past it and still carry a request.
 */
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { loadConfig } from '../src/config.js'
import { startServer, type TestServer } from './helpers/server.js'

const KEEP_ALIVE_MS = 1500
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A raw connection that reads whole responses (Content-Length framed) and records how it ended. */
class Connection {
  private received = ''
  private readonly waiting: Array<() => void> = []
  ended: number | null = null
  error: string | null = null
  closed = false
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { this.received += chunk; this.wake() })
    socket.on('end', () => { this.ended = performance.now(); this.wake() })
    socket.on('error', (error: NodeJS.ErrnoException) => { this.error = error.code ?? error.message; this.wake() })
    socket.on('close', () => { this.closed = true; this.wake() })
  }

  static open(url: string): Promise<Connection> {
    const { hostname, port } = new URL(url)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new Connection(socket)))
      socket.once('error', reject)
    })
  }

  private wake(): void { for (const wake of this.waiting.splice(0)) wake() }
  private next(): Promise<void> { return new Promise((resolve) => this.waiting.push(resolve)) }

  /** Sends GET /api/health and resolves with the whole response's head and body; rejects if the connection ends first. */
  async get(): Promise<{ status: number, headers: string, body: string }> {
    this.socket.write('GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n')
    return this.response()
  }

  /** Writes raw bytes, resolving once they are handed to the kernel. */
  write(data: string): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(data, (error) => error ? reject(error) : resolve()))
  }

  /** Resolves with the first whole response already received or yet to come, without sending anything. */
  async response(): Promise<{ status: number, headers: string, body: string }> {
    for (;;) {
      const end = this.received.indexOf('\r\n\r\n')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(this.received.slice(0, end))?.[1] ?? NaN)
      if (end >= 0 && Buffer.byteLength(this.received.slice(end + 4)) >= length) {
        const head = this.received.slice(0, end)
        const body = this.received.slice(end + 4)
        this.received = ''
        return { status: Number(head.split(' ')[1]), headers: head, body }
      }
      if (this.ended !== null || this.closed) throw new Error(`the connection ended before the answer (${this.error ?? 'FIN'}): ${JSON.stringify(this.received)}`)
      await this.next()
    }
  }

  /** Resolves once the server's side has ended (FIN) or the connection failed. */
  async untilEnded(): Promise<void> {
    while (this.ended === null && this.error === null && !this.closed) await this.next()
  }

  destroy(): void { this.socket.destroy() }
}

describe('keep-alive: idle connections outlive a load balancer\'s and close cleanly', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({ KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS), HEADERS_TIMEOUT_MS: '400', REQUEST_TIMEOUT_MS: '1000' })
  })
  after(async () => { await server?.close() })

  it('a request on a connection idle for just under KEEP_ALIVE_TIMEOUT_MS is answered on that connection', async () => {
    const connection = await Connection.open(server.url)
    try {
      const first = await connection.get()
      assert.equal(first.status, 200)
      assert.match(first.headers, /\r\nkeep-alive: timeout=1(\r\n|$)/i)
      // Idle longer than HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS, just under the keep-alive timeout.
      await sleep(KEEP_ALIVE_MS - 300)
      assert.equal(connection.ended, null, 'the server closed the connection before its keep-alive timeout')
      const second = await connection.get()
      assert.equal(second.status, 200)
      assert.equal(JSON.parse(second.body).status, 'ok')
      assert.equal(connection.error, null)
    } finally {
      connection.destroy()
    }
  })

  it('past it, the server closes the idle connection with a FIN, after the timeout it advertised, never a reset', async () => {
    const connection = await Connection.open(server.url)
    try {
      const answered = await connection.get()
      assert.equal(answered.status, 200)
      const idleSince = performance.now()
      await connection.untilEnded()
      const idleMs = (connection.ended ?? performance.now()) - idleSince
      // A clean close: the end of the stream, read before this client sent anything more.
      assert.deepEqual({ ended: connection.ended !== null, error: connection.error }, { ended: true, error: null })
      // Not before the advertised timeout (a client that keeps to it never sends on a closing connection),
      // and not forever (Node closes a second after it; the rest is a loaded machine's slack).
      assert.ok(idleMs >= KEEP_ALIVE_MS - 50, `closed after ${idleMs.toFixed(0)} ms idle`)
      assert.ok(idleMs < KEEP_ALIVE_MS + 1000 + 3000, `closed after ${idleMs.toFixed(0)} ms idle`)
    } finally {
      connection.destroy()
    }
  })
})

describe('KEEP_ALIVE_TIMEOUT_MS', () => {
  it('is 65 s by default, above the 60 s idle timeout of AWS ALB and nginx\'s upstream keepalive, and advertised so', async () => {
    assert.equal(loadConfig({}).keepAliveTimeoutMs, 65_000)
    const server = await startServer()
    try {
      const connection = await Connection.open(server.url)
      try {
        assert.match((await connection.get()).headers, /\r\nkeep-alive: timeout=65(\r\n|$)/i)
      } finally {
        connection.destroy()
      }
    } finally {
      await server.close()
    }
  })

  it('does not hold a shutdown: a connection whose request was in flight closes about a second after its answer, not 65 s', async () => {
    const server = await startServer()
    const connection = await Connection.open(server.url)
    try {
      // An upload half sent: the request is in flight when the shutdown begins.
      const half = 'a'.repeat(64 * 1024)
      await connection.write('POST /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n' +
        `Content-Type: application/octet-stream\r\nContent-Length: ${2 * half.length}\r\n\r\n${half}`)
      await sleep(300)
      const closed = server.app.close()
      await sleep(50)
      await connection.write(half)
      const answer = await connection.response()
      const answeredAt = performance.now()
      assert.equal(answer.status, 200, answer.body)
      await closed
      await connection.untilEnded()
      const afterAnswerMs = performance.now() - answeredAt
      assert.deepEqual({ ended: connection.ended !== null, error: connection.error }, { ended: true, error: null })
      // Node's own grace after an answer is a second; a loaded machine's slack on top.
      assert.ok(afterAnswerMs < 1000 + 4000, `the shutdown waited ${afterAnswerMs.toFixed(0)} ms after the last answer`)
    } finally {
      connection.destroy()
      await server.close().catch(() => undefined)
    }
  })

  it('takes whole milliseconds from 100 to an hour', () => {
    assert.equal(loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '620000' }).keepAliveTimeoutMs, 620_000)
    assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '0' }), /KEEP_ALIVE_TIMEOUT_MS must be between 100 and 3600000/)
    assert.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '65s' }), /KEEP_ALIVE_TIMEOUT_MS must be a whole number/)
  })
})
