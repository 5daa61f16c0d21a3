/**
 * The upload half of `npm run bench`: each row against its peer in the same run, in A B B A order
 * so drift on a shared machine falls on both sides alike.
 * - raw sha256 (`curl -T`) and multipart sha256 (`curl -F`) against a bare node:http server
 *   hashing the raw body (`curl -T`);
 * - sha256 + md5 + sha1 + sha512 in one raw upload against the machine's ceiling: the four
 *   `openssl dgst` times split over the cores as evenly as possible, without receiving the body
 *   (`rhash` on the same file for scale);
 * - RSS 3 s after start and at rest (after 30 s idle; V8's memory reducer may by then have given
 *   back part of the young generation that start-up grew), and RSS growth during a 1 GiB raw upload
 *   with those four algorithms.
 * Each hashd form is run once untimed first (threads started, code warm), as the API rows warm up.
 * Each pair runs BENCH_UPLOAD_ROUNDS rounds (default 7) and is compared by the median of the rounds'
 * ratios; multipart ÷ raw is its own pair. BENCH_FILE_MIB sets the file size (default 256).
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { nodeKey, recordFigure } from './figures.js'
import { median } from './load.js'
import { hasProgram, start, stop, type Started } from './servers.js'

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 256)

/** Seconds one command takes, or NaN when it fails. */
export function timed(command: string, args: string[]): number {
  const started = process.hrtime.bigint()
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 20 })
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (result.status !== 0) {
    process.stderr.write(`bench: ${command} ${args.join(' ')} failed: ${String(result.stderr).slice(0, 200)}\n`)
    return Number.NaN
  }
  return seconds
}

/**
 * Uploads of 256 MiB on two shared cores vary by ±20 % from one run to the next, more than the
 * goals' margins, so each pair is measured over ROUNDS rounds of A B B A. Each side's time is the
 * median over the rounds of its mean of two runs, and the pair's ratio is the median over the rounds
 * of each round's own ratio: a round's two sides run within a second of each other, so drift from
 * one round to the next (a neighbour's burst, the memory bus shared with other guests) falls out of
 * the ratio, and one slow round moves a median little and a mean much.
 */
const ROUNDS = Math.max(1, Number(process.env.BENCH_UPLOAD_ROUNDS ?? 7))

export interface Paired { a: number, b: number, /** The median over the rounds of b's time ÷ a's. */ ratio: number }

/** `rounds` rounds of A B B A: each side's median time and the median of the rounds' ratios. */
export function abba(a: () => number, b: () => number, rounds = ROUNDS): Paired {
  const aRounds: number[] = []
  const bRounds: number[] = []
  for (let round = 0; round < rounds; round++) {
    const a1 = a(); const b1 = b(); const b2 = b(); const a2 = a()
    aRounds.push((a1 + a2) / 2)
    bRounds.push((b1 + b2) / 2)
  }
  return { a: median(aRounds), b: median(bRounds), ratio: median(bRounds.map((time, round) => time / (aRounds[round] as number))) }
}

/** The shortest time `times` take on `cores` cores when each runs whole on one core (every assignment tried). */
export function bestSplit(times: readonly number[], cores: number): number {
  let best = Number.POSITIVE_INFINITY
  const loads = new Array<number>(Math.max(1, Math.min(cores, times.length))).fill(0)
  const place = (index: number): void => {
    if (index === times.length) { best = Math.min(best, Math.max(...loads)); return }
    for (let core = 0; core < loads.length; core++) {
      loads[core] = (loads[core] as number) + (times[index] as number)
      place(index + 1)
      loads[core] = (loads[core] as number) - (times[index] as number)
    }
  }
  place(0)
  return best
}

export const curlPut = (url: string, file: string) => () => timed('curl', ['-sS', '-f', '-o', '/dev/null', '-T', file, url])
const curlForm = (url: string, file: string, algorithms: string) => () =>
  timed('curl', ['-sS', '-f', '-o', '/dev/null', '-F', `algorithms=${algorithms}`, '-F', `file=@${file}`, url])

export function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) : Number.NaN
}

const fmt = (seconds: number) => `${seconds.toFixed(3)} s`
function line(label: string, { a: hashd, b: peer, ratio }: Paired, peerLabel: string, goal: string): void {
  console.log(`${label.padEnd(44)} hashd ${fmt(hashd).padStart(9)}   ${peerLabel} ${fmt(peer).padStart(9)}   ratio ${ratio.toFixed(2)} (goal ${goal})`)
}

/** A file of `mib` MiB of random bytes (incompressible, so nothing along the way shortcuts it). */
export function randomFile(path: string, mib: number): void {
  const fd = openSync(path, 'w')
  for (let written = 0; written < mib; written++) writeSync(fd, randomBytes(1024 * 1024))
  // On disk before any timing starts: the kernel's writeback of a fresh file would otherwise share
  // the cores with the first uploads measured.
  fsyncSync(fd)
  closeSync(fd)
}

