/**
 * `npm run bench:identify`: how fast and how accurate /api/identify's engine is.
 *
 * - Identifications per second, in process, over typical inputs (bare digests, crypt strings,
 *   PHC strings, salted forms, a JWT).
 * - Top-1/3/10 hit rates of the expected hashcat mode on the public corpus
 *   ../shared/data/hashcat-examples.json (hashcat's own self-test hashes; read from there, never
 *   copied into the project), beside the same figures for hashID (Debian's `hashid -m`), run over
 *   the same corpus in the same run.
 *
 * A hashd match counts when its `hashcat` mode is the expected one, or when the expected mode is
 * one of its `variants` (modes hashcat reads from the identical syntax, e.g. VeraCrypt's 24
 * PRF/XTS combinations, or the 20 modes beside md5($pass.$salt) that take `32 hex:salt`). The
 * strict figures, counting only a match's own `hashcat`, are printed too: they are the ones to
 * set beside hashID, which prints every mode on a line of its own.
 *
 * - A 10,000-line dump (pwdump lines, potfile-free md5 and sha1 lines, `user:bcrypt` lines,
 *   NetNTLMv2 captures) read as one `hashes` string: its time, and the longest event-loop stall
 *   while it runs, beside the stall of the same work done in one go (the peer), in the same run;
 *   and over HTTP (the real app on loopback, in this process), 10,000 bare 32-hex lines, the
 *   heaviest answer (3 matches each), with the longest stall of the server's event loop (the
 *   client is another process).
 *
 * `--misses` lists every corpus entry whose mode is not in hashd's top 3, with the top 3 it got;
 * `--ceiling` prints the bounds no ordering of today's matches can pass (see below).
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { identifyBatch, readEntries } from '../src/identify/batch.js'
import { identify, type IdentifyMatch } from '../src/identify/engine.js'
import { formats, hashcatModes } from '../src/identify/table.js'

interface CorpusEntry {
  hash: string
  hashcat: number
  name: string
  category: string
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** `../shared/data` beside the checkout, or beside a parent folder of it (a git worktree under wt/). */
const corpusPath = findCorpus(repoRoot)
const corpus = JSON.parse(readFileSync(corpusPath, 'utf8')) as CorpusEntry[]

function findCorpus(from: string): string {
  const tried: string[] = []
  for (let directory = resolve(from, '..'); ; directory = dirname(directory)) {
    const candidate = join(directory, 'shared', 'data', 'hashcat-examples.json')
    tried.push(candidate)
    if (existsSync(candidate)) return candidate
    if (dirname(directory) === directory) throw new Error(`hashcat-examples.json not found (tried ${tried.join(', ')})`)
  }
}

const TOPS = [1, 3, 10] as const

interface HitRates { top1: number, top3: number, top10: number }

function hitRates(rankOf: (entry: CorpusEntry) => number): HitRates {
  const hits = TOPS.map((k) => corpus.filter((entry) => { const rank = rankOf(entry); return rank >= 0 && rank < k }).length / corpus.length)
  return { top1: hits[0]!, top3: hits[1]!, top10: hits[2]! }
}

const covers = (match: IdentifyMatch, mode: number, strict: boolean): boolean =>
  match.hashcat === mode || (!strict && (match.variants ?? []).some((variant) => variant.hashcat === mode))

function hashdRanks(strict: boolean): (entry: CorpusEntry) => number {
  return (entry) => identify(entry.hash).matches.findIndex((match) => covers(match, entry.hashcat, strict))
}

/**
 * The flattened measure: every match expanded into its own mode then its variants in the order
 * listed, each mode one rank, as a hashcat user would try them one after another. A match without
 * a hashcat mode (a base64 digest, a checksum) still takes one rank: it is one more thing to try.
 */
function flattenedModes(matches: readonly IdentifyMatch[]): Array<number | null> {
  return matches.flatMap((match) => [match.hashcat, ...(match.variants ?? []).map((variant) => variant.hashcat)])
}

