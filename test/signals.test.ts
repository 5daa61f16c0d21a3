/**
 * Signals reach the server however it is started (src/npm-parent.ts, docs/operations.md "Signals"):
 * - the process is named hashd: /proc/PID/comm, `pgrep -x hashd` and `pidof hashd` find it, and
 *   SIGHUP sent to the PID they give reloads the keys files;
 * - under the real `npm run` (npm 11 forwards only SIGINT and SIGTERM, to its shell, and dies of
 *   SIGHUP): SIGHUP to hashd itself reloads; SIGHUP or SIGTERM to npm's PID ends npm, and hashd
 *   follows it out with a graceful drain and a log line saying how to signal it (by its own PID),
 *   instead of serving on orphaned;
 * - `npm run apikey` says what docs/operations.md says: a changed keys file is loaded by itself,
 *   and a SIGHUP only hurries it.
 * Only processes this test started are signalled, by their PID; nothing is signalled by name.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { findNpmParent, procStat } from '../src/npm-parent.js'
import { startHashd } from './helpers/process.js'
import { run, skipBecause, skipUnless } from './helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

const dir = mkdtempSync(join(tmpdir(), 'hashd-signals-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const SERVER = fileURLToPath(new URL('../src/server.js', import.meta.url))
const linux = existsSync('/proc/self/stat') ? false : skipBecause('needs /proc (Linux)')

const keysFile = (name: string) => {
  const path = join(dir, name)
  writeFileSync(path, `orders 1 ${randomBytes(32).toString('base64')}\n`)
  return path
}

/** The PIDs a tool prints for a name (none: an empty list; the tool exits 1 when nothing matches). */
function pidsOf(tool: 'pgrep' | 'pidof', name: string): number[] {
  try {
    return run(tool, tool === 'pgrep' ? ['-x', name] : [name]).split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

const alive = (pid: number) => { const stat = procStat(pid); return stat !== null && stat.state !== 'Z' }

async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('the server is findable by name', { skip: linux }, () => {
  it('is named hashd in /proc, whatever node was called', async () => {
    const hashd = await startHashd({ HMAC_KEYS_FILE: keysFile('named') })
    try {
      assert.equal(readFileSync(`/proc/${hashd.child.pid}/comm`, 'utf8').trim(), 'hashd')
    } finally {
      await hashd.stop()
    }
  })

  for (const tool of ['pgrep', 'pidof'] as const) {
    it(`${tool} finds it, and SIGHUP to that PID reloads the keys`, { skip: skipUnless(tool) }, async () => {
      const hashd = await startHashd({ HMAC_KEYS_FILE: keysFile(`by-${tool}`) })
      try {
        const found = pidsOf(tool, 'hashd')
        assert.ok(found.includes(hashd.child.pid!), `${tool} found ${found.join(' ')}, not ${hashd.child.pid}`)
        const mark = hashd.lines()
        // Only our own process is signalled, through the PID the tool found.
        process.kill(found.find((pid) => pid === hashd.child.pid)!, 'SIGHUP')
        await hashd.logged(/^HMAC keys reloaded \(SIGHUP\)$/, mark)
        assert.equal((await hashd.get('/api/health')).status, 200)
      } finally {
        await hashd.stop()
      }
    })
  }
})

interface NpmRun { npm: ChildProcess, server: number, output: () => string, exited: Promise<number | null> }

/** `npm run serve` in a project of its own whose script starts hashd, as `npm start` does; resolves once hashd listens. */
async function npmRun(name: string): Promise<NpmRun> {
  const project = mkdtempSync(join(dir, `npm-${name}-`))
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'hashd-under-npm', version: '1.0.0', private: true, scripts: { serve: `node ${JSON.stringify(SERVER)}` } }))
  const npm = spawn('npm', ['run', '--silent', 'serve'], {
    cwd: project,
    env: { PATH: process.env.PATH ?? '', HOME: project, HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_MAX: '0', WORKER_THREADS: '1', HMAC_KEYS_FILE: keysFile(`npm-${name}`) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  npm.stdout?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  npm.stderr?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)))
  await until(() => /listening at http:\/\/127\.0\.0\.1:\d+/.test(output) || npm.exitCode !== null, 'hashd to listen under npm', 60_000)
  const url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
  assert.ok(url, output)
  // The server: the process named hashd whose npm ancestor is the npm we started.
  const pid = Number(/"pid":(\d+)/.exec(output)?.[1])
  assert.equal(procStat(pid)?.comm, 'hashd')
  assert.equal(findNpmParent({ npm_lifecycle_event: 'serve' }, procStat(pid)!.ppid)?.pid, npm.pid)
  return { npm, server: pid, output: () => output, exited }
}

