/**
 * HTTP/1.1 framing on raw sockets, after Node's own request-smuggling tests
 * (test/parallel/test-http-request-smuggling-content-length.js, test-http-transfer-encoding-smuggling.js,
 * test-http-chunked-smuggling.js, test-http-missing-header-separator-*.js and friends in nodejs/node):
 * each message below is one a front end and hashd could frame differently (RFC 9112 §6.3, §11.2).
 * Each gets a 400 (or its own refusal) with the connection closed, and the request hidden behind
 * it is never processed: it asks for a path of its own, and the access log (one line per request
 * hashd processes, plugins/logging.ts) must never name that path, also after a later request on a
 * new connection has been answered.
 */
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { rawResponse } from './helpers/process.js'
import { startServer, type TestServer } from './helpers/server.js'

let server: TestServer
let port: number

before(async () => {
  server = await startServer({ LOG_LEVEL: 'info', MAX_FILE_SIZE: '1000', BODY_LIMIT: '1024' })
  port = Number(new URL(server.url).port)
})
after(async () => { await server.close() })

interface Exchange {
  /** Every status line's code, in the order read. */
  statuses: number[]
  /** The server closed the connection (FIN or reset) before the client gave up. */
  closed: boolean
  text: string
}

/**
 * Writes `parts` on a new connection (a number is a pause in ms) and reads until the server closes
 * it or `patienceMs` pass; the client never closes first.
 */
function exchange(parts: ReadonlyArray<string | number>, patienceMs = 3_000): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    let closed = false
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { text += chunk })
    socket.on('end', () => { closed = true })
    socket.on('error', () => { closed = true })
    const timer = setTimeout(() => socket.destroy(), patienceMs)
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ statuses: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])), closed, text })
    })
    void (async () => {
      for (const part of parts) {
        if (typeof part === 'number') await new Promise((wait) => setTimeout(wait, part))
        else if (!socket.destroyed && socket.writable) socket.write(part, 'latin1')
      }
    })()
  })
}

let counter = 0
/** A request for a path no other request uses: if hashd ever processes it, the access log names it. */
function hidden(): { path: string, bytes: string } {
  const path = `/smuggled-${process.pid}-${++counter}`
  return { path, bytes: `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n` }
}

/** The hidden request was never processed: not in the access log after a later request's answer. */
async function assertNeverProcessed(path: string): Promise<void> {
  const later = await server.fetch('/api/health')
  assert.equal(later.status, 200)
  await later.text()
  await new Promise((resolve) => setImmediate(resolve))
  assert.ok(!server.logs().includes(`"url":${JSON.stringify(path)}`), `${path} was processed`)
}

/** A 400 problem+json that closes the connection. */
function assertRefused(result: Exchange, status = 400): void {
  assert.deepEqual(result.statuses, [status], result.text.slice(0, 400))
  assert.ok(result.closed, 'the connection was left open')
  assert.match(result.text, /\r\nconnection: close\r\n/i)
  const problem = rawResponse('POST', '/api/hash', result.text)
  assert.match(String(problem.headers['content-type']), /^application\/problem\+json/)
  assert.equal(JSON.parse(String(problem.body)).status, status)
}

const JSON_BODY = '{"input":"x"}'
const post = (headers: string) => `POST /api/hash HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}\r\n`

