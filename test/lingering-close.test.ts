/**
 * A refusal sent before the body has arrived (413 for a body or upload past its limit) reaches a
 * client that is still sending, instead of a connection reset: the server lingers on close
 * (src/lingering-close.ts). Checked with Node's HTTP client, the way a user's code would send, and
 * with a raw socket for what the server does on the wire.
 */
import assert from 'node:assert/strict'
import { Agent } from 'node:http'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { LINGER_MS } from '../src/lingering-close.js'
import { sendInPieces } from './helpers/send.js'
import { startServer, type TestServer } from './helpers/server.js'

const MiB = 1024 * 1024
const portOf = (server: TestServer) => Number(new URL(server.url).port)

interface Outcome { status?: number, contentType?: string, body?: string, error?: string }

/** Sends `body` and resolves with the answer, or with the error the client saw before it had read one. */
async function send(url: string, agent: Agent, method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Outcome> {
  try {
    const { status, type, text } = await sendInPieces(url + path, method, { ...headers, 'content-length': String(body.length) }, [body], agent)
    return { status, contentType: type, body: text }
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? String(error) }
  }
}

/** `count` requests, four at a time, as a client with a keep-alive pool would send them. */
async function many(count: number, one: (agent: Agent) => Promise<Outcome>): Promise<Outcome[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const outcomes: Outcome[] = []
    for (let i = 0; i < count; i += 4) outcomes.push(...await Promise.all([one(agent), one(agent), one(agent), one(agent)]))
    return outcomes
  } finally {
    agent.destroy()
  }
}

