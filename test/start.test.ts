/**
 * A start in seconds: `npm ci` leaves a built tree (`prepare`), and `npm start` builds only when a
 * source is newer than the last build (scripts/build-state.mjs), then runs the server. The
 * mechanism runs here for real, with npm, in a tree of its own whose build is a stand-in that
 * counts its runs (a real build takes a minute); the project's own scripts are checked to use it.
 * `npm run bench:start` measures the time to the first answer.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts

interface Outcome { code: number, stdout: string, stderr: string }
const run = (command: string, args: string[], cwd: string): Promise<Outcome> => new Promise((resolve) => {
  execFile(command, args, { cwd, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
    resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }))
})

/**
 * Scripts that are the build itself, its checks, or a test or benchmark run (they build every
 * time, so that they run what the sources say); every other script, `start` aside, is a helper
 * command a user runs on the built tree.
 */
const NOT_HELPERS = /^(build(:.*)?|prepare|typecheck|lint|dev:web|test|bench(:.*)?|soak|fuzz(:.*)?|schemathesis)$/
const helpers = Object.entries(scripts).filter(([name]) => name !== 'start' && !NOT_HELPERS.test(name))
/** The compiled file a helper runs: the ENTRY it hands to build-state.mjs, then runs. */
const HELPER_FORM = /^node scripts\/build-state\.mjs ensure (dist\/\S+\.js) && node \1$/
const helperEntries = helpers.map(([, command]) => HELPER_FORM.exec(command)?.[1]).filter((entry) => entry !== undefined)

/**
 * A tree of its own with the project's build-state.mjs, a stand-in compiler (it counts its runs,
 * and fails on demand) that writes a stand-in server and stand-ins of the helpers' entries (each
 * prints that it runs, with its arguments), and these scripts.
 */
function standInTree(extraScripts: Record<string, string> = {}): string {
  const tree = mkdtempSync(join(tmpdir(), 'hashd-start-'))
  mkdirSync(join(tree, 'scripts'))
  cpSync(join(ROOT, 'scripts', 'build-state.mjs'), join(tree, 'scripts', 'build-state.mjs'))
  mkdirSync(join(tree, 'src'))
  mkdirSync(join(tree, 'web'))
  writeFileSync(join(tree, 'src', 'server.ts'), '// the server\n')
  writeFileSync(join(tree, 'web', 'index.html'), '<!doctype html>\n')
  writeFileSync(join(tree, 'scripts', 'apikey.ts'), '// a helper\n')
  writeFileSync(join(tree, 'tsconfig.json'), '{}\n')
  writeFileSync(join(tree, 'builds'), '0')
  const compile = "const fs=require('fs');if(fs.existsSync('fail'))process.exit(3);fs.mkdirSync('dist/src',{recursive:true});fs.mkdirSync('dist/web',{recursive:true});" +
    "fs.writeFileSync('dist/src/server.js','console.log(\"server runs\")');fs.writeFileSync('dist/web/index.html','');" +
    `for(const e of ${JSON.stringify(helperEntries)}){fs.mkdirSync(require('path').dirname(e),{recursive:true});fs.writeFileSync(e,'console.log(['+JSON.stringify(e)+',...process.argv.slice(2)].join(" "))')}` +
    "console.log('the build says this on stdout');fs.writeFileSync('builds',String(Number(fs.readFileSync('builds','utf8'))+1))"
  writeFileSync(join(tree, 'package.json'), JSON.stringify({
    name: 'start-test', version: '1.0.0', private: true,
    scripts: {
      build: `node scripts/build-state.mjs begin && node -e ${JSON.stringify(compile)} && node scripts/build-state.mjs done`,
      prepare: 'npm run build',
      start: 'node scripts/build-state.mjs ensure && node dist/src/server.js',
      ...extraScripts,
    },
  }, null, 2))
  return tree
}

describe('npm start builds only when the sources are newer than the build', () => {
  let tree: string
  const builds = () => Number(readFileSync(join(tree, 'builds'), 'utf8'))
  before(() => { tree = standInTree() })
  after(() => { rmSync(tree, { recursive: true, force: true }) })

  it('a fresh tree: npm start builds first, then starts', async () => {
    assert.deepEqual(await run('node', ['scripts/build-state.mjs', 'check'], tree), { code: 1, stdout: 'stale: dist/src/server.js is missing\n', stderr: '' })
    const started = await run('npm', ['start', '--silent'], tree)
    assert.equal(started.code, 0, started.stderr)
    assert.match(started.stderr, /hashd: building first, as dist\/src\/server\.js is missing \(npm run build\)/)
    assert.equal(started.stdout.trim(), 'server runs')
    assert.equal(builds(), 1)
  })

  it('a built tree: npm start starts without building, as often as it is run', async () => {
    for (let i = 0; i < 2; i++) {
      const started = await run('npm', ['start', '--silent'], tree)
      assert.deepEqual([started.code, started.stdout.trim(), started.stderr], [0, 'server runs', ''])
    }
    assert.equal(builds(), 1)
    assert.equal((await run('node', ['scripts/build-state.mjs', 'check'], tree)).code, 0)
  })

  it('a source newer than the build: npm start builds again, once', async () => {
    const ago = new Date(Date.now() - 10_000)
    utimesSync(join(tree, 'dist', '.build-stamp'), ago, ago)
    const now = new Date()
    utimesSync(join(tree, 'src', 'server.ts'), now, now)
    assert.deepEqual(await run('node', ['scripts/build-state.mjs', 'check'], tree), { code: 1, stdout: 'stale: src/server.ts is newer than the last build\n', stderr: '' })
    const rebuilt = await run('npm', ['start', '--silent'], tree)
    assert.deepEqual([rebuilt.code, rebuilt.stdout.trim()], [0, 'server runs'])
    assert.match(rebuilt.stderr, /building first, as src\/server\.ts is newer than the last build/)
    assert.equal(builds(), 2)
    const again = await run('npm', ['start', '--silent'], tree)
    assert.deepEqual([again.code, again.stderr], [0, ''])
    assert.equal(builds(), 2, 'built once')
  })

  it('a failed build: the server does not start, and the next start tries again', async () => {
    const ago = new Date(Date.now() - 10_000)
    utimesSync(join(tree, 'dist', '.build-stamp'), ago, ago)
    writeFileSync(join(tree, 'web', 'new.ts'), '')
    writeFileSync(join(tree, 'fail'), '')
    const failed = await run('npm', ['start', '--silent'], tree)
    assert.notEqual(failed.code, 0)
    assert.doesNotMatch(failed.stdout, /server runs/)
    rmSync(join(tree, 'fail'))
    assert.equal((await run('node', ['scripts/build-state.mjs', 'check'], tree)).code, 1, 'still stale')
  })

  it('is what the project\'s package.json does: prepare builds, build records its stamp, start checks it first', () => {
    assert.equal(scripts.prepare, 'npm run build')
    assert.match(scripts.build ?? '', /^node scripts\/build-state\.mjs begin && .* && node scripts\/build-state\.mjs done$/)
    assert.match(scripts.start ?? '', /^node scripts\/build-state\.mjs ensure && node (--\S+ )*dist\/src\/server\.js$/)
    assert.ok(existsSync(join(ROOT, 'dist', '.build-stamp')), 'this tree was built by npm run build')
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    assert.match(readme, /npm ci && npm start/)
    assert.match(readme, /npm ci && npm test/)
  })
})

