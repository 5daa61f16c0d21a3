/**
 * The breached-password store: a synthetic corpus in both of the downloader's layouts
 * (scripts/pwned-corpus.ts) imported by pwned:import and compared with what coreutils `sort` and
 * `grep` find in the same text, reads from the page cache and through the thread pool, damaged
 * stores refused at start with exit status 2, and a store replaced on disk while the server runs.
 * GET /range/{prefix} over it is test/pwned-range.test.ts.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, copyFileSync, fdatasyncSync, mkdtempSync, statfsSync, openSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { importPwned, ImportError, verifyStore } from '../src/screening/import.js'
import { PwnedStore } from '../src/screening/store.js'
import { pageCacheReader } from '../src/screening/page-cache-read.js'
import { rangeText } from '../src/screening/range.js'
import { storeReads } from '../src/screening/status.js'
import { corpus, corpusInput, grepRange, sortedText, store, type Corpus } from './helpers/pwned.js'
import { spawnHashd, startHashd } from './helpers/process.js'
import { metricValue } from './helpers/server.js'
import { skipBecause } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-store-'))
const cleanups: string[] = [dir]
after(() => { for (const path of cleanups) rmSync(path, { recursive: true, force: true }) })

const SCRIPTS = fileURLToPath(new URL('../scripts/', import.meta.url))

/** Reads of SHA-1 stores answered from the page cache so far (the count behind hashd_pwned_store_cached_reads_total). */
const cachedReads = (): number => storeReads().find((reads) => reads.kind === 'sha1')?.cached ?? 0

/** statfs(2) f_type of tmpfs, whose pages are the file: they cannot be dropped from the page cache. */
const TMPFS_MAGIC = 0x01021994

/**
 * A fresh folder (removed after the file's tests) on a file system whose pages can be dropped: the
 * temporary folder, or /var/tmp where that is tmpfs (as on many CI runners); undefined when both are.
 */
function droppableFolder(): string | undefined {
  for (const base of [tmpdir(), '/var/tmp']) {
    try {
      if (statfsSync(base).type === TMPFS_MAGIC) continue
      const folder = mkdtempSync(join(base, 'hashd-uncached-'))
      cleanups.push(folder)
      return folder
    } catch { /* not there, or not writable: the next */ }
  }
  return undefined
}

/**
 * Drops a file's pages from the page cache (fdatasync, then posix_fadvise POSIX_FADV_DONTNEED,
 * through koffi), so that its next read needs the disk. False on tmpfs.
 */
function evicted(file: string): boolean {
  if (statfsSync(file).type === TMPFS_MAGIC) return false
  const fd = openSync(file, 'r')
  try {
    fdatasyncSync(fd)
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi')
    const fadvise = koffi.load('libc.so.6').func('int posix_fadvise(int fd, int64_t offset, int64_t len, int advice)') as (fd: number, offset: number, length: number, advice: number) => number
    assert.equal(fadvise(fd, 0, 0, 4 /* POSIX_FADV_DONTNEED */), 0)
    return true
  } finally {
    closeSync(fd)
  }
}

