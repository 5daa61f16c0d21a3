/**
 * The PDQ part of bench/banks.ts, in a process of its own so that its resident memory is the
 * bank's: `node --expose-gc dist/bench/banks-pdq-child.js BANK QUERIES RECALL_QUERIES`.
 * QUERIES is a file of 8 hashes a line (space-separated, as Meta's benchmark-query makes its
 * queries). Prints one JSON line: open seconds, RSS above the process at rest before the open,
 * single-hash lookups/s at distance 31, 8-hash queries/s, the matches found, and the recall check
 * (RECALL_QUERIES of the queries answered again by scanning every hash).
 */
import { openSync, readFileSync, readSync } from 'node:fs'
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
const bank = await openBank(bankPath)
const openSeconds = (performance.now() - started) / 1000
await settle()
const atRest = rss()

const THRESHOLD = 31
const LIMIT = 1000
// Single hashes, each its own lookup (a match request of one hash).
const singles = queries.flat()
let singleMatches = 0
for (const hash of singles.slice(0, 50)) bank.search(hash, { threshold: THRESHOLD, limit: LIMIT }) // warm-up
started = performance.now()
for (const hash of singles) singleMatches += bank.search(hash, { threshold: THRESHOLD, limit: LIMIT }).matches.length
const singleSeconds = (performance.now() - started) / 1000
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
  count: bank.count, index: bank.index, openSeconds, bytesPerHash: (atRest - before) / bank.count, memoryBytesPerHash: bank.memoryBytes / bank.count,
  singles: singles.length, singleSeconds, singleMatches, groups: queries.length, groupSeconds, groupMatches, recallChecked, recallSame,
})}\n`)
bank.close()
