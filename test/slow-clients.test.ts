// runs alone: slowhttptest floods the server while health answers are held to 100 ms
/**
 * Slow clients, driven by slowhttptest (Debian: slowhttptest) against the real server on loopback:
 * slow headers (Slowloris), slow body (R-U-Dead-Yet) and slow read, each bounded in time. hashd runs
 * with short deadlines (HEADERS_TIMEOUT_MS 2 s, REQUEST_TIMEOUT_MS 4 s, KEEP_ALIVE_TIMEOUT_MS 2 s) so
 * that its own timeouts, not the tool's test length, end the attack:
 * - slow headers and slow body: slowhttptest ends with "No open connections left" before its test
 *   length (hashd closed every connection: 408 at the header or request deadline);
 * - slow read: hashd's side of every attacking connection is gone before the test length, as `ss`
 *   sees it: no established connection to hashd's port is left (hashd hands each answer to the
 *   kernel and closes the idle connection after its keep-alive timeout; what the kernel still holds
 *   for the slow reader is no longer hashd's);
 * - all along, GET /api/health is polled every 100 ms on connections of its own: every poll is
 *   answered 200 within 100 ms. A poll also waits when the machine runs something else, which is
 *   no stall of hashd's: a poll over 100 ms passes only if, while it waited, hashd's and this
 *   process's main threads sat in the kernel's run queue (runnable, no CPU free; schedstat) for its
 *   excess over 100 ms, or a 10 ms timer here or in an idle child process (Noise) was that late;
 *   none may pass 2 s. Inside hashd, its own event-loop delay over the attack
 *   (prom-client's nodejs_eventloop_lag_max_seconds, from perf_hooks.monitorEventLoopDelay, reset
 *   at each scrape of /metrics) must stay within 100 ms plus the larger of the idle process's
 *   worst delay and hashd's longest wait for a CPU between two polls. On a quiet machine both
 *   come down to 100 ms.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { run, skipUnless } from './helpers/tools.js'

const execFileAsync = promisify(execFile)
/** slowhttptest's own test length, seconds: hashd must end each attack before it. */
const TEST_LENGTH_S = 14

let hashd: HashdProcess | undefined
let dir = ''

before(async () => {
  if (skipUnless('slowhttptest', 'ss')) return
  dir = mkdtempSync(join(tmpdir(), 'hashd-slow-'))
  hashd = await startHashd({ HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '4000', KEEP_ALIVE_TIMEOUT_MS: '2000' })
})
after(async () => {
  await hashd?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** The requirement: /api/health answers within this while an attack runs. */
const HEALTH_BOUND_MS = 100
/** However busy the machine, no poll may take longer. */
const HEALTH_CAP_MS = 2_000

/**
 * The machine's scheduling noise: how late a 10 ms timer fires, in an idle child process and in
 * this one, as (wall-clock time, lateness) for each tick at least 5 ms late.
 */
class Noise {
  private readonly stalls: Array<{ at: number, ms: number, idle: boolean }> = []
  private readonly child = spawn(process.execPath, ['-e', `
    let last = performance.now()
    setInterval(() => {
      const now = performance.now(), late = now - last - 10
      last = now
      if (late >= 5) process.stdout.write(Date.now() + ' ' + late.toFixed(1) + '\\n')
    }, 10)`], { stdio: ['ignore', 'pipe', 'inherit'] })
  private readonly timer: NodeJS.Timeout
  constructor() {
    let buffered = ''
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (buffered + chunk).split('\n')
      buffered = lines.pop() ?? ''
      for (const line of lines) {
        const [at, ms] = line.split(' ').map(Number)
        this.stalls.push({ at: at!, ms: ms!, idle: true })
      }
    })
    let last = performance.now()
    this.timer = setInterval(() => {
      const now = performance.now()
      const late = now - last - 10
      last = now
      if (late >= 5) this.stalls.push({ at: Date.now(), ms: late, idle: false })
    }, 10)
  }
  /** The longest lateness of a tick that ended between `from` and `to` (wall-clock ms), here or in the child. */
  within(from: number, to: number): number {
    return Math.max(0, ...this.stalls.filter((stall) => stall.at >= from && stall.at <= to).map((stall) => stall.ms))
  }
  /** The idle child's longest lateness: how late the machine ran a process that had nothing to do. */
  idleMax(): number {
    return Math.max(0, ...this.stalls.filter((stall) => stall.idle).map((stall) => stall.ms))
  }
  stop(): void {
    clearInterval(this.timer)
    this.child.kill()
  }
}

