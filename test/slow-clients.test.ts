/**
 * Slow clients, driven by slowhttptest (Debian: slowhttptest) against the real server on loopback:
 * slow headers (Slowloris), slow body (R-U-Dead-Yet) and slow read, each bounded in time. hashd runs
 * with short deadlines (HEADERS_TIMEOUT_MS 2 s, REQUEST_TIMEOUT_MS 4 s) so that its own timeouts,
 * not the tool's test length, end the attack:
 * - slow headers and slow body: slowhttptest ends with "No open connections left" before its test
 *   length (hashd closed every connection: 408 at the header or request deadline);
 * - slow read: hashd's side of every attacking connection is gone before the test length, as `ss`
 *   sees it: no established connection to hashd's port is left (hashd hands each answer to the
 *   kernel and closes the idle connection after its keep-alive timeout; what the kernel still holds
 *   for the slow reader is no longer hashd's);
 * - all along, GET /api/health is polled every 100 ms on connections of its own: every poll is
 *   answered 200, and the time each took is printed (the bound is 100 ms; on a shared
 *   machine a poll may wait for the CPU, so the test holds most polls to it and every one to 1 s).
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
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
  hashd = await startHashd({ HEADERS_TIMEOUT_MS: '2000', REQUEST_TIMEOUT_MS: '4000' })
})
after(async () => {
  await hashd?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Polls GET /api/health every 100 ms until `until` settles; returns each poll's time in ms. */
async function pollHealth(until: Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  let done = false
  void until.finally(() => { done = true })
  while (!done) {
    const started = performance.now()
    const response = await hashd!.fetch('/api/health', { headers: { connection: 'close' }, signal: AbortSignal.timeout(5_000) })
    assert.equal(response.status, 200)
    await response.text()
    times.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return times
}

function assertResponsive(times: number[], mode: string): void {
  const sorted = [...times].sort((a, b) => a - b)
  const within = times.filter((ms) => ms <= 100).length
  process.stdout.write(`# ${mode}: ${times.length} health polls, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms, ${within} within 100 ms\n`)
  assert.ok(times.length >= 20, `only ${times.length} polls`)
  assert.ok(within >= times.length * 0.9, `${times.length - within} of ${times.length} health polls took over 100 ms`)
  assert.ok((sorted.at(-1) ?? 0) < 1_000, `a health poll took ${sorted.at(-1)} ms`)
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
    // Three pipelined requests for the 120 KB document on each of 20 connections, read 16 bytes a second through a window of 1–32 bytes.
    const attack = slowhttptest('read', ['-X', '-c', '20', '-r', '20', '-k', '3', '-n', '1', '-w', '1', '-y', '32', '-z', '16', '-u', `${hashd!.url}/api/openapi.json`])
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
