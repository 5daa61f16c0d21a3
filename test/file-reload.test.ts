/**
 * Files read again while the server runs (src/file-reload.ts), through the real process: a keys
 * file edited in place, replaced by `mv`, and swapped the way the kubelet updates a Secret volume
 * (a new timestamped folder, then the `..data` symlink renamed over the old one); a bad file keeps
 * the keys in force and shows in /api/health and /metrics until it is fixed; no SIGHUP is sent,
 * and the backstop poll is off (FILE_RELOAD_POLL_MS=0), so the folder watch is the only thing that
 * can see a change: a watch that failed to start, or that missed the swapped `..data` folder, fails
 * the test instead of being covered by the poll.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-reload-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const newKey = () => `hk_${randomBytes(32).toString('base64url')}`
const line = (name: string, key: string) => `${name} ${createHash('sha256').update(key).digest('hex')}\n`

async function status(hashd: HashdProcess, key: string): Promise<number> {
  const response = await hashd.fetch('/api/hash', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ input: 'a', algorithm: 'sha256' }),
  })
  await response.arrayBuffer()
  return response.status
}

/** Polls until `key` gets `expected` (the reload is asynchronous: an inotify event, then a short settle). */
async function until(hashd: HashdProcess, key: string, expected: number): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const got = await status(hashd, key)
    if (got === expected) return
    if (Date.now() > deadline) assert.fail(`key still answers ${got}, expected ${expected}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

interface Health { files: { source: string, loads: number, failures: number, lastError?: { reason: string } }[] }

async function apiKeysStatus(hashd: HashdProcess, key: string) {
  const health = (await hashd.get('/api/health', { authorization: `Bearer ${key}` })).body as Health
  const entry = health.files.find((file) => file.source === 'api-keys')
  assert.ok(entry, 'health lists api-keys')
  return entry
}

describe('keys files reload when they change on disk', () => {
  it('in place, by mv, and through a Kubernetes-style ..data symlink swap; a bad file keeps the keys and shows in health and metrics', async () => {
    // The layout of a Secret volume: keys → ..data/keys, ..data → ..<timestamp>/.
    const volume = join(dir, 'secret')
    mkdirSync(volume)
    const [first, second, third, fourth] = [newKey(), newKey(), newKey(), newKey()]
    const version = (name: string, text: string) => {
      mkdirSync(join(volume, name))
      writeFileSync(join(volume, name, 'api-keys'), text)
    }
    version('..2026_01_01_00_00_00.1', line('first', first))
    symlinkSync('..2026_01_01_00_00_00.1', join(volume, '..data'))
    symlinkSync('..data/api-keys', join(volume, 'api-keys'))

    const hashd = await startHashd({ API_KEYS_FILE: join(volume, 'api-keys'), FILE_RELOAD_POLL_MS: '0' })
    try {
      assert.equal(await status(hashd, first), 200)
      assert.equal(await status(hashd, second), 401)

      // The kubelet's atomic update: a new folder, a new symlink, renamed over ..data.
      version('..2026_01_01_00_01_00.2', line('second', second))
      symlinkSync('..2026_01_01_00_01_00.2', join(volume, '..data_tmp'))
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'))
      await until(hashd, second, 200)
      assert.equal(await status(hashd, first), 401)
      await hashd.logged(/^API keys reloaded \(changed on disk\)$/, 0)

      // A second swap: the watch followed the link to the new folder.
      version('..2026_01_01_00_02_00.3', line('third', third))
      symlinkSync('..2026_01_01_00_02_00.3', join(volume, '..data_tmp'))
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'))
      await until(hashd, third, 200)

      // A bad version: the keys in force stay; health and metrics say so, without the contents.
      const mark = hashd.lines()
      version('..2026_01_01_00_03_00.4', `${line('third', third)}fourth ${fourth}\n`)
      symlinkSync('..2026_01_01_00_03_00.4', join(volume, '..data_tmp'))
      renameSync(join(volume, '..data_tmp'), join(volume, '..data'))
      await hashd.logged(/API keys not reloaded \(changed on disk\): keeping the value in force/, mark)
      assert.equal(await status(hashd, third), 200)
      const failing = await apiKeysStatus(hashd, third)
      assert.equal(failing.failures, 1)
      assert.match(failing.lastError?.reason ?? '', /API_KEYS_FILE .* line 2, field 2: the key's sha256 must be here as 64 hex digits/)
      // Without a key, health says degraded and nothing more: no file, no line, no reason.
      const summary = await hashd.get('/api/health')
      assert.deepEqual(summary.body, { status: 'ok', degraded: true, rateLimitStore: 'off', replayStore: 'memory' })
      assert.ok(!hashd.stdout().includes(fourth), 'the key pasted in the wrong place never reaches the log')
      const metrics = (await hashd.get('/metrics', { authorization: `Bearer ${third}` })).text
      assert.match(metrics, /hashd_file_reload_failing\{source="api-keys"\} 1/)
      assert.match(metrics, /hashd_file_loads_total\{source="api-keys",outcome="failed"\} 1/)

      // Fixed by an edit in place (same inode): loaded, and the failure cleared.
      writeFileSync(join(volume, '..2026_01_01_00_03_00.4', 'api-keys'), line('fourth', fourth))
      await until(hashd, fourth, 200)
      const fixed = await apiKeysStatus(hashd, fourth)
      assert.equal(fixed.lastError, undefined)
      assert.equal((await hashd.get('/api/health')).body.degraded, false)
      assert.equal(fixed.loads, 4)

      // Replaced by mv, as editors and config tools do (here the link itself becomes a plain file).
      writeFileSync(join(volume, 'api-keys.new'), line('fifth', first))
      renameSync(join(volume, 'api-keys.new'), join(volume, 'api-keys'))
      await until(hashd, first, 200)
      assert.equal(await status(hashd, fourth), 401)
    } finally {
      await hashd.stop()
    }
  })
})
