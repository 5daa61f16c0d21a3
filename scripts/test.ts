/**
 * `npm test`: runs every compiled test file with node's test runner (one file at a time: each
 * starts real servers and programs), then says how complete the run was: which independent tools
 * the cross-checks used and which they skipped for want of a package (test/helpers/tools.ts).
 *
 *   node dist/scripts/test.js                       every file under dist/test
 *   node dist/scripts/test.js dist/test/hmac.test.js  just these
 *
 * HASHD_REQUIRE_TOOLS=1 (CI) turns a missing tool into a failure; HASHD_TEST_TOOLS=none pretends
 * nothing is installed.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const testDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test')
const files = process.argv.length > 2
  ? process.argv.slice(2)
  : readdirSync(testDir).filter((name) => name.endsWith('.test.js')).sort().map((name) => join(testDir, name))

const reportDir = mkdtempSync(join(tmpdir(), 'hashd-tools-'))
// Two reporters: spec for people on stdout, and test-counter.ts's JSON lines to a file, from
// which the closing counts are taken.
const eventsFile = join(mkdtempSync(join(tmpdir(), 'hashd-events-')), 'events.jsonl')
const counterReporter = join(dirname(fileURLToPath(import.meta.url)), 'test-counter.js')
const child = spawn(process.execPath, ['--test', '--test-concurrency=1',
  '--test-reporter=spec', '--test-reporter-destination=stdout',
  `--test-reporter=${counterReporter}`, `--test-reporter-destination=${eventsFile}`, ...files], {
  env: { ...process.env, HASHD_TOOL_REPORT_DIR: reportDir },
  stdio: ['ignore', 'pipe', 'inherit'],
})
child.stdout.on('data', (chunk: Buffer) => { process.stdout.write(chunk) })
const code: number = await new Promise((resolve) => child.on('close', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))))

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
let eventsText = ''
try { eventsText = readFileSync(eventsFile, 'utf8') } catch { /* no test ran */ }
rmSync(dirname(eventsFile), { recursive: true, force: true })
for (const line of eventsText.split('\n')) {
  if (line === '') continue
  const { outcome } = JSON.parse(line) as { outcome: string }
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
}
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
process.exitCode = code !== 0 ? code : process.exitCode ?? 0
