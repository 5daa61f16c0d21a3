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
 * Each file runs in a `node --test` process of its own, and most of a file's time is spent
 * waiting on the servers and programs it starts, so files share the machine: each starts its
 * servers on free loopback ports (port 0), writes in its own temporary folders (mkdtemp) and
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
 * More runs of the same files in the same pool (CI; .ci/run), HASHD_TEST_ALSO, comma-separated:
 *
 *   node=/path/to/bin/node   every file again under another Node (its folder first on PATH, so
 *                            the `node` and `npm` the tests start are that one's too)
 *   tools=none[@/path/node]  the run a bare machine sees (HASHD_TEST_TOOLS=none, missing tools
 *                            skip), under this Node or the one named: only the files that asked
 *                            for a tool in this run's first pass, each once its first pass has
 *                            ended. A file that never asks runs exactly as it did, so running it
 *                            again would prove nothing.
 *
 * Every run's files that run alone go first, one at a time; then every run's other files share
 * one pool of HASHD_TEST_JOBS, longest first, so that the runs overlap instead of queueing. With
 * HASHD_TEST_ALONE_DONE=<file>, the runner writes that file when the last file that runs alone
 * has ended: .ci/run waits for it before it starts the stages that load the machine.
 *
 * A file that fails in the pool runs once more, alone, after the pool (HASHD_TEST_RETRY=0: not);
 * that run is the one that counts, and a file that passed only alone is named at the end with its
 * first failure. A failing file's failing tests are printed again at the very end.
 *
 * The run ends with each run's line (its files, the time from its first start to its last end,
 * its CPU), the slowest files, then the tools line, then the counts of the runs with tools (every
 * run but tools=none, whose skips are its point and get a line of their own); CI reads the last two.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { availableParallelism, tmpdir } from 'node:os'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FUZZ_RUNS_DEFAULT, FUZZ_SEED_DEFAULT } from './fuzz-defaults.js'

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

// ── the runs ────────────────────────────────────────────────────────────────────────────────────

interface Run {
  /** '' for the first run; `node v24.1.0` or `no tools` for the others, in headings and lines. */
  label: string
  node: string
  env: NodeJS.ProcessEnv
  /** The key of its files' times in test-durations.json. */
  mode: string
  /** tools=none: only files whose first pass asked for a tool, once it has ended. */
  onlyToolUsers: boolean
}

