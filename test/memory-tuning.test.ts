/**
 * memory-tuning.ts, in the real server:
 * - on glibc, hashd sets malloc's mmap threshold, trim threshold and arena count at start (its
 *   debug log says which), leaves one an operator set through glibc's own environment variable
 *   alone, and sets none with MEMORY_TUNING=off;
 * - once the process goes quiet after being busy (start-up counts), it gives memory back: a
 *   memory-reducing V8 collection when Node runs with --expose-gc (as npm start and the image run
 *   it), then malloc_trim. The collection is seen from outside in V8's own trace (--trace-gc):
 *   a full collection asked for through the gc function is a "Mark-Compact … testing" line, and
 *   V8 12 and later mark a memory-reducing one "(reduce)". The trim shows in the RSS the debug
 *   line reports;
 * - start-up loads neither OpenPGP.js (loaded on the first OpenPGP signature) nor Node's bundled
 *   undici (which an ESM import of node:http would load): seen by a module loader hook and by
 *   process.moduleLoadList in a process that builds the app as server.ts does.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, it } from 'node:test'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { skipBecause } from './helpers/tools.js'

/** The C library is glibc when Node's report names its version. */
function glibc(): boolean {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
  return header?.glibcVersionRuntime !== undefined
}

interface TuningLine { msg?: string, malloc: string[], skipped?: string, whenQuiet: string[] }
interface ReclaimLine { msg?: string, rssBefore: number, rssAfter: number, heapBefore: number, heapAfter: number, ms: number }

function logLines<T>(server: HashdProcess, message: string): T[] {
  return server.stdout().split('\n')
    .map((text) => { try { return JSON.parse(text) as T & { msg?: string } } catch { return null } })
    .filter((entry): entry is T & { msg?: string } => entry?.msg === message)
}

describe('glibc malloc settings at start', { skip: glibc() ? false : skipBecause('not glibc: hashd leaves other C libraries alone') }, () => {
  const settings = async (env: Record<string, string>, nodeFlags: string[] = []): Promise<TuningLine> => {
    const server = await startHashd({ LOG_LEVEL: 'debug', ...env }, nodeFlags)
    try {
      const line = logLines<TuningLine>(server, 'memory tuning')[0]
      assert.ok(line, 'a "memory tuning" debug line')
      return line
    } finally {
      await server.stop()
    }
  }

  it('sets the mmap threshold, trim threshold and arena count; trims when quiet', async () => {
    const line = await settings({})
    assert.deepEqual(line.malloc, ['M_MMAP_THRESHOLD=131072', 'M_TRIM_THRESHOLD=134217728', 'M_ARENA_MAX=2'])
    assert.deepEqual(line.whenQuiet, ['malloc_trim'], 'without --expose-gc there is no collection to run')
  })

  it('with --expose-gc (as npm start runs it), a V8 collection before the trim', async () => {
    assert.deepEqual((await settings({}, ['--expose-gc'])).whenQuiet, ['v8-collection', 'malloc_trim'])
  })

  it('leaves MALLOC_ARENA_MAX as the operator set it', async () => {
    assert.deepEqual((await settings({ MALLOC_ARENA_MAX: '4' })).malloc, ['M_MMAP_THRESHOLD=131072', 'M_TRIM_THRESHOLD=134217728'])
  })

  it('MEMORY_TUNING=off sets nothing and reclaims nothing', async () => {
    const off = await settings({ MEMORY_TUNING: 'off' }, ['--expose-gc'])
    assert.deepEqual(off.malloc, [])
    assert.deepEqual(off.whenQuiet, [])
    assert.equal(off.skipped, 'MEMORY_TUNING=off')
  })
})

describe('memory given back when quiet', { skip: glibc() ? false : skipBecause('not glibc: the trim is glibc\'s') }, () => {
  /** V8's --trace-gc lines for collections asked for through the gc function. */
  const askedCollections = (server: HashdProcess): string[] => server.stdout().split('\n').filter((line) => /Mark-Compact.* testing;/.test(line))

  it('after start-up, once quiet: a memory-reducing collection, then RSS lower than before it', { timeout: 60_000 }, async () => {
    const server = await startHashd({ LOG_LEVEL: 'debug' }, ['--expose-gc', '--trace-gc'])
    try {
      await server.get('/api/health')
      assert.deepEqual(askedCollections(server), [], 'no collection asked for at start')
      // The check runs every 10 s: start-up makes the first window busy, the next quiet one reclaims.
      await server.logged(/^memory reclaimed while quiet$/, 0, 40_000)
      const [reclaimed] = logLines<ReclaimLine>(server, 'memory reclaimed while quiet')
      assert.ok(reclaimed)
      assert.ok(reclaimed.rssAfter < reclaimed.rssBefore, `RSS ${reclaimed.rssBefore} → ${reclaimed.rssAfter}`)
      const asked = askedCollections(server)
      assert.ok(asked.length >= 1, 'the reclaim ran a full collection')
      if (Number(process.versions.v8.split('.')[0]) >= 12) assert.ok(asked.some((line) => line.includes('Mark-Compact (reduce)')), asked.join('\n'))
      // Once per busy spell: a quiet server does not collect again.
      await new Promise((resolve) => setTimeout(resolve, 11_000))
      assert.equal(logLines<ReclaimLine>(server, 'memory reclaimed while quiet').length, 1)
      assert.equal(askedCollections(server).length, asked.length)
    } finally {
      await server.stop()
    }
  })
})

describe('what start-up loads', () => {
  // Builds and readies the app in a fresh process, recording every ES module loaded through a
  // loader hook (module.register: Node 20.6 and later), then imports openpgp itself, to show the
  // hook would have seen it.
  const script = `
    import { register } from 'node:module'
    import { MessageChannel } from 'node:worker_threads'
    const { port1, port2 } = new MessageChannel()
    const loaded = []
    port1.on('message', (url) => loaded.push(url))
    const hooks = 'let port; export function initialize(data) { port = data.port }' +
      ' export async function load(url, context, next) { port.postMessage(url); return next(url, context) }'
    register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] })
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200))
    const { buildApp } = await import(process.env.APP)
    const { loadConfig } = await import(process.env.CONFIG)
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', PORT: '0' }))
    await app.ready()
    await settle()
    const openpgpAtStart = loaded.some((url) => url.includes('/node_modules/openpgp/'))
    const undiciAtStart = process.moduleLoadList.some((name) => name.includes('undici'))
    await app.close()
    await import('openpgp')
    await settle()
    console.log(JSON.stringify({ openpgpAtStart, undiciAtStart, openpgpSeen: loaded.some((url) => url.includes('/node_modules/openpgp/')), modules: loaded.length }))
    process.exit(0)
  `

  it('neither OpenPGP.js nor undici', { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', APP: new URL('../src/app.js', import.meta.url).href, CONFIG: new URL('../src/config.js', import.meta.url).href },
    })
    const result = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { openpgpAtStart: boolean, undiciAtStart: boolean, openpgpSeen: boolean, modules: number }
    assert.ok(result.modules > 10, `the hook saw ${result.modules} modules`)
    assert.equal(result.openpgpSeen, true, 'the hook sees openpgp once it is imported')
    assert.equal(result.openpgpAtStart, false, 'OpenPGP.js loaded at start')
    assert.equal(result.undiciAtStart, false, 'undici loaded at start')
  })
})
