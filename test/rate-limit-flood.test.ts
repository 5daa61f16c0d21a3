// runs alone: floods one server over 500 connections; the event loop it delays is what the test is about
/**
 * A flood with one API key gets no more than its limit through, on the in-memory store and on
 * Redis alike. The attack this stops: a key limited to 50 requests a minute (scopes=verify) sends
 * tens of thousands of guesses to POST /api/verify over a thousand keep-alive connections; the
 * flood delays hashd's event loop past REDIS_COMMAND_TIMEOUT_MS, and a limiter that served a
 * request uncounted whenever Redis did not answer in time let thousands through. Now each instance
 * keeps counting on its own with the same budget, so the flood gets exactly its 50.
 *
 * The server runs in its own process (a real event loop to delay); the load comes from this one.
 * The same holds for clients without a key (a per-address limit).
 */
import assert from 'node:assert/strict'
import { randomBytes, createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { startRedis, type TestRedis } from './helpers/redis.js'
import { skipUnless } from './helpers/tools.js'

const CONNECTIONS = 500
const REQUESTS = 6_000
const LIMIT = 50
const GUESS = JSON.stringify({ input: 'guess', hash: createHash('md5').update('the password').digest('hex') })

/**
 * `total` POSTs of `body` to `url`, `connections` at a time over keep-alive sockets (each socket
 * sends its next request when the last one is answered). Answers the count of each status.
 * Bounded: every request has a 30 s timeout.
 */
async function flood(url: string, path: string, body: string, headers: Record<string, string>, connections: number, total: number): Promise<Map<number | string, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const statuses = new Map<number | string, number>()
  let sent = 0
  const one = () => new Promise<void>((resolve) => {
    const outgoing = request(`${url}${path}`, {
      method: 'POST', agent, timeout: 30_000,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
    }, (response) => {
      response.resume()
      response.on('end', () => {
        statuses.set(response.statusCode ?? 0, (statuses.get(response.statusCode ?? 0) ?? 0) + 1)
        resolve()
      })
    })
    outgoing.on('timeout', () => outgoing.destroy(new Error('timed out')))
    outgoing.on('error', (error: NodeJS.ErrnoException) => { const code = error.code ?? error.message; statuses.set(code, (statuses.get(code) ?? 0) + 1); resolve() })
    outgoing.end(body)
  })
  const worker = async () => {
    while (sent < total) {
      sent++
      await one()
    }
  }
  try {
    await Promise.all(Array.from({ length: connections }, worker))
  } finally {
    agent.destroy()
  }
  return statuses
}

const describeStatuses = (statuses: Map<number | string, number>) => [...statuses].map(([status, count]) => `${status}: ${count}`).join(', ')

describe('a flood gets no more than its limit through', () => {
  let dir: string
  let redis: TestRedis | undefined
  const key = `hk_${randomBytes(32).toString('base64url')}`
  const servers: HashdProcess[] = []
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-flood-'))
    writeFileSync(join(dir, 'api-keys'), `guesser ${createHash('sha256').update(key).digest('hex')} ${LIMIT} scopes=verify\n`)
  })
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await redis?.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  const run = async (env: Record<string, string>, headers: Record<string, string>) => {
    const server = await startHashd({ RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: '600000', ...env })
    servers.push(server)
    const statuses = await flood(server.url, '/api/verify', GUESS, headers, CONNECTIONS, REQUESTS)
    await server.stop()
    // Every request answered (no reset, no 5xx), and exactly the limit admitted.
    assert.equal((statuses.get(200) ?? 0) + (statuses.get(429) ?? 0), REQUESTS, describeStatuses(statuses))
    assert.equal(statuses.get(200), LIMIT, describeStatuses(statuses))
    return server
  }

  it(`in memory, with an API key limited to ${LIMIT}: ${LIMIT} answers of 200 of ${REQUESTS} over ${CONNECTIONS} connections`, async () => {
    await run({ API_KEYS_FILE: join(dir, 'api-keys') }, { authorization: `Bearer ${key}` })
  })

  describe('with Redis', { skip: skipUnless('redis-server') }, () => {
    before(async () => { redis = await startRedis() })

    it(`with an API key limited to ${LIMIT} and the default command timeout: ${LIMIT} answers of 200, however late Redis answers`, async () => {
      const server = await run({ API_KEYS_FILE: join(dir, 'api-keys'), REDIS_URL: redis!.url, REDIS_PREFIX: `flood-key-${randomBytes(4).toString('hex')}:` }, { authorization: `Bearer ${key}` })
      // The process is gone; its log says whether the flood pushed it onto its own count.
      assert.doesNotMatch(server.stdout(), /"level":(50|60)/)
    })

    it(`without a key, per address, limit ${LIMIT}, taken from Redis in leases of 5 (RATE_LIMIT_LEASE_PERCENT=10): ${LIMIT} answers of 200`, async () => {
      await run({ REDIS_URL: redis!.url, REDIS_PREFIX: `flood-address-${randomBytes(4).toString('hex')}:`, RATE_LIMIT_LEASE_PERCENT: '10' }, {})
    })

    it(`with Redis hung (SIGSTOP) for the whole flood: still ${LIMIT}`, async () => {
      redis!.pause()
      try {
        await run({ API_KEYS_FILE: join(dir, 'api-keys'), REDIS_URL: redis!.url, REDIS_PREFIX: `flood-hung-${randomBytes(4).toString('hex')}:`, RATE_LIMIT_LEASE_PERCENT: '10' }, { authorization: `Bearer ${key}` })
      } finally {
        redis!.resume()
      }
    })
  })
})
