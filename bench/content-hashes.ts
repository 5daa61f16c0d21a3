/**
 * The content-hash section of `npm run bench` (`BENCH_ONLY=content`), each row against its peer on
 * the same file in the same run, in A B B A rounds (uploads.ts):
 * - each content hash alone, a raw upload of BENCH_CONTENT_MIB (1024) MiB of random data with
 *   `curl -T`, against the fastest independent tool here that computes it (or, where none reads a
 *   file, the digest it is built on): rhash for TTH, AICH, BTIH, ED2K and the magnet link; `rclone
 *   hashsum` for Dropbox and quickXorHash; `git hash-object`; the AWS SDK's CRC packages and
 *   ipfs-unixfs-importer (bench/content-peer.ts); md5sum, sha1sum and sha256sum for the ETag, the
 *   MD5s and the SHA checksums. Ratio = the peer's time ÷ hashd's (goal ≥ 0.9);
 * - every content hash in one upload, against the slowest of them alone (goal ≤ 1.5×), with the
 *   floor the cores set: the server's CPU seconds for that upload (utime + stime from /proc) ÷ the
 *   cores ÷ the slowest alone. No split of the work can beat it; the sum of the rows' CPU seconds
 *   alone is printed beside it (each of those pays for receiving the body again);
 * - the server's peak RSS during a 4 GiB upload, streamed from /dev/zero with no declared length,
 *   with every content hash at once and MAX_FILE_SIZE raised (goal ≤ 256 MB).
 * BENCH_CONTENT_ROUNDS (3) rounds a pair; BENCH_CONTENT_ONLY=tth,aich picks rows (the every-at-once row
 * then runs only with BENCH_CONTENT_EVERY=1, against the slowest of the rows picked).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeKey, recordFigure } from './figures.js'
import { hasProgram, start, stop, type Started } from './servers.js'
import { abba, curlPut, randomFile, rssKiB, timed, type Paired } from './uploads.js'

const FILE_MIB = Number(process.env.BENCH_CONTENT_MIB ?? 1024)
const ROUNDS = Math.max(1, Number(process.env.BENCH_CONTENT_ROUNDS ?? 3))
const ONLY = process.env.BENCH_CONTENT_ONLY?.split(',').map((name) => name.trim()).filter((name) => name !== '')
const BIG_GIB = 4
const here = dirname(fileURLToPath(import.meta.url))
const peerScript = join(here, 'content-peer.js')

/** A row: what hashd is asked (`algorithms=` and its parameters) and the peer command on the same file. */
interface Row {
  name: string
  query: string
  peer: { label: string, program: string, command: (file: string, scratch: string) => [string, string[]] }
}

const rhash = (flags: string[]) => ({ label: `rhash ${flags.join(' ')}`, program: 'rhash', command: (file: string): [string, string[]] => ['rhash', [...flags, file]] })
const coreutils = (command: string) => ({ label: command, program: command, command: (file: string): [string, string[]] => [command, [file]] })
const rclone = (hash: string) => ({
  label: `rclone hashsum ${hash}`, program: 'rclone',
  // rclone reads a folder: the scratch folder holds a link to the file alone.
  command: (_file: string, scratch: string): [string, string[]] => ['rclone', ['--config', '/dev/null', 'hashsum', hash, join(scratch, 'one')]],
})
const node = (peer: string, label: string) => ({ label, program: 'node', command: (file: string): [string, string[]] => [process.execPath, [peerScript, peer, file]] })

