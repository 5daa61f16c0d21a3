/**
 * The ReDoS verdict on one regular expression, from `recheck` (npm; the trustworthy ReDoS
 * checker, makenowjust-labs/recheck), in two stages:
 *
 * 1. **The pattern with its counted repetitions opened** (`x{3,16384}` → `x+`, `x{0,2}` → `x*`),
 *    through recheck's automaton checker, which decides exactly. Opening a bound only adds ways to
 *    match (every backtracking path of the counted pattern is one of the opened pattern's), so an
 *    opened pattern that is safe vouches for the original, in milliseconds where recheck's fuzzer
 *    takes seconds on bounds like 16,384.
 * 2. Otherwise **the pattern itself**, with recheck's default checker (the automaton where the
 *    pattern is small, else the fuzzer, which runs attack strings it builds on a backtracking VM).
 *    This is where the verdict on a flagged pattern comes from, and where patterns whose opened
 *    form is ambiguous only past their bounds (a 22-character salt then a 31-character checksum of
 *    one alphabet) are cleared.
 *
 * recheck runs as its native binary (the package's optional dependency recheck-linux-x64, and
 * its macOS and Windows peers, installed by npm from the registry like any package), else its jar
 * (recheck-jar) where `java` is on PATH. Its third backend, a pure JavaScript build in one worker
 * thread, is some eight times slower (tens of minutes for the whole set): `recheckBackend` says
 * which one this machine has, so the gate can skip with the reason instead (test/redos.test.ts).
 * Verdicts are cached in node_modules/.cache/hashd-redos.json, by recheck version, stage, flags
 * and source, so a second run checks only the patterns that changed; a clean checkout (CI) checks
 * them all.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Diagnostics, Parameters } from 'recheck'

const require = createRequire(import.meta.url)
const recheck = require('recheck') as typeof import('recheck')
const RECHECK_VERSION = (require('recheck/package.json') as { version: string }).version

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const CACHE_FILE = join(repoRoot, 'node_modules', '.cache', 'hashd-redos.json')

/** recheck's platform names (its own lookup of the binary, recheck/lib/main.js). */
const PLATFORMS: Record<string, string> = { darwin: 'macos', linux: 'linux', win32: 'windows' }
/** The optional package that carries the native binary for this machine. */
export const NATIVE_PACKAGE = `recheck-${PLATFORMS[process.platform] ?? process.platform}-${process.arch}`

function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore', timeout: 60_000 }).status === 0
}

/**
 * The backend recheck will use here, which this sets through RECHECK_BACKEND: `native` when its
 * binary is installed and runs, `java` when its jar is and `java` runs it, else `pure` (slow).
 * A RECHECK_BACKEND set by the caller is kept.
 */
export function recheckBackend(): 'native' | 'java' | 'pure' {
  const chosen = process.env.RECHECK_BACKEND
  if (chosen === 'native' || chosen === 'java') return chosen
  if (chosen === 'worker' || chosen === 'pure') return 'pure'
  let binary: string | undefined
  try {
    binary = process.env.RECHECK_BIN ?? join(dirname(require.resolve(`${NATIVE_PACKAGE}/package.json`)), process.platform === 'win32' ? 'recheck.exe' : 'recheck')
  } catch { /* no native package for this platform */ }
  if (binary !== undefined && runs(binary, ['/^a$/'])) {
    process.env.RECHECK_BACKEND = 'native'
    return 'native'
  }
  let jar: string | undefined
  try {
    jar = process.env.RECHECK_JAR ?? join(dirname(require.resolve('recheck-jar/package.json')), 'recheck.jar')
  } catch { /* no jar */ }
  if (jar !== undefined && runs('java', ['-jar', jar, '/^a$/'])) {
    process.env.RECHECK_BACKEND = 'java'
    return 'java'
  }
  return 'pure'
}

export interface Verdict {
  status: 'safe' | 'vulnerable' | 'unknown'
  /** On `vulnerable`: polynomial (with its degree) or exponential. */
  complexity?: 'polynomial' | 'exponential'
  degree?: number
  /** recheck's attack string, as a JavaScript expression (`')' + '\t'.repeat(54773) + '\x00'`). */
  attack?: string
  /** On `unknown`: why (timeout, an unsupported construct). */
  error?: string
  /** On `safe`: the fuzzer first called it vulnerable, with this attack, and did not with longer clocks. */
  firstAttack?: string
  /** Which stage decided: the opened pattern (automaton), or the pattern itself. */
  stage: 'opened' | 'exact'
}

/** The opened pattern is small and exact; a stuck automaton gives way to the exact stage. */
const OPENED_PARAMS: Parameters = { checker: 'automaton', timeout: 10_000 }
/** The fuzzer needs time on long bounded patterns, more on a loaded machine: an `unknown` is a failure. */
const EXACT_PARAMS: Parameters = { timeout: 120_000 }
/**
 * The fuzzer judges an attack partly by the time its VM takes on it (`incubationTimeout` 250 ms
 * while breeding, `attackTimeout` 1 s on the attack), so a loaded machine can make a linear pattern
 * look polynomial: in one CI run it called the filehash `algorithms` list (69 names, too large for
 * the automaton) polynomial on a 122,000-character attack that V8 matches in under 2 ms, and the
 * same check on a quiet machine says safe. So a fuzzer's `vulnerable` is asked again with clocks
 * four times as long (the seed is recheck's fixed one): a pattern that is vulnerable is found again
 * (its attacks grow past any clock), a clock's false alarm is not. Turning the clocks off is no cure:
 * the fuzzer then runs a vulnerable pattern to its 120 s limit and answers `unknown`.
 */