interface Poll { started: number, ended: number, ms: number, runQueueMs: number }

/**
 * How long a process's main thread has waited for a CPU while runnable, in ms: the second field
 * of /proc/PID/task/PID/schedstat (Linux with schedstats; undefined elsewhere). Time a poll spends
 * there, in hashd or in this process, is the machine's doing, not a stall of hashd's.
 */
function runQueueMs(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
  } catch {
    return undefined
  }
}
const bothRunQueueMs = (): number | undefined => {
  const [server, here] = [runQueueMs(hashd!.child.pid!), runQueueMs(process.pid)]
  return server === undefined || here === undefined ? undefined : server + here
}

/** hashd's own longest event-loop delay since the last scrape of /metrics (which resets it), in ms. */
async function serverLoopMax(): Promise<number> {
  const text = await (await hashd!.fetch('/metrics')).text()
  const value = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1]
  assert.ok(value !== undefined, 'no nodejs_eventloop_lag_max_seconds in /metrics')
  return Number(value) * 1_000
}

/** Polls GET /api/health every 100 ms until `until` settles, measuring the machine's noise and hashd's own loop delay meanwhile. */
async function pollHealth(until: Promise<unknown>): Promise<{ polls: Poll[], noise: Noise, serverMaxMs: number, serverRunQueueMs: number }> {
  await serverLoopMax()
  const noise = new Noise()
  const polls: Poll[] = []
  // hashd's longest wait for a CPU between two polls (about 100 ms apart).
  let serverRunQueueMs = 0
  let serverWaited = runQueueMs(hashd!.child.pid!)
  let done = false
  void until.finally(() => { done = true })
  try {
    while (!done) {
      const started = Date.now()
      const start = performance.now()
      const serverNow = runQueueMs(hashd!.child.pid!)
      if (serverNow !== undefined && serverWaited !== undefined) serverRunQueueMs = Math.max(serverRunQueueMs, serverNow - serverWaited)
      serverWaited = serverNow
      const waitedBefore = bothRunQueueMs()
      const response = await hashd!.fetch('/api/health', { headers: { connection: 'close' }, signal: AbortSignal.timeout(5_000) })
      assert.equal(response.status, 200)
      await response.text()
      const ms = performance.now() - start
      const waitedAfter = bothRunQueueMs()
      polls.push({ started, ended: Date.now(), ms, runQueueMs: waitedBefore === undefined || waitedAfter === undefined ? 0 : waitedAfter - waitedBefore })
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return { polls, noise, serverMaxMs: await serverLoopMax(), serverRunQueueMs }
  } finally {
    noise.stop()
  }
}

function assertResponsive({ polls, noise, serverMaxMs, serverRunQueueMs }: { polls: Poll[], noise: Noise, serverMaxMs: number, serverRunQueueMs: number }, mode: string): void {
  const times = polls.map((poll) => poll.ms).sort((a, b) => a - b)
  const over = polls.filter((poll) => poll.ms > HEALTH_BOUND_MS)
  // A slow poll is the machine's doing when, while it waited, hashd's and this process's main
  // threads waited for a CPU as long as its excess over the bound, or a timer here or in the idle
  // process was that late.
  const excuse = (poll: Poll) => Math.max(poll.runQueueMs, noise.within(poll.started, poll.ended + 20))
  const unexcused = over.filter((poll) => excuse(poll) < poll.ms - HEALTH_BOUND_MS)
  process.stdout.write(`# ${mode}: ${polls.length} health polls, median ${times[Math.floor(times.length / 2)]?.toFixed(1)} ms, max ${times.at(-1)?.toFixed(1)} ms, `
    + `${over.length} over ${HEALTH_BOUND_MS} ms (each while the machine kept a process from a CPU as long: ${over.length - unexcused.length}); `
    + `hashd's event-loop delay at most ${serverMaxMs.toFixed(0)} ms (its longest wait for a CPU ${serverRunQueueMs.toFixed(0)} ms), an idle process's ${noise.idleMax().toFixed(0)} ms\n`)
  assert.ok(polls.length >= 20, `only ${polls.length} polls`)
  assert.deepEqual(unexcused.map((poll) => `${poll.ms.toFixed(0)} ms (run queue ${poll.runQueueMs.toFixed(0)} ms, timers late by ${noise.within(poll.started, poll.ended + 20).toFixed(0)} ms)`), [],
    `health polls over ${HEALTH_BOUND_MS} ms that the machine's scheduling does not account for`)
  assert.ok((times.at(-1) ?? 0) < HEALTH_CAP_MS, `a health poll took ${times.at(-1)} ms`)
  const machine = Math.max(noise.idleMax(), serverRunQueueMs)
  assert.ok(serverMaxMs <= HEALTH_BOUND_MS + machine, `hashd's event loop stalled ${serverMaxMs.toFixed(0)} ms; the machine accounts for ${machine.toFixed(0)} ms`)
}

/** Runs slowhttptest with `args` (bounded by its -l and a kill after twice that) and returns its report. */
async function slowhttptest(name: string, args: string[]): Promise<{ output: string, csv: string }> {
  const prefix = join(dir, name)
  const { stdout } = await execFileAsync('slowhttptest', [...args, '-l', String(TEST_LENGTH_S), '-p', '3', '-g', '-o', prefix],
    { timeout: TEST_LENGTH_S * 2_000, killSignal: 'SIGKILL' }).catch((error: Error & { stdout?: string, stderr?: string, code?: unknown }) => {
    throw new Error(`slowhttptest ${args[0]} failed (${String(error.code)}): ${error.message} ${error.stdout?.slice(-800) ?? ''} ${error.stderr ?? ''}`)
  })
  // eslint-disable-next-line no-control-regex
  return { output: stdout.replace(/\u001b\[[0-9;]*m/g, ''), csv: readFileSync(`${prefix}.csv`, 'utf8') }
}

const port = () => new URL(hashd!.url).port

describe('slow clients (slowhttptest)', () => {
  it('slow headers: hashd closes every connection at HEADERS_TIMEOUT_MS, and stays responsive', { skip: skipUnless('slowhttptest', 'ss') }, async () => {
    const attack = slowhttptest('headers', ['-H', '-c', '200', '-r', '100', '-i', '1', '-u', `${hashd!.url}/api/health`])
    const times = await pollHealth(attack)
    const { output } = await attack
    assert.match(output, /Exit status:\s*No open connections left/, output.slice(-600))
    const ended = Number(/Test ended on (\d+)/.exec(output)?.[1])
    assert.ok(ended < TEST_LENGTH_S, `the attack ran to its own limit (${ended} s)`)
    assertResponsive(times, 'slow headers')
  })

  it('slow body: hashd closes every connection at REQUEST_TIMEOUT_MS, and stays responsive', { skip: skipUnless('slowhttptest', 'ss') }, async () => {
    const attack = slowhttptest('body', ['-B', '-c', '200', '-r', '100', '-i', '1', '-s', '8192', '-t', 'POST', '-f', 'application/json', '-u', `${hashd!.url}/api/hash`])
    const times = await pollHealth(attack)
    const { output } = await attack
    assert.match(output, /Exit status:\s*No open connections left/, output.slice(-600))
    assert.ok(Number(/Test ended on (\d+)/.exec(output)?.[1]) < TEST_LENGTH_S)
    assertResponsive(times, 'slow body')
  })

  it('slow read: hashd lets go of every slow reader\'s connection, and stays responsive', { skip: skipUnless('slowhttptest', 'ss') }, async () => {
    // Two pipelined requests for the 120 KB document on each of 50 connections, read 16 bytes a second through a window of 1–32 bytes.
    const attack = slowhttptest('read', ['-X', '-c', '50', '-r', '50', '-k', '2', '-n', '1', '-w', '1', '-y', '32', '-z', '16', '-u', `${hashd!.url}/api/openapi.json`])
    let establishedMidway = -1
    const midway = (async () => {
      await new Promise((resolve) => setTimeout(resolve, (TEST_LENGTH_S - 3) * 1_000))
      establishedMidway = run('ss', ['-Htn', 'state', 'established', `( sport = :${port()} )`]).split('\n').filter((line) => line.trim() !== '').length
    })()
    const times = await pollHealth(attack)
    await attack
    await midway
    assert.equal(establishedMidway, 0, 'hashd still held slow readers\' connections 11 s into the attack')
    assertResponsive(times, 'slow read')
  })
})
