/**
 * `npm run bench:similarity`: hashd's ssdeep and TLSH of one upload against the reference tools on
 * the same file, in the same run. A random file of BENCH_FILE_MIB (default 100) MiB; hashd started
 * as `npm start` starts it (LOG_LEVEL=warn, RATE_LIMIT_MAX=0) takes it as a raw PUT with
 * `algorithms=ssdeep`, then `tlsh`, then both; Debian's `ssdeep -b` and the TLSH reference's
 * `tlsh -f` (TLSH_BIN, the `bin/tlsh` a build of github.com/trendmicro/tlsh makes; skipped when
 * unset) hash the file from disk. Each pair runs BENCH_ROUNDS (default 5) rounds of A B B A
 * (uploads.ts `abba`): the times are medians of the rounds, and the ratio is the median of each
 * round's tool time over hashd's (above 1: hashd is faster), so that the shared cores' drift from
 * one round to the next falls out of it.
 *
 * Then CPU time, which a busy machine disturbs less than wall time: hashd's hashers (the ones the
 * registry runs) over the file in this process, in 64 KiB chunks, against the tools' user and system
 * time (read from /proc/self/stat's counts of waited-for children), the median of BENCH_ROUNDS each.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { median } from './load.js'
import { hasProgram, start, stop } from './servers.js'
import { FastSsdeepHasher, FastTlshHasher } from '../src/similarity/fast.js'
import { abba, curlPut, randomFile, timed } from './uploads.js'

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 100)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TLSH_BIN = process.env.TLSH_BIN

/** CPU seconds (user and system) of this process's waited-for children so far: /proc/self/stat's cutime and cstime. */
function childrenCpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ')
  // After the command's name: state is field 3 of proc(5), so cutime (16) and cstime (17) are at 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) / 100
}

function toolCpu(command: string, args: string[]): number {
  const before = childrenCpuSeconds()
  timed(command, args)
  return childrenCpuSeconds() - before
}

function hashdCpu(file: string, create: () => { update(data: Uint8Array): void, digest(): string }): number {
  const data = readFileSync(file)
  const before = process.cpuUsage()
  const hasher = create()
  for (let at = 0; at < data.length; at += 65536) hasher.update(data.subarray(at, at + 65536))
  hasher.digest()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1e6
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'hashd-bench-similarity-'))
  const file = join(scratch, 'random.bin')
  randomFile(file, FILE_MIB)
  const server = await start(fileURLToPath(new URL('../src/server.js', import.meta.url)), { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' })
  try {
    const hashd = (algorithms: string) => curlPut(`${server.url}/api/filehash?algorithms=${algorithms}`, file)
    const tool = (command: string, args: string[]) => () => timed(command, args)
    const row = (name: string, seconds: number, reference?: number, referenceName?: string, ratio?: number) =>
      console.log(`${name.padEnd(28)} ${seconds.toFixed(2).padStart(6)} s  ${(FILE_MIB / seconds).toFixed(0).padStart(4)} MiB/s`
        + (reference === undefined ? '' : `   ${referenceName} ${reference.toFixed(2)} s, ratio ${ratio!.toFixed(2)}`))
    const paired = (name: string, algorithms: string, referenceName: string, reference: (() => number) | undefined) => {
      if (reference === undefined) {
        const run = hashd(algorithms)
        row(name, median(Array.from({ length: ROUNDS }, () => run())))
        return
      }
      const { a, b, ratio } = abba(hashd(algorithms), reference, ROUNDS)
      row(name, a, b, referenceName, ratio)
    }
    console.log(`similarity bench: ${FILE_MIB} MiB random file, ${ROUNDS} rounds of A B B A, medians`)
    const ssdeepTool = hasProgram('ssdeep') ? tool('ssdeep', ['-b', file]) : undefined
    const tlshTool = TLSH_BIN ? tool(TLSH_BIN, ['-f', file]) : undefined
    paired('hashd PUT ssdeep', 'ssdeep', 'ssdeep -b', ssdeepTool)
    paired('hashd PUT tlsh', 'tlsh', 'tlsh -f', tlshTool)
    paired('hashd PUT ssdeep,tlsh', 'ssdeep,tlsh', '', undefined)
    const cpuRow = (name: string, hashd: number, reference: number | undefined, referenceName: string) =>
      console.log(`${name.padEnd(28)} ${hashd.toFixed(2).padStart(6)} s CPU` + (reference === undefined ? '' : `   ${referenceName} ${reference.toFixed(2)} s CPU, ratio ${(reference / hashd).toFixed(2)}`))
    const medianOf = (run: () => number) => median(Array.from({ length: ROUNDS }, () => run()))
    console.log(`CPU time, ${FILE_MIB} MiB in this process (64 KiB chunks) and the tools' own, medians of ${ROUNDS}`)
    cpuRow('hashd ssdeep in-process', medianOf(() => hashdCpu(file, () => new FastSsdeepHasher())), ssdeepTool && medianOf(() => toolCpu('ssdeep', ['-b', file])), 'ssdeep -b')
    cpuRow('hashd tlsh in-process', medianOf(() => hashdCpu(file, () => new FastTlshHasher())), TLSH_BIN ? medianOf(() => toolCpu(TLSH_BIN, ['-f', file])) : undefined, 'tlsh -f')
    if (ssdeepTool === undefined) console.log('ssdeep not installed (Debian: ssdeep): no reference row')
    if (tlshTool === undefined) console.log('TLSH_BIN not set: no TLSH reference row (build github.com/trendmicro/tlsh, then TLSH_BIN=…/bin/tlsh)')
  } finally {
    await stop(server)
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()
