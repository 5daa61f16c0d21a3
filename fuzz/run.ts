/**
 * `npm run fuzz`: coverage-guided fuzzing of hashd's parsers with Jazzer.js (libFuzzer inside
 * Node), each target for a bounded time.
 *
 *   npm run fuzz                          every target, FUZZ_SECONDS (45) each
 *   npm run fuzz -- multipart 300         one target, for 300 s
 *   npm run fuzz -- --regression          every target over its corpus and findings once, no fuzzing
 *   npm run fuzz -- --list                the targets
 *
 * FUZZ_JOBS=N runs N targets at once (default 1), each in its own process on its own core; their
 * output is then printed whole as each target ends, so targets never interleave.
 *
 * A target fails on a crash (an exception other than its parser's documented refusal, or a broken
 * invariant), on an input that runs longer than INPUT_TIMEOUT_MS, or when the process passes
 * RSS_LIMIT_MB (or V8's heap limit). The input that did it is written to
 * test-artifacts/fuzz/<target>/ and named in the output; the run's new corpus entries go to
 * test-artifacts/fuzz/<target>/corpus/, and its whole log to test-artifacts/fuzz/<target>.log.
 * The exit status is 1 when any target failed.
 */
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { INPUT_TIMEOUT_MS, RSS_LIMIT_MB, TARGETS, targetNamed, type FuzzTarget } from './targets.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const jazzer = join(root, 'node_modules', '@jazzer.js', 'core', 'dist', 'cli.js')
const artifactsRoot = join(root, 'test-artifacts', 'fuzz')

interface Outcome {
  target: string
  status: 'passed' | 'failed'
  exitCode: number
  seconds: number
  runs?: number
  execPerSecond?: number
  coverage?: number
  features?: number
  corpus?: string
  seeds?: number
  newUnits?: number
  peakRssMb?: number
  artifact?: string
  reason?: string
}

function usage(): never {
  console.error('usage: npm run fuzz [-- <target> [seconds] | --regression | --list]')
  process.exit(2)
}

const args = process.argv.slice(2)
if (args.includes('--list')) {
  for (const target of TARGETS) console.log(`${target.name.padEnd(18)} ${target.about}`)
  process.exit(0)
}
const regression = args.includes('--regression')
const positional = args.filter((arg) => !arg.startsWith('--'))
const chosen = positional[0] === undefined ? TARGETS : [targetNamed(positional[0]) ?? usage()]
const seconds = Number(positional[1] ?? process.env.FUZZ_SECONDS ?? 45)
if (!Number.isInteger(seconds) || seconds < 1) usage()
const jobs = Number(process.env.FUZZ_JOBS ?? 1)
if (!Number.isInteger(jobs) || jobs < 1) usage()

// The native addon: prebuilt where it loads, else built here (fuzz/native/build-addon.sh).
const built = spawnSync('bash', [join(root, 'fuzz', 'native', 'build-addon.sh')], { stdio: 'inherit' })
if (built.status !== 0) process.exit(1)
const jazzerVersion = (JSON.parse(readFileSync(join(root, 'node_modules', '@jazzer.js', 'core', 'package.json'), 'utf8')) as { version: string }).version
console.log(`fuzz: Jazzer.js ${jazzerVersion} on Node ${process.version}`)

/** The last value of `name: <number>` in libFuzzer's status lines and final stats. */
function lastNumber(text: string, pattern: RegExp): number | undefined {
  let value: number | undefined
  for (const match of text.matchAll(pattern)) value = Number(match[1])
  return value
}

