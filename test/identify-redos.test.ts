// runs alone: health probes are held to 100 ms and answers to 2 s while 8 MiB attacks run
/**
 * The bounds on POST /api/identify under the attacks of test/helpers/redos-attacks.ts (recheck's
 * attack strings for the patterns the engine used to backtrack on, scaled to the 8 MiB body, and a
 * body of four million blank lines): every answer is right (no match, nothing refused) and comes
 * within 2 s, and GET /api/health, polled every 10 ms from another thread, answers each time
 * within 100 ms while the attack runs. These are the service's correctness bounds, not speed
 * figures (those are `npm run bench:redos`).
 *
 * The machine is shared: a process not given a core for a while makes a probe late though
 * nothing held the event loop (at a load average of 15 on 2 cores, a legitimate 8 MiB dump shows
 * health probes of 100–300 ms too). So each try sends that legitimate dump (the peer) just before
 * the attack, and an attack passes when one of three tries keeps both bounds, or else when in
 * every try the peer broke them too and the attack cost no more than the peer (its answer no
 * slower, its probes at most SLACK_MS later): the load's share, not the attack's. A real stall (a
 * pattern backtracking for seconds on every line, as these did: 20 s for the 326 KB request, some
 * 20 minutes at 8 MiB) fails either way.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { attacks, honestDump, TUPLE_TAIL_LINE, type Attack } from './helpers/redos-attacks.js'

const ANSWER_MS = 2000
const HEALTH_MS = 100
const TRIES = 3
/** A probe's lateness that is the scheduler's, not the server's: the probes of one run differ by this much. */
const SLACK_MS = 50

const POLLER = `
const { parentPort, workerData } = require('node:worker_threads')
let on = false, samples = []
parentPort.on('message', (message) => {
  if (message === 'start') { on = true; samples = [] }
  if (message === 'stop') { on = false; parentPort.postMessage(samples) }
  if (message === 'exit') process.exit(0)
})
;(async () => {
  for (;;) {
    const started = performance.now()
    let response = { status: 0, headers: {}, body: null }
    try {
      const answer = await fetch(new URL('/api/health', workerData.url), { signal: AbortSignal.timeout(5000) })
      response = { status: answer.status, headers: Object.fromEntries(answer.headers), body: await answer.text() }
    } catch {}
    if (on) samples.push({ ms: performance.now() - started, response })
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
})()
`

interface Try { answerMs: number, healthMaxMs: number, probes: number, healthStatuses: number[], status: number, results: Array<{ matches: unknown[] }> }

describe('POST /api/identify under ReDoS attacks: answers within 2 s, /api/health within 100 ms', { timeout: 10 * 60_000 }, () => {
  let hashd: HashdProcess
  let poller: Worker

  before(async () => {
    hashd = await startHashd({ RATE_LIMIT_MAX: '0' })
    poller = new Worker(POLLER, { eval: true, workerData: { url: hashd.url } })
    // Warm: the first large body starts a pool thread, and the engine's code is compiled on first use.
    await hashd.fetch('/api/identify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: honestDump().body })
  })
  after(async () => {
    poller.postMessage('exit')
    await hashd.stop()
  })

  async function attempt(attack: Attack): Promise<Try> {
    const samples = new Promise<Array<{ ms: number, response: { status: number, headers: Record<string, string>, body: string | null } }>>((resolve) => poller.once('message', resolve))
    poller.postMessage('start')
    const started = performance.now()
    const response = await hashd.fetch('/api/identify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: attack.body })
    const body = await response.json() as { results: Array<{ matches: unknown[] }> }
    const answerMs = performance.now() - started
    // One more probe after the answer, so a stall at its very end is seen.
    await new Promise((resolve) => setTimeout(resolve, 30))
    poller.postMessage('stop')
    const probes = await samples
    // The probes' answers are checked against the document like any other (helpers/process.ts).
    for (const { response: probe } of probes) if (probe.status !== 0) hashd.check({ method: 'GET', url: '/api/health', ...probe })
    return { answerMs, healthMaxMs: Math.max(0, ...probes.map((probe) => probe.ms)), probes: probes.length, healthStatuses: [...new Set(probes.map((probe) => probe.response.status))], status: response.status, results: body.results }
  }

  const honest = honestDump()
  const keeps = (attack: Try) => attack.answerMs <= ANSWER_MS && attack.healthMaxMs <= HEALTH_MS
  /** The attack cost no more than the legitimate dump of its size sent just before it (the load's share, not the attack's). */
  const noWorseThan = (attack: Try, peer: Try) => !keeps(peer) && attack.answerMs <= Math.max(ANSWER_MS, peer.answerMs) && attack.healthMaxMs <= Math.max(HEALTH_MS, peer.healthMaxMs + SLACK_MS)

  for (const attack of attacks()) {
    it(`${attack.name} (${attack.target}): ${(Buffer.byteLength(attack.body) / 1048576).toFixed(2)} MiB, ${attack.lines} lines`, async (t) => {
      const tries: Array<{ peer: Try, attack: Try }> = []
      for (let index = 0; index < TRIES; index++) {
        const peer = await attempt(honest)
        const result = await attempt(attack)
        tries.push({ peer, attack: result })
        // The answer is right every time: every line read, none identified (none is a hash).
        assert.equal(result.status, 200)
        assert.deepEqual(result.healthStatuses, [200])
        const expectedEntries = attack.name === 'blank-lines' ? 1 : attack.lines
        assert.equal(result.results.length, expectedEntries)
        if (attack.name !== 'blank-lines') assert.ok(result.results.every((entry) => entry.matches.length === 0))
        if (keeps(result)) break
      }
      const show = (each: Try) => `answer ${each.answerMs.toFixed(0)} ms, health max ${each.healthMaxMs.toFixed(1)} ms (${each.probes} probes)`
      const figures = tries.map(({ peer, attack: each }) => `${show(each)}, beside the honest dump's ${show(peer)}`).join('; ')
      t.diagnostic(figures)
      assert.ok(tries.some(({ attack: each }) => keeps(each)) || tries.every(({ peer, attack: each }) => noWorseThan(each, peer)),
        `no try kept answer ≤ ${ANSWER_MS} ms and health ≤ ${HEALTH_MS} ms, and not every try was explained by the load: ${figures}`)
    })
  }

  it('identifies a hash inside the reported line\'s wrappers the same way, and the line itself as nothing', async () => {
    // PHP's password_hash documentation example.
    const response = await hashd.post('/api/identify', { hashes: [`('alice', '$2y$10$.vGA1O9wmRjrwAVXD98HNOgsNpDczlqm3Jq7KnEd1rVAGv3Fykk1a'),\n${TUPLE_TAIL_LINE}`] })
    assert.equal(response.status, 200)
    const { results } = response.body as { results: Array<{ matches: Array<{ algorithm: string }>, normalized?: string[] }> }
    assert.equal(results[0]?.matches[0]?.algorithm, 'bcrypt')
    assert.deepEqual(results[0]?.normalized, ['sql-values'])
    assert.deepEqual(results[1]?.matches, [])
  })
})
