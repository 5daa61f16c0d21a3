/**
 * The real process, `node dist/src/server.js`: graceful shutdown on SIGTERM/SIGINT (in-flight
 * requests finish, new connections are refused, exit code 0), a clear refusal of invalid
 * configuration, and the logs it writes to stdout.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { newClientOutcome, spawnHashd, startHashd, untilRefused, type HashdProcess } from './helpers/process.js'
import { startServer } from './helpers/server.js'
import { StdoutLog } from '../src/plugins/logging.js'

/** Whether a new TCP connection to the server is refused. */
function connectionRefused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    socket.on('connect', () => { socket.destroy(); resolve(false) })
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

const postJson = (server: HashdProcess, body: unknown, headers: Record<string, string> = {}) =>
  server.fetch('/api/hash', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

describe('contract: the server process', () => {
  it('on SIGTERM finishes the in-flight bcrypt request, refuses new connections, and exits 0', async () => {
    const server = await startHashd({ LOG_LEVEL: 'trace' })
    const marker = randomUUID()
    const quick = await postJson(server, { input: marker }, { authorization: `Bearer ${marker}` })
    assert.equal(quick.status, 200)
    await quick.text()

    let finished = false
    // bcrypt cost 13 takes several hundred milliseconds: long enough to be in flight at SIGTERM.
    const slow = postJson(server, { input: marker, algorithm: 'bcrypt', options: { cost: 13 } })
      .then(async (response) => ({ status: response.status, body: await response.json() as { hash: string } }))
      .finally(() => { finished = true })
    await new Promise((resolve) => setTimeout(resolve, 150))
    server.child.kill('SIGTERM')
    await server.logged(/shutting down/)

    // A client connecting before the listener has closed (a few event-loop turns) is answered 503.
    assert.match(await newClientOutcome(server.url, server.check), /^(refused|reset|503)$/, 'a new client was served during shutdown')
    assert.equal(finished, false, 'the slow request ended before the refusal was checked; the check proves nothing')
    await untilRefused(server.url, server.check)
    const response = await slow
    assert.equal(response.status, 200)
    assert.match(response.body.hash, /^\$2b\$13\$[./A-Za-z0-9]{53}$/)
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    assert.equal(await connectionRefused(server.url), true)

    // What the process wrote to stdout at trace level: JSON lines, none carrying the marker.
    assert.ok(!server.stdout().includes(marker), 'stdout carries the marker')
    for (const line of server.stdout().trim().split('\n')) JSON.parse(line)
    assert.match(server.stdout(), /"msg":"request completed"/)
  })

  it('on SIGINT exits 0', async () => {
    const server = await startHashd()
    const health = await server.fetch('/api/health')
    assert.equal(health.status, 200)
    await health.text()
    server.child.kill('SIGINT')
    assert.deepEqual(await server.exited, { code: 0, signal: null })
  })

  it('refuses invalid configuration with a non-zero exit and a message naming the variable', async () => {
    for (const [name, value] of [['PORT', 'abc'], ['PORT', '70000'], ['RATE_LIMIT_MAX', '-1'], ['LOG_LEVEL', 'loud'], ['TRUST_PROXY', 'maybe'], ['TRUST_PROXY', '10.0.0.0/33'], ['BODY_LIMIT', '1e6']]) {
      const spawned = spawnHashd({ [name as string]: value as string })
      const { code } = await spawned.exited
      assert.notEqual(code, 0, `${name}=${value} started`)
      assert.match(spawned.stderr(), new RegExp(`${name}`), `${name}=${value}: ${spawned.stderr()}`)
      assert.doesNotMatch(spawned.stderr(), /\n\s+at /, 'a configuration error is a message, not a stack trace')
    }
  })
})

describe('contract: shutdown of the in-process server', () => {
  it('answers a request arriving on a busy keep-alive connection during shutdown with 503 problem+json and Retry-After', async () => {
    const server = await startServer()
    const request = (body: string) =>
      `POST /api/hash HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    let received = ''
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('error', () => {})
    const socketClosed = new Promise((resolve) => socket.on('close', resolve))
    socket.write(request(JSON.stringify({ input: 'pw', algorithm: 'bcrypt', options: { cost: 12 } })))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const closed = server.close()
    await new Promise((resolve) => setTimeout(resolve, 20))
    // The connection is busy with the bcrypt request, so the server could not reap it as idle.
    socket.write(request(JSON.stringify({ input: 'abc', algorithm: 'md5' })))
    await socketClosed
    await closed
    const responses = received.split(/(?=HTTP\/1\.1 )/)
    assert.equal(responses.length, 2, received)
    assert.match(responses[0] as string, /^HTTP\/1\.1 200 [\s\S]*"\$2b\$12\$/)
    assert.match(responses[1] as string, /^HTTP\/1\.1 503 /)
    assert.match(responses[1] as string, /content-type: application\/problem\+json/i)
    assert.match(responses[1] as string, /retry-after: \d+/i)
    assert.match(responses[1] as string, /"status":503/)
  })
})

describe('contract: the log on stdout', () => {
  it('has one access line per request, every line in the order it was logged, and none lost at exit', async () => {
    const server = await startHashd({ LOG_LEVEL: 'info' })
    let stopped = false
    try {
      const before = server.lines()
      // A burst of answers and refusals: a refusal is logged through pino ("request refused")
      // before its access line, which is gathered with the others of its event-loop turn.
      const bodies = Array.from({ length: 60 }, (_, i) => i % 3 === 2 ? { input: 'x', algorithm: 'no-such-algorithm' } : { input: `burst-${i}` })
      const statuses = await Promise.all(bodies.map(async (body) => (await server.post('/api/hash', body)).status))
      await server.stop()
      stopped = true
      const lines = server.stdout().split('\n').slice(before).filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { time: number, msg: string, reqId?: string, url?: string, statusCode?: number })
      const access = lines.filter((line) => line.msg === 'request completed' && line.url === '/api/hash')
      assert.equal(access.length, bodies.length)
      assert.deepEqual(access.map((line) => line.statusCode).sort(), [...statuses].sort())
      const refusals = lines.filter((line) => line.msg === 'request refused')
      assert.equal(refusals.length, 20)
      for (const refusal of refusals) {
        const accessAt = lines.findIndex((line) => line.msg === 'request completed' && line.reqId === refusal.reqId)
        assert.ok(lines.indexOf(refusal) < accessAt, `the access line of ${refusal.reqId} came before its refusal`)
      }
      for (let i = 1; i < lines.length; i++) {
        assert.ok((lines[i]?.time ?? 0) >= (lines[i - 1]?.time ?? 0), `line ${i} is older than the line before it: ${JSON.stringify(lines.slice(i - 1, i + 1))}`)
      }
      assert.match(lines.at(-1)?.msg ?? '', /^shut down/)
    } finally {
      if (!stopped) await server.stop()
    }
  })

  it('calls back from flush only once every line handed to it is written, which the server waits for before it exits', async () => {
    // sonic-boom's own flush calls back at once while a write is on the thread pool; the process
    // then exited with lines still in flight, and they could land after the lines written at exit.
    const dir = mkdtempSync(join(tmpdir(), 'hashd-log-'))
    const fd = openSync(join(dir, 'out.log'), 'w')
    try {
      const log = new StdoutLog(fd)
      const expected: string[] = []
      for (let i = 0; i < 2000; i++) {
        const line = `{"level":30,"n":${i},"msg":"${'x'.repeat(1000)}"}\n`
        expected.push(line)
        if (i % 2 === 0) log.write(line)
        else log.writeAccessLine(line)
      }
      const writtenAtCallback = await new Promise<string>((resolve, reject) =>
        log.flush((error) => error ? reject(error) : resolve(readFileSync(join(dir, 'out.log'), 'utf8'))))
      assert.equal(writtenAtCallback.length, expected.join('').length)
      assert.equal(writtenAtCallback, expected.join(''))
      // Closed only once nothing is in flight: sonic-boom would otherwise write to a closed descriptor.
      closeSync(fd)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
