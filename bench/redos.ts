/**
 * `npm run bench:redos`: each ReDoS attack on POST /api/identify (test/helpers/redos-attacks.ts:
 * recheck's attack strings for the patterns the engine used to backtrack on, scaled to 64 KiB
 * lines or 16 KiB where only the unwrapping reads them, as many as fit in the 8 MiB body), sent
 * to hashd as `npm start` runs it, while another thread polls GET /api/health every 10 ms. Printed
 * per attack: the identify answer's time, and the health answers' latency during it (max, p99),
 * beside a legitimate request of the same size (10,000 NetNTLMv2 lines, 8 MiB) and the health
 * latency of the idle server, in the same run. Each round sends every request once, in an order
 * reversed every other round (A B C … C B A), and the medians over the rounds are printed.
 *
 * BENCH_ROUNDS (default 3); BENCH_ONLY, comma-separated names (`fence,pkzip`; `tuple-tail` is the 8 MiB one and the reported 10-line request); BENCH_REDOS_SERVER,
 * another build's dist/src/server.js (to measure one before a change), with BENCH_REDOS_TIMEOUT_S
 * (default 120) as the most an answer may take before it is recorded as a timeout.
 */
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { attacks, honestDump, type Attack } from '../test/helpers/redos-attacks.js'
import { median } from './load.js'
import { start, stop } from './servers.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ONLY = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const SERVER = process.env.BENCH_REDOS_SERVER ?? fileURLToPath(new URL('../src/server.js', import.meta.url))
const TIMEOUT_MS = Number(process.env.BENCH_REDOS_TIMEOUT_S ?? 120) * 1000

/** The health poller: its own thread and event loop, so sending 8 MiB does not delay its probes. */
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads')
let on = false, samples = [], failures = 0
parentPort.on('message', (message) => {
  if (message === 'start') { on = true; samples = []; failures = 0 }
  if (message === 'stop') { on = false; parentPort.postMessage({ samples, failures }) }
  if (message === 'exit') process.exit(0)
})
;(async () => {
  for (;;) {
    const started = performance.now()
    try {
      const response = await fetch(workerData.url + '/api/health', { signal: AbortSignal.timeout(10000) })
      await response.arrayBuffer()
      if (on) samples.push(performance.now() - started)
    } catch { if (on) { failures += 1; samples.push(performance.now() - started) } }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
})()
`

interface Figures { answerMs: number, status: number | 'timeout', healthMax: number, healthP99: number, probes: number, failures: number }

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN
}

async function measure(url: string, poller: Worker, attack: Attack | undefined): Promise<Figures> {
  const report = new Promise<{ samples: number[], failures: number }>((resolve) => poller.once('message', resolve))
  poller.postMessage('start')
  const started = performance.now()
  let status: Figures['status'] = 'timeout'
  if (attack) {
    try {
      const response = await fetch(`${url}/api/identify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: attack.body, signal: AbortSignal.timeout(TIMEOUT_MS) })
      await response.arrayBuffer()
      status = response.status
    } catch { /* a timeout */ }
  } else {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    status = 200
  }
  const answerMs = performance.now() - started
  poller.postMessage('stop')
  const { samples, failures } = await report
  return { answerMs, status, healthMax: Math.max(...samples), healthP99: percentile(samples, 0.99), probes: samples.length, failures }
}

async function main(): Promise<void> {
  // The idle server and the honest dump are the peers: always sent.
  const requests: Array<Attack | undefined> = [undefined, honestDump(), ...attacks().filter((attack) => !ONLY || ONLY.some((name) => attack.name === name || attack.name.startsWith(`${name},`)))]
  const label = (attack: Attack | undefined) => attack?.name ?? 'idle (no request, 1 s)'
  const server = await start(SERVER, { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' })
  const poller = new Worker(POLLER, { eval: true, workerData: { url: server.url } })
  const results = new Map<string, Figures[]>()
  try {
    await measure(server.url, poller, honestDump()) // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? requests : [...requests].reverse()
      for (const attack of order) {
        const figures = await measure(server.url, poller, attack)
        results.set(label(attack), [...results.get(label(attack)) ?? [], figures])
        if (figures.status === 'timeout') await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  } finally {
    poller.postMessage('exit')
    await stop(server)
  }

  console.log(`POST /api/identify under ReDoS attacks, each scaled to the 8 MiB body (server ${SERVER}); GET /api/health polled every 10 ms from another thread; medians of ${ROUNDS} rounds`)
  console.log(`${'request'.padEnd(24)} ${'MiB'.padStart(5)} ${'lines'.padStart(8)} ${'status'.padStart(7)} ${'answer ms'.padStart(10)}  ${'health max'.padStart(10)} ${'p99'.padStart(6)}  ${'probes'.padStart(6)}  answer ÷ honest`)
  const honest = median((results.get(label(requests[1])) ?? []).map((figures) => figures.answerMs))
  for (const attack of requests) {
    const runs = results.get(label(attack)) ?? []
    const statuses = [...new Set(runs.map((figures) => figures.status))].join('/')
    const answer = median(runs.map((figures) => figures.answerMs))
    const mib = attack ? (Buffer.byteLength(attack.body) / 1048576).toFixed(2) : '-'
    const lines = attack ? String(attack.lines) : '-'
    const timedOut = runs.some((figures) => figures.status === 'timeout')
    console.log(`${label(attack).padEnd(24)} ${mib.padStart(5)} ${lines.padStart(8)} ${statuses.padStart(7)} ${(timedOut ? `>${TIMEOUT_MS}` : answer.toFixed(0)).padStart(10)}  ${median(runs.map((figures) => figures.healthMax)).toFixed(1).padStart(10)} ${median(runs.map((figures) => figures.healthP99)).toFixed(1).padStart(6)}  ${String(Math.round(median(runs.map((figures) => figures.probes)))).padStart(6)}  ${attack ? (answer / honest).toFixed(2) : ''}`)
  }
}

await main()
