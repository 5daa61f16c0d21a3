/**
 * `npm test`: runs every compiled test file with node's test runner, several files at once, then
 * says how complete the run was: which independent tools the cross-checks used and which they
 * skipped for want of a package (test/helpers/tools.ts).
 *
 *   node dist/scripts/test.js                         every file under dist/test
 *   node dist/scripts/test.js dist/test/hmac.test.js  just these
 *
 * HASHD_REQUIRE_TOOLS=1 (CI) turns a missing tool into a failure; HASHD_TEST_TOOLS=none pretends
 * nothing is installed. HASHD_TEST_JOBS=N runs at most N files at once (default: twice the CPUs,
 * at least 2); HASHD_TEST_JOBS=1 runs them one at a time, which gives each file's own time.
 *
 * Each file runs in a `node --test` process of its own, as before, and most of a file's time is
 * spent waiting on the servers and programs it starts, so files share the machine: each starts
 * its servers on free loopback ports (port 0), writes in its own temporary folders (mkdtemp) and
 * starts its own redis-server, Chromium and tools. The longest files start first (their times in
 * the last run, kept in test-artifacts/test-durations.json; a file with none starts before those
 * with one), so that no long file is left running alone at the end. Each file gets a temporary
 * folder of its own as TMPDIR (os.tmpdir() in the file), removed when it ends. A file's output is
 * printed whole when it ends, headed by its name, its time and the CPU time it took (its processes'
 * and their children's, from /proc/self/stat), so files never interleave.
 *
 * A file that must not share the machine says so in a comment line of its own at its top:
 *
 *     // runs alone: <why, in a few words>
 *
 * Such files run one at a time, before the others start, with no other file beside them. Mark a
 * file so when it measures time, memory or CPU of a process (a bound that a neighbour's load
 * would break), floods a server, needs a fixed port or changes the machine's network (namespaces,
 * links), or keeps every core busy for long. Everything else shares: a file that would clash with
 * another over a port, folder or outside server is fixed, not marked.
 *
 * The run ends with the slowest files, then the tools line, then the counts; CI reads the last two.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { availableParallelism, tmpdir } from 'node:os'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const testDir = join(here, '..', 'test')
const files = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(testDir).filter((name) => name.endsWith('.test.js')).sort().map((name) => join(testDir, name))

const jobs = Number(process.env.HASHD_TEST_JOBS ?? Math.max(2, 2 * availableParallelism()))
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`HASHD_TEST_JOBS must be a whole number of files at once, at least 1 (got ${process.env.HASHD_TEST_JOBS})`)
  process.exit(2)
}

// ── which files run alone, and in what order ────────────────────────────────────────────────────

/** The reason after `// runs alone:` in the file's first lines (tsc keeps comments), or null. */
function runsAlone(file: string): string | null {
  let head = ''
  try { head = readFileSync(file, 'utf8').slice(0, 4096) } catch { return null }
  return /^\/\/ runs alone: *(\S.*)$/m.exec(head)?.[1]?.trim() ?? null
}

// The last run's time of each file, by tool mode (a bare machine's run skips most of the work).
const durationsFile = join(here, '..', '..', 'test-artifacts', 'test-durations.json')
const mode = process.env.HASHD_TEST_TOOLS?.toLowerCase() === 'none' ? 'no-tools' : 'tools'
let durations: Record<string, Record<string, number>> = {}
try { durations = JSON.parse(readFileSync(durationsFile, 'utf8')) as typeof durations } catch { /* no run yet */ }
const known = durations[mode] ?? {}
const lastTime = (file: string): number => known[basename(file)] ?? Number.POSITIVE_INFINITY

const alone = new Map(files.map((file) => [file, runsAlone(file)]))
const longestFirst = (a: string, b: string) => lastTime(b) - lastTime(a) || (a < b ? -1 : 1)
const aloneFiles = files.filter((file) => alone.get(file) !== null).sort(longestFirst)
const sharedFiles = files.filter((file) => alone.get(file) === null).sort(longestFirst)

// ── running them ────────────────────────────────────────────────────────────────────────────────

const reportDir = mkdtempSync(join(tmpdir(), 'hashd-tools-'))
// Two reporters per file: spec for people, and test-counter.ts's JSON lines to a file of the
// file's own, from which the closing counts are taken.
const eventsDir = mkdtempSync(join(tmpdir(), 'hashd-events-'))
const counterReporter = join(here, 'test-counter.js')
// The spec reporter's closing summary of each file; the run ends with one summary for all.
const SPEC_SUMMARY = /^ℹ (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+\n/gm

/**
 * CPU seconds of this process's children that have ended so far (Linux: cutime + cstime of
 * /proc/self/stat, in USER_HZ = 100 ticks a second), or null where there is no /proc. A child's
 * own children count when it waited for them, so the difference across one file's end is that
 * file's CPU time (two files ending in the same turn of the event loop share theirs).
 */
function endedChildrenCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return null
  }
}

let cpuSoFar = endedChildrenCpuSeconds()

interface FileResult { file: string, seconds: number, cpuSeconds: number | null, code: number }
const results: FileResult[] = []
/** The files' processes still running, with their TMPDIR. */
const running = new Map<ChildProcess, string>()

