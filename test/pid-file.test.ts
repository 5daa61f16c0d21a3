/**
 * PID_FILE with the real server (src/pid-file.ts, docs/operations.md "Signals"): two instances on
 * one host, each with its own file, as docs/operations.md runs them. The file names its process once
 * it listens; `kill -HUP "$(cat PID_FILE)"` (run by sh, as the page writes it) reloads that instance
 * and not the other; a third instance given a file that names a running hashd is refused (exit 2)
 * and leaves the file alone; a stale file (a process that is gone, a PID another program now has) is
 * replaced with a warning; the file goes at shutdown, unless it names another process by then.
 * Only processes this test started are signalled, by their PID.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { claimPidFile } from '../src/pid-file.js'
import { spawnHashd, type SpawnedHashd } from './helpers/process.js'

const linux = existsSync('/proc/self/stat') ? false : 'needs /proc (Linux)'
/** Starts take long on a loaded machine. */
const START_MS = 90_000

const dir = mkdtempSync(join(tmpdir(), 'hashd-pid-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function keysFile(name: string): string {
  const path = join(dir, `${name}.keys`)
  writeFileSync(path, `orders 1 ${randomBytes(32).toString('base64')}\n`)
  return path
}

/** The log messages written so far. */
const messages = (hashd: SpawnedHashd): string[] => hashd.stdout().split('\n').flatMap((line) => {
  try { return [String((JSON.parse(line) as { msg?: unknown }).msg)] } catch { return [] }
})

/** Spawns hashd with PID_FILE and waits until it says it wrote the file. */
async function startWithPidFile(pidFile: string, env: Record<string, string> = {}): Promise<SpawnedHashd> {
  const hashd = spawnHashd({ PID_FILE: pidFile, ...env })
  try {
    await Promise.race([
      hashd.logged(/^PID file written$/, 0, START_MS),
      hashd.exited.then(() => { throw new Error(`hashd exited: ${hashd.stderr()} ${hashd.stdout()}`) }),
    ])
  } catch (error) {
    await hashd.stop()
    throw error
  }
  return hashd
}

/** The documented command, run by sh: `kill -HUP "$(cat PID_FILE)"`. */
const hangUpThrough = (pidFile: string) => execFileSync('sh', ['-c', 'kill -HUP "$(cat "$1")"', 'sh', pidFile])

describe('PID_FILE: two instances on one host, each signalled through its own file', { skip: linux }, () => {
  const first = join(dir, '3001.pid')
  const second = join(dir, '3002.pid')
  let a: SpawnedHashd | undefined
  let b: SpawnedHashd | undefined
  before(async () => {
    [a, b] = await Promise.all([
      startWithPidFile(first, { HMAC_KEYS_FILE: keysFile('a') }),
      startWithPidFile(second, { HMAC_KEYS_FILE: keysFile('b') }),
    ])
  })
  after(async () => {
    await a?.stop()
    await b?.stop()
  })

  it('each file names its own process, written whole once the server listens, with no temporary file left beside it', () => {
    assert.equal(readFileSync(first, 'utf8'), `${a!.child.pid}\n`)
    assert.equal(readFileSync(second, 'utf8'), `${b!.child.pid}\n`)
    const log = messages(a!)
    assert.ok(log.findIndex((message) => /listening at/.test(message)) < log.indexOf('PID file written'), log.join(' | '))
    assert.deepEqual(readdirSync(dir).filter((name) => name.endsWith('.pid') || name.endsWith('.tmp')).sort(), ['3001.pid', '3002.pid'])
  })

  it('kill -HUP "$(cat PID_FILE)" reloads that instance, and not the other', async () => {
    const markA = a!.lines()
    hangUpThrough(first)
    await a!.logged(/^HMAC keys reloaded \(SIGHUP\)$/, markA, START_MS)
    const markB = b!.lines()
    hangUpThrough(second)
    await b!.logged(/^HMAC keys reloaded \(SIGHUP\)$/, markB, START_MS)
    // Each reloaded once: the first's signal did not reach the second, nor the second's the first.
    assert.equal(messages(a!).filter((message) => message === 'HMAC keys reloaded (SIGHUP)').length, 1)
    assert.equal(messages(b!).filter((message) => message === 'HMAC keys reloaded (SIGHUP)').length, 1)
  })

  it('a third instance given a file that names a running hashd is refused with exit status 2, and the file is left alone', async () => {
    const third = spawnHashd({ PID_FILE: first })
    const { code } = await third.exited
    assert.equal(code, 2, third.stderr())
    assert.equal(third.stderr(), `hashd: PID_FILE ${first} names process ${a!.child.pid}, a hashd that is running: give each instance its own PID_FILE, or stop that one first\n`)
    assert.doesNotMatch(third.stdout(), /listening at/)
    assert.equal(readFileSync(first, 'utf8'), `${a!.child.pid}\n`)
  })

  it('at shutdown the file goes, unless by then it names another process', async () => {
    // Someone else's now: the second instance must not delete it.
    writeFileSync(second, '4194304\n')
    await b!.stop()
    assert.equal((await b!.exited).code, 0)
    assert.equal(readFileSync(second, 'utf8'), '4194304\n')
    await a!.stop()
    assert.equal((await a!.exited).code, 0)
    assert.ok(!existsSync(first), `${first} is still there after a clean shutdown`)
  })
})

describe('PID_FILE left behind', { skip: linux }, () => {
  it('naming a process that has exited, or one that is not hashd: replaced, with a warning naming the old PID', async () => {
    const gone = spawnSync('true').pid!
    for (const [name, pid] of [['gone', gone], ['not-hashd', process.pid]] as const) {
      const file = join(dir, `${name}.pid`)
      writeFileSync(file, `${pid}\n`)
      const hashd = await startWithPidFile(file)
      try {
        assert.equal(readFileSync(file, 'utf8'), `${hashd.child.pid}\n`)
        const warning = hashd.stdout().split('\n').find((line) => line.includes('PID_FILE named no running hashd'))
        assert.ok(warning, hashd.stdout())
        assert.deepEqual([JSON.parse(warning).level, JSON.parse(warning).replacedPid], [40, String(pid)])
      } finally {
        await hashd.stop()
      }
    }
  })

  it('holding no PID: replaced (checked before the start, in this process)', () => {
    const file = join(dir, 'junk.pid')
    writeFileSync(file, 'not a pid\n')
    assert.deepEqual(claimPidFile(file), { path: file, replaced: '(no PID)' })
  })

  it('in a folder that does not exist: the start stops with exit status 2 before listening', async () => {
    const file = join(dir, 'missing', 'hashd.pid')
    const hashd = spawnHashd({ PID_FILE: file })
    const { code } = await hashd.exited
    assert.equal(code, 2)
    assert.equal(hashd.stderr(), `hashd: PID_FILE ${file}: its folder does not exist\n`)
    assert.doesNotMatch(hashd.stdout(), /listening at/)
  })
})