async function run(target: FuzzTarget): Promise<Outcome> {
  const artifacts = join(artifactsRoot, target.name)
  const workCorpus = join(artifacts, 'corpus')
  rmSync(artifacts, { recursive: true, force: true })
  mkdirSync(workCorpus, { recursive: true })
  const corpora = [join(root, 'fuzz', 'corpus', target.name), join(root, 'fuzz', 'findings', target.name)].filter((dir) => existsSync(dir))
  const seeds = corpora.reduce((count, dir) => count + readdirSync(dir).length, 0)
  const command = [
    // V8's heap limit, so that a blow-up ends as a crash (SIGABRT, caught by libFuzzer) and not in swap.
    '--max-old-space-size=1536', jazzer, join(root, 'dist', 'fuzz', 'targets', `${target.name}.js`),
    // The first corpus directory receives the new entries; the checked-in ones are only read.
    workCorpus, ...corpora,
    ...(target.sync ? ['--sync'] : []),
    ...target.includes.flatMap((include) => ['--includes', join(root, include)]),
    '--excludes', join(root, 'dist', 'fuzz'),
    `--timeout=${INPUT_TIMEOUT_MS}`,
    '--',
    ...(regression ? ['-runs=0'] : [`-max_total_time=${seconds}`]),
    `-max_len=${target.maxLen}`, `-rss_limit_mb=${RSS_LIMIT_MB}`,
    `-artifact_prefix=${artifacts}/`, '-print_final_stats=1',
  ]
  const logFile = join(artifactsRoot, `${target.name}.log`)
  // One target at a time: its lines as they come. Several: each target's lines at its end.
  const held: string[] = []
  const say = (line: string) => { if (jobs === 1) console.log(line); else held.push(line) }
  say(`fuzz: ── ${target.name} (${regression ? 'corpus only' : `${seconds} s`}, ${seeds} seeds): ${target.about}`)
  const started = Date.now()
  // The child writes to a file, not a pipe: Node makes its pipes non-blocking, and libFuzzer's
  // writes to a full one would be lost (a long input's hex dump cut off mid-line).
  const logFd = openSync(logFile, 'w')
  const child = spawn(process.execPath, command, { cwd: root, stdio: ['ignore', logFd, logFd] })
  closeSync(logFd)
  let shown = 0
  let pending = ''
  let inDictionary = false
  // The status lines (NEW, REDUCE, pulse) and the recommended dictionary stay in the log; the rest
  // is shown as it comes.
  const show = (final: boolean) => {
    const text = readFileSync(logFile, 'latin1')
    const lines = (pending + text.slice(shown)).split('\n')
    shown = text.length
    pending = final ? '' : lines.pop() ?? ''
    for (const line of lines) {
      if (line.startsWith('###### Recommended dictionary')) inDictionary = true
      if (!inDictionary && line !== '' && !/^#\d+\s+(NEW|REDUCE|pulse)\s/.test(line)) say(`  ${line}`)
      if (line.startsWith('###### End of recommended dictionary')) inDictionary = false
    }
  }
  const tail = setInterval(() => show(false), 500)
  const exitCode: number = await new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1))))
  clearInterval(tail)
  show(true)
  if (held.length > 0) console.log(held.join('\n'))
  const output = readFileSync(logFile, 'latin1')
  // What libFuzzer wrote for a failure (crash-, timeout-, oom-…; a slow-unit- file is only a note).
  const artifact = readdirSync(artifacts).find((name) => /^(crash|timeout|oom|leak)-/.test(name))
  const reason = /==\d+== (ERROR: libFuzzer: [^\n]+|Uncaught Exception: [^\n]+)/.exec(output)?.[1] ?? /SUMMARY: ([^\n]+)/.exec(output)?.[1]
  return {
    target: target.name,
    status: exitCode === 0 ? 'passed' : 'failed',
    exitCode,
    seconds: Math.round((Date.now() - started) / 1000),
    runs: lastNumber(output, /stat::number_of_executed_units:\s+(\d+)/g),
    execPerSecond: lastNumber(output, /stat::average_exec_per_sec:\s+(\d+)/g),
    coverage: lastNumber(output, /\bcov: (\d+)/g),
    features: lastNumber(output, /\bft: (\d+)/g),
    corpus: [...output.matchAll(/\bcorp: (\S+)/g)].at(-1)?.[1],
    seeds,
    newUnits: lastNumber(output, /stat::new_units_added:\s+(\d+)/g),
    peakRssMb: lastNumber(output, /stat::peak_rss_mb:\s+(\d+)/g),
    ...(artifact ? { artifact: relative(root, join(artifacts, artifact)) } : {}),
    ...(reason ? { reason } : {}),
  }
}

mkdirSync(artifactsRoot, { recursive: true })
const outcomes: Outcome[] = []
let next = 0
const worker = async () => {
  while (next < chosen.length) {
    const index = next++
    outcomes[index] = await run(chosen[index] as FuzzTarget)
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, chosen.length) }, worker))

console.log('fuzz: summary (cov: libFuzzer\'s coverage counters hit; ft: its features; corp: entries/bytes)')
for (const outcome of outcomes) {
  const figures = [
    `${outcome.seconds} s`, `${outcome.runs ?? '?'} runs`, `${outcome.execPerSecond ?? '?'} exec/s`,
    `cov ${outcome.coverage ?? '?'}`, `ft ${outcome.features ?? '?'}`, `corp ${outcome.corpus ?? '?'} (${outcome.seeds} seeds, ${outcome.newUnits ?? 0} new)`,
    `rss ${outcome.peakRssMb ?? '?'} MB`,
  ].join(', ')
  console.log(`  ${outcome.status === 'passed' ? 'ok  ' : 'FAIL'} ${outcome.target.padEnd(18)} ${figures}`)
  if (outcome.status === 'failed') {
    console.log(`       exit ${outcome.exitCode}: ${outcome.reason ?? 'see the log'}`)
    if (outcome.artifact) console.log(`       input: ${outcome.artifact} (copy it to fuzz/findings/${outcome.target}/ to keep it as a regression test)`)
  }
}
const failed = outcomes.filter((outcome) => outcome.status === 'failed').length
console.log(`fuzz: ${outcomes.length - failed} passed, ${failed} failed`)
process.exit(failed > 0 ? 1 : 0)
