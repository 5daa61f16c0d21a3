/**
 * Logs are Pino JSON lines with request id, method, route, status and latency, and never carry a
 * body or an Authorization header at any level: a unique marker goes through every operation and
 * every way a request can fail, and must appear nowhere in what the server logged.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { connect } from 'node:net'
import { describe, it } from 'node:test'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'

/** Every spelling of the marker a log line could plausibly carry. */
function spellings(marker: string): string[] {
  const bytes = Buffer.from(marker)
  return [marker, marker.replaceAll('-', ''), bytes.toString('hex'), bytes.toString('base64').slice(0, 40),
    // A Buffer serialized by JSON.stringify: {"type":"Buffer","data":[…]}
    [...bytes.subarray(0, 12)].join(',')]
}

/** Sends a raw, malformed HTTP request that carries the marker and waits for the server to answer. */
function sendMalformedHttp(url: string, marker: string): Promise<string> {
  return new Promise((resolve) => {
    let received = ''
    const socket = connect(Number(new URL(url).port), '127.0.0.1', () => {
      socket.write(`POST /api/hash HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${marker}\r\nContent-Length: abc\r\n\r\n{"input":"${marker}"}`)
    })
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('error', () => {})
    socket.on('close', () => resolve(received))
  })
}

/** Puts the marker through every operation and failure mode; returns how many HTTP requests were sent. */
async function exerciseEverything(server: TestServer, marker: string): Promise<number> {
  const auth = { authorization: `Bearer ${marker}`, cookie: `session=${marker}`, 'x-api-key': marker }
  const raw = async (body: Uint8Array | string) =>
    toTestResponse(await fetch(`${server.url}/api/hash`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body }))
  const expectations: Array<[Promise<{ status: number, text: string }>, number]> = [
    [server.post('/api/hash', { input: marker }, auth), 200],
    [server.post(`/api/hash?token=${marker}`, { input: marker, algorithm: 'sha3-512', encoding: 'base64' }), 200],
    [server.post('/api/hash', { input: marker, algorithm: 'bcrypt', options: { cost: 4 } }), 200],
    [server.post('/api/hash', { input: Buffer.from(marker).toString('hex'), inputEncoding: 'hex', algorithm: 'argon2id', options: { memoryCost: 1024, timeCost: 1 } }), 200],
    [server.post('/api/hash', { input: marker.repeat(3), algorithm: 'bcrypt' }), 422],
    [server.post('/api/verify', { input: marker, hash: Buffer.from(marker).toString('hex').slice(0, 64) }), 200],
    [server.post('/api/verify', { input: 'x', hash: marker, algorithm: 'sha256' }), 422],
    [server.post('/api/verify', { input: 'x', hash: `$2b$10$${marker}` }), 422],
    [server.post('/api/hmac', { message: marker, key: marker }, auth), 200],
    [server.post('/api/hmac', { message: marker, key: Buffer.from(marker).toString('base64'), keyEncoding: 'base64', algorithm: 'sha512' }), 200],
    [server.post('/api/identify', { hash: marker }), 200],
    [server.post('/api/hash', { input: 'a', algorithm: marker }), 400],
    [server.post('/api/hash', { input: 'a', [marker]: 1 }), 400],
    [server.post('/api/hash', `{"input":"${marker}","a":\\ud800}`), 400],
    [server.post('/api/hash', `{"input":"${marker}\\ud800"}`), 400],
    [raw(`{"input": ${marker}}`), 400],
    [raw(Buffer.concat([Buffer.from(`{"input":"${marker}`), Buffer.from([0xff]), Buffer.from('"}')])), 400],
    [raw(JSON.stringify({ input: marker + 'x'.repeat(1024 * 1024) })), 413],
    [toTestResponse(await fetch(`${server.url}/api/hash`, { method: 'POST', headers: { 'content-type': 'text/plain', ...auth }, body: marker })), 415],
  ]
  const form = new FormData()
  form.append('algorithms', 'sha256,md5')
  form.append('file', new Blob([`file content ${marker}`]), `${marker}.txt`)
  const upload = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'POST', headers: auth, body: form }))
  assert.equal(upload.status, 200, upload.text)
  // The response names the file (the contract says so); the log must not.
  assert.equal(upload.body.name, `${marker}.txt`)
  for (const [pending, status] of expectations) {
    const response = await pending
    assert.equal(response.status, status, response.text)
  }
  await sendMalformedHttp(server.url, marker)
  return expectations.length + 1
}

for (const level of ['debug', 'trace']) {
  describe(`contract: logs at LOG_LEVEL=${level}`, () => {
    it('never contain a body, a file name, a query value or a header value', async () => {
      const server = await startServer({ LOG_LEVEL: level })
      const marker = randomUUID()
      let requests: number
      try {
        requests = await exerciseEverything(server, marker)
      } finally {
        await server.close()
      }
      const logs = server.logs()
      for (const spelling of spellings(marker)) {
        assert.ok(!logs.includes(spelling), `the log contains the marker as ${spelling}:\n${logs.split('\n').filter((line) => line.includes(spelling)).join('\n')}`)
      }

      const lines = logs.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
      const access = lines.filter((line) => line.msg === 'request completed')
      assert.ok(access.length >= requests, `${access.length} access lines for ${requests} requests`)
      // Request ids: a per-process random prefix and a counter, so every access line has its own.
      assert.equal(new Set(access.map((line) => line.reqId)).size, access.length, 'request ids are unique')
      for (const line of access) {
        assert.match(String(line.reqId), /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/)
        assert.equal(typeof line.method, 'string')
        assert.ok('route' in line)
        assert.equal(typeof line.statusCode, 'number')
        assert.equal(typeof line.responseTime, 'number')
        assert.equal(typeof line.level, 'number')
      }
      const hashLine = access.find((line) => line.route === '/api/hash' && line.statusCode === 200)
      assert.ok(hashLine, 'a successful /api/hash request is logged with its route')
      assert.equal(hashLine.method, 'POST')
      assert.ok(lines.some((line) => line.msg === 'client error'), 'the malformed HTTP request reached the client-error handler')
      const statuses = new Set(access.map((line) => line.statusCode))
      for (const status of [200, 400, 413, 415, 422]) assert.ok(statuses.has(status), `no access line with status ${status}`)
    })
  })
}