export async function benchUploads(hashdScript: string, bareScript: string): Promise<void> {
  if (!hasProgram('curl')) {
    console.log('uploads: skipped (curl is missing; Debian: curl)')
    return
  }
  const directory = mkdtempSync(join(tmpdir(), 'hashd-bench-'))
  const file = join(directory, 'upload.bin')
  randomFile(file, FILE_MIB)
  let hashd: Started | undefined
  let bare: Started | undefined
  try {
    hashd = await start(hashdScript, { RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info' })
    bare = await start(bareScript)
    console.log(`\n3. uploads of ${FILE_MIB} MiB of random data over loopback with curl (ratio = peer time / hashd time)`)
    const hashdUrl = `${hashd.url}/api/filehash`
    const fourUrl = `${hashdUrl}?algorithms=sha256,md5,sha1,sha512`
    for (const warmUp of [curlPut(`${hashdUrl}?algorithms=sha256`, file), curlForm(hashdUrl, file, 'sha256'), curlPut(fourUrl, file), curlPut(`${bare.url}/`, file)]) warmUp()
    const raw = abba(curlPut(`${hashdUrl}?algorithms=sha256`, file), curlPut(`${bare.url}/`, file))
    line('raw body sha256 (curl -T)', raw, 'bare node:http (curl -T)', '≥ 0.95')
    const form = abba(curlForm(hashdUrl, file, 'sha256'), curlPut(`${bare.url}/`, file))
    line('multipart sha256 (curl -F)', form, 'bare node:http (curl -T)', '≥ 0.90')
    // Issue 19: "bring multipart to within 5% of raw": the two forms against each other in their
    // own rounds, rather than two times taken in different rounds against the bare server.
    const paired = abba(curlPut(`${hashdUrl}?algorithms=sha256`, file), curlForm(hashdUrl, file, 'sha256'))
    console.log(`   multipart / raw time, paired: ${paired.ratio.toFixed(2)} (goal ≤ 1.05; medians ${fmt(paired.b)} / ${fmt(paired.a)}; from the rows above: ${(form.a / raw.a).toFixed(2)})`)
    // The machine's ceiling for the four-digest row: one `openssl dgst` pass per digest over the
    // cached file (nothing received), the four times split over the cores as evenly as possible (the
    // best assignment of whole digests to cores), against hashd receiving and hashing, in rounds.
    const digestNames = ['md5', 'sha1', 'sha256', 'sha512'] as const
    const openssl = hasProgram('openssl')
    const lastOpenssl: Partial<Record<typeof digestNames[number], number>> = {}
    if (openssl) {
      const cores = cpus().length
      const ceilingRun = () => {
        for (const name of digestNames) lastOpenssl[name] = timed('openssl', ['dgst', `-${name}`, file])
        return bestSplit(digestNames.map((name) => lastOpenssl[name] as number), cores)
      }
      const four = abba(curlPut(fourUrl, file), ceilingRun)
      const each = digestNames.map((name) => `${name} ${fmt(lastOpenssl[name] as number)}`).join(', ')
      line('sha256+md5+sha1+sha512, raw (curl -T)', four, `ceiling on ${cores} cores`, '≥ 0.75')
      console.log(`   the ceiling: median ${fmt(four.b)} over the rounds; the last round's openssl dgst ${each}`)
      if (hasProgram('rhash')) {
        const rhash = timed('rhash', ['--sha256', '--md5', '--sha1', '--sha512', file])
        console.log(`   for scale: rhash on the file ${fmt(rhash)}, ${(rhash / four.a).toFixed(2)} × hashd's time`)
      }
    } else {
      console.log('sha256+md5+sha1+sha512: skipped (openssl is missing, so no ceiling; Debian: openssl)')
    }
    if (openssl) console.log(`   for scale: openssl dgst -sha256 on the file: ${fmt(lastOpenssl.sha256 as number)}`)
    await stop(hashd)
    hashd = undefined

    // Memory: a fresh process, at rest, then during a 1 GiB upload streamed from /dev/zero.
    hashd = await start(hashdScript, {})
    // 3 s after start, then at rest: after 30 s without a request, by when V8's memory reducer may
    // have given back part of the young generation that start-up grew (not in every run).
    const pid = hashd.child.pid as number
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    const afterStart = rssKiB(pid)
    await new Promise((resolve) => setTimeout(resolve, 27_000))
    const atRest = rssKiB(pid)
    let peak = atRest
    const sampler = setInterval(() => { peak = Math.max(peak, rssKiB(pid)) }, 50)
    const upload = spawn('sh', ['-c', `head -c 1073741824 /dev/zero | curl -sS -f -o /dev/null -T - '${hashd.url}/api/filehash?algorithms=sha256,md5,sha1,sha512'`], { stdio: 'inherit' })
    await new Promise((resolve) => upload.once('exit', resolve))
    clearInterval(sampler)
    const mb = (kib: number) => `${(kib / 1024).toFixed(0)} MiB (${(kib * 1024 / 1e6).toFixed(0)} MB)`
    console.log(`\n4. memory (default config): RSS 3 s after start ${mb(afterStart)}; at rest (30 s idle) ${mb(atRest)} (goal ≤ 100 MB); ` +
      `growth during a 1 GiB upload with 4 algorithms ${((peak - atRest) / 1024).toFixed(0)} MiB (goal < 64 MiB)`)
    console.log('   memory under a mixed load: npm run soak (10 minutes; SOAK_SECONDS for shorter)')
    const decimalMB = (kib: number) => Math.round(kib * 1024 / 1e6)
    recordFigure('memory-after-start', { [nodeKey()]: decimalMB(afterStart) })
    recordFigure('memory-at-rest', { [nodeKey()]: decimalMB(atRest) })
    recordFigure('memory-upload-growth', { [nodeKey()]: Math.round((peak - atRest) / 1024) })
  } finally {
    if (hashd) await stop(hashd)
    if (bare) await stop(bare)
    rmSync(directory, { recursive: true, force: true })
  }
}