const ROWS: Row[] = [
  { name: 's3-etag', query: 's3-etag', peer: coreutils('md5sum') },
  { name: 's3-crc64nvme', query: 's3-crc64nvme', peer: node('crc64nvme', '@aws-sdk/crc64-nvme') },
  { name: 's3-crc32', query: 's3-crc32', peer: rhash(['--crc32']) },
  { name: 's3-crc32c', query: 's3-crc32c', peer: node('crc32c', '@aws-crypto/crc32c') },
  { name: 's3-sha1', query: 's3-sha1', peer: coreutils('sha1sum') },
  { name: 's3-sha256', query: 's3-sha256', peer: coreutils('sha256sum') },
  { name: 'gcs-crc32c', query: 'gcs-crc32c', peer: node('crc32c', '@aws-crypto/crc32c') },
  { name: 'gcs-md5', query: 'gcs-md5', peer: coreutils('md5sum') },
  { name: 'azure-md5', query: 'azure-md5', peer: coreutils('md5sum') },
  { name: 'dropbox', query: 'dropbox', peer: rclone('dropbox') },
  { name: 'quickxor', query: 'quickxor', peer: rclone('quickxor') },
  { name: 'git-blob-sha1', query: 'git-blob-sha1', peer: { label: 'git hash-object', program: 'git', command: (file) => ['git', ['hash-object', '--no-filters', file]] } },
  {
    name: 'git-blob-sha256', query: 'git-blob-sha256',
    peer: { label: 'git hash-object (sha256 repository)', program: 'git', command: (file, scratch) => ['git', ['-C', join(scratch, 'sha256.git'), 'hash-object', '--no-filters', file]] },
  },
  { name: 'tth', query: 'tth', peer: rhash(['--tth']) },
  { name: 'aich', query: 'aich', peer: rhash(['--aich']) },
  { name: 'ed2k', query: 'ed2k', peer: rhash(['--ed2k']) },
  { name: 'btih', query: 'btih&name=upload.bin', peer: rhash(['--btih']) },
  // No tool computes a v2 pieces root from a file alone at speed (libtorrent's Python binding makes a
  // whole torrent): SHA-256 over the same bytes is the work it is built on.
  { name: 'bt2-root', query: 'bt2-root', peer: coreutils('sha256sum') },
  { name: 'ipfs-cid', query: 'ipfs-cid', peer: node('ipfs', 'ipfs-unixfs-importer') },
  { name: 'magnet', query: 'magnet&name=upload.bin', peer: rhash(['--magnet', '--btih', '--tth', '--ed2k', '--aich']) },
]

const fmt = (seconds: number) => `${seconds.toFixed(2)} s`

/** A process's CPU seconds so far, user and system, all threads (/proc/PID/stat fields 14 and 15, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const middle = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

/** An upload, timed, which also notes the server's CPU seconds for it in `cpu`. */
function measured(upload: () => number, pid: number, cpu: number[]): () => number {
  return () => {
    const before = cpuSeconds(pid)
    const seconds = upload()
    cpu.push(cpuSeconds(pid) - before)
    return seconds
  }
}

