/**
 * The breached-password rows of `npm run bench` (section `pwned`), on a synthetic corpus in the
 * downloader's single-file layout (scripts/pwned-corpus.ts, seed 1), made once into
 * `.bench/cache/pwned-sha1-<N>-file/` and reused by later runs. BENCH_PWNED_HASHES sets N: 5 million
 * by default (the corpus takes about a minute to make, the rows a few); the goals are stated at 50
 * million (`BENCH_PWNED_HASHES=50000000 BENCH_ONLY=pwned npm run bench`; making that corpus took
 * 6 minutes here, 2.2 GB).
 * - size: the store's bytes per hash (index included) against the HIBP text's (goal ≤ 20);
 * - import: hashes per second of pwned:import, by wall time and by the CPU time it used, beside
 *   the time coreutils `wc -l` takes to read the same text in the same run (goal ≥ 5 M/s), and the
 *   time two billion hashes would take at that rate;
 * - /range: requests per second over a sample of 1,000 prefixes, 50 connections, hashd reading the
 *   store from disk against a bare node:http server that reads the same store with hashd's store
 *   code and writes the same headers (bench/store-range-server.ts; goal ≥ 1.0): what hashd's
 *   framework, hooks and validation cost over the store's own work. For context, a bare node:http
 *   server answering the same prefixes from rendered text held in memory (bench/bare-range-server.ts),
 *   which a store that is never loaded whole cannot do; in the order memory, store, hashd, hashd,
 *   store, memory;
 * - check: p99 of POST /api/passwords/check with the store on disk, one request at a time (goal
 *   ≤ 2 ms), and with 8 connections for scale;
 * - memory: RSS with the store open, at rest after 30 s idle, beside the same server without a
 *   store given the same checks in the same run (goal ≤ 100 MB).
 */
import { spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { makeCorpus } from '../scripts/pwned-corpus.js'
import { importPwned } from '../src/screening/import.js'
import { cpuSeconds } from './load.js'
import { start, stop } from './servers.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const HASHES = Number(process.env.BENCH_PWNED_HASHES ?? 5_000_000)
const CACHE = join(here, '..', '..', '.bench', 'cache')
const SAMPLE = 1000

/** The `HASH:COUNT` lines of a sorted single-file corpus under `prefix`, as the range API writes them: found by bisection. */
function rangeOf(fd: number, size: number, prefix: string): string {
  const window = Buffer.allocUnsafe(256)
  // The byte offset of the first line whose hash is ≥ prefix.
  const lineAt = (offset: number): { start: number, text: string } => {
    if (offset === 0) { readSync(fd, window, 0, 256, 0); return { start: 0, text: window.toString('latin1') } }
    const got = readSync(fd, window, 0, 256, offset - 1)
    const newline = window.subarray(0, got).indexOf(0x0a)
    const start = offset - 1 + newline + 1
    readSync(fd, window, 0, 256, start)
    return { start, text: window.toString('latin1') }
  }
  let low = 0
  let high = size
  while (low < high) {
    const middle = Math.floor((low + high) / 2)
    const { start, text } = lineAt(middle)
    if (start >= size || text.slice(0, 5) >= prefix) high = middle
    else low = middle + 1
  }
  const { start } = lineAt(low)
  const chunk = Buffer.allocUnsafe(256 * 1024)
  const got = readSync(fd, chunk, 0, chunk.length, start)
  return chunk.subarray(0, got).toString('latin1').split('\r\n').filter((line) => line.startsWith(prefix)).map((line) => line.slice(5)).join('\r\n')
}

function rssMB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) * 1024 / 1e6
}

async function rate(url: string, paths: string[], seconds: number, connections = 50): Promise<{ rate: number, p99: number, p50: number, non2xx: number }> {
  const result = await autocannon({ url, connections, duration: seconds, requests: paths.map((path) => ({ method: 'GET' as const, path })) })
  return { rate: result.requests.average, p99: result.latency.p99, p50: result.latency.p50, non2xx: result.non2xx }
}