describe('the helper commands (npm run apikey, pwned:*, client, docs, …) build only when their sources are newer than the build', () => {
  let tree: string
  const builds = () => Number(readFileSync(join(tree, 'builds'), 'utf8'))
  before(async () => {
    tree = standInTree(Object.fromEntries(helpers))
    const built = await run('npm', ['run', 'build', '--silent'], tree)
    assert.equal(built.code, 0, built.stderr)
  })
  after(() => { rmSync(tree, { recursive: true, force: true }) })

  it('every helper script of package.json hands its entry to build-state.mjs ensure, then runs it; none compiles by itself', () => {
    const names = helpers.map(([name]) => name)
    for (const expected of ['apikey', 'pwned:import', 'pwned:verify', 'pwned:corpus', 'client', 'docs']) assert.ok(names.includes(expected), `${expected} is a helper`)
    for (const [name, command] of helpers) {
      assert.match(command, HELPER_FORM, `"${name}": ${command}`)
      assert.doesNotMatch(command, /\btsc\b|npm run build/, name)
    }
  })

  it('on a built tree each helper runs at once, with its arguments and nothing else on stdout, and builds nothing', async () => {
    for (const [name, command] of helpers) {
      const entry = HELPER_FORM.exec(command)![1]!
      const ran = await run('npm', ['run', '--silent', name, '--', 'one', 'two'], tree)
      assert.deepEqual([ran.code, ran.stdout, ran.stderr], [0, `${entry} one two\n`, ''], name)
    }
    assert.equal(builds(), 1)
  })

  it('a helper\'s own source newer than the build: the helper builds first, its stdout stays its own; npm start does not need that build', async () => {
    // The build 10 s ago, the server's sources before it (whatever the time the tests before took),
    // and the helper's source now.
    const ago = new Date(Date.now() - 10_000)
    const before = new Date(Date.now() - 20_000)
    for (const source of ['src/server.ts', 'src', 'web/index.html', 'web', 'tsconfig.json']) utimesSync(join(tree, source), before, before)
    utimesSync(join(tree, 'dist', '.build-stamp'), ago, ago)
    const now = new Date()
    utimesSync(join(tree, 'scripts', 'apikey.ts'), now, now)
    assert.equal((await run('node', ['scripts/build-state.mjs', 'check'], tree)).code, 0, 'the server does not run scripts/')
    assert.deepEqual(await run('node', ['scripts/build-state.mjs', 'check', 'dist/scripts/apikey.js'], tree),
      { code: 1, stdout: 'stale: scripts/apikey.ts is newer than the last build\n', stderr: '' })
    const ran = await run('npm', ['run', '--silent', 'apikey', '--', 'ci-bot'], tree)
    assert.deepEqual([ran.code, ran.stdout], [0, 'dist/scripts/apikey.js ci-bot\n'])
    assert.match(ran.stderr, /building first, as scripts\/apikey\.ts is newer than the last build[^]*the build says this on stdout/)
    assert.equal(builds(), 2)
    const again = await run('npm', ['run', '--silent', 'apikey', '--', 'ci-bot'], tree)
    assert.deepEqual([again.code, again.stderr], [0, ''])
    assert.equal(builds(), 2, 'built once')
  })

  it('a missing entry is built; an entry outside dist/ is refused', async () => {
    rmSync(join(tree, 'dist', 'scripts', 'apikey.js'))
    assert.deepEqual(await run('node', ['scripts/build-state.mjs', 'check', 'dist/scripts/apikey.js'], tree),
      { code: 1, stdout: 'stale: dist/scripts/apikey.js is missing\n', stderr: '' })
    assert.equal((await run('npm', ['run', '--silent', 'apikey'], tree)).code, 0)
    assert.equal(builds(), 3)
    const refused = await run('node', ['scripts/build-state.mjs', 'ensure', 'scripts/apikey.ts'], tree)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /an entry is a compiled file under dist\//)
  })
})
