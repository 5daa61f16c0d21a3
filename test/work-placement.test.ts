/**
 * Where the pool runs password work (workers/pool.ts): bcrypt, and argon2 of a UTF-8 password, wait
 * on native code in libuv's thread pool, so they run from the event loop and start no worker thread
 * (a V8 isolate each); every other scheme, and argon2 of a binary password (hash-wasm computes on
 * its caller), still runs on a worker thread. Seen from outside: the threads of the process
 * (/proc/PID/task), and the hashes themselves, checked against independent implementations in
 * password-vectors and password-tools; here each one made is verified back.
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { readMetrics } from './helpers/server.js'
import { skipBecause } from './helpers/tools.js'

const threadCount = (pid: number): number => readdirSync(`/proc/${pid}/task`).length

const post = async (server: HashdProcess, path: string, body: object) => {
  const response = await server.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** Hashes `input` with `algorithm`, then verifies it back; returns the hash. */
async function roundTrip(server: HashdProcess, algorithm: string, input: string, options: object, inputEncoding?: string): Promise<string> {
  const made = await post(server, '/api/hash', { algorithm, input, options, ...(inputEncoding ? { inputEncoding } : {}) })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const hash = made.body.hash as string
  const checked = await post(server, '/api/verify', { input, hash, ...(inputEncoding ? { inputEncoding } : {}) })
  assert.equal(checked.status, 200, JSON.stringify(checked.body))
  assert.equal(checked.body.match, true, `${algorithm} ${hash} did not verify`)
  return hash
}

/** The pool's load from /metrics, as an operator's Prometheus reads it. */
async function work(server: HashdProcess): Promise<{ running: number, started: number }> {
  const sample = await readMetrics(server)
  return { running: sample('hashd_work_in_flight'), started: sample('hashd_work_started_total') }
}

describe('where password work runs', { skip: process.platform !== 'linux' ? skipBecause('counts threads in /proc/PID/task (Linux only)') : false }, () => {
  it('bcrypt and argon2 of UTF-8 input start no worker thread; scrypt and argon2 of binary input do', async () => {
    const server = await startHashd({ WORKER_THREADS: '2' })
    try {
      const pid = server.child.pid as number
      // The first native call starts libuv's pool (4 threads); count from there.
      await roundTrip(server, 'bcrypt', 'warm', { cost: 4 })
      const before = threadCount(pid)
      const startedBefore = (await work(server)).started
      const made = await Promise.all([
        ...Array.from({ length: 6 }, (_, index) => roundTrip(server, 'bcrypt', `pässword ${index}`, { cost: 6 })),
        ...Array.from({ length: 4 }, (_, index) => roundTrip(server, 'argon2id', `pässword ${index}`, { memoryCost: 1024, timeCost: 1 })),
      ])
      assert.equal(new Set(made).size, 10)
      assert.equal(threadCount(pid), before, 'no thread was started for bcrypt or argon2 of UTF-8 input')
      // Every one of them went through the pool's admission all the same (hash and verify: 20 tasks).
      assert.equal((await work(server)).started, startedBefore + 20)

      await roundTrip(server, 'scrypt', 'password', {})
      assert.equal(threadCount(pid), before + 1, 'scrypt runs on a worker thread')
      // 0xff is never UTF-8: @node-rs/argon2 cannot take it, hash-wasm does, on a worker thread.
      await roundTrip(server, 'argon2id', 'ff00fe', { memoryCost: 1024, timeCost: 1 }, 'hex')
      assert.ok(threadCount(pid) >= before + 1)
    } finally {
      await server.stop()
    }
  })

  it('runs at most UV_THREADPOOL_SIZE − 1 tasks on libuv\'s pool; the rest go to worker threads', async () => {
    // A pool of 2 leaves one thread for the file system and DNS: of two bcrypt hashes at once, one
    // runs on libuv's pool and the other on a worker thread.
    const server = await startHashd({ WORKER_THREADS: '2', UV_THREADPOOL_SIZE: '2' })
    try {
      const pid = server.child.pid as number
      await roundTrip(server, 'bcrypt', 'warm', { cost: 4 })
      const before = threadCount(pid)
      const made = await Promise.all(Array.from({ length: 4 }, (_, index) => roundTrip(server, 'bcrypt', `password ${index}`, { cost: 9 })))
      assert.equal(new Set(made).size, 4)
      assert.ok(threadCount(pid) > before, 'the hash beyond libuv\'s share started a worker thread')
    } finally {
      await server.stop()
    }
  })

  it('a client that leaves during a native hash frees its place once the hash ends, and the server goes on', async () => {
    const server = await startHashd({ WORKER_THREADS: '1' })
    try {
      const controller = new AbortController()
      const abandoned = server.fetch('/api/hash', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'bcrypt', input: 'password', options: { cost: 12 } }),
        signal: controller.signal,
      }).then(() => 'answered', () => 'aborted')
      while ((await work(server)).running === 0) await new Promise((resolve) => setTimeout(resolve, 5))
      controller.abort()
      assert.equal(await abandoned, 'aborted')
      // The native work cannot be stopped: the place stays taken until it ends, then is freed.
      while ((await work(server)).running !== 0) await new Promise((resolve) => setTimeout(resolve, 10))
      await roundTrip(server, 'bcrypt', 'after', { cost: 4 })
      assert.equal((await work(server)).running, 0)
    } finally {
      await server.stop()
    }
  })
})
