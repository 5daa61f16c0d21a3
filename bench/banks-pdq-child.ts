/**
 * The PDQ part of bench/banks.ts, in a process of its own so that its resident memory is the
 * bank's: `node --expose-gc dist/bench/banks-pdq-child.js BANK QUERIES RECALL_QUERIES`.
 * QUERIES is a file of 8 hashes a line (space-separated, as Meta's benchmark-query makes its
 * queries). Prints one JSON line: open seconds and the open's longest event-loop stall, RSS above the process at rest before the open,
 * single-hash lookups/s at distance 31 (one at a time, and batched as a match request's items), 8-hash queries/s, the matches found, and the recall check
 * (RECALL_QUERIES of the queries answered again by scanning every hash).
 */
import { spawnSync } from 'node:child_process'
import { openSync, readFileSync, readSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { openBank } from '../src/similarity/banks/index.js'
import { pdqLinearScan, pdqWords } from '../src/similarity/banks/pdq.js'
import { MatchSink } from '../src/similarity/banks/sink.js'
import { BANK_TYPE_SPECS } from '../src/similarity/banks/types.js'

const [bankPath, queriesPath, recallArg] = process.argv.slice(2) as [string, string, string]
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const rss = () => {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))
  return Number(match?.[1] ?? Number.NaN) * 1024
}
const settle = async () => {
  for (let i = 0; i < 3; i++) { gc(); await new Promise((resolve) => setTimeout(resolve, 100)) }
}

const queries = readFileSync(queriesPath, 'utf8').trim().split('\n').map((line) => line.trim().split(/\s+/))
await settle()
const before = rss()
let started = performance.now()
// How long the open held the event loop at a time (a server reloading the bank answers nothing
// meanwhile): the largest delay a 10 ms-resolution monitor saw.
const openDelay = monitorEventLoopDelay({ resolution: 10 })
openDelay.enable()
const bank = await openBank(bankPath)
openDelay.disable()
const openSeconds = (performance.now() - started) / 1000
const openStallMs = openDelay.max / 1e6
// The lookups on one core, as the figures are "one thread" (all of the process's threads).
spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' })
await settle()
const atRest = rss()

const THRESHOLD = 31
const LIMIT = 1000
// Single hashes, each its own lookup (a match request of one hash).
const singles = queries.flat()
let singleMatches = 0
// Warm-up, as a server that has been answering is: the first seconds of searches run slower (the
// compiler's tiers, and the first reads of the freshly built tables): here the first batches of
// 1,000 ran at half the speed of those after a few seconds.
const warm = (seconds: number, search: () => void) => { const until = performance.now() + seconds * 1000; while (performance.now() < until) search() }
warm(2, () => { for (const hash of singles.slice(0, 100)) bank.search(hash, { threshold: THRESHOLD, limit: LIMIT }) })
started = performance.now()
let cpu = process.cpuUsage()
for (const hash of singles) singleMatches += bank.search(hash, { threshold: THRESHOLD, limit: LIMIT }).matches.length
const singleSeconds = (performance.now() - started) / 1000
const cpuSeconds = (since: NodeJS.CpuUsage) => { const used = process.cpuUsage(since); return (used.user + used.system) / 1e6 }
const singleCpuSeconds = cpuSeconds(cpu)
// The same single hashes as a batch (a match request's items, at most 1,000 a call), five rounds
// (median), and each batched answer checked against the one-at-a-time answer.
const BATCH = 1000
warm(3, () => bank.searchMany(singles.slice(0, BATCH), { threshold: THRESHOLD, limit: LIMIT }))
const batchRounds: number[] = []
const batchCpuRounds: number[] = []
let batchMatches = 0
let batchSame = 0
for (let round = 0; round < 5; round++) {
  started = performance.now()
  cpu = process.cpuUsage()
  const answers = []
  for (let from = 0; from < singles.length; from += BATCH) answers.push(...bank.searchMany(singles.slice(from, from + BATCH), { threshold: THRESHOLD, limit: LIMIT }))
  batchRounds.push((performance.now() - started) / 1000)
  batchCpuRounds.push(cpuSeconds(cpu))
  if (round === 0) {
    answers.forEach((answer, at) => {
      batchMatches += answer.matches.length
      const one = bank.search(singles[at]!, { threshold: THRESHOLD, limit: LIMIT })
      if (JSON.stringify(one) === JSON.stringify(answer)) batchSame++
    })
  }
}
const batchSeconds = batchRounds.sort((a, b) => a - b)[2]!
const batchCpuSeconds = batchCpuRounds.sort((a, b) => a - b)[2]!
// Eight hashes at once (benchmark-query's query: one image's dihedral variants), each entry once.
started = performance.now()
let groupMatches = 0
for (const group of queries) groupMatches += bank.search(group, { threshold: THRESHOLD, limit: LIMIT }).matches.length
const groupSeconds = (performance.now() - started) / 1000

// Recall: the same lookups by scanning every hash, for the first RECALL_QUERIES queries.
const fd = openSync(bankPath, 'r')
const hashes = Buffer.from(new ArrayBuffer(bank.count * 32))
for (let at = 0; at < hashes.length;) at += readSync(fd, hashes, at, Math.min(1 << 26, hashes.length - at), 256 + at)
const words = new Uint32Array(hashes.buffer, 0, bank.count * 8)
let recallChecked = 0
let recallSame = 0
for (const hash of singles.slice(0, Number(recallArg) * 8)) {
  const sink = new MatchSink('distance', 1)
  pdqLinearScan(words, bank.count, [pdqWords(BANK_TYPE_SPECS.pdq.encode(hash)!)], THRESHOLD, sink)
  const scanned = sink.values.slice().sort((a, b) => a - b).join(',')
  const indexed = bank.search(hash, { threshold: THRESHOLD, limit: 1_000_000 }).matches.map((match) => match.distance).join(',')
  recallChecked++
  if (scanned === indexed) recallSame++
}
process.stdout.write(`${JSON.stringify({
  count: bank.count, index: bank.index, openSeconds, openStallMs, bytesPerHash: (atRest - before) / bank.count, memoryBytesPerHash: bank.memoryBytes / bank.count,
  singles: singles.length, singleSeconds, singleCpuSeconds, singleMatches, batchSeconds, batchCpuSeconds, batchMatches, batchSame, groups: queries.length, groupSeconds, groupMatches, recallChecked, recallSame,
})}\n`)
bank.close()