function assertAllRefused(outcomes: Outcome[], detail: RegExp): void {
  const failed = outcomes.filter((outcome) => outcome.status !== 413)
  assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests did not read the 413`)
  for (const outcome of outcomes) {
    assert.match(outcome.contentType ?? '', /^application\/problem\+json/)
    assert.match(JSON.parse(outcome.body ?? '{}').detail as string, detail)
  }
}

/**
 * The wire-level case behind the failures: a client sends part of its body, is answered while it
 * is still sending (it has not read the answer yet), and sends more. Without lingering the server
 * has closed with that data unread, the client's next bytes meet a reset, and the answer waiting in
 * the client's buffer is lost (EPIPE). Resolves with what the client could read, and its error.
 */
async function answeredWhileSending(port: number, head: string, first: Buffer, more: Buffer): Promise<{ received: string, error: string }> {
  // Half-open: the client's side stays open after the server's FIN, as a client still sending keeps it.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  let received = ''
  let error = ''
  socket.on('error', (failure: NodeJS.ErrnoException) => { error = failure.code ?? failure.message })
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  try {
    socket.pause()
    socket.write(head)
    socket.write(first)
    // The server answers and closes its side meanwhile; the answer waits unread.
    await pause(500)
    socket.write(more)
    await pause(300)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.resume()
    await pause(300)
    return { received, error }
  } finally {
    socket.destroy()
  }
}

/** `data` in HTTP/1.1 chunked framing (RFC 9112 §7.1), 64 KiB a chunk; `last` adds the last chunk. */
function chunked(data: Buffer, last: boolean): Buffer {
  const pieces: Buffer[] = []
  for (let offset = 0; offset < data.length; offset += 64 * 1024) {
    const piece = data.subarray(offset, offset + 64 * 1024)
    pieces.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'))
  }
  if (last) pieces.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(pieces)
}

describe('a refusal before the body has arrived reaches the client', () => {
  let server: TestServer
  // Limits small enough that the bodies over them stay quick to send.
  before(async () => { server = await startServer({ MAX_FILE_SIZE: String(2 * MiB) }) })
  after(async () => { await server.close() })

  it('413 for a JSON body over BODY_LIMIT, read by a client still sending its body', async () => {
    const head = `POST /api/hash HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${4 * MiB}\r\n\r\n`
    const { received, error } = await answeredWhileSending(portOf(server), head, Buffer.from(`{"input":"${'x'.repeat(64 * 1024)}`), Buffer.alloc(256 * 1024, 0x78))
    assert.match(received, /^HTTP\/1\.1 413 /, `the client read ${JSON.stringify(received.slice(0, 60))}; its error: ${error}`)
    assert.match(received, /content-type: application\/problem\+json/i)
    assert.match(received, /BODY_LIMIT/)
  })

  it('413 for an upload that declares more than MAX_FILE_SIZE, read by a client still sending its body', async () => {
    const head = `PUT /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${3 * MiB}\r\n\r\n`
    const { received, error } = await answeredWhileSending(portOf(server), head, Buffer.alloc(64 * 1024, 1), Buffer.alloc(256 * 1024, 1))
    assert.match(received, /^HTTP\/1\.1 413 /, `the client read ${JSON.stringify(received.slice(0, 60))}; its error: ${error}`)
    assert.match(received, /MAX_FILE_SIZE/)
  })

  it('413 for a chunked upload cut at MAX_FILE_SIZE while it streams in, read by a client still sending, one algorithm and several', async () => {
    for (const algorithms of ['sha256', 'sha256,md5']) {
      const head = `PUT /api/filehash?algorithms=${algorithms} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n`
      const { received, error } = await answeredWhileSending(portOf(server), head, chunked(Buffer.alloc(2 * MiB + 128 * 1024, 1), false), chunked(Buffer.alloc(256 * 1024, 1), true))
      assert.match(received, /^HTTP\/1\.1 413 /, `${algorithms}: the client read ${JSON.stringify(received.slice(0, 60))}; its error: ${error}`)
      assert.match(received, /MAX_FILE_SIZE/)
    }
  })

  it('413 for JSON bodies over BODY_LIMIT sent by Node\'s HTTP client, four at a time on kept-alive connections', async () => {
    const body = Buffer.from(JSON.stringify({ input: 'x'.repeat(16 * MiB) }))
    const outcomes = await many(12, (agent) => send(server.url, agent, 'POST', '/api/hash', { 'content-type': 'application/json' }, body))
    assertAllRefused(outcomes, /BODY_LIMIT/)
  })

  it('sends the answer and a FIN, goes on reading the body, and closes LINGER_MS later when the client is still sending', async () => {
    const port = portOf(server)
    // Half-open: the client's side stays open after the server's FIN, as a client still sending keeps it.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    let received = ''
    let finAt = 0
    const started = performance.now()
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('end', () => { finAt = performance.now() - started })
    socket.on('error', () => { /* the reset at the end is expected */ })
    // 3 MiB declared, then 1 KiB every 100 ms: a slow client that never gets to the end.
    socket.write(`PUT /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${3 * MiB}\r\n\r\n`)
    const trickle = setInterval(() => { if (socket.writable) socket.write(Buffer.alloc(1024, 1)) }, 100)
    const closedAfter = await new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now() - started)))
    clearInterval(trickle)
    assert.match(received, /^HTTP\/1\.1 413 /)
    assert.match(received, /connection: close/i)
    assert.ok(finAt > 0 && finAt < 1_000, `the answer and FIN came after ${Math.round(finAt)} ms`)
    // The server reads on until LINGER_MS, then closes; the client's next write meets the reset.
    assert.ok(closedAfter >= LINGER_MS - 100 && closedAfter < LINGER_MS + 2_000, `closed after ${Math.round(closedAfter)} ms; LINGER_MS is ${LINGER_MS}`)
  })

  it('closes as soon as the rest of the body has arrived, and answers a complete request on a closing connection at once', async () => {
    const port = Number(new URL(server.url).port)
    const exchange = (write: (socket: ReturnType<typeof connect>) => void) => new Promise<{ received: string, closedAfter: number }>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => write(socket))
      let received = ''
      const started = performance.now()
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => { received += chunk })
      socket.on('error', () => {})
      socket.on('close', () => resolve({ received, closedAfter: performance.now() - started }))
    })
    // The declared 3 MiB all sent, after the 413 has gone out: the server reads it and closes.
    const whole = await exchange((socket) => {
      socket.write(`PUT /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${3 * MiB}\r\n\r\n`)
      socket.once('data', () => socket.end(Buffer.alloc(3 * MiB, 1)))
    })
    assert.match(whole.received, /^HTTP\/1\.1 413 /)
    assert.ok(whole.closedAfter < LINGER_MS - 1_000, `closed after ${Math.round(whole.closedAfter)} ms`)
    // Connection: close on a request with its whole body: nothing to linger for.
    const complete = await exchange((socket) => {
      const body = JSON.stringify({ input: 'abc', algorithm: 'sha256' })
      socket.write(`POST /api/hash HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
    })
    assert.match(complete.received, /^HTTP\/1\.1 200 /)
    // SHA-256("abc"), FIPS 180-4 example.
    assert.match(complete.received, /ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad/)
    assert.ok(complete.closedAfter < 1_000, `closed after ${Math.round(complete.closedAfter)} ms`)
  })

  it('a shutdown does not wait for a lingering connection', async () => {
    const own = await startServer({ MAX_FILE_SIZE: String(2 * MiB) })
    const socket = connect(Number(new URL(own.url).port), '127.0.0.1')
    socket.on('error', () => {})
    const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()))
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
    socket.write(`PUT /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: ${3 * MiB}\r\n\r\n`)
    await answered
    const started = performance.now()
    await own.close()
    await closed
    assert.ok(performance.now() - started < LINGER_MS / 2, `the shutdown took ${Math.round(performance.now() - started)} ms`)
  })
})