describe('pwned:import', () => {
  let folder: Corpus
  let sorted: string
  before(async () => {
    folder = await corpus({ hashes: 6000 })
    cleanups.push(folder.dir)
    sorted = sortedText(folder, dir, 'folder')
  })

  it('makes the same store from a folder of prefix files and from one ordered file, at under 20 bytes a hash with the index', () => {
    const fromFolder = store(corpusInput(folder), join(dir, 'folder.store'))
    // The single-file layout of the same hashes, from coreutils sort.
    const single = join(dir, 'single.txt')
    writeFileSync(single, readFileSync(sorted))
    const fromFile = store(single, join(dir, 'single.store'))
    assert.equal(fromFolder.hashes, readFileSync(sorted, 'utf8').split('\n').filter((line) => line !== '').length)
    assert.equal(fromFile.dataSha256, fromFolder.dataSha256)
    assert.equal(fromFile.hashes, fromFolder.hashes)
    // 8 MiB of index over 6,000 hashes dominates here; the records alone are 18 bytes and a little more.
    const dataBytes = fromFolder.bytes - 256 - (2 ** 20 + 1) * 8
    assert.ok(dataBytes / fromFolder.hashes < 18.5, `${dataBytes / fromFolder.hashes} bytes per record`)
    assert.ok(dataBytes / fromFolder.hashes >= 18)
  })

  it('sorts shuffled prefix files, adds the counts of repeated hashes and leaves out count-0 lines', () => {
    const messy = mkdtempSync(join(tmpdir(), 'hashd-messy-'))
    cleanups.push(messy)
    const names = readdirSync(folder.dir).filter((name) => name.endsWith('.txt') && name !== 'known.tsv')
    for (const name of names) {
      const lines = readFileSync(join(folder.dir, name), 'utf8').split('\r\n').reverse()
      // A repeat of the first line with another count, a padding line, LF line ends, lowercase hex.
      const [suffix = ''] = (lines[0] ?? '').split(':')
      lines.push(`${suffix.toLowerCase()}:5`, `${'0'.repeat(35)}:0`)
      writeFileSync(join(messy, name), lines.join('\n') + '\n')
    }
    const summary = store(messy, join(dir, 'messy.store'))
    const reference = store(corpusInput(folder), join(dir, 'reference.store'))
    assert.equal(summary.hashes, reference.hashes)
    assert.equal(summary.duplicatesMerged, names.length)
    assert.equal(summary.zeroCountLines, names.length)
    assert.equal(summary.occurrences, reference.occurrences + 5 * names.length)
  })

  it('refuses a file out of order, a malformed line and a folder with prefix files missing, naming where', () => {
    const unordered = join(dir, 'unordered.txt')
    writeFileSync(unordered, `${'F'.repeat(40)}:1\r\n${'0'.repeat(40)}:2\r\n`)
    assert.throws(() => importPwned(unordered, join(dir, 'x.store'), { kind: 'sha1' }), (error: Error) =>
      error instanceof ImportError && /line 2: the hashes are not ordered \(prefix 00000 comes after FFFFF\); sort the file first/.test(error.message))
    const malformed = join(dir, 'malformed.txt')
    writeFileSync(malformed, `${'0'.repeat(40)}:1\n${'1'.repeat(39)}:1\n`)
    assert.throws(() => importPwned(malformed, join(dir, 'x.store'), { kind: 'sha1' }), /malformed\.txt line 2: expected 40 hex digits, ":" and a count/)
    assert.throws(() => importPwned(malformed, join(dir, 'x.store'), { kind: 'ntlm' }), /line 1: expected 32 hex digits/)
    assert.throws(() => importPwned(folder.dir, join(dir, 'x.store'), { kind: 'sha1' }), /lacks \d+ of the 1048576 prefix files \(the first: 00000\.txt\): an unfinished download\? .*--allow-missing/)
    assert.equal(readdirSync(dir).filter((name) => name.includes('importing')).length, 0, 'no temporary file left behind')
  })

  it('runs as a script: npm run pwned:import and pwned:verify', () => {
    const output = execFileSync(process.execPath, [join(SCRIPTS, 'pwned-import.js'), folder.dir, join(dir, 'script.store'), '--allow-missing'], { encoding: 'utf8' })
    assert.match(output, /script\.store: [\d,]+ SHA-1 hashes from a folder .* M hashes\/s; .* bytes per hash\n {2}data date \d{4}-\d\d-\d\dT.*, data SHA-256 [0-9a-f]{64}/)
    assert.match(execFileSync(process.execPath, [join(SCRIPTS, 'pwned-verify.js'), join(dir, 'script.store')], { encoding: 'utf8' }), /script\.store: sound, [\d,]+ SHA-1 hashes/)
    const missing = spawnSync(process.execPath, [join(SCRIPTS, 'pwned-import.js'), folder.dir, join(dir, 'script.store')], { encoding: 'utf8' })
    assert.equal(missing.status, 1)
    assert.match(missing.stderr, /^pwned:import: .* an unfinished download\?/)
    assert.equal(spawnSync(process.execPath, [join(SCRIPTS, 'pwned-import.js'), folder.dir], { encoding: 'utf8' }).status, 2)
  })

  it('pwned:verify finds damaged data that the check at open does not read', () => {
    const damaged = join(dir, 'damaged.store')
    copyFileSync(join(dir, 'folder.store'), damaged)
    const fd = openSync(damaged, 'r+')
    writeSync(fd, Buffer.from([0xff, 0xee]), 0, 2, statSync(damaged).size - 40)
    closeSync(fd)
    PwnedStore.open(damaged, 'PWNED_STORE', 'sha1').retire()
    const summary = verifyStore(damaged)
    assert.equal(summary.ok, false)
    assert.match(summary.problem ?? '', /data checksum does not match|out of order|runs past/)
    const script = spawnSync(process.execPath, [join(SCRIPTS, 'pwned-verify.js'), damaged], { encoding: 'utf8' })
    assert.equal(script.status, 1)
    assert.match(script.stderr, /damaged\.store: /)
  })

  it('answers a prefix from the page cache on the event loop when it holds the records, and through the thread pool when not', async (t) => {
    if (pageCacheReader() === null) return t.skip(skipBecause('reads that never wait (preadv2 RWF_NOWAIT) are Linux and glibc only: every read goes through the pool'))
    const folder = droppableFolder()
    if (folder === undefined) return t.skip(skipBecause(`${tmpdir()} and /var/tmp are on tmpfs, whose pages cannot be dropped from the page cache`))
    const file = join(folder, 'folder.store')
    copyFileSync(join(dir, 'folder.store'), file)
    const opened = PwnedStore.open(file, 'PWNED_STORE', 'sha1')
    try {
      assert.ok(evicted(file), `${file}: its pages were not dropped`)
      // Not cached: the read never waits, and is left to the pool. The kernel starts the readahead
      // before it refuses, and a disk that answers within the call (a virtual disk over the host's
      // cache can) makes the read succeed instead: so drop the pages again until a read is refused.
      let refused = false
      for (let attempt = 0; attempt < 50 && !refused; attempt++) {
        if (attempt > 0) evicted(file)
        const counted = cachedReads()
        const now = opened.prefixNow(0x5baa6)
        if (now === null) {
          refused = true
          assert.equal(cachedReads(), counted, 'a refused read is not counted as cached')
        } else {
          assert.equal(rangeText(now).toString('latin1'), grepRange(sorted, '5BAA6'), 'what the readahead brought in time')
        }
      }
      assert.ok(refused, 'a read of pages not cached was refused at least once in 50 drops')
      const read = await opened.prefix(0x5baa6)
      assert.equal(rangeText(read).toString('latin1'), grepRange(sorted, '5BAA6'))
      // Read, the pages are in the cache: the same records, now on this tick, counted as cached
      // (counted from here: a read in the loop above that the readahead answered counted too).
      const cachedBefore = cachedReads()
      const now = opened.prefixNow(0x5baa6)
      assert.ok(now)
      assert.deepEqual(now.bytes, read.bytes)
      assert.ok(cachedReads() > cachedBefore)
      assert.equal(rangeText(await opened.prefix(0xfffff)).toString('latin1'), grepRange(sorted, 'FFFFF'))
    } finally {
      opened.retire()
    }
  })

  it('closes a retired store\'s descriptor only when the read in flight on it has finished', async () => {
    const opened = PwnedStore.open(join(dir, 'folder.store'), 'PWNED_STORE', 'sha1')
    const reading = opened.prefix(0x5baa6)
    opened.retire()
    assert.equal(opened.open, true, 'still open while a read is in flight')
    await reading
    assert.equal(opened.open, false)
    await assert.rejects(opened.prefix(0), /store closed/)
  })
})

