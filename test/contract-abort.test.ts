import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'

describe('contract: password work for a client that went away is dropped', () => {
  let server: TestServer
  before(async () => { server = await startServer({ WORKER_THREADS: '1', WORK_QUEUE_MAX: '32' }) })
  after(async () => { await server.close() })

  const bcrypt = (cost: number, signal?: AbortSignal) => fetch(`${server.url}/api/hash`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'password', algorithm: 'bcrypt', options: { cost } }),
    signal,
  })

  it('does not compute queued hashes whose clients disconnected', async () => {
    // How long one cost-13 bcrypt takes here, so the bound below scales with the machine.
    let started = performance.now()
    assert.equal((await bcrypt(13)).status, 200)
    const one = performance.now() - started

    // One running, six queued behind it on the single thread; the six clients then hang up.
    started = performance.now()
    const running = bcrypt(13)
    const abandoned = Array.from({ length: 6 }, () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 50)
      return bcrypt(13, controller.signal).then(() => 'answered', () => 'aborted')
    })
    assert.deepEqual(await Promise.all(abandoned), Array(6).fill('aborted'))
    assert.equal((await running).status, 200)
    assert.equal((await bcrypt(4)).status, 200)
    const elapsed = performance.now() - started
    // Had the six been computed, this would take about 7 × one; dropped, about 1 × one.
    assert.ok(elapsed < one * 3.5, `took ${elapsed.toFixed(0)} ms; one hash takes ${one.toFixed(0)} ms`)
  })
})
