/**
 * plugins/batched-writes.ts: the replies that finish in one turn of the event loop are written
 * together at its end. Each of a burst of concurrent requests, good and bad, gets its own answer;
 * pipelined requests on one connection are answered in order; a reply whose head cannot be written
 * gets Fastify's own error answer and does not hold back the others of its turn.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Fastify from 'fastify'
import batchedWritesPlugin from '../src/plugins/batched-writes.js'
import { startServer, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

/** sha256sum's digest of each text, in one run of the tool. */
function sha256sums(texts: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-batched-'))
  try {
    const files = texts.map((text, index) => {
      const file = join(dir, String(index))
      writeFileSync(file, text)
      return file
    })
    return run('sha256sum', files).split('\n').map((line) => line.slice(0, 64))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Writes all requests in one write(2) and reads the answers: [status, body] each, in the order they came. */
function pipelined(port: number, requests: string[]): Promise<Array<[number, string]>> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let data = Buffer.alloc(0)
    const answers: Array<[number, string]> = []
    socket.setTimeout(10_000, () => { socket.destroy(); reject(new Error(`only ${answers.length} of ${requests.length} answers came`)) })
    socket.on('error', reject)
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      for (;;) {
        const headEnd = data.indexOf('\r\n\r\n')
        if (headEnd === -1) break
        const head = data.subarray(0, headEnd).toString('latin1')
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1])
        if (data.length < headEnd + 4 + length) break
        answers.push([Number(head.slice(9, 12)), data.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8')])
        data = data.subarray(headEnd + 4 + length)
      }
      if (answers.length === requests.length) {
        socket.destroy()
        resolve(answers)
      }
    })
    socket.on('connect', () => socket.write(requests.join('')))
  })
}

describe('batched writes: replies of one turn leave together', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('answers each of a burst of concurrent requests (digests, 400s and 415s mixed) with its own answer', { skip: skipUnless('sha256sum') }, async () => {
    const inputs = Array.from({ length: 120 }, (_, index) => `burst ${index} ${'x'.repeat(index)}`)
    const expected = sha256sums(inputs)
    const answers = await Promise.all(inputs.map((input, index) => {
      if (index % 4 === 0) return server.post('/api/hash', `{"input": "${index}"`)
      if (index % 4 === 1) return server.post('/api/hash', JSON.stringify({ input }), { 'content-type': 'text/plain' })
      return server.post('/api/hash', { input, algorithm: 'sha256' })
    }))
    answers.forEach((answer, index) => {
      if (index % 4 === 0) {
        assert.equal(answer.status, 400, answer.text)
        assert.equal(answer.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      } else if (index % 4 === 1) {
        assert.equal(answer.status, 415, answer.text)
        assert.match(answer.body.detail, /not text\/plain/)
      } else {
        assert.equal(answer.status, 200, answer.text)
        assert.equal(answer.body.hash, expected[index], `request ${index}`)
      }
    })
    assert.equal(new Set(answers.map((answer) => answer.headers.get('x-request-id'))).size, answers.length, 'one request id per answer')
  })

  it('answers requests pipelined on one connection in the order they were sent', { skip: skipUnless('sha256sum') }, async () => {
    const inputs = Array.from({ length: 12 }, (_, index) => `pipelined ${index}`)
    const expected = sha256sums(inputs)
    const port = Number(new URL(server.url).port)
    const requests = inputs.map((input, index) => {
      // Every third one is refused, so answers of both kinds share a turn.
      const body = index % 3 === 2 ? JSON.stringify({ input, algorithm: 'no-such-algorithm' }) : JSON.stringify({ input })
      return `POST /api/hash HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    })
    const answers = await pipelined(port, requests)
    answers.forEach(([status, body], index) => {
      if (index % 3 === 2) {
        assert.equal(status, 400, body)
        return
      }
      assert.equal(status, 200, body)
      assert.equal((JSON.parse(body) as { hash: string }).hash, expected[index], `answer ${index}`)
    })
  })

  it('gives a reply whose head cannot be written Fastify\'s error answer, and still sends the others of its turn', async () => {
    const app = Fastify({ logger: false })
    await app.register(batchedWritesPlugin)
    // Node refuses a header value with a line break when the head is written, after onSend.
    app.get('/bad-header', async (_request, reply) => { reply.header('x-broken', 'a\nb'); return { ok: false } })
    app.get('/fine', async () => ({ ok: true }))
    await app.listen({ host: '127.0.0.1', port: 0 })
    try {
      const { port } = app.server.address() as { port: number }
      const [bad, fine] = await Promise.all(['/bad-header', '/fine'].map(async (path) => {
        const response = await fetch(`http://127.0.0.1:${port}${path}`)
        return { status: response.status, body: await response.json() as Record<string, unknown> }
      }))
      assert.equal(bad?.status, 500)
      assert.equal(bad?.body.code, 'ERR_INVALID_CHAR')
      assert.deepEqual(fine, { status: 200, body: { ok: true } })
    } finally {
      await app.close()
    }
  })
})