export async function benchContentHashes(hashdScript: string): Promise<void> {
  if (!hasProgram('curl')) {
    console.log('content hashes: skipped (curl is missing; Debian: curl)')
    return
  }
  const scratch = mkdtempSync(join(tmpdir(), 'hashd-bench-content-'))
  const file = join(scratch, 'upload.bin')
  let hashd: Started | undefined
  try {
    randomFile(file, FILE_MIB)
    mkdirSync(join(scratch, 'one'))
    spawnSync('ln', [file, join(scratch, 'one', 'upload.bin')])
    if (hasProgram('git')) spawnSync('git', ['init', '--quiet', '--bare', '--object-format=sha256', join(scratch, 'sha256.git')])
    hashd = await start(hashdScript, { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' })
    const url = (query: string) => `${hashd!.url}/api/filehash?algorithms=${query}`
    console.log(`\n8. content hashes: raw uploads of ${FILE_MIB} MiB of random data (curl -T) against a peer on the same file, ${ROUNDS} rounds of A B B A (ratio = peer time / hashd time)`)
    const rows = ROWS.filter((row) => ONLY === undefined || ONLY.includes(row.name))
    const alone = new Map<string, number>()
    const aloneCpu = new Map<string, number>()
    const serverPid = hashd.child.pid as number
    for (const row of rows) {
      if (!hasProgram(row.peer.program)) {
        console.log(`${row.name.padEnd(16)} skipped: ${row.peer.program} is missing`)
        continue
      }
      const [command, args] = row.peer.command(file, scratch)
      const cpu: number[] = []
      const hashdRun = measured(curlPut(url(row.query), file), serverPid, cpu)
      const peerRun = () => timed(command, args)
      hashdRun()
      peerRun()
      cpu.length = 0
      const pair: Paired = abba(hashdRun, peerRun, ROUNDS)
      alone.set(row.name, pair.a)
      aloneCpu.set(row.name, middle(cpu))
      console.log(`${row.name.padEnd(16)} hashd ${fmt(pair.a).padStart(8)} (CPU ${fmt(middle(cpu))})   ${row.peer.label.padEnd(40)} ${fmt(pair.b).padStart(8)}   ratio ${pair.ratio.toFixed(2)} (goal ≥ 0.9)`)
      recordFigure(`content-${row.name}`, { [nodeKey()]: Number(pair.ratio.toFixed(2)) })
    }
    if ((rows.length === ROWS.length || process.env.BENCH_CONTENT_EVERY === '1') && alone.size > 0) {
      // Every content hash in one upload, against the slowest of them alone, in rounds of its own.
      const [slowest] = [...alone].sort((a, b) => b[1] - a[1])[0] as [string, number]
      const slowestQuery = (ROWS.find((row) => row.name === slowest) as Row).query
      const everyQuery = `${ROWS.map((row) => row.name).join(',')}&name=upload.bin`
      const everyCpu: number[] = []
      const all = abba(curlPut(url(slowestQuery), file), measured(curlPut(url(everyQuery), file), serverPid, everyCpu), ROUNDS)
      console.log(`every content hash at once: ${fmt(all.b)}; the slowest alone (${slowest}) ${fmt(all.a)}: ${all.ratio.toFixed(2)}× (goal ≤ 1.5×)`)
      // The floor on this machine: the upload's own CPU seconds spread perfectly over every core.
      const cores = availableParallelism()
      const floor = middle(everyCpu) / cores / all.a
      const sumAlone = [...aloneCpu.values()].reduce((sum, seconds) => sum + seconds, 0)
      console.log(`   floor on ${cores} cores: that upload's server CPU ${fmt(middle(everyCpu))} ÷ ${cores} cores ÷ ${fmt(all.a)} = ${floor.toFixed(2)}× at best`
        + ` (the rows alone sum to ${fmt(sumAlone)} of CPU, each receiving the body again: ÷ ${cores} ÷ ${fmt(all.a)} = ${(sumAlone / cores / all.a).toFixed(2)}×)`)
      recordFigure('content-all-at-once', { [nodeKey()]: Number(all.ratio.toFixed(2)) })
      recordFigure('content-all-at-once-floor', { [nodeKey()]: Number(floor.toFixed(2)) })
    }
    await stop(hashd)
    hashd = undefined

    // A 4 GiB upload with every content hash at once, streamed with no declared length.
    const bytes = BIG_GIB * 1024 ** 3
    hashd = await start(hashdScript, { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn', MAX_FILE_SIZE: String(bytes + 1024 ** 2) })
    const pid = hashd.child.pid as number
    const before = rssKiB(pid)
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, rssKiB(pid)) }, 50)
    const query = `${ROWS.map((row) => row.name).join(',')}&name=upload.bin&size=${bytes}`
    const started = process.hrtime.bigint()
    const upload = spawn('sh', ['-c', `head -c ${bytes} /dev/zero | curl -sS -f -o /dev/null -T - '${url(query)}'`], { stdio: 'inherit' })
    const code = await new Promise<number | null>((resolve) => upload.once('exit', resolve))
    clearInterval(sampler)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const mb = (kib: number) => Math.round(kib * 1024 / 1e6)
    console.log(`${BIG_GIB} GiB upload, every content hash at once, no declared length: ${code === 0 ? 'answered' : `FAILED (curl exit ${code})`} in ${fmt(seconds)}; `
      + `server RSS before ${mb(before)} MB, peak ${mb(peak)} MB (goal ≤ 256 MB)`)
    recordFigure('content-4gib-peak-rss', { [nodeKey()]: mb(peak) })
  } finally {
    if (hashd) await stop(hashd)
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await benchContentHashes(join(here, '..', 'src', 'server.js'))
}