describe('under npm run, signals reach the server or the server follows npm out', { skip: linux }, () => {
  it('SIGHUP to hashd itself reloads; npm and hashd keep running', async () => {
    const started = await npmRun('hup-server')
    try {
      process.kill(started.server, 'SIGHUP')
      await until(() => /HMAC keys reloaded \(SIGHUP\)/.test(started.output()), 'the reload')
      assert.ok(alive(started.server) && started.npm.exitCode === null)
    } finally {
      process.kill(started.server, 'SIGTERM')
      await started.exited
    }
  })

  for (const signal of ['SIGHUP', 'SIGTERM'] as const) {
    it(`${signal} to npm's PID: npm ends, and hashd drains and exits instead of running on orphaned`, async () => {
      const started = await npmRun(signal)
      try {
        started.npm.kill(signal)
        await started.exited
        await until(() => !alive(started.server), 'hashd to exit after npm')
        // The advice names this process, not every hashd on the host (pidof hashd would).
        assert.match(started.output(), new RegExp(`npm \\(npm start\\) exited while hashd ran under it.*Signal hashd itself \\(process ${started.server}\\): kill -HUP ${started.server} reloads the keys files, kill -TERM ${started.server} stops it`))
        assert.doesNotMatch(started.output(), /pidof/)
        assert.match(started.output(), /shut down: every request finished/)
      } finally {
        if (alive(started.server)) process.kill(started.server, 'SIGKILL')
      }
    })
  }
})

const pidNamespace = linux || (process.getuid?.() === 0 ? skipUnless('unshare', 'pgrep') : skipBecause('a PID namespace needs root (unshare --pid)'))
describe('as PID 1 (a container\'s entry point), a SIGTERM ends hashd at every stage of its start', { skip: pidNamespace }, () => {
  // The kernel drops a default-action signal sent to PID 1, so node ends only on a signal it
  // handles: without a handler, `podman stop` waits out its grace period and SIGKILLs.
  // Node's own handler (it resets the terminal, then raises the signal again, which PID 1 ignores) is
  // there from the start, so the first stage is found by the first line the app logs as it is built.
  for (const stage of ['before it listens', 'while it serves'] as const) {
    it(stage, async () => {
      const child = spawn('unshare', ['--pid', '--fork', '--kill-child', process.execPath, SERVER], {
        // PORT=0: a free port the kernel picks, which no other file's server can hold.
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
      child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      try {
        let hashd = 0
        // Bounds for a loaded CI machine (a full suite beside it): starting node and loading the app
        // there takes seconds, and the drain ends the worker threads it started.
        // pgrep exits 1 while unshare has not forked yet: that is "not yet", not a failure.
        const childOf = (pid: number): number => Number(spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.trim() || 0)
        await until(() => (hashd = childOf(child.pid!)) > 0, 'hashd under unshare', 30_000)
        if (stage === 'before it listens') await until(() => output.includes('"msg"'), 'the first log line', 60_000)
        else await until(() => /Server listening/.test(output), 'hashd to listen', 60_000)
        const listenedBefore = /Server listening/.test(output)
        process.kill(hashd, 'SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
        const code = await exited
        clearTimeout(timer)
        assert.equal(code, 0, `exit code ${code}; ${output}`)
        if (stage === 'while it serves') assert.match(output, /shut down: every request finished/)
        else assert.ok(!listenedBefore || /shut down/.test(output), output)
      } finally {
        child.kill('SIGKILL')
      }
    })
  }
})

describe('what the helpers tell an operator agrees with the pages', () => {
  it('npm run apikey: a changed keys file is loaded without a signal; SIGHUP to hashd\'s own process only hurries it', () => {
    const minted = spawnSync(process.execPath, [join(ROOT, 'dist/scripts/apikey.js'), 'ci-bot'], { encoding: 'utf8' })
    assert.equal(minted.status, 0, minted.stderr)
    assert.match(minted.stderr, /hashd sees the file change and loads it within seconds, without a restart or a signal/)
    assert.match(minted.stderr, /SIGHUP to hashd's own process loads it at once/)
    assert.doesNotMatch(minted.stderr, /then send SIGHUP|kill -HUP <pid>/)
    // What the page says of the same file.
    const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8').replace(/\s+/g, ' ')
    assert.match(operations, /hashd reads the file again whenever it changes/)
    assert.match(operations, /- \*\*on SIGHUP\*\*, always\./)
  })
})
