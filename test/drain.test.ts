/**
 * Graceful drain of the real process (`node dist/src/server.js`), as an orchestrator drives it:
 * readiness (GET /api/ready) says 200 while serving; on SIGTERM a password hash of seconds and an
 * upload still streaming in both finish with 200, a new connection is refused, a request arriving
 * on a kept-alive connection is answered 503, and the exit code is 0. When SHUTDOWN_TIMEOUT_MS
 * passes first, the open request is cut off and the exit code is 1.
 *
 * Results are checked against published vectors: SHA-256 of one million "a" (FIPS 180-2, appendix
 * B.3), and the PHC string form of argon2id (RFC 9106, with the parameters asked for).
 */
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { newClientOutcome, rawResponse, startHashd, untilRefused } from './helpers/process.js'
import { metricValue } from './helpers/server.js'

/** FIPS 180-2 appendix B.3: SHA-256 of 1,000,000 repetitions of "a". */
const SHA256_MILLION_A = 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'
const HALF = 500_000

/** A raw connection that collects everything the server sends until it closes the connection. */
async function rawConnection(url: string): Promise<{ socket: Socket, received: () => string, closed: Promise<void> }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { received += chunk })
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  return { socket, received: () => received, closed }
}

/** The head of a raw-body upload of one million bytes to /api/filehash. */
const uploadHead = 'POST /api/filehash?algorithms=sha256 HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n' +
  `Content-Type: application/octet-stream\r\nContent-Length: ${2 * HALF}\r\n\r\n`

const write = (socket: Socket, data: string) => new Promise<void>((resolve, reject) => socket.write(data, (error) => error ? reject(error) : resolve()))


describe('graceful drain of the process', () => {
  it('GET /api/ready is 200 while serving, and needs no API key', async () => {
    const server = await startHashd({ API_KEYS_FILE: '/dev/null' })
    try {
      const response = await server.fetch('/api/ready')
      assert.equal(response.status, 200)
      assert.deepEqual(await response.json(), { status: 'ready' })
      // The same server does need a key for the API itself, so the 200 above is the public exception.
      const guarded = await server.fetch('/api/algorithms')
      assert.equal(guarded.status, 401)
      await guarded.text()
      const openapi = await (await server.fetch('/api/openapi.json')).json() as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> }
      assert.ok(openapi.paths['/api/ready']?.get?.responses['503'], 'the 503 answer of /api/ready is in OpenAPI')
    } finally {
      await server.stop()
    }
  })

  it('on SIGTERM finishes a slow argon2id and an upload in progress, refuses new connections, answers 503 on a kept-alive one, and exits 0', async () => {
    const server = await startHashd({ WORKER_THREADS: '2' })
    // argon2id with 128 MiB and 10 passes: seconds of work on a worker thread.
    let hashFinished = false
    const slowHash = server.fetch('/api/hash', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'correct horse battery staple', algorithm: 'argon2id', options: { memoryCost: 131_072, timeCost: 10 } }),
    }).then(async (response) => ({ status: response.status, body: await response.json() as { hash: string } }))
      .finally(() => { hashFinished = true })
    // The upload sends half its body now and the rest only after SIGTERM: it is in progress for sure.
    const upload = await rawConnection(server.url)
    await write(upload.socket, uploadHead + 'a'.repeat(HALF))
    // The hash is on a thread (the pool reports it running) before the signal.
    for (let tries = 0; await metricValue(server, 'hashd_work_in_flight') < 1; tries++) {
      assert.ok(tries < 500, 'the argon2id task never started')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }

    const lines = server.lines()
    server.child.kill('SIGTERM')
    await server.logged(/shutting down/, lines)
    // The listener closes a moment after the log line; a client connecting in between is answered 503.
    assert.match(await newClientOutcome(server.url, server.check), /^(refused|reset|503)$/, 'a new client was served during the drain')
    assert.equal(hashFinished, false, 'the argon2id request ended before the new client was checked; the check proves nothing')
    await untilRefused(server.url, server.check)

    // The rest of the upload, then a readiness request on the same kept-alive connection.
    await write(upload.socket, 'a'.repeat(HALF) + 'GET /api/ready HTTP/1.1\r\nHost: localhost\r\n\r\n')
    await upload.closed
    const responses = upload.received().split(/(?=HTTP\/1\.1 )/)
    assert.equal(responses.length, 2, upload.received())
    assert.match(responses[0] as string, /^HTTP\/1\.1 200 /)
    assert.match(responses[0] as string, new RegExp(`"size":${2 * HALF},"hashes":\\{"sha256":"${SHA256_MILLION_A}"\\}`))
    assert.match(responses[1] as string, /^HTTP\/1\.1 503 /)
    assert.match(responses[1] as string, /content-type: application\/problem\+json/i)
    assert.match(responses[1] as string, /retry-after: \d+/i)
    server.check(rawResponse('POST', '/api/filehash?algorithms=sha256', responses[0] as string))
    server.check(rawResponse('GET', '/api/ready', responses[1] as string))

    const hashed = await slowHash
    assert.equal(hashed.status, 200)
    assert.match(hashed.body.hash, /^\$argon2id\$v=19\$m=131072,t=10,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    await server.logged(/shut down: every request finished/, lines)
  })

  it('when SHUTDOWN_TIMEOUT_MS passes, cuts the open request off and exits 1', async () => {
    const server = await startHashd({ SHUTDOWN_TIMEOUT_MS: '300' })
    const upload = await rawConnection(server.url)
    await write(upload.socket, uploadHead + 'a'.repeat(HALF))
    assert.equal((await server.get('/api/health')).status, 200)
    server.child.kill('SIGTERM')
    // The second half never comes: the drain cannot finish, the deadline ends it.
    assert.deepEqual(await server.exited, { code: 1, signal: null })
    await upload.closed
    assert.equal(upload.received(), '', 'the cut-off upload got an answer')
    assert.match(server.stdout(), /SHUTDOWN_TIMEOUT_MS\) passed; exiting with requests still open/)
  })

})
