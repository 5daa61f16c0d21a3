/**
 * Memory-aware admission of pool work (MAX_WORK_MEMORY_BYTES): with 8 threads and a 512 MiB budget,
 * 24 concurrent argon2id hashes at m = 262144 KiB (256 MiB each) all succeed, while at most two run
 * at once, so the process's peak resident memory (VmHWM in /proc/PID/status) grows by about the
 * budget rather than the 2 GiB eight threads would take. The metrics show the budget and its use.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { spawnHashd, startHashd, type HashdProcess } from './helpers/process.js'
import { readMetrics } from './helpers/server.js'
import { skipBecause } from './helpers/tools.js'

const MiB = 1024 * 1024
const BUDGET = 512 * MiB

/** Peak resident set size of a process so far, bytes (Linux). */
function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(match, 'no VmHWM in /proc/PID/status')
  return Number(match[1]) * 1024
}

interface Work { running: number, queued: number, memoryBudgetBytes: number, memoryInUseBytes: number, started: number }

/** The pool's load from one scrape of /metrics, as an operator's Prometheus reads it. */
async function work(server: HashdProcess): Promise<Work> {
  const sample = await readMetrics(server)
  return {
    running: sample('hashd_work_in_flight'), queued: sample('hashd_work_queued'), memoryBudgetBytes: sample('hashd_work_memory_budget_bytes'),
    memoryInUseBytes: sample('hashd_work_memory_in_use_bytes'), started: sample('hashd_work_started_total'),
  }
}

const argon2 = (server: HashdProcess, memoryCost: number, input: string, timeCost = 1) => server.fetch('/api/hash', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ algorithm: 'argon2id', input, options: { memoryCost, timeCost, parallelism: 1 } }),
})

describe('memory-aware admission of password work', { skip: process.platform !== 'linux' ? skipBecause('reads /proc/PID/status (Linux only)') : false }, () => {
  it('runs 24 concurrent 256 MiB argon2id hashes on 8 threads within a 512 MiB budget', async () => {
    const server = await startHashd({ WORKER_THREADS: '8', MAX_WORK_MEMORY_BYTES: String(BUDGET), WORK_QUEUE_MAX: '64' })
    try {
      const pid = server.child.pid
      assert.ok(pid)
      // Warm every thread with a small hash, so the baseline includes the loaded workers.
      const warm = await Promise.all(Array.from({ length: 8 }, (_, index) => argon2(server, 1024, `warm ${index}`)))
      for (const response of warm) assert.equal(response.status, 200, await response.text())
      const baseline = peakRss(pid)

      const samples: Work[] = []
      let sampling = true
      const sampler = (async () => {
        while (sampling) {
          samples.push(await work(server))
          await new Promise((resolve) => setTimeout(resolve, 25))
        }
      })()
      const responses = await Promise.all(Array.from({ length: 24 }, async (_, index) => {
        const response = await argon2(server, 262_144, `password ${index}`)
        return { status: response.status, body: await response.json() as { hash?: string } }
      }))
      sampling = false
      await sampler

      for (const [index, response] of responses.entries()) {
        assert.equal(response.status, 200, `hash ${index}: ${JSON.stringify(response.body)}`)
        assert.match(response.body.hash ?? '', /^\$argon2id\$v=19\$m=262144,t=1,p=1\$/)
      }
      const growth = peakRss(pid) - baseline
      console.log(`# 24 × argon2id m=262144 on 8 threads, budget ${BUDGET / MiB} MiB: peak RSS grew by ${(growth / MiB).toFixed(0)} MiB`)
      // Two 256 MiB tasks fit at once; allow allocator and response slack on top of the budget.
      assert.ok(growth <= BUDGET + 128 * MiB, `peak RSS grew by ${(growth / MiB).toFixed(0)} MiB; the budget is ${BUDGET / MiB} MiB`)
      assert.ok(samples.length > 0)
      for (const work of samples) {
        assert.equal(work.memoryBudgetBytes, BUDGET)
        assert.ok(work.memoryInUseBytes <= BUDGET, `memory in use ${work.memoryInUseBytes}`)
        assert.ok(work.running <= 2, `running ${work.running}`)
      }
      assert.ok(samples.some((work) => work.queued > 0), 'some hashes waited for memory')
      const { started, ...rest } = await work(server)
      assert.deepEqual(rest, { running: 0, queued: 0, memoryBudgetBytes: BUDGET, memoryInUseBytes: 0 })
      assert.ok(started >= 24, `every hash ran on a thread (${started} tasks started)`)
    } finally {
      await server.stop()
    }
  })

  it('starts waiting work in arrival order: small tasks do not overtake a large one that waits for memory', async () => {
    // Two threads and room for one 256 MiB task: while a 128 MiB hash runs, the 256 MiB one waits,
    // and the bcrypt hashes behind it wait too, although a thread is free and 1 MiB would fit.
    const server = await startHashd({ WORKER_THREADS: '2', MAX_WORK_MEMORY_BYTES: String(256 * MiB) })
    try {
      const until = async (test: (work: Work) => boolean, what: string) => {
        for (let attempt = 0; attempt < 2_000; attempt++) {
          if (test(await work(server))) return
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
        assert.fail(`the pool never showed ${what}`)
      }
      const finished: string[] = []
      const track = (name: string, response: Promise<Response>) => response.then(async (answer) => {
        assert.equal(answer.status, 200, await answer.text())
        finished.push(name)
      })
      // Six passes keep the first hash running while the others queue up behind it, even on a fast machine.
      const medium = track('medium', argon2(server, 131_072, 'medium', 6))
      await until((state) => state.running === 1, 'the 128 MiB hash running')
      const large = track('large', argon2(server, 262_144, 'large'))
      await until((state) => state.queued === 1, 'the 256 MiB hash waiting')
      const small = Array.from({ length: 4 }, (_, index) => track(`small ${index}`, server.fetch('/api/hash', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ algorithm: 'bcrypt', input: `small ${index}`, options: { cost: 4 } }),
      })))
      await until((state) => state.queued === 5, 'the bcrypt hashes waiting behind it')
      const stuck = await work(server)
      assert.deepEqual([stuck.running, stuck.memoryInUseBytes], [1, 128 * MiB], 'a thread is free, yet nothing overtakes the large hash')
      await Promise.all([medium, large, ...small])
      assert.deepEqual(finished.slice(0, 2), ['medium', 'large'])
    } finally {
      await server.stop()
    }
  })

  it('refuses to start with a budget below the largest per-task cap, naming both variables', async () => {
    const spawned = spawnHashd({ MAX_WORK_MEMORY_BYTES: String(128 * MiB), MAX_ARGON2_MEMORY_KIB: '262144' })
    assert.deepEqual(await spawned.exited, { code: 2, signal: null })
    assert.match(spawned.stderr(), /MAX_WORK_MEMORY_BYTES/)
    assert.match(spawned.stderr(), /MAX_ARGON2_MEMORY_KIB/)
    const scrypt = spawnHashd({ MAX_WORK_MEMORY_BYTES: String(200 * MiB), MAX_ARGON2_MEMORY_KIB: '65536', MAX_SCRYPT_MEMORY_BYTES: String(256 * MiB) })
    assert.deepEqual(await scrypt.exited, { code: 2, signal: null })
    assert.match(scrypt.stderr(), /MAX_WORK_MEMORY_BYTES.*MAX_SCRYPT_MEMORY_BYTES/)
  })
})
