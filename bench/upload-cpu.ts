/**
 * `npm run bench:upload-cpu`: where an upload's CPU goes inside hashd, per thread, and what the
 * process settings of the README's Benchmarks section change. Linux only (it reads /proc).
 *
 * For each variant (hashd as `npm start` starts it, the same with MEMORY_TUNING=off so glibc keeps
 * its defaults, without Node flags, with glibc's trim threshold at 32 MiB (its value before) instead
 * of memory-tuning.ts's 128 MiB, with V8's heap growth fixed at 1.5 times the live heap, without the 1 GiB
 * old-generation ceiling, and with what UPLOAD_CPU_EXTRA adds: Node flags and glibc variables), one
 * fresh hashd at `LOG_LEVEL=warn RATE_LIMIT_MAX=0`:
 * - RSS 3 s after start;
 * - a cold four-algorithm upload of 2 MiB (the hash threads start for it): CPU of each new thread;
 * - after one untimed run of each, BENCH_ROUNDS (default 2) raw uploads of BENCH_FILE_MIB (default
 *   256) MiB with sha256, then as many with sha256+md5+sha1+sha512, each with its wall time, the
 *   process's minor page faults, and CPU split into the main thread, the hash threads (those started
 *   by the uploads) and the other threads (V8's GC and compiler helpers, libuv);
 * - RSS after the uploads.
 * Per-thread CPU comes from /proc/<pid>/task/<tid>/stat (utime + stime), faults from the process's
 * minflt in /proc/<pid>/stat.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { statCpuTimes, statFields } from './load.js'
import { freePort, hasProgram, startFlags } from './servers.js'
import { curlPut, randomFile } from './uploads.js'

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 256)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const here = fileURLToPath(new URL('.', import.meta.url))

/** CPU seconds (utime + stime) of each thread of `pid`, by thread id. */
function threadCpu(pid: number): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { user, system } = statCpuTimes(`/proc/${pid}/task/${tid}/stat`)
      cpu.set(Number(tid), user + system)
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return cpu
}

const minorFaults = (pid: number): number => Number(statFields(`/proc/${pid}/stat`)[7])
const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Sample { seconds: number, faults: number, main: number, hashThreads: number, others: number }

/** One upload, with the CPU each group of threads used during it. `known` are the threads from before any upload. */
function measure(pid: number, known: Set<number>, upload: () => number): Sample {
  const before = threadCpu(pid)
  const faultsBefore = minorFaults(pid)
  const seconds = upload()
  const after = threadCpu(pid)
  const sample: Sample = { seconds, faults: minorFaults(pid) - faultsBefore, main: 0, hashThreads: 0, others: 0 }
  for (const [tid, cpu] of after) {
    const used = cpu - (before.get(tid) ?? 0)
    if (tid === pid) sample.main += used
    else if (known.has(tid)) sample.others += used
    else sample.hashThreads += used
  }
  return sample
}

function mean(samples: Sample[]): Sample {
  const sum = (pick: (sample: Sample) => number) => samples.reduce((total, sample) => total + pick(sample), 0) / samples.length
  return { seconds: sum((s) => s.seconds), faults: sum((s) => s.faults), main: sum((s) => s.main), hashThreads: sum((s) => s.hashThreads), others: sum((s) => s.others) }
}

const row = (label: string, s: Sample) =>
  `   ${label.padEnd(22)} ${s.seconds.toFixed(3)} s   minor faults ${Math.round(s.faults).toString().padStart(6)}   ` +
  `CPU s: main ${s.main.toFixed(2)}, hash threads ${s.hashThreads.toFixed(2)}, other threads ${s.others.toFixed(2)}`

