/**
 * `npm run bench:banks-http`: PDQ matching over HTTP (POST /api/similarity/match) against the same
 * bank searched in this process, in the same run. A bank of BENCH_MATCH_BANK_SIZE random PDQ hashes
 * (default 10 M, as issue figures are given; 1 M for a quick run) with near-duplicates of the
 * needles planted at 1 to 31 bits, the way Meta's benchmark-query makes its haystack, is made by
 * bank:import; hashd serves it from SIMILARITY_BANKS_DIR, pinned to core 0 (taskset, when present).
 *
 * - **batched:** batches of BENCH_MATCH_BATCH needles (default 1,000, the most a batch may hold),
 *   two connections, BENCH_SECONDS seconds: lookups/s;
 * - **single:** one needle per request (each the next needle), one connection: requests/s and the
 *   50th and 99th-percentile latency;
 * - **in-process:** `bank.search` of the same needles in a loop in this process, one thread, and
 *   `bank.searchMany` of them a batch at a time (what a match batch runs): the lookups/s the HTTP
 *   figures are to be read against.
 *
 * All at distance ≤ 31, each answer checked for its planted match. HMA's published target is
 * 4,000 lookups/s; it is printed beside the batched figure, not measured here.
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openBank } from '../src/similarity/banks/index.js'
import autocannon from 'autocannon'
import { load } from './load.js'
import { start, stop } from './servers.js'

const SIZE = Number(process.env.BENCH_MATCH_BANK_SIZE ?? 10_000_000)
const BATCH = Number(process.env.BENCH_MATCH_BATCH ?? 1000)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const here = dirname(fileURLToPath(import.meta.url))

/** `hash` with `bits` distinct random bits flipped. */
function flip(hash: Buffer, bits: number): Buffer {
  const copy = Buffer.from(hash)
  const chosen = new Set<number>()
  while (chosen.size < bits) chosen.add(randomBytes(1)[0]!)
  for (const bit of chosen) copy[bit >> 3]! ^= 1 << (bit & 7)
  return copy
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-bench-match-'))
  try {
    const needles = Array.from({ length: BATCH }, () => randomBytes(32))
    const csv = join(dir, 'haystack.csv')
    const out = createWriteStream(csv)
    let made = 0
    const write = async (line: string) => { if (!out.write(line)) await once(out, 'drain') }
    // One planted copy of each needle, at 1 to 31 bits, then random hashes up to SIZE.
    for (const [index, needle] of needles.entries()) { await write(`${flip(needle, 1 + (index % 31)).toString('hex')},planted-${index}\n`); made++ }
    const chunk = Buffer.alloc(32 * 4096)
    while (made < SIZE) {
      const count = Math.min(4096, SIZE - made)
      randomBytes(32 * count).copy(chunk)
      let lines = ''
      for (let at = 0; at < count; at++) lines += `${chunk.toString('hex', at * 32, at * 32 + 32)},h${made + at}\n`
      await write(lines)
      made += count
    }
    out.end()
    await once(out, 'finish')
    const banks = join(dir, 'banks')
    mkdirSync(banks)
    const bankFile = join(banks, 'haystack.bank')
    process.stdout.write(`PDQ bank of ${SIZE.toLocaleString('en')} hashes (${BATCH} needles, one planted copy each at 1–31 bits)\n`)
    execFileSync(process.execPath, [join(here, '..', 'scripts', 'bank-import.js'), csv, bankFile, '--type', 'pdq'], { stdio: 'inherit' })
    rmSync(csv)

    const hexes = needles.map((needle) => needle.toString('hex'))
    const server = await start(join(here, '..', 'src', 'server.js'), { SIMILARITY_BANKS_DIR: banks, RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' }, '0')
    try {
      // Warm up, and check the answers: each needle finds its planted copy.
      const check = await fetch(`${server.url}/api/similarity/match`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ algorithm: 'pdq', items: hexes.map((hash) => ({ hash })) }) })
      const answer = await check.json() as { results: Array<{ matches: Array<{ id: string }> }> }
      const found = answer.results.filter((result, index) => result.matches.some((match) => match.id === `planted-${index}`)).length
      if (found !== BATCH) throw new Error(`${BATCH - found} needles did not find their planted copy`)

      const batched = await load(server.url, { algorithm: 'pdq', items: hexes.map((hash) => ({ hash })) }, { connections: 2, duration: SECONDS }, '/api/similarity/match')
      if (batched.non2xx > 0) throw new Error(`${batched.non2xx} non-2xx answers`)
      // One needle per request, each request the next needle (the same one again would find its slots in the cache).
      const single = await autocannon({
        url: `${server.url}/api/similarity/match`, connections: 1, duration: SECONDS,
        requests: hexes.map((hash) => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ algorithm: 'pdq', hash }) })),
      })
      if (single.non2xx > 0) throw new Error(`${single.non2xx} non-2xx answers`)
      const batchedRate = batched.requests.total * BATCH / SECONDS

      const bank = await openBank(bankFile)
      let searched = 0
      const started = performance.now()
      while (performance.now() - started < SECONDS * 1000) {
        for (const hash of hexes) bank.search(hash, { threshold: 31, limit: 100 })
        searched += hexes.length
      }
      const inProcess = searched / ((performance.now() - started) / 1000)
      // The same needles a batch at a time (bank.searchMany, what a match batch runs).
      let batchedSearched = 0
      const batchStarted = performance.now()
      while (performance.now() - batchStarted < SECONDS * 1000) {
        bank.searchMany(hexes, { threshold: 31, limit: 100 })
        batchedSearched += hexes.length
      }
      const inProcessBatched = batchedSearched / ((performance.now() - batchStarted) / 1000)
      bank.close()

      const pad = (text: string) => text.padEnd(44)
      process.stdout.write(`\nPDQ matching, distance ≤ 31, ${SIZE.toLocaleString('en')} hashes (higher is better but for latency)\n`)
      process.stdout.write(`${pad('  in-process bank.search, one thread')}${Math.round(inProcess).toLocaleString('en')} lookups/s\n`)
      process.stdout.write(`${pad(`  in-process bank.searchMany, by ${BATCH}`)}${Math.round(inProcessBatched).toLocaleString('en')} lookups/s\n`)
      process.stdout.write(`${pad(`  HTTP, batches of ${BATCH}, 2 connections`)}${Math.round(batchedRate).toLocaleString('en')} lookups/s (${(batchedRate / inProcessBatched).toFixed(2)} of in-process batched; HMA's target 4,000)\n`)
      process.stdout.write(`${pad('  HTTP, one per request, 1 connection')}${Math.round(single.requests.average).toLocaleString('en')} requests/s, p50 ${single.latency.p50} ms, p99 ${single.latency.p99} ms\n`)
    } finally {
      await stop(server)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
