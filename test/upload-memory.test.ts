/**
 * Memory under upload load (issue 19): threaded uploads reuse their threads' rings instead of
 * allocating a ring each, so hundreds of them at once from several clients leave the process's
 * peak resident memory (VmHWM) about where one upload does. Before the fix, an 8 MiB shared ring
 * per upload took RSS from 90 MB to over 700 MB within seconds of such load. The digests are
 * checked against coreutils' sha1sum and md5sum of the same bytes.
 *
 * memory-tuning.ts (glibc's settings, the quiet-time reclaim) is tested in memory-tuning.test.ts.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { run, skipUnless } from './helpers/tools.js'

const MB = 1e6

function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  assert.ok(match, 'no VmHWM in /proc/PID/status')
  return Number(match[1]) * 1024
}

const linux = process.platform === 'linux' ? false : 'reads /proc/PID/status (Linux only)'

describe('memory under threaded upload load', { skip: linux || skipUnless('sha1sum', 'md5sum') }, () => {
  it('400 threaded 1 MiB uploads from 4 clients: right digests, peak RSS within 100 MB of one upload\'s', async () => {
    const body = randomBytes(1024 * 1024)
    const expected = {
      sha1: run('sha1sum', ['-'], body).split(' ')[0],
      md5: run('md5sum', ['-'], body).split(' ')[0],
    }
    // Two hash threads, as on a two-core machine: every such upload takes both (the threaded path).
    const server: HashdProcess = await startHashd()
    try {
      const pid = server.child.pid
      assert.ok(pid)
      const upload = async (): Promise<void> => {
        const response = await server.fetch('/api/filehash?algorithms=sha1,md5', { method: 'PUT', body, headers: { 'content-type': 'application/octet-stream' } })
        assert.equal(response.status, 200, await response.clone().text())
        const { hashes } = await response.json() as { hashes: Record<string, string> }
        assert.deepEqual(hashes, expected)
      }
      await upload()
      const afterOne = peakRss(pid)
      await Promise.all(Array.from({ length: 4 }, async () => { for (let index = 0; index < 100; index++) await upload() }))
      const growth = peakRss(pid) - afterOne
      assert.ok(growth < 100 * MB, `peak RSS grew by ${(growth / MB).toFixed(0)} MB over 400 uploads`)
    } finally {
      await server.stop()
    }
  })
})
