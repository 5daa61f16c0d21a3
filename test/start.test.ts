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

describe('npm start builds only when the sources are newer than the build', () => {
  let tree: string
  const builds = () => Number(readFileSync(join(tree, 'builds'), 'utf8'))
  before(() => {
    tree = mkdtempSync(join(tmpdir(), 'hashd-start-'))
    mkdirSync(join(tree, 'scripts'))
    cpSync(join(ROOT, 'scripts', 'build-state.mjs'), join(tree, 'scripts', 'build-state.mjs'))
    mkdirSync(join(tree, 'src'))
    mkdirSync(join(tree, 'web'))
    writeFileSync(join(tree, 'src', 'server.ts'), '// the server\n')
    writeFileSync(join(tree, 'web', 'index.html'), '<!doctype html>\n')
    writeFileSync(join(tree, 'tsconfig.json'), '{}\n')
    writeFileSync(join(tree, 'builds'), '0')
    // The project's build and start, with a stand-in compiler (it counts its runs, and fails on
    // demand) and a stand-in server (it prints that it runs).
    const compile = "const fs=require('fs');if(fs.existsSync('fail'))process.exit(3);fs.mkdirSync('dist/src',{recursive:true});fs.mkdirSync('dist/web',{recursive:true});" +
      "fs.writeFileSync('dist/src/server.js','console.log(\"server runs\")');fs.writeFileSync('dist/web/index.html','');fs.writeFileSync('builds',String(Number(fs.readFileSync('builds','utf8'))+1))"
    writeFileSync(join(tree, 'package.json'), JSON.stringify({
      name: 'start-test', version: '1.0.0', private: true,
      scripts: {
        build: `node scripts/build-state.mjs begin && node -e "${compile.replaceAll('"', '\\"')}" && node scripts/build-state.mjs done`,
        prepare: 'npm run build',
        start: 'node scripts/build-state.mjs ensure && node dist/src/server.js',
      },
    }, null, 2))
  })
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
