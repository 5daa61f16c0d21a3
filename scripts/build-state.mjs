/* global process, console */
/**
 * Whether the built tree (dist/) is up to date with the sources a command runs, so that
 * `npm start` and the helper commands (`npm run apikey`, `pwned:import`, `client`, `docs`, …) start
 * at once and build only when a source is newer than the last build. Plain JavaScript with no
 * dependencies: it runs before anything is compiled.
 *
 *   node scripts/build-state.mjs ensure [ENTRY…]   build (npm run build) when stale, then exit 0; the build's status when it fails
 *   node scripts/build-state.mjs check [ENTRY…]    exit 0 when up to date, 1 when stale (and say why)
 *   node scripts/build-state.mjs begin             first step of `npm run build`: note when it started
 *   node scripts/build-state.mjs done              last step of `npm run build`: that build is the tree's
 *
 * The stamp (dist/.build-stamp) carries the time its build began, so a source saved while a build
 * ran is newer than the stamp and builds again next time. The server's sources are src/, web/ and
 * tsconfig.json. An ENTRY is the compiled file a helper command runs (dist/scripts/apikey.js): it
 * must exist too, and the folder of its source (scripts/) counts as a source as well; tests and
 * benchmarks are built too but neither the server nor a helper runs them. A build's output goes to
 * stderr, so that a helper whose stdout is data (`npm run apikey … | tail -n 1`) prints only that.
 * `npm ci` builds through `prepare`, so a fresh clone's `npm ci && npm start` needs nothing else.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const stamp = join(dist, '.build-stamp')
const started = join(dist, '.build-started')
const SOURCES = ['src', 'web', 'tsconfig.json']
/** What a start needs of the build: the server's entry point and the page. */
const OUTPUTS = ['dist/src/server.js', 'dist/web/index.html']

/** The newest file under `path` (a file or a folder), as [mtime in ms, path]. */
function newest(path) {
  let stats
  try { stats = statSync(path) } catch { return [0, path] }
  if (!stats.isDirectory()) return [stats.mtimeMs, path]
  let found = [stats.mtimeMs, path]
  for (const entry of readdirSync(path)) {
    const candidate = newest(join(path, entry))
    if (candidate[0] > found[0]) found = candidate
  }
  return found
}

/** Why the tree needs a build for these entries, or null when it is up to date. */
function staleness(entries) {
  const missing = [...OUTPUTS, ...entries].find((output) => !existsSync(join(root, output)))
  if (missing) return `${missing} is missing`
  let built
  try { built = statSync(stamp).mtimeMs } catch { return 'no complete build is recorded (dist/.build-stamp)' }
  // dist/scripts/apikey.js is built from scripts/apikey.ts: its folder, scripts/, is a source too.
  const entryFolders = entries.map((entry) => entry.split('/')[1] ?? '').filter((folder) => folder !== '')
  for (const source of new Set([...SOURCES, ...entryFolders])) {
    const [mtime, path] = newest(join(root, source))
    if (mtime > built) return `${relative(root, path)} is newer than the last build`
  }
  return null
}

const command = process.argv[2]
if (command === 'begin') {
  mkdirSync(dist, { recursive: true })
  writeFileSync(started, `${new Date().toISOString()}\n`)
} else if (command === 'done') {
  // The build began when `begin` wrote its file: that time is the stamp's.
  const began = existsSync(started) ? statSync(started).mtime : new Date()
  writeFileSync(started, `${began.toISOString()}\n`)
  utimesSync(started, began, began)
  renameSync(started, stamp)
} else if (command === 'check' || command === 'ensure') {
  const entries = process.argv.slice(3)
  const unknown = entries.find((entry) => !/^dist\/[\w.-]+\/[\w./-]+\.js$/.test(entry) || entry.includes('..'))
  if (unknown !== undefined) {
    console.error(`build-state: an entry is a compiled file under dist/ (dist/scripts/apikey.js), not ${unknown}`)
    process.exit(2)
  }
  const why = staleness(entries)
  if (why === null) process.exit(0)
  if (command === 'check') {
    console.log(`stale: ${why}`)
    process.exit(1)
  }
  console.error(`hashd: building first, as ${why} (npm run build)`)
  // The build's stdout goes to stderr: the command's own stdout may be piped as data.
  const build = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 2, 2] })
  process.exit(build.status ?? 1)
} else {
  console.error('usage: node scripts/build-state.mjs ensure [ENTRY…] | check [ENTRY…] | begin | done')
  process.exit(2)
}