const SECOND_OPINION_PARAMS: Parameters = { timeout: 240_000, incubationTimeout: 1_000, attackTimeout: 4_000 }

/**
 * `source` with every counted repetition opened: `{n}`, `{n,m}` and `{n,}` become `+` (n ≥ 1) or
 * `*` (n = 0); a lazy `?` after one stays. Classes, escapes (`\{`, `\u{…}` and `\p{…}` under `u`/`v`)
 * and a `{` that is not a quantifier are kept as they are.
 */
export function openRepetitions(source: string, flags: string): string {
  const unicode = /[uv]/.test(flags)
  let out = ''
  let inClass = false
  for (let index = 0; index < source.length;) {
    const char = source[index]!
    if (char === '\\') {
      const next = source[index + 1] ?? ''
      if (unicode && 'upP'.includes(next) && source[index + 2] === '{') {
        const close = source.indexOf('}', index)
        out += source.slice(index, close + 1)
        index = close + 1
      } else {
        out += source.slice(index, index + 2)
        index += 2
      }
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      out += char
      index += 1
      continue
    }
    if (char === '[') {
      inClass = true
      out += char
      index += 1
      if (source[index] === '^') out += source[index++]
      if (source[index] === ']') out += source[index++]
      continue
    }
    if (char === '{') {
      const counted = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(index))
      if (counted) {
        out += Number(counted[1]) > 0 ? '+' : '*'
        index += counted[0].length
        continue
      }
    }
    out += char
    index += 1
  }
  return out
}

type Stored = Omit<Verdict, 'stage'>

function summarize(diagnostics: Diagnostics): Stored {
  if (diagnostics.status === 'safe') return { status: 'safe' }
  if (diagnostics.status === 'unknown') return { status: 'unknown', error: diagnostics.error.kind + ('message' in diagnostics.error ? `: ${diagnostics.error.message}` : '') }
  const { complexity } = diagnostics
  return {
    status: 'vulnerable',
    complexity: complexity.type,
    ...(complexity.type === 'polynomial' ? { degree: complexity.degree } : {}),
    attack: diagnostics.attack.pattern,
  }
}

export class RedosChecker {
  readonly #cache: Record<string, Stored>
  #changed = false
  /** How many recheck runs the last `verdicts` call made (the rest came from the cache). */
  ran = 0

  constructor() {
    try {
      this.#cache = JSON.parse(readFileSync(CACHE_FILE, 'utf8')) as Record<string, Stored>
    } catch {
      this.#cache = {}
    }
  }

  async #run(stage: 'opened' | 'exact', source: string, flags: string): Promise<Stored> {
    const key = createHash('sha256').update(JSON.stringify([RECHECK_VERSION, stage, flags, source])).digest('base64url')
    const known = this.#cache[key]
    if (known) return known
    this.ran += 1
    const diagnostics = await recheck.check(source, flags, stage === 'opened' ? OPENED_PARAMS : EXACT_PARAMS)
    let result = summarize(diagnostics)
    if (diagnostics.status === 'vulnerable' && diagnostics.complexity.isFuzz) {
      const second = summarize(await recheck.check(source, flags, SECOND_OPINION_PARAMS))
      if (second.status === 'safe') result = { status: 'safe', firstAttack: diagnostics.attack.pattern }
      else if (second.status === 'vulnerable') result = second
    }
    // The exact stage's unknown (a timeout on a loaded machine) is asked again next time; the opened
    // stage's only sends the pattern on to the exact stage, which is what it would do again.
    if (result.status !== 'unknown' || stage === 'opened') {
      this.#cache[key] = result
      this.#changed = true
    }
    return result
  }

  async verdict(source: string, givenFlags: string): Promise<Verdict> {
    // `d` (match indices) changes what a match reports, not how it is searched; recheck 4.5 does not know it.
    const flags = givenFlags.replace('d', '')
    const opened = openRepetitions(source, flags)
    const first = await this.#run('opened', opened, flags)
    // Safe when opened is safe as written; with nothing to open, the automaton's verdict is exact.
    if (first.status === 'safe' || (opened === source && first.status === 'vulnerable')) return { ...first, stage: 'opened' }
    return { ...(await this.#run('exact', source, flags)), stage: 'exact' }
  }

  /** Verdicts on many patterns, `parallel` at a time (recheck's agent works on several at once). */
  async verdicts<T extends { source: string, flags: string }>(patterns: readonly T[], parallel = 4): Promise<Array<T & { verdict: Verdict }>> {
    this.ran = 0
    const results = new Array<T & { verdict: Verdict }>(patterns.length)
    let next = 0
    await Promise.all(Array.from({ length: parallel }, async () => {
      while (next < patterns.length) {
        const index = next++
        const pattern = patterns[index]!
        results[index] = { ...pattern, verdict: await this.verdict(pattern.source, pattern.flags) }
      }
    }))
    this.save()
    return results
  }

  save(): void {
    if (!this.#changed) return
    try {
      mkdirSync(dirname(CACHE_FILE), { recursive: true })
      writeFileSync(CACHE_FILE, JSON.stringify(this.#cache))
      this.#changed = false
    } catch { /* a read-only checkout: no cache, every run checks all */ }
  }
}