function flattenedRanks(entry: CorpusEntry): number {
  return flattenedModes(identify(entry.hash).matches).indexOf(entry.hashcat)
}

/** Runs hashID once over a file of every corpus hash and reads its ordered candidate lists. */
function hashIdRanks(): ((entry: CorpusEntry) => number) | string {
  const directory = mkdtempSync(join(tmpdir(), 'hashd-bench-'))
  try {
    const file = join(directory, 'hashes.txt')
    writeFileSync(file, corpus.map((entry) => entry.hash).join('\n') + '\n')
    const output = execFileSync('hashid', ['-m', file], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
    const lists: Array<Array<number | null>> = []
    for (const line of output.split('\n')) {
      if (line.startsWith('Analyzing \'')) lists.push([])
      else if (line.startsWith('[+] ') && lists.length > 0) {
        const mode = /\[Hashcat Mode: (\d+)\]/.exec(line)?.[1]
        lists[lists.length - 1]!.push(mode === undefined ? null : Number(mode))
      }
    }
    if (lists.length !== corpus.length) return `hashID answered ${lists.length} of ${corpus.length} hashes`
    const byHash = new Map(corpus.map((entry, index) => [entry, lists[index]!]))
    return (entry) => byHash.get(entry)!.indexOf(entry.hashcat)
  } catch (error) {
    return `hashID not runnable (${(error as Error).message.split('\n')[0]}); apt-get install hashid`
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

/** Typical inputs: what people paste most (bare digests, crypt strings, PHC, salted forms, JWT). */
const typicalInputs = [
  '5f4dcc3b5aa765d61d8327deb882cf99',
  '5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8',
  '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8',
  'b109f3bbbc244eb82441917ed06d618b9008dd09b3befd1b5e07394c706a8bb980b1d7785e5976ec049b46df5f1326af5a2ea6d103fd07c95385ffab0cacbc86',
  '8846F7EAEE8FB117AD06BDD830B7586C',
  '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW',
  '$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG',
  '$6$rounds=5000$saltsalt$W7YvdZBKVqRYKhTXRRpvSaxnPY0ku/gkzfxG4x58Sh/7EQEFnbtmZ0lYvT4wxJAiN6qZsdp5qsSlAB7Q.bZNW1',
  '$1$saltsalt$qjXMvbEw8oaL.CzflDugX/',
  '$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7',
  '$P$984478476IagS59wHZvyQMArzfx58u.',
  'pbkdf2_sha256$600000$abcdefghijklmnop$Ad1rnFdyC+Bc6o3HjLi/1KJG2A0j2iA8HM/i71KfKLk=',
  '{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g4Q4Dc',
  '5f4dcc3b5aa765d61d8327deb882cf99:1234',
  'admin:$apr1$salt1234$DoKeJE/e6r3b2fCz2Q9Br0',
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
]

function throughput(): { perSecond: number, iterations: number } {
  for (let warm = 0; warm < 2000; warm += 1) identify(typicalInputs[warm % typicalInputs.length]!)
  const iterations = 200_000
  const started = process.hrtime.bigint()
  for (let index = 0; index < iterations; index += 1) identify(typicalInputs[index % typicalInputs.length]!)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { perSecond: iterations / seconds, iterations }
}

const percent = (value: number): string => value.toFixed(3)

/** A 10,000-line dump of the shapes people paste, deterministic (hex from a counter, not random). */
function dumpLines(): string[] {
  const hex = (seed: number, length: number): string => {
    let text = ''
    for (let index = 0; text.length < length; index += 1) text += ((seed * 2654435761 + index * 40503) >>> 0).toString(16).padStart(8, '0')
    return text.slice(0, length)
  }
  return Array.from({ length: 10_000 }, (_, index) => {
    switch (index % 5) {
      case 0: return `CORP\\user${index}:${1000 + index}:aad3b435b51404eeaad3b435b51404ee:${hex(index, 32)}:::`
      case 1: return hex(index, 32)
      case 2: return hex(index, 40)
      case 3: return `user${index}:$2b$10$${'N9qo8uLOickgx2ZMRZoMye'}IjZAgcfl7p92ldGxad68LJZdL17lhWy`
      default: return `user${index}::CORP:1122334455667788:${hex(index, 32)}:${hex(index + 1, 160)}`
    }
  })
}

/** The longest gap between the ticks of a 1 ms interval timer while `work` runs. */
async function measure(work: () => Promise<unknown>): Promise<{ milliseconds: number, stall: number }> {
  let last = performance.now()
  let stall = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    stall = Math.max(stall, now - last)
    last = now
  }, 1)
  await new Promise((resolve) => setTimeout(resolve, 10))
  stall = 0
  last = performance.now()
  const started = performance.now()
  await work()
  const milliseconds = performance.now() - started
  await new Promise((resolve) => setTimeout(resolve, 10))
  clearInterval(ticker)
  return { milliseconds, stall }
}

/** POST /api/identify with 10,000 bare 32-hex lines to the real app on loopback. */
async function httpDumpFigures(): Promise<{ milliseconds: number, stall: number, bytes: number }> {
  const config = loadConfig({ RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0' })
  const app = await buildApp(config, { logStream: new Writable({ write(_chunk, _encoding, done) { done() } }) })
  await app.listen({ host: '127.0.0.1', port: 0 })
  try {
    const address = app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    const lines = Array.from({ length: 10_000 }, (_, index) => ((index * 2654435761) >>> 0).toString(16).padStart(8, '0').repeat(4))
    const body = JSON.stringify({ hashes: [lines.join('\n')] })
    // The client is another node process, so the stall measured is the server's alone.
    const client = `const body = require('node:fs').readFileSync(0, 'utf8');
      fetch(process.argv[1], { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (response) => { const text = await response.text(); console.log(response.status, text.length) })`
    const send = async (): Promise<number> => {
      const output = await new Promise<string>((resolve, reject) => {
        const child = execFile(process.execPath, ['-e', client, `http://127.0.0.1:${address.port}/api/identify`], { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)))
        child.stdin!.end(body)
      })
      const [status, length] = output.trim().split(' ')
      if (status !== '200') throw new Error(`HTTP ${status}`)
      return Number(length)
    }
    await send() // warm-up
    let bytes = 0
    const figures = await measure(async () => { bytes = await send() })
    return { ...figures, bytes }
  } finally {
    await app.close()
  }
}

/** The 10,000-line dump through identifyBatch (yielding), and the same lines identified in one go. */
async function dumpFigures(): Promise<{ milliseconds: number, stall: number, inOneGo: number, inOneGoStall: number }> {
  const text = dumpLines().join('\n')
  const read = await readEntries([text], 64 * 1024)
  if (!('entries' in read)) throw new Error('the bench dump is over the limit')
  await identifyBatch(read.entries, read.skipped) // warm-up
  const yielding = await measure(() => identifyBatch(read.entries, read.skipped))
  const oneGo = await measure(async () => { for (const entry of read.entries) identify(entry.text) })
  return { milliseconds: yielding.milliseconds, stall: yielding.stall, inOneGo: oneGo.milliseconds, inOneGoStall: oneGo.stall }
}

const speed = throughput()
const expectedModes = new Set(corpus.map((entry) => entry.hashcat))
const covered = [...expectedModes].filter((mode) => hashcatModes.has(mode) || formats.some((format) => (format.variants ?? []).some((variant) => variant.hashcat === mode))).length
const hashd = hitRates(hashdRanks(false))
const hashdStrict = hitRates(hashdRanks(true))
const hashdFlat = hitRates(flattenedRanks)
const hashIdRankOf = hashIdRanks()
const dump = await dumpFigures()
const httpDump = await httpDumpFigures()

console.log(`identify bench (corpus: ${corpusPath}, ${corpus.length} entries; table: ${formats.length} formats, ${covered}/${expectedModes.size} corpus modes covered)`)
console.log(`throughput: ${Math.round(speed.perSecond).toLocaleString('en-US')} identifications/s in process (${speed.iterations.toLocaleString('en-US')} over ${typicalInputs.length} typical inputs)`)
console.log(`10,000-line dump (one hashes string): ${dump.milliseconds.toFixed(0)} ms, longest event-loop stall ${dump.stall.toFixed(1)} ms; the same lines in one go: ${dump.inOneGo.toFixed(0)} ms, stall ${dump.inOneGoStall.toFixed(1)} ms`)
console.log(`over HTTP, 10,000 bare 32-hex lines: ${httpDump.milliseconds.toFixed(0)} ms for ${(httpDump.bytes / 1e6).toFixed(1)} MB of JSON (client in another process), longest server event-loop stall ${httpDump.stall.toFixed(1)} ms`)
console.log('')
const row = (label: string, rates: HitRates): string => `${label.padEnd(40)}${percent(rates.top1)}   ${percent(rates.top3)}   ${percent(rates.top10)}`
const variantRows = formats.filter((format) => (format.variants ?? []).length > 0)
console.log(`${''.padEnd(40)}top-1   top-3   top-10`)
console.log(row('hashd (own mode or a listed variant)', hashd))
console.log(row('hashd strict (own mode only)', hashdStrict))
console.log(row('hashd flattened (variants in order)', hashdFlat))
if (typeof hashIdRankOf === 'string') console.log(`${'hashID'.padEnd(40)}${hashIdRankOf}`)
else console.log(row('hashID (every mode a separate line)', hitRates(hashIdRankOf)))
console.log('')
console.log('goals: top-10 ≥ 0.97, top-3 ≥ 0.85, top-1 ≥ 0.65 (ceiling 0.991); ≥ 50,000 identifications/s')
console.log(`variants: ${variantRows.length} rows stand for ${variantRows.reduce((sum, format) => sum + format.variants!.length, 0)} further hashcat modes that read the identical syntax`)
const md5Salted = formats.find((format) => format.hashcat === 10)
console.log(`(${md5Salted?.displayName} and ${md5Salted?.variants?.length ?? 0} others take \`32 hex:salt\`); the first line counts a hit when the`)
console.log('expected mode is the match\'s own or one it lists, the strict line only when it is the match\'s own.')

/**
 * `--misses`: every corpus entry whose expected mode is not in hashd's top 3 (with variants), with
 * its rank (or "none") and the top 3 it got, so the misses can be studied family by family.
 */
if (process.argv.includes('--misses')) {
  const label = (match: IdentifyMatch): string => `${match.hashcat ?? '-'} ${match.displayName} (${match.confidence})`
  const misses = corpus
    .map((entry) => {
      const matches = identify(entry.hash).matches
      return { entry, matches, rank: matches.findIndex((match) => covers(match, entry.hashcat, false)) }
    })
    .filter(({ rank }) => rank < 0 || rank >= 3)
    .sort((a, b) => (a.rank < 0 ? 1e9 : a.rank) - (b.rank < 0 ? 1e9 : b.rank) || a.entry.hashcat - b.entry.hashcat)
  console.log('')
  console.log(`misses (expected mode not in the top 3): ${misses.length}, of which ${misses.filter(({ rank }) => rank < 0 || rank >= 10).length} not in the top 10`)
  for (const { entry, matches, rank } of misses) {
    const where = rank < 0 ? 'none' : `#${rank + 1}`
    const shown = entry.hash.length > 90 ? `${entry.hash.slice(0, 87)}...` : entry.hash
    console.log(`  ${where.padStart(4)}  -m ${entry.hashcat} ${entry.name}: ${shown}`)
    console.log(`        got: ${matches.slice(0, 3).map(label).join(' | ') || '(nothing)'}`)
  }
}

/**
 * `--ceiling`: upper bounds on the flattened figures that no ordering of today's matches can pass.
 *
 * - A class is the corpus entries whose strings get exactly the same matches in the same order:
 *   nothing the engine reads in the string tells them apart (a feature it reads, such as a salt's
 *   length or a CRC's initial value, already shows as two classes), so whatever the order, a class
 *   has at most min(k, size) entries in the top k.
 * - A group (a match and its variants) is one syntax: at most one of its modes is ever first.
 * - The tested real-world rule fixes the first match of some strings: lowercase hex of the
 *   md5/sha1/sha224/sha256/sha384/sha512 lengths, 8 hex digits (CRC-32), and base64/base64url of
 *   16/20/32/64 bytes (test/identify.test.ts, test/identify-forms.test.ts). There only the match
 *   first today can be first.
 * The top-1 bound is a maximum matching between classes and groups under those constraints.
 */
if (process.argv.includes('--ceiling')) {
  const BASE64_DIGEST_LENGTHS = new Set([22, 24, 27, 28, 43, 44, 86, 88])
  const pinned = (hash: string): boolean =>
    (/^[0-9a-f]+$/.test(hash) && [32, 40, 56, 64, 96, 128].includes(hash.length))
    || /^[0-9a-fA-F]{8}$/.test(hash)
    || (/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(hash) && BASE64_DIGEST_LENGTHS.has(hash.length))
  const keyOf = (match: IdentifyMatch): string => `${match.algorithm}|${match.hashcat}|${match.displayName}|${match.format ?? ''}`
  const classes = new Map<string, number[]>()
  const edges = new Map<string, Set<string>>()
  const ranks: number[] = []
  for (const entry of corpus) {
    const matches = identify(entry.hash).matches
    const classKey = matches.map(keyOf).join('\n')
    ranks.push(flattenedModes(matches).indexOf(entry.hashcat))
    classes.set(classKey, [...(classes.get(classKey) ?? []), entry.hashcat])
    const at = matches.findIndex((match) => covers(match, entry.hashcat, false))
    if (at < 0 || (at > 0 && pinned(entry.hash))) continue
    edges.set(classKey, (edges.get(classKey) ?? new Set()).add(keyOf(matches[at]!)))
  }
  // Kuhn's augmenting paths: each class takes at most one group, each group leads at most once.
  const owner = new Map<string, string>()
  const augment = (classKey: string, seen: Set<string>): boolean => {
    for (const group of edges.get(classKey) ?? []) {
      if (seen.has(group)) continue
      seen.add(group)
      const holder = owner.get(group)
      if (holder === undefined || augment(holder, seen)) {
        owner.set(group, classKey)
        return true
      }
    }
    return false
  }
  let top1Bound = 0
  for (const classKey of edges.keys()) if (augment(classKey, new Set())) top1Bound += 1
  const share = (count: number): string => `${count} (${percent(count / corpus.length)})`
  console.log('')
  console.log(`ceiling (${classes.size} classes of entries with the same matches in the same order; ${[...classes.values()].filter((modes) => modes.length > 1).length} with more than one entry)`)
  for (const k of TOPS) {
    const now = ranks.filter((rank) => rank >= 0 && rank < k).length
    const byClass = [...classes.values()].reduce((sum, modes) => sum + Math.min(k, modes.length), 0)
    const extra = k === 1 ? `, with one lead per group and the tested rule ${share(top1Bound)}` : ''
    console.log(`  top-${k}: now ${share(now)}; bound by classes ${share(byClass)}${extra}`)
  }
  console.log('  classes with more than one entry (hashcat modes):')
  for (const modes of classes.values()) if (modes.length > 1) console.log(`    ${modes.join(' ')}`)
}