async function variant(label: string, nodeFlags: string[], env: Record<string, string>, big: string, small: string): Promise<void> {
  const port = await freePort()
  const child = spawn(process.execPath, [...nodeFlags, `${here}../src/server.js`],
    { env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' }, stdio: 'ignore' })
  const pid = child.pid as number
  const url = `http://127.0.0.1:${port}/api/filehash`
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fetch(`http://127.0.0.1:${port}/api/health`)
        break
      } catch {
        if (attempt > 100) throw new Error('hashd did not start')
        await sleep(100)
      }
    }
    await sleep(3_000)
    const atStart = rssMiB(pid)
    const known = new Set(threadCpu(pid).keys())
    const four = `${url}?algorithms=sha256,md5,sha1,sha512`
    const cold = measure(pid, known, curlPut(four, small))
    const hashThreads = threadCpu(pid).size - known.size
    curlPut(`${url}?algorithms=sha256`, big)()
    curlPut(four, big)()
    const raw = mean(Array.from({ length: ROUNDS }, () => measure(pid, known, curlPut(`${url}?algorithms=sha256`, big))))
    const fourWarm = mean(Array.from({ length: ROUNDS }, () => measure(pid, known, curlPut(four, big))))
    console.log(`${label}\n   RSS 3 s after start ${atStart.toFixed(0)} MiB; after the uploads ${rssMiB(pid).toFixed(0)} MiB`)
    console.log(`   cold 2 MiB four-algorithm upload: ${hashThreads} hash threads started, ${(cold.hashThreads / Math.max(1, hashThreads)).toFixed(2)} s of CPU each`)
    console.log(row(`raw sha256, ${FILE_MIB} MiB`, raw))
    console.log(row(`four algorithms`, fourWarm))
  } finally {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
  }
}

async function main(): Promise<void> {
  if (process.platform !== 'linux' || !hasProgram('curl')) {
    console.log('upload CPU: skipped (needs Linux /proc and curl; Debian: curl)')
    return
  }
  const directory = mkdtempSync(join(tmpdir(), 'hashd-bench-'))
  try {
    const big = join(directory, 'big.bin')
    const small = join(directory, 'small.bin')
    randomFile(big, FILE_MIB)
    randomFile(small, 2)
    console.log(`upload CPU by thread, ${ROUNDS} warm rounds each (means), node ${process.version}\n`)
    const extra = (process.env.UPLOAD_CPU_EXTRA ?? '').split(' ').filter((word) => word !== '')
    const variants: Array<[string, string[], Record<string, string>]> = [
      [`hashd as npm start starts it (node ${startFlags().join(' ')}; glibc tuned by memory-tuning.ts)`, startFlags(), {}],
      ['the same with MEMORY_TUNING=off (glibc\'s defaults)', startFlags(), { MEMORY_TUNING: 'off' }],
      ['hashd without Node flags', [], {}],
      ['hashd as npm start starts it, with MALLOC_TRIM_THRESHOLD_=33554432 (memory-tuning.ts\'s value before issue 19\'s last change)', startFlags(), { MALLOC_TRIM_THRESHOLD_: '33554432' }],
      // A V8 setting that lowers the soak's peak (docs/benchmarks.md#npm-run-soak-memory-under-a-long-mixed-load), and what it costs uploads.
      ['hashd as npm start starts it, with --heap-growing-percent=50', [...startFlags(), '--heap-growing-percent=50'], {}],
      ['hashd as npm start starts it, without --max-old-space-size', startFlags().filter((flag) => !flag.startsWith('--max-old-space-size')), {}],
    ]
    if (extra.length > 0) {
      const env = Object.fromEntries(extra.filter((word) => !word.startsWith('--')).map((word) => word.split('=', 2) as [string, string]))
      variants.push([`hashd as npm start starts it, with ${extra.join(' ')}`, [...startFlags(), ...extra.filter((word) => word.startsWith('--'))], env])
    }
    const only = (process.env.UPLOAD_CPU_ONLY ?? '').split(',').map(Number).filter((n) => Number.isInteger(n) && n > 0)
    for (const [index, [label, flags, env]] of variants.entries()) {
      if (only.length === 0 || only.includes(index + 1)) await variant(label, flags, env, big, small)
    }
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