function runFile(file: string, index: number, note: string): Promise<void> {
  const started = performance.now()
  const fileTmp = mkdtempSync(join(tmpdir(), 'hashd-test-'))
  const child = spawn(process.execPath, ['--test',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${counterReporter}`, `--test-reporter-destination=${join(eventsDir, `${index}.jsonl`)}`, file], {
    env: { ...process.env, HASHD_TOOL_REPORT_DIR: reportDir, TMPDIR: fileTmp },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own: whatever the file started can be ended with it (endGroup).
    detached: true,
  })
  running.set(child, fileTmp)
  const output: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => { output.push(chunk) })
  child.stderr.on('data', (chunk: Buffer) => { output.push(chunk) })
  let cpuSeconds: number | null = null
  child.on('exit', () => {
    // Anything the file left running ends with it (and lets go of its output pipes).
    endGroup(child, 'SIGKILL')
    const now = endedChildrenCpuSeconds()
    if (now !== null && cpuSoFar !== null) cpuSeconds = now - cpuSoFar
    cpuSoFar = now
  })
  return new Promise((resolve) => child.on('close', (exitCode, signal) => {
    running.delete(child)
    rmSync(fileTmp, { recursive: true, force: true })
    const seconds = (performance.now() - started) / 1000
    const code = exitCode ?? (signal ? 1 : 0)
    results.push({ file, seconds, cpuSeconds, code })
    const text = Buffer.concat(output).toString('utf8').replace(SPEC_SUMMARY, '')
    const cpu = cpuSeconds === null ? '' : `, CPU ${cpuSeconds.toFixed(1)} s`
    process.stdout.write(`── ${basename(file)} (${seconds.toFixed(1)} s${cpu}${note}${code === 0 ? '' : `, exit ${code}`})\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`)
    resolve()
  }))
}

/** Runs `queue` in order with at most `width` files at once. */
async function runPool(queue: string[], width: number, note: (file: string) => string): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < queue.length) {
      const index = next++
      const file = queue[index] as string
      await runFile(file, files.indexOf(file), note(file))
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, queue.length) }, worker))
}

/** Signals a file's process group: its `node --test`, the test process and what they started. */
function endGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try { process.kill(-(child.pid as number), signal) } catch { /* nothing left */ }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const [child, fileTmp] of running) {
      endGroup(child, 'SIGTERM')
      rmSync(fileTmp, { recursive: true, force: true })
    }
    for (const dir of [reportDir, eventsDir]) rmSync(dir, { recursive: true, force: true })
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

const runStarted = performance.now()
console.log(`test: ${files.length} files, ${sharedFiles.length} of them up to ${jobs} at once, ${aloneFiles.length} alone`)
await runPool(aloneFiles, 1, (file) => `, alone: ${alone.get(file)}`)
await runPool(sharedFiles, jobs, () => '')
const wall = (performance.now() - runStarted) / 1000

// ── the summary ─────────────────────────────────────────────────────────────────────────────────

for (const { file, seconds } of results) known[basename(file)] = Math.round(seconds * 10) / 10
durations[mode] = known
try {
  mkdirSync(dirname(durationsFile), { recursive: true })
  writeFileSync(durationsFile, `${JSON.stringify(durations, null, 2)}\n`)
} catch { /* a read-only tree: the next run orders by name */ }

const used = new Set<string>()
const missing = new Map<string, string>()
for (const file of readdirSync(reportDir)) {
  for (const line of readFileSync(join(reportDir, file), 'utf8').split('\n')) {
    const [name, state, debian] = line.split('\t')
    if (!name || !debian) continue
    if (state === 'used') used.add(name)
    else missing.set(name, debian)
  }
}
rmSync(reportDir, { recursive: true, force: true })

const outcomes = new Map<string, number>()
for (const eventsFile of readdirSync(eventsDir)) {
  for (const line of readFileSync(join(eventsDir, eventsFile), 'utf8').split('\n')) {
    if (line === '') continue
    const { outcome } = JSON.parse(line) as { outcome: string }
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
  }
}
rmSync(eventsDir, { recursive: true, force: true })

const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)
const cpuTotal = results.reduce((sum, { cpuSeconds }) => sum + (cpuSeconds ?? 0), 0)
console.log(`test: ${results.length} files in ${wall.toFixed(0)} s, ${jobs} at once${cpuSoFar === null ? '' : `, CPU ${cpuTotal.toFixed(0)} s`}; the slowest: `
  + slowest.map(({ file, seconds }) => `${basename(file, '.test.js')} ${seconds.toFixed(1)} s`).join(', '))
const failedFiles = results.filter(({ code }) => code !== 0).map(({ file }) => basename(file))
if (failedFiles.length > 0) console.log(`test: failed in ${failedFiles.sort().join(', ')}`)

const count = (outcome: 'pass' | 'fail' | 'skip' | 'todo' | 'cancelled'): number => outcomes.get(outcome) ?? 0
const skippedTools = [...missing].map(([name, debian]) => `${name} (Debian: ${debian})`)
console.log(`tools: used ${[...used].sort().join(', ') || 'none'}; skipped ${skippedTools.sort().join(', ') || 'none'}`
  + (skippedTools.length ? ' — bash scripts/install-test-tools.sh installs them' : ''))
const requireAll = process.env.HASHD_REQUIRE_TOOLS === '1' && process.env.HASHD_TEST_TOOLS?.toLowerCase() !== 'none'
if (requireAll && missing.size > 0) {
  console.log(`HASHD_REQUIRE_TOOLS=1 but ${missing.size} tool(s) are missing`)
  process.exitCode = 1
}
// A hook that throws cancels the tests after it: counted apart, and said only when it happened.
const cancelled = count('cancelled')
const todo = count('todo')
console.log(`tests: ${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped${todo ? `, ${todo} todo` : ''}${cancelled ? `, ${cancelled} cancelled` : ''}`)
const code = results.find((result) => result.code !== 0)?.code ?? 0
process.exitCode = code !== 0 ? code : process.exitCode ?? 0
