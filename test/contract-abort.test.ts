import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { metricValue, startServer, tasksStarted, type TestServer } from './helpers/server.js'

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
    // One running, six queued behind it on the single thread; the six clients then hang up.
    const tasksBefore = await tasksStarted(server)
    const running = bcrypt(13)
    // The six arrive only once the first holds the thread, so they are the ones queued.
    while (await metricValue(server, 'hashd_work_in_flight') === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const abandoned = Array.from({ length: 6 }, () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 50)
      return bcrypt(13, controller.signal).then(() => 'answered', () => 'aborted')
    })
    assert.deepEqual(await Promise.all(abandoned), Array(6).fill('aborted'))
    assert.equal((await running).status, 200)
    assert.equal((await bcrypt(4)).status, 200)
    // Had the six been computed, eight tasks would have started; dropped, two (no timing involved).
    assert.equal(await tasksStarted(server), tasksBefore + 2)
  })
})