export async function benchPwned(hashdScript: string, seconds: number): Promise<void> {
  const millions = (HASHES / 1e6).toLocaleString('en')
  console.log(`\n6. breached-password store: ${millions} million synthetic SHA-1 hashes (goals stated at 50 million; BENCH_PWNED_HASHES sets the size)`)
  const corpusDir = join(CACHE, `pwned-sha1-${HASHES}-file`)
  const text = join(corpusDir, 'pwnedpasswords.txt')
  if (!existsSync(text)) {
    mkdirSync(corpusDir, { recursive: true })
    const started = performance.now()
    await makeCorpus({ dir: corpusDir, hashes: HASHES, kind: 'sha1', layout: 'file', seed: 1 })
    console.log(`   corpus made in ${((performance.now() - started) / 1000).toFixed(0)} s into ${corpusDir} (kept for later runs)`)
  } else {
    console.log(`   corpus: ${corpusDir} (made by an earlier run)`)
  }
  const storeFile = join(CACHE, `pwned-sha1-${HASHES}.store`)
  const textBytes = statSync(text).size

  // Import, with coreutils wc -l reading the same text for scale.
  const wcStarted = performance.now()
  spawnSync('wc', ['-l', text], { stdio: 'ignore' })
  const wcSeconds = (performance.now() - wcStarted) / 1000
  const cpuBefore = process.cpuUsage()
  const summary = importPwned(text, storeFile, { kind: 'sha1' })
  const cpu = process.cpuUsage(cpuBefore)
  const cpuTotal = (cpu.user + cpu.system) / 1e6
  const perCpu = summary.hashes / cpuTotal
  const twoBillion = (perSecond: number) => `${(2e9 / perSecond / 60).toFixed(0)} min`
  console.log(`size     store ${summary.bytesPerHash.toFixed(2)} bytes per hash (${(summary.bytes / 1e6).toFixed(0)} MB, index included)   HIBP text ${(textBytes / summary.hashes).toFixed(2)} bytes per hash (${(textBytes / 1e6).toFixed(0)} MB)   ratio ${(summary.bytes / textBytes).toFixed(2)} (goal ≤ 20 bytes per hash)`)
  console.log(`import   ${(summary.hashesPerSecond / 1e6).toFixed(2)} M hashes/s by wall time (${summary.seconds.toFixed(1)} s), ${(perCpu / 1e6).toFixed(2)} M per CPU second (${cpuTotal.toFixed(1)} s: user ${(cpu.user / 1e6).toFixed(1)}, system ${(cpu.system / 1e6).toFixed(1)})   ` +
    `wc -l on the same text ${wcSeconds.toFixed(1)} s (goal ≥ 5 M/s); 2 billion hashes: ${twoBillion(summary.hashesPerSecond)} at this wall rate, ${twoBillion(perCpu)} at the CPU rate`)

  // Sample prefixes spread over the range, and their answers read from the corpus text.
  const prefixes = Array.from({ length: SAMPLE }, (_, index) => Math.floor((index + 0.5) * (1 << 20) / SAMPLE).toString(16).toUpperCase().padStart(5, '0'))
  const fd = openSync(text, 'r')
  const answers = Object.fromEntries(prefixes.map((prefix) => [prefix, rangeOf(fd, textBytes, prefix)]))
  closeSync(fd)
  const answersFile = join(CACHE, `range-answers-${HASHES}.json`)
  writeFileSync(answersFile, JSON.stringify(answers))
  const paths = prefixes.map((prefix) => `/range/${prefix}`)

  const env = { PWNED_STORE: storeFile, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }
  const run = async (script: string, environment: Record<string, string>) => {
    const server = await start(script, environment, '0')
    try {
      // Each server and the corpus text agree before they are timed.
      for (const prefix of prefixes.slice(0, 20)) {
        if (await (await fetch(`${server.url}/range/${prefix}`)).text() !== answers[prefix]) throw new Error(`${script}'s /range/${prefix} differs from the corpus text`)
      }
      await rate(server.url, paths, 2)
      const before = cpuSeconds(server.child.pid)
      const measured = await rate(server.url, paths, seconds)
      if (measured.non2xx > 0) throw new Error(`${measured.non2xx} non-2xx answers from ${script}`)
      return { ...measured, cpuMicros: (cpuSeconds(server.child.pid) - before) * 1e6 / (measured.rate * seconds) }
    } finally {
      await stop(server)
    }
  }
  const mean = (first: { rate: number, cpuMicros: number }, second: { rate: number, cpuMicros: number }) => ({ rate: (first.rate + second.rate) / 2, cpu: (first.cpuMicros + second.cpuMicros) / 2 })
  const inMemory = `${here}bare-range-server.js`
  const storePeer = `${here}store-range-server.js`
  // C A B B A C: the bare server from memory (context), the bare server reading the store (the peer), hashd.
  const c1 = await run(inMemory, { RANGE_ANSWERS: answersFile })
  const a1 = await run(storePeer, { PWNED_STORE: storeFile })
  const b1 = await run(hashdScript, env)
  const b2 = await run(hashdScript, env)
  const a2 = await run(storePeer, { PWNED_STORE: storeFile })
  const c2 = await run(inMemory, { RANGE_ANSWERS: answersFile })
  const hashd = mean(b1, b2)
  const peer = mean(a1, a2)
  const fromMemory = mean(c1, c2)
  const meanLines = Object.values(answers).reduce((sum, body) => sum + (body === '' ? 0 : body.split('\r\n').length), 0) / SAMPLE
  console.log(`/range   hashd ${hashd.rate.toFixed(0).padStart(6)} req/s ${hashd.cpu.toFixed(1)} µs CPU/req   bare node:http reading the same store with hashd's code and headers ${peer.rate.toFixed(0).padStart(6)} req/s ${peer.cpu.toFixed(1)} µs CPU/req   ` +
    `ratio ${(hashd.rate / peer.rate).toFixed(2)} by req/s, ${(peer.cpu / hashd.cpu).toFixed(2)} by CPU/req (goal ≥ 1.0; ${meanLines.toFixed(0)} lines an answer)`)
  console.log(`         context: bare node:http answering from rendered text in memory ${fromMemory.rate.toFixed(0).padStart(6)} req/s ${fromMemory.cpu.toFixed(1)} µs CPU/req: ` +
    `hashd ÷ it ${(hashd.rate / fromMemory.rate).toFixed(2)} by req/s, the store peer ÷ it ${(peer.rate / fromMemory.rate).toFixed(2)} (the store's read and text)`)

  // Check latency, one request at a time (latency, not a queue), and memory: the server with the
  // store and one without it, given the same checks, then 30 s idle.
  const server = await start(hashdScript, { ...env, LOG_LEVEL: 'info' })
  const plain = await start(hashdScript, { LOG_LEVEL: 'info', RATE_LIMIT_MAX: '0' })
  try {
    const passwords = ['correct horse battery staple', 'violet tractor humming under seven lanterns', 'Password123456789', 'pässwörd-über-alles']
    const check = async (url: string, duration: number, connections: number) => autocannon({
      url, connections, duration,
      requests: passwords.map((password) => ({ method: 'POST' as const, path: '/api/passwords/check', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password, context: ['alice'] }) })),
    })
    await check(server.url, 2, 1)
    const single = await check(server.url, seconds, 1)
    const eight = await check(server.url, seconds, 8)
    if (single.non2xx + eight.non2xx > 0) throw new Error('non-2xx answers to /api/passwords/check')
    console.log(`check    POST /api/passwords/check with the store on disk (${(summary.bytes / 1e6).toFixed(0)} MB): one connection ${single.requests.average.toFixed(0)} req/s, ` +
      `p50 ${single.latency.p50} ms, p99 ${single.latency.p99} ms (goal p99 ≤ 2 ms); 8 connections ${eight.requests.average.toFixed(0)} req/s, p99 ${eight.latency.p99} ms`)
    await check(plain.url, seconds, 8)
    await new Promise((resolve) => setTimeout(resolve, 30_000))
    console.log(`memory   RSS at rest (30 s idle after the same checks) with the store open ${rssMB(server.child.pid as number).toFixed(0)} MB, ` +
      `without a store ${rssMB(plain.child.pid as number).toFixed(0)} MB (goal ≤ 100 MB; the store is ${(summary.bytes / 1e6).toFixed(0)} MB on disk)`)
  } finally {
    await stop(server)
    await stop(plain)
    rmSync(answersFile, { force: true })
  }
}
