/**
 * `npm run bench:banks`: similarity bank lookups, in-process on one thread (pinned to core 1 with
 * taskset where there is one), each figure beside its peer in the same run. Opening the PDQ bank
 * uses every core, as the server does (its tables are built on threads).
 *
 * - **PDQ** (BENCH_PDQ_BANK_SIZE hashes, default 10 M; BENCH_PDQ_QUERIES queries of 8 hashes,
 *   default 100; distance ≤ 31): the haystack is Meta's `benchmark-query`'s own (random hashes, and
 *   for each query 8 copies of one of its 8 hashes with 1 to 31 bits flipped): with
 *   PDQ_BENCHMARK_QUERY set to the binary (built from ThreatExchange's pdq/cpp, see
 *   docs/similarity.md), its `-v` output is read, so hashd and `benchmark-query -m mih` (and its
 *   linear scan) answer the same queries over the same hashes; without it the haystack is made here
 *   the same way. Printed: import and open seconds, bytes per hash above the process's RSS at rest
 *   (bench/banks-pdq-child.ts opens the bank in a process of its own), single-hash lookups/s and
 *   8-hash queries/s, the matches against Meta's count and against a scan of every hash.
 * - **TLSH** (BENCH_TLSH_BANK_SIZE, default 1 M; distance ≤ 30): random hashes with planted
 *   near-duplicates; the index's lookups/s ÷ hashd's own linear scan of the same bank (A B B A,
 *   medians), and the recall against that scan.
 * - **ssdeep** (BENCH_SSDEEP_BANK_SIZE, default 1 M; score ≥ 1, i.e. every entry libfuzzy scores
 *   above 0): random signatures with planted near-copies; lookups/s and the recall against the scan.
 *
 * BENCH_BANKS_ONLY picks sections (`pdq,tlsh,ssdeep`); BENCH_BANK_QUERIES sets the TLSH and ssdeep
 * queries (default 200). Quick run: `BENCH_PDQ_BANK_SIZE=1000000 BENCH_TLSH_BANK_SIZE=100000
 * BENCH_SSDEEP_BANK_SIZE=100000 npm run bench:banks`.
 */
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes, randomInt } from 'node:crypto'
import { createReadStream, createWriteStream, mkdtempSync, openSync, readSync, rmSync, closeSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { importBank, openBank, type Bank, type BankType } from '../src/similarity/banks/index.js'
import { MatchSink } from '../src/similarity/banks/sink.js'
import { SsdeepSearcher } from '../src/similarity/banks/ssdeep.js'
import { TlshSearcher } from '../src/similarity/banks/tlsh.js'
import { BANK_TYPE_SPECS } from '../src/similarity/banks/types.js'
import { hasProgram } from './servers.js'

const ONLY = new Set((process.env.BENCH_BANKS_ONLY ?? 'pdq,tlsh,ssdeep').split(',').map((name) => name.trim()))
const PDQ_SIZE = Number(process.env.BENCH_PDQ_BANK_SIZE ?? 10_000_000)
const PDQ_QUERIES = Number(process.env.BENCH_PDQ_QUERIES ?? 100)
const META = process.env.PDQ_BENCHMARK_QUERY
const TLSH_SIZE = Number(process.env.BENCH_TLSH_BANK_SIZE ?? 1_000_000)
const SSDEEP_SIZE = Number(process.env.BENCH_SSDEEP_BANK_SIZE ?? 1_000_000)
const QUERIES = Number(process.env.BENCH_BANK_QUERIES ?? 200)
const SEED = 41

// One core for the whole run (the children inherit it), as the issue's figures are "one thread".
if (process.env.BENCH_BANKS_PINNED !== '1' && hasProgram('taskset')) {
  const child = spawnSync('taskset', ['-c', '1', process.execPath, '--expose-gc', '--max-old-space-size=8192', fileURLToPath(import.meta.url)],
    { stdio: 'inherit', env: { ...process.env, BENCH_BANKS_PINNED: '1' } })
  process.exit(child.status ?? 1)
}

const work = mkdtempSync(join(tmpdir(), 'hashd-bench-banks-'))
const n = (value: number) => Math.round(value).toLocaleString('en')
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Runs a program to completion, stdout to a file or returned. */
function runTo(command: string, args: string[], stdoutFile?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const out = stdoutFile ? openSync(stdoutFile, 'w') : 'pipe'
    const child = spawn(command, args, { stdio: ['ignore', out, 'inherit'] })
    let text = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
    child.on('error', reject)
    child.on('close', (code) => {
      if (typeof out === 'number') closeSync(out)
      if (code === 0) resolve(text)
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}`))
    })
  })
}

/** A figure of benchmark-query's summary (`QUERIES PER SECOND:     50.40`). */
const metaFigure = (text: string, label: string): number => Number(new RegExp(`${label}:\\s+([0-9.]+)`).exec(text)?.[1] ?? Number.NaN)

function flipBits(hash: Buffer, bits: number): Buffer {
  const copy = Buffer.from(hash)
  const chosen = new Set<number>()
  while (chosen.size < bits) chosen.add(randomInt(256))
  for (const bit of chosen) copy[bit >> 3]! ^= 1 << (bit & 7)
  return copy
}

/** Writes the haystack's hashes to `input` (one a line) and the queries (8 hashes a line) to `queries`. */
async function pdqHaystack(input: string, queries: string): Promise<{ source: string, linear?: string }> {
  if (META) {
    const dump = join(work, 'benchmark-query-v.txt')
    await runTo(META, ['-v', '-m', 'linear', '-b', String(PDQ_SIZE), '-q', String(PDQ_QUERIES), '--seed', String(SEED)], dump)
    const hashes = createWriteStream(input)
    const groups: string[] = []
    let section = ''
    let group: string[] = []
    let tail = ''
    for await (const line of createInterface({ input: createReadStream(dump), crlfDelay: Infinity })) {
      if (line.startsWith('GENERATED QUERIES:')) { section = 'queries'; continue }
      if (line.startsWith('GENERATED INDEX:')) { section = 'index'; continue }
      if (line === '') { section = section === 'index' ? 'tail' : section === 'queries' ? '' : section; continue }
      if (section === 'queries') {
        group.push(line.trim())
        if (group.length === 8) { groups.push(group.join(' ')); group = [] }
      } else if (section === 'index') {
        if (!hashes.write(`${line.trim()}\n`)) await once(hashes, 'drain')
      } else if (section === 'tail') {
        tail += `${line}\n`
      }
    }
    await new Promise<void>((resolve) => hashes.end(() => resolve()))
    rmSync(dump)
    writeFileSync(queries, `${groups.join('\n')}\n`)
    return { source: `benchmark-query's own haystack (seed ${SEED})`, linear: tail }
  }
  // benchmark-query's recipe: Q queries of 8 random hashes; N − 8Q random hashes; for each query,
  // 8 copies of one of its hashes with 1 to 31 bits flipped. (The bank sorts its hashes: no shuffle.)
  const hashes = createWriteStream(input)
  const groups: Buffer[][] = Array.from({ length: PDQ_QUERIES }, () => Array.from({ length: 8 }, () => randomBytes(32)))
  const random = Math.max(0, PDQ_SIZE - PDQ_QUERIES * 8)
  for (let at = 0; at < random; at += 4096) {
    const block = randomBytes(32 * Math.min(4096, random - at))
    let text = ''
    for (let k = 0; k < block.length; k += 32) text += `${block.toString('hex', k, k + 32)}\n`
    if (!hashes.write(text)) await once(hashes, 'drain')
  }
  for (const group of groups) {
    const base = group[randomInt(8)]!
    for (let copy = 0; copy < 8; copy++) hashes.write(`${flipBits(base, randomInt(1, 32)).toString('hex')}\n`)
  }
  await new Promise<void>((resolve) => hashes.end(() => resolve()))
  writeFileSync(queries, `${groups.map((group) => group.map((hash) => hash.toString('hex')).join(' ')).join('\n')}\n`)
  return { source: 'made here as benchmark-query makes it (PDQ_BENCHMARK_QUERY not set)' }
}

interface ChildFigures {
  count: number, index: string, openSeconds: number, openStallMs: number, bytesPerHash: number, memoryBytesPerHash: number
  singles: number, singleSeconds: number, singleCpuSeconds: number, singleMatches: number, batchSeconds: number, batchCpuSeconds: number, batchMatches: number, batchSame: number, groups: number, groupSeconds: number, groupMatches: number
  recallChecked: number, recallSame: number
}

async function pdqChild(bank: string, queries: string, recall: number): Promise<ChildFigures> {
  const child = fileURLToPath(new URL('./banks-pdq-child.js', import.meta.url))
  // The child opens the bank on every core (the server builds PDQ's tables on threads, one per
  // core), then pins itself to core 1 for the lookups.
  const args = ['--expose-gc', '--max-old-space-size=8192', child, bank, queries, String(recall)]
  const out = hasProgram('taskset')
    ? await runTo('taskset', ['-c', `0-${availableParallelism() - 1}`, process.execPath, ...args])
    : await runTo(process.execPath, args)
  return JSON.parse(out) as ChildFigures
}

async function pdqSection(): Promise<void> {
  console.log(`PDQ: ${n(PDQ_SIZE)} hashes, ${PDQ_QUERIES} queries of 8 hashes, distance ≤ 31, one core`)
  const input = join(work, 'pdq.txt')
  const queries = join(work, 'pdq-queries.txt')
  const made = await pdqHaystack(input, queries)
  console.log(`  haystack: ${made.source}`)
  const bank = join(work, 'pdq.bank')
  const started = performance.now()
  const summary = await importBank(input, bank, 'pdq')
  console.log(`  npm run bank:import: ${((performance.now() - started) / 1000).toFixed(1)} s, ${(summary.bytes / 1e6).toFixed(0)} MB`)
  rmSync(input)
  // hashd, Meta's MIH, hashd again (each figure printed as it comes: Meta's MIH takes minutes to build at 10 M).
  const runs: ChildFigures[] = []
  const hashdRun = async (recall: number) => {
    const run = await pdqChild(bank, queries, recall)
    runs.push(run)
    console.log(`  hashd run ${runs.length} (${run.index}): open ${run.openSeconds.toFixed(1)} s (goal ≤ 10), the event loop held at most ${n(run.openStallMs)} ms at a time; ` +
      `${run.bytesPerHash.toFixed(1)} bytes per hash above RSS at rest (goal ≤ 128; the hashes and tables alone ${run.memoryBytesPerHash.toFixed(1)})`)
    console.log(`    single-hash lookups/s ${n(run.singles / run.singleSeconds)} one at a time, ${n(run.singles / run.batchSeconds)} batched by 1,000 (goal ≥ 3,000); ` +
      `per CPU second ${n(run.singles / run.singleCpuSeconds)} and ${n(run.singles / run.batchCpuSeconds)}; ` +
      `${run.singleMatches} matches (batched: ${run.batchMatches}, ${run.batchSame} of ${run.singles} answers the same as one at a time); ` +
      `8-hash queries/s ${n(run.groups / run.groupSeconds)}` +
      `${run.recallChecked > 0 ? `; exact recall: ${run.recallSame} of ${run.recallChecked} lookups give a scan's matches` : ''}`)
  }
  await hashdRun(10)
  let meta = ''
  if (META) {
    meta = await runTo(META, ['-m', 'mih', '-b', String(PDQ_SIZE), '-q', String(PDQ_QUERIES), '--seed', String(SEED)])
    const metaQps = metaFigure(meta, 'QUERIES PER SECOND')
    console.log(`  Meta benchmark-query -m mih: ${metaQps.toFixed(2)} 8-hash queries/s (${n(metaQps * 8)} single-hash lookups/s), ` +
      `${metaFigure(meta, 'TOTAL MATCH COUNT')} matches, index build ${metaFigure(meta, 'MIH index build time').toFixed(1)} s`)
    console.log(`  Meta benchmark-query -m linear: ${metaFigure(made.linear ?? '', 'QUERIES PER SECOND').toFixed(2)} 8-hash queries/s, ` +
      `${metaFigure(made.linear ?? '', 'TOTAL MATCH COUNT')} matches`)
  } else {
    console.log('  Meta benchmark-query: skipped (set PDQ_BENCHMARK_QUERY to the binary built from ThreatExchange pdq/cpp: make benchmark-query)')
  }
  await hashdRun(0)
  if (META) {
    const metaQps = metaFigure(meta, 'QUERIES PER SECOND')
    const groupRate = median(runs.map((run) => run.groups / run.groupSeconds))
    console.log(`  hashd ÷ Meta MIH, 8-hash queries/s (hashd's median): ${(groupRate / metaQps).toFixed(1)}; ` +
      `the same match count as Meta's: ${runs[0]!.singleMatches === metaFigure(meta, 'TOTAL MATCH COUNT') ? 'yes' : 'NO'}`)
  }
}

/** Records of a bank file's hash section, read straight from the file (for the linear scans). */
function recordsOf(path: string, bank: Bank): Buffer {
  const spec = BANK_TYPE_SPECS[bank.type]
  const records = Buffer.from(new ArrayBuffer(bank.count * spec.recordBytes))
  const fd = openSync(path, 'r')
  for (let at = 0; at < records.length;) at += readSync(fd, records, at, Math.min(1 << 26, records.length - at), 256 + at)
  closeSync(fd)
  return records
}

/** Lookups/s of `lookup` over the queries, repeated to at least `seconds`. */
function rate(queries: readonly string[], seconds: number, lookup: (query: string) => void): number {
  let done = 0
  const started = performance.now()
  while (performance.now() - started < seconds * 1000) for (const query of queries) { lookup(query); done++ }
  return done / ((performance.now() - started) / 1000)
}

async function similarSection(type: Extract<BankType, 'tlsh' | 'ssdeep'>, size: number, makeHash: () => string, nearCopy: (hash: string) => string): Promise<void> {
  const threshold = type === 'tlsh' ? 30 : 1
  console.log(`${type === 'tlsh' ? 'TLSH' : 'ssdeep'}: ${n(size)} hashes with ${n(size / 100)} planted near-copies, ${type === 'tlsh' ? 'distance ≤ 30' : 'score ≥ 1 (every entry libfuzzy scores above 0)'}, one core`)
  const input = join(work, `${type}.txt`)
  const bankPath = join(work, `${type}.bank`)
  const out = createWriteStream(input)
  const sources: string[] = []
  for (let at = 0; at < size; at++) {
    const hash = makeHash()
    if (at < size / 100) sources.push(hash)
    if (!out.write(`${hash}\n`)) await once(out, 'drain')
  }
  for (const source of sources) out.write(`${nearCopy(source)}\n`)
  await new Promise<void>((resolve) => out.end(() => resolve()))
  let started = performance.now()
  await importBank(input, bankPath, type)
  const importSeconds = (performance.now() - started) / 1000
  started = performance.now()
  const bank = await openBank(bankPath)
  const openSeconds = (performance.now() - started) / 1000
  rmSync(input)
  const records = recordsOf(bankPath, bank)
  const linear = type === 'tlsh' ? new TlshSearcher(records, bank.count, false) : new SsdeepSearcher(records, bank.count, false)
  const spec = BANK_TYPE_SPECS[type]
  const queries = [...sources.slice(0, QUERIES / 2), ...Array.from({ length: QUERIES / 2 }, makeHash)]
  const linearQueries = queries.filter((_, at) => at % Math.max(1, Math.floor(queries.length / 10)) === 0).slice(0, 10)
  const viaIndex = (query: string) => bank.search(query, { threshold, limit: 1000 })
  const viaScan = (query: string) => {
    const sink = new MatchSink(type === 'tlsh' ? 'distance' : 'score', 1)
    linear.search([spec.encode(query)!], threshold, true, sink)
    return sink
  }
  const indexRates: number[] = []
  const scanRates: number[] = []
  for (const which of ['index', 'scan', 'scan', 'index'] as const) {
    if (which === 'index') indexRates.push(rate(queries, 2, viaIndex))
    else scanRates.push(rate(linearQueries, 2, viaScan))
  }
  let same = 0
  let matches = 0
  for (const query of queries.slice(0, type === 'tlsh' ? QUERIES : 20)) {
    const indexed = viaIndex(query).matches.map((match) => match.distance ?? match.score).join(',')
    const sink = viaScan(query)
    const order = type === 'tlsh' ? 1 : -1
    const scanned = sink.values.slice().sort((a, b) => order * (a - b)).join(',')
    if (indexed === scanned) same++
    matches += sink.size
  }
  const checked = type === 'tlsh' ? QUERIES : 20
  console.log(`  import ${importSeconds.toFixed(1)} s, open ${openSeconds.toFixed(1)} s; ${bank.index}, ${(bank.memoryBytes / bank.count).toFixed(0)} bytes per hash in memory`)
  console.log(`  hashd index:       ${indexRates.map(n).join(', ')} lookups/s${type === 'ssdeep' ? ' (goal ≥ 1,000)' : ''}`)
  console.log(`  hashd linear scan: ${scanRates.map((value) => value.toFixed(1)).join(', ')} lookups/s`)
  console.log(`  index ÷ linear scan (medians): ${(median(indexRates) / median(scanRates)).toFixed(0)}${type === 'tlsh' ? ' (goal ≥ 20)' : ''}; ` +
    `recall ${(same / checked).toFixed(3)} (${same} of ${checked} lookups give the scan's matches, ${matches} matches in all)`)
  bank.close()
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex').toUpperCase()
function tlshNearCopy(hash: string): string {
  const digits = hash.slice(2).split('')
  for (let change = randomInt(0, 12); change > 0; change--) digits[6 + randomInt(64)] = '0123456789ABCDEF'[randomInt(16)]!
  if (randomInt(4) === 0) digits[2] = ((parseInt(digits[2]!, 16) + 1) & 15).toString(16).toUpperCase()
  return `T1${digits.join('')}`
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const base64 = (length: number) => Array.from({ length }, () => BASE64[randomInt(64)]).join('')
/** A signature of the shape ssdeep prints: block size 3·2^k, 40–64 then 20–32 characters. */
const ssdeepHash = () => `${3 * 2 ** randomInt(15)}:${base64(randomInt(40, 65))}:${base64(randomInt(20, 33))}`
function ssdeepNearCopy(hash: string): string {
  const [blockSize, first, second] = hash.split(':') as [string, string, string]
  const edit = (text: string) => {
    const chars = text.split('')
    for (let change = randomInt(1, 6); change > 0; change--) chars[randomInt(chars.length)] = BASE64[randomInt(64)]!
    return chars.join('')
  }
  return `${blockSize}:${edit(first)}:${edit(second)}`
}

try {
  if (ONLY.has('pdq')) { await pdqSection(); console.log() }
  if (ONLY.has('tlsh')) { await similarSection('tlsh', TLSH_SIZE, () => `T1${hex(35)}`, tlshNearCopy); console.log() }
  if (ONLY.has('ssdeep')) await similarSection('ssdeep', SSDEEP_SIZE, ssdeepHash, ssdeepNearCopy)
} finally {
  rmSync(work, { recursive: true, force: true })
}