describe('HTTP framing: messages a front end and hashd could frame differently', () => {
  it('Content-Length together with Transfer-Encoding: 400, closed (RFC 9112 §6.1)', async () => {
    const { path, bytes } = hidden()
    assertRefused(await exchange([`${post(`Content-Length: ${JSON_BODY.length + 5 + bytes.length}\r\nTransfer-Encoding: chunked\r\n`)}0\r\n\r\n${bytes}`]))
    await assertNeverProcessed(path)
  })

  it('two Content-Lengths that differ: 400, closed (RFC 9112 §6.3)', async () => {
    const { path, bytes } = hidden()
    assertRefused(await exchange([`${post(`Content-Length: ${JSON_BODY.length}\r\nContent-Length: ${JSON_BODY.length + bytes.length}\r\n`)}${JSON_BODY}${bytes}`]))
    await assertNeverProcessed(path)
  })

  it('Transfer-Encoding: chunked, identity (chunked not last): 400, closed (RFC 9112 §6.3)', async () => {
    const { path, bytes } = hidden()
    const body = `${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n\r\n`
    assertRefused(await exchange([`${post('Transfer-Encoding: chunked, identity\r\n')}${body}${bytes}`]))
    await assertNeverProcessed(path)
  })

  it('obs-fold (a header line that starts with white space), in any header: 400, closed (RFC 9112 §5.2)', async () => {
    for (const folded of ['X-Note: a\r\n b\r\n', 'Transfer-Encoding: identity\r\n chunked\r\n']) {
      const { path, bytes } = hidden()
      const body = `${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n\r\n`
      assertRefused(await exchange([`${post(`Content-Length: ${JSON_BODY.length}\r\n${folded}`)}${body}${bytes}`]))
      await assertNeverProcessed(path)
    }
  })

  it('a bare LF, or a bare CR, where CRLF belongs (header line, chunk size): 400, closed (RFC 9112 §2.2)', async () => {
    const messages = (smuggled: string) => [
      `POST /api/hash HTTP/1.1\r\nHost: localhost\nContent-Type: application/json\r\nContent-Length: ${JSON_BODY.length}\r\n\r\n${JSON_BODY}${smuggled}`,
      `POST /api/hash HTTP/1.1\r\nHost: localhost\r\nDummy: x\rContent-Length: ${JSON_BODY.length}\r\nContent-Type: application/json\r\n\r\n${JSON_BODY}${smuggled}`,
      `${post('Transfer-Encoding: chunked\r\n')}${JSON_BODY.length.toString(16)}\n${JSON_BODY}\r\n0\r\n\r\n${smuggled}`,
      `${post('Transfer-Encoding: chunked\r\n')}2;\nxx\r\n0\r\n\r\n${smuggled}`,
    ]
    for (const index of [0, 1, 2, 3]) {
      const { path, bytes } = hidden()
      assertRefused(await exchange([messages(bytes)[index]!]))
      await assertNeverProcessed(path)
    }
  })

  it('a chunk size past 64 bits: 400, closed', async () => {
    const { path, bytes } = hidden()
    // 2^64 + 13 in hex: a parser that wraps around reads a chunk of 13 bytes.
    assertRefused(await exchange([`${post('Transfer-Encoding: chunked\r\n')}1000000000000000d\r\n${JSON_BODY}\r\n0\r\n\r\n${bytes}`]))
    await assertNeverProcessed(path)
  })

  it('trailers: a request in the trailer section, or a framing field in a trailer: 400, closed; other trailer fields never count as headers', async () => {
    const chunked = `${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n`
    for (const trailer of [(smuggled: string) => smuggled, (smuggled: string) => `Content-Length: ${smuggled.length}\r\n\r\n${smuggled}`,
      (smuggled: string) => `Transfer-Encoding: chunked\r\n\r\n${smuggled}`]) {
      const { path, bytes } = hidden()
      assertRefused(await exchange([`${post('Transfer-Encoding: chunked\r\n')}${chunked}${trailer(bytes)}`]))
      await assertNeverProcessed(path)
    }
    // A plain trailer field is read and dropped: it cannot change what the request asked for
    // (its Content-Type trailer would make the JSON body a 415).
    const result = await exchange([`${post('Transfer-Encoding: chunked\r\nConnection: close\r\n')}${chunked}Content-Type: text/plain\r\nX-Checksum: 1\r\n\r\n`])
    assert.deepEqual(result.statuses, [200], result.text)
  })

  it('Expect: 100-continue on an upload refused for its size: the refusal, closed; the body sent after it is never read as a request', async () => {
    const { path, bytes } = hidden()
    const body = `${bytes}${'x'.repeat(2000 - bytes.length)}`
    const result = await exchange([
      `PUT /api/filehash HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
      200, body, bytes,
    ])
    assert.deepEqual(result.statuses.filter((status) => status !== 100), [413], result.text.slice(0, 400))
    assert.ok(result.closed)
    await assertNeverProcessed(path)
  })

  it('pipelined requests after a 400: never processed, whatever made the 400', async () => {
    const starts = [
      // Malformed HTTP: a space in a field name, a Content-Length that is not a number.
      'GET /api/health HTTP/1.1\r\nHost: localhost\r\nBad Header: 1\r\n\r\n',
      `${post('Content-Length: 1x\r\n')}${JSON_BODY}`,
      // Well-framed, but not JSON.
      `${post('Content-Length: 5\r\n')}{bad}`,
    ]
    for (const start of starts) {
      const first = hidden()
      const second = hidden()
      assertRefused(await exchange([`${start}${first.bytes}${second.bytes}`]))
      await assertNeverProcessed(first.path)
      await assertNeverProcessed(second.path)
    }
  })

  it('a malformed request pipelined behind a good one: the good one is answered first, then 400, closed', async () => {
    const result = await exchange(['PUT /api/filehash HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello', 'GET / HTTP/1.1\r\nBad Header: 1\r\n\r\n'])
    assert.deepEqual(result.statuses, [200, 400], result.text.slice(0, 600))
    assert.ok(result.closed)
    // sha256("hello"), FIPS 180-4 by any sha256 tool.
    assert.match(result.text, /2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824/)
  })
})