describe('a store refused at start, and replaced while running', () => {
  let good: string
  let ntlm: string
  let goodHashes: number
  before(async () => {
    const source = await corpus({ hashes: 2000, seed: 21 })
    const ntlmSource = await corpus({ hashes: 500, kind: 'ntlm', seed: 22 })
    cleanups.push(source.dir, ntlmSource.dir)
    good = join(dir, 'good.store')
    ntlm = join(dir, 'ntlm.store')
    goodHashes = store(source.dir, good).hashes
    store(ntlmSource.dir, ntlm, 'ntlm')
  })

  /** A copy of the good store with `change` applied to its bytes. */
  function variant(name: string, change: (bytes: Buffer) => Buffer): string {
    const file = join(dir, name)
    writeFileSync(file, change(readFileSync(good)))
    return file
  }
  /** Rewrites the header's checksum after a change to its fields (a well-formed header saying something else). */
  function resummed(bytes: Buffer): Buffer {
    createHash('sha256').update(bytes.subarray(0, 144)).digest().copy(bytes, 144)
    return bytes
  }

  const cases: Array<{ name: string, file: () => string, message: RegExp }> = [
    { name: 'missing', file: () => join(dir, 'no-such.store'), message: /PWNED_STORE .*no-such\.store: cannot be opened \(ENOENT\)/ },
    { name: 'not a store', file: () => variant('text.store', () => Buffer.from('0000000A8DAE4228F821FB418F59826079BF368:42\r\n')), message: /shorter than a store's 256-byte header/ },
    { name: 'another file', file: () => variant('other.store', (bytes) => Buffer.concat([Buffer.from('PK\x03\x04'), bytes])), message: /not a hashd breached-password store \(no HASHDPWN header\)/ },
    { name: 'truncated', file: () => variant('truncated.store', (bytes) => bytes.subarray(0, bytes.length - 100)), message: /the file is truncated \(an unfinished copy\?\)/ },
    { name: 'of another version', file: () => variant('v2.store', (bytes) => { bytes.writeUInt32LE(2, 8); return resummed(bytes) }), message: /a store of format version 2, and this hashd reads version 1; import the data again/ },
    { name: 'with a damaged header', file: () => variant('header.store', (bytes) => { bytes[20] = (bytes[20] as number) ^ 1; return bytes }), message: /header checksum does not match/ },
    { name: 'with a damaged index', file: () => variant('index.store', (bytes) => { bytes[256 + 8 * 1000] = (bytes[256 + 8 * 1000] as number) ^ 1; return bytes }), message: /index checksum does not match/ },
    { name: 'of NTLM hashes', file: () => ntlm, message: /holds NTLM hashes; PWNED_STORE takes a SHA-1 store \(import without --ntlm\)/ },
  ]
  for (const { name, file, message } of cases) {
    it(`stops the server with exit status 2 and a clear message for a store ${name}`, async () => {
      const hashd = spawnHashd({ PWNED_STORE: file() })
      const { code } = await hashd.exited
      assert.equal(code, 2, hashd.stderr())
      assert.match(hashd.stderr(), message)
      assert.match(hashd.stderr(), /^hashd: PWNED_STORE /)
    })
  }

  it('opens on a reload without holding the event loop: openAsync reads the index a piece per turn, and agrees with open on every store above', async () => {
    const opened = PwnedStore.open(good, 'PWNED_STORE', 'sha1')
    let turns = 0
    let counting = true
    const count = (): void => { turns++; if (counting) setImmediate(count) }
    setImmediate(count)
    const openedAsync = await PwnedStore.openAsync(good, 'PWNED_STORE', 'sha1')
    counting = false
    try {
      // The 8 MiB index in 64 KiB pieces, each read through libuv: the event loop turns between them.
      assert.ok(turns >= 64, `only ${turns} turns of the event loop while the index was read`)
      assert.deepEqual(openedAsync.facts(), opened.facts())
      for (const prefix of [0, 0x5baa6, 0xfffff, 0x12345]) assert.deepEqual((await openedAsync.prefix(prefix)).bytes, (await opened.prefix(prefix)).bytes)
    } finally {
      opened.retire()
      openedAsync.retire()
    }
    for (const { name, file, message } of cases) {
      await assert.rejects(PwnedStore.openAsync(file(), 'PWNED_STORE', 'sha1'), message, name)
    }
  })

  it('keeps the store in force when a bad one replaces it, and swaps in a good one, with its count and date in the metrics; /api/health says degraded meanwhile', async () => {
    const live = join(dir, 'live.store')
    copyFileSync(good, live)
    const hashd = await startHashd({ PWNED_STORE: live })
    try {
      assert.equal(await metricValue(hashd, 'hashd_pwned_store_hashes{kind="sha1"}'), goodHashes)
      const firstRange = await (await hashd.fetch('/range/5BAA6')).text()
      // A truncated copy moved into place: refused, the old store answers on.
      const bad = join(dir, 'live.store.new')
      writeFileSync(bad, readFileSync(good).subarray(0, 4000))
      renameSync(bad, live)
      await until(async () => (await hashd.get('/api/health')).body.degraded === true)
      const warning = hashd.stdout().split('\n').find((line) => line.includes('"source":"pwned-store"') && line.includes('not reloaded')) ?? '{}'
      assert.match((JSON.parse(warning) as { reason: string }).reason, /PWNED_STORE .*live\.store: it is 4000 bytes and its header says \d+: the file is truncated/)
      assert.equal(await (await hashd.fetch('/range/5BAA6')).text(), firstRange)
      assert.match(await (await hashd.fetch('/metrics')).text(), /hashd_file_reload_failing\{source="pwned-store"\} 1/)
      // A new import written over it (as pwned:import does: a temporary file renamed into place).
      const next = await corpus({ hashes: 3000, seed: 31 })
      cleanups.push(next.dir)
      const summary = store(next.dir, live)
      await until(async () => await metricValue(hashd, 'hashd_pwned_store_hashes{kind="sha1"}') === summary.hashes)
      assert.equal((await hashd.get('/api/health')).body.degraded, false)
      const metrics = await (await hashd.fetch('/metrics')).text()
      assert.match(metrics, new RegExp(`hashd_pwned_store_hashes\\{kind="sha1"\\} ${summary.hashes}`))
      assert.match(metrics, new RegExp(`hashd_pwned_store_data_timestamp_seconds\\{kind="sha1"\\} ${Date.parse(summary.dataDate) / 1000}`))
      assert.match(metrics, /hashd_pwned_store_reads_total\{kind="sha1",outcome="ok"\} [1-9]/)
      // The store was just read: on Linux the page cache answered at least the second read on the event loop.
      if (pageCacheReader() !== null) assert.match(metrics, /hashd_pwned_store_cached_reads_total\{kind="sha1"\} [1-9]/)
      await hashd.logged(/^breached-password store \(PWNED_STORE\) reloaded \(changed on disk\)$/)
      // The old store's descriptor is closed once replaced: only the new file stays open.
      const open = readdirSync(`/proc/${hashd.child.pid}/fd`).map((fd) => { try { return readlinkSync(`/proc/${hashd.child.pid}/fd/${fd}`) } catch { return '' } })
      assert.equal(open.filter((target) => target.includes('live.store')).length, 1, open.join(' '))
    } finally {
      await hashd.stop()
    }
  })
})

async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail('condition not met within 15 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