const withoutTools = (env: NodeJS.ProcessEnv) => env.HASHD_TEST_TOOLS?.trim().toLowerCase() === 'none'
const first: Run = { label: '', node: process.execPath, env: process.env, mode: withoutTools(process.env) ? 'no-tools' : 'tools', onlyToolUsers: false }
const runs: Run[] = [first]
for (const spec of (process.env.HASHD_TEST_ALSO ?? '').split(',').map((each) => each.trim()).filter((each) => each !== '')) {
  const [name, value = ''] = spec.split(/=(.*)/s)
  if (name === 'node' && value !== '') {
    const version = (await collect(value, ['--version'])).trim()
    if (!/^v\d+\./.test(version)) {
      console.error(`HASHD_TEST_ALSO: node=${value} is not a Node binary (it said ${JSON.stringify(version)})`)
      process.exit(2)
    }
    // The property-based tests (test/helpers/fuzz.ts) search new ground under the other Node: the
    // next seed with half the cases, unless the caller chose either. The same seed twice would send
    // the same inputs again; this way the two Nodes together try half as many cases again.
    const seed = Number(process.env.HASHD_FUZZ_SEED ?? FUZZ_SEED_DEFAULT) + runs.length
    const fuzzRuns = process.env.HASHD_FUZZ_RUNS ?? String(Math.ceil(FUZZ_RUNS_DEFAULT / 2))
    const env = { ...process.env, PATH: `${dirname(value)}${delimiter}${process.env.PATH ?? ''}`, HASHD_FUZZ_SEED: String(seed), HASHD_FUZZ_RUNS: fuzzRuns }
    runs.push({ label: `node ${version}`, node: value, env, mode: `tools@${version.split('.')[0]}`, onlyToolUsers: false })
  } else if (name === 'tools' && /^none(@.+)?$/.test(value) && !withoutTools(process.env)) {
    // tools=none@<node>: the bare machine's run under that Node (a new user's is likely the current LTS).
    const node = value.startsWith('none@') ? value.slice('none@'.length) : process.execPath
    const version = node === process.execPath ? process.version : (await collect(node, ['--version'])).trim()
    const env = { ...process.env, HASHD_TEST_TOOLS: 'none', PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` }
    runs.push({ label: `no tools${node === process.execPath ? '' : `, node ${version}`}`, node, env, mode: 'no-tools', onlyToolUsers: true })
  } else {
    console.error(`HASHD_TEST_ALSO: ${JSON.stringify(spec)} is neither node=<path to a node binary> nor tools=none[@<path to a node binary>]`)
    process.exit(2)
  }
}

/** A program's stdout (to ask a Node binary its version). */
function collect(program: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'ignore'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => { out += String(chunk) })
    child.on('error', () => resolve(''))
    child.on('close', () => resolve(out))
  })
}

// ── which files run alone, and in what order ────────────────────────────────────────────────────

/** The reason after `// runs alone:` in the file's first lines (tsc keeps comments), or null. */
function runsAlone(file: string): string | null {
  let head = ''
  try { head = readFileSync(file, 'utf8').slice(0, 4096) } catch { return null }
  return /^\/\/ runs alone: *(\S.*)$/m.exec(head)?.[1]?.trim() ?? null
}

// The last run's time of each file, by run (a bare machine's run skips most of the work); in a
// fresh clone, the times committed beside this script (copied from a full CI run), so that CI's
// own first run starts its longest files first too.
const durationsFile = join(here, '..', '..', 'test-artifacts', 'test-durations.json')
const committedDurations = join(here, '..', '..', 'scripts', 'test-durations.json')
let durations: Record<string, Record<string, number>> = {}
for (const candidate of [durationsFile, committedDurations]) {
  try {
    durations = JSON.parse(readFileSync(candidate, 'utf8')) as typeof durations
    break
  } catch { /* not there: the next, else names in order */ }
}
// A run with no time for a file (another Node's first run) takes the first run's: the same work.
const lastTime = (task: Task): number =>
  durations[task.run.mode]?.[basename(task.file)] ?? durations[first.mode]?.[basename(task.file)] ?? Number.POSITIVE_INFINITY
const alone = new Map(files.map((file) => [file, runsAlone(file)]))

interface Task { run: Run, file: string, index: number }
interface FileResult { task: Task, started: number, seconds: number, cpuSeconds: number | null, code: number, askedForTools: boolean, failures: string }

/**
 * What a failed file said about its failures: the spec reporter's closing "failing tests" list, or
 * else the output's last lines (a file that crashed before reporting), at most 80 lines. It is
 * printed again at the very end, where a CI log cut to its tail still shows it.
 */
function failuresOf(text: string): string {
  const start = text.lastIndexOf('✖ failing tests:')
  const lines = (start >= 0 ? text.slice(start) : text).trimEnd().split('\n')
  return (start >= 0 ? lines.slice(0, 80) : lines.slice(-80)).join('\n')
}

let taskCount = 0
const task = (run: Run, file: string): Task => ({ run, file, index: taskCount++ })
/** A task as the closing lines name it: its file, after its run's label when it has one. */
const taskName = (job: Task): string => `${job.run.label ? `[${job.run.label}] ` : ''}${basename(job.file)}`
const longestFirst = (a: Task, b: Task) => lastTime(b) - lastTime(a) || (a.file < b.file ? -1 : a.file > b.file ? 1 : runs.indexOf(a.run) - runs.indexOf(b.run))

// ── running them ────────────────────────────────────────────────────────────────────────────────

const reportRoot = mkdtempSync(join(tmpdir(), 'hashd-tools-'))
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
const runStarted = performance.now()
const results: FileResult[] = []
/** The files' processes still running, with their TMPDIR. */
const running = new Map<ChildProcess, string>()

function runFile(job: Task, note: string): Promise<FileResult> {
  const { run, file, index } = job
  const started = performance.now()
  const fileTmp = mkdtempSync(join(tmpdir(), 'hashd-test-'))
  // The tools this file asks for, in a folder of its own: whether it asked decides its tools=none pass.
  const reportDir = join(reportRoot, String(index))
  mkdirSync(reportDir)
  const child = spawn(run.node, ['--test',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${counterReporter}`, `--test-reporter-destination=${join(eventsDir, `${index}.jsonl`)}`, file], {
    env: { ...run.env, HASHD_TOOL_REPORT_DIR: reportDir, TMPDIR: fileTmp },
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
    const askedForTools = readdirSync(reportDir).length > 0
    const text = Buffer.concat(output).toString('utf8').replace(SPEC_SUMMARY, '')
    const failures = code === 0 ? '' : failuresOf(text)
    const result = { task: job, started: (started - runStarted) / 1000, seconds, cpuSeconds, code, askedForTools, failures }
    results.push(result)
    const cpu = cpuSeconds === null ? '' : `, CPU ${cpuSeconds.toFixed(1)} s`
    const heading = run.label === '' ? basename(file) : `[${run.label}] ${basename(file)}`
    process.stdout.write(`── ${heading} (${seconds.toFixed(1)} s${cpu}${note}${code === 0 ? '' : `, exit ${code}`})\n${text}${text.endsWith('\n') || text === '' ? '' : '\n'}`)
    resolve(result)
  }))
}

/**
 * Runs the tasks with at most `width` at once, longest first. A tools=none task waits until its
 * file's first pass has ended (other tasks go meanwhile), and is left out when that pass asked for
 * no tool.
 */
async function runPool(tasks: Task[], width: number, note: (job: Task) => string): Promise<void> {
  const pending = [...tasks].sort(longestFirst)
  const firstPassHere = new Set(tasks.filter((job) => job.run === first).map((job) => job.file))
  /** Whether each first pass that ended here asked for a tool. */
  const firstPassAsked = new Map<string, boolean>()
  const ready = (job: Task) => !job.run.onlyToolUsers || !firstPassHere.has(job.file) || firstPassAsked.has(job.file)
  let wake: () => void = () => {}
  const worker = async (): Promise<void> => {
    while (pending.length > 0) {
      const at = pending.findIndex(ready)
      if (at === -1) {
        // Only tools=none tasks are left, and their first passes are still running: wait for one.
        await new Promise<void>((resolve) => { const before = wake; wake = () => { before(); resolve() } })
        continue
      }
      const job = pending.splice(at, 1)[0] as Task
      if (job.run.onlyToolUsers && !(firstPassAsked.get(job.file) ?? toolUsersBefore.has(basename(job.file)))) {
        skippedSame.push(job)
        continue
      }
      const result = await runFile(job, note(job))
      if (job.run === first) {
        firstPassAsked.set(job.file, result.askedForTools)
        const woken = wake
        wake = () => {}
        woken()
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker))
}

/** tools=none tasks left out: their file asked for no tool in its first pass. */
const skippedSame: Task[] = []
/** Files whose first pass, in an earlier phase, asked for a tool (the alone phase feeds the pool's). */
const toolUsersBefore = new Set<string>()

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
    for (const dir of [reportRoot, eventsDir]) rmSync(dir, { recursive: true, force: true })
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

const aloneTasks = runs.flatMap((run) => files.filter((file) => alone.get(file) !== null).map((file) => task(run, file)))
const sharedTasks = runs.flatMap((run) => files.filter((file) => alone.get(file) === null).map((file) => task(run, file)))
console.log(`test: ${files.length} files, ${sharedTasks.length / runs.length} of them up to ${jobs} at once, ${aloneTasks.length / runs.length} alone`
  + (runs.length > 1 ? `; runs: ${runs.map((run) => run.label || `node ${process.version}`).join('; ')}` : ''))
// Alone: one at a time, each run's in turn (a tools=none one after its first pass, which came before it).
await runPool(aloneTasks.filter((job) => !job.run.onlyToolUsers), 1, (job) => `, alone: ${alone.get(job.file)}`)
for (const result of results) if (result.askedForTools) toolUsersBefore.add(basename(result.task.file))
const aloneWithoutTools = aloneTasks.filter((job) => job.run.onlyToolUsers)
await runPool(aloneWithoutTools.filter((job) => toolUsersBefore.has(basename(job.file))), 1, (job) => `, alone: ${alone.get(job.file)}`)
skippedSame.push(...aloneWithoutTools.filter((job) => !toolUsersBefore.has(basename(job.file))))
if (process.env.HASHD_TEST_ALONE_DONE) writeFileSync(process.env.HASHD_TEST_ALONE_DONE, `${new Date().toISOString()}\n`)
await runPool(sharedTasks, jobs, () => '')
// A file that failed beside other files runs once more, alone, on a quiet machine (HASHD_TEST_RETRY=0:
// not). Its second run is the one that counts: a file that fails alone too has failed; one that
// passes alone was held back by the load (a timing bound, a slow server start), and its first
// failure is printed again at the end, under "passed alone", so that it is seen and fixed.
const passedAlone: FileResult[] = []
if (process.env.HASHD_TEST_RETRY !== '0') {
  for (const failed of results.filter((result) => result.code !== 0 && alone.get(result.task.file) === null)) {
    const again = await runFile(task(failed.task.run, failed.task.file), ', again and alone: it failed beside other files')
    results.splice(results.indexOf(failed), 1)
    if (again.code === 0) passedAlone.push(failed)
  }
}
const wall = (performance.now() - runStarted) / 1000

// ── the summary ─────────────────────────────────────────────────────────────────────────────────

for (const { task: { run, file }, seconds } of results) {
  durations[run.mode] = { ...durations[run.mode], [basename(file)]: Math.round(seconds * 10) / 10 }
}
try {
  mkdirSync(dirname(durationsFile), { recursive: true })
  writeFileSync(durationsFile, `${JSON.stringify(durations, null, 2)}\n`)
} catch { /* a read-only tree: the next run orders by name */ }

/** The tools each run used and missed, from the files' reports. */
function toolsOf(run: Run): { used: Set<string>, missing: Map<string, string> } {
  const used = new Set<string>()
  const missing = new Map<string, string>()
  for (const { task: job } of results.filter((result) => result.task.run === run)) {
    const dir = join(reportRoot, String(job.index))
    if (!existsSync(dir)) continue
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
        const [name, state, debian] = line.split('\t')
        if (!name || !debian) continue
        if (state === 'used') used.add(name)
        else missing.set(name, debian)
      }
    }
  }
  return { used, missing }
}

/** Outcome counts (pass, fail, skip, todo, cancelled) of a run's files, from test-counter.ts. */
function outcomesOf(run: Run): Map<string, number> {
  const outcomes = new Map<string, number>()
  for (const { task: job } of results.filter((result) => result.task.run === run)) {
    const eventsFile = join(eventsDir, `${job.index}.jsonl`)
    if (!existsSync(eventsFile)) continue
    for (const line of readFileSync(eventsFile, 'utf8').split('\n')) {
      if (line === '') continue
      const { outcome } = JSON.parse(line) as { outcome: string }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
    }
  }
  return outcomes
}

const countsLine = (outcomes: Map<string, number>): string => {
  const count = (outcome: 'pass' | 'fail' | 'skip' | 'todo' | 'cancelled'): number => outcomes.get(outcome) ?? 0
  // A hook that throws cancels the tests after it: counted apart, and said only when it happened.
  const cancelled = count('cancelled')
  const todo = count('todo')
  return `${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped${todo ? `, ${todo} todo` : ''}${cancelled ? `, ${cancelled} cancelled` : ''}`
}
const merge = (maps: Map<string, number>[]): Map<string, number> => {
  const all = new Map<string, number>()
  for (const map of maps) for (const [key, value] of map) all.set(key, (all.get(key) ?? 0) + value)
  return all
}

const cpuOf = (list: FileResult[]) => list.reduce((sum, { cpuSeconds }) => sum + (cpuSeconds ?? 0), 0)
for (const run of runs) {
  const own = results.filter((result) => result.task.run === run)
  if (own.length === 0) continue
  const from = Math.min(...own.map((result) => result.started))
  const to = Math.max(...own.map((result) => result.started + result.seconds))
  const left = run.onlyToolUsers ? `, ${skippedSame.length} left out (they ask for no tool, so they ran as in the first pass)` : ''
  const failed = own.filter(({ code }) => code !== 0).map(({ task: job }) => basename(job.file)).sort()
  console.log(`test[${run.label || `node ${process.version}`}]: ${own.length} files${left}, from ${from.toFixed(0)} s to ${to.toFixed(0)} s`
    + `${cpuSoFar === null ? '' : `, CPU ${cpuOf(own).toFixed(0)} s`}${failed.length ? `; failed in ${failed.join(', ')}` : ''}`)
  if (run.onlyToolUsers) {
    const { missing } = toolsOf(run)
    console.log(`tests[${run.label}]: ${countsLine(outcomesOf(run))} (a bare machine's run: ${missing.size} tools missing, as meant)`)
  }
}
const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)
console.log(`test: ${results.length} files in ${wall.toFixed(0)} s, ${jobs} at once${cpuSoFar === null ? '' : `, CPU ${cpuOf(results).toFixed(0)} s`}; the slowest: `
  + slowest.map(({ task: job, seconds }) => `${job.run.label ? `[${job.run.label}] ` : ''}${basename(job.file, '.test.js')} ${seconds.toFixed(1)} s`).join(', '))
const failedFiles = results.filter(({ code }) => code !== 0).map(({ task: job }) => taskName(job))
for (const { task: job, failures } of results.filter(({ code }) => code !== 0)) {
  console.log(`── failed: ${taskName(job)}\n${failures}`)
}
for (const { task: job, failures } of passedAlone) {
  console.log(`── failed beside other files, then passed alone: ${taskName(job)}\n${failures}`)
}
if (passedAlone.length > 0) {
  console.log(`test: passed alone after failing beside other files (a test the load decides: fix its bound): ${passedAlone.map(({ task: job }) => taskName(job)).sort().join(', ')}`)
}
if (failedFiles.length > 0) console.log(`test: failed in ${failedFiles.sort().join(', ')}`)

// The closing lines speak for the runs with tools (every one but tools=none, which had its line).
const withTools = runs.filter((run) => !run.onlyToolUsers)
const used = new Set<string>()
const missing = new Map<string, string>()
for (const run of withTools) {
  const tools = toolsOf(run)
  for (const name of tools.used) used.add(name)
  for (const [name, debian] of tools.missing) missing.set(name, debian)
}
rmSync(reportRoot, { recursive: true, force: true })
const skippedTools = [...missing].map(([name, debian]) => `${name} (Debian: ${debian})`)
console.log(`tools: used ${[...used].sort().join(', ') || 'none'}; skipped ${skippedTools.sort().join(', ') || 'none'}`
  + (skippedTools.length ? ' — bash scripts/install-test-tools.sh installs them' : ''))
const requireAll = process.env.HASHD_REQUIRE_TOOLS === '1' && !withoutTools(process.env)
if (requireAll && missing.size > 0) {
  console.log(`HASHD_REQUIRE_TOOLS=1 but ${missing.size} tool(s) are missing`)
  process.exitCode = 1
}
const totals = merge(withTools.map(outcomesOf))
// The closing lines as node's spec reporter prints them (each file's own were taken out of its
// output), for readers of a CI log that know node's test runner, then the plain line, last.
const total = (outcome: string): number => totals.get(outcome) ?? 0
const tests = ['pass', 'fail', 'skip', 'todo', 'cancelled'].reduce((sum, outcome) => sum + total(outcome), 0)
console.log([`ℹ tests ${tests}`, `ℹ suites ${total('suite')}`, `ℹ pass ${total('pass')}`, `ℹ fail ${total('fail')}`,
  `ℹ cancelled ${total('cancelled')}`, `ℹ skipped ${total('skip')}`, `ℹ todo ${total('todo')}`,
  `ℹ duration_ms ${Math.round(wall * 1000)}`].join('\n'))
console.log(`tests: ${countsLine(totals)}`)
rmSync(eventsDir, { recursive: true, force: true })
const code = results.find((result) => result.code !== 0)?.code ?? 0
process.exitCode = code !== 0 ? code : process.exitCode ?? 0
