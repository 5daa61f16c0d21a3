/** The load the request-rate rows put on a server, and the CPU time it costs the server. */
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { hasProgram } from './servers.js'

export function load(url: string, body: object, options: { connections: number, duration: number }, path = '/api/hash'): Promise<autocannon.Result> {
  return autocannon({
    url: `${url}${path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: options.connections,
    duration: options.duration,
  })
}

const WRK_SCRIPT = join(tmpdir(), `hashd-bench-${process.pid}.lua`)

/** What a throughput run measured: requests per second, requests in all, and the 99th-percentile latency in ms. */
export interface Throughput { rate: number, requests: number, p99Ms: number }

/** wrk's latency figures ("99%   4.83ms", "99%  812.00us"), in milliseconds. */
function wrkMilliseconds(output: string, percentile: string): number {
  const match = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(output)
  if (!match) return Number.NaN
  return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as const)[match[2] as 'us' | 'ms' | 's']
}

/**
 * Requests per second against `path` (/api/hash by default) over `connections` (50): wrk on core 1
 * when present, else autocannon in this process.
 */
export async function throughput(url: string, body: object, seconds: number, path = '/api/hash', connections = 50): Promise<Throughput> {
  if (hasProgram('wrk')) {
    writeFileSync(WRK_SCRIPT, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${JSON.stringify(body)}'\n`)
    const pin = hasProgram('taskset') ? ['taskset', '-c', '1'] : []
    const [command, ...args] = [...pin, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', WRK_SCRIPT, `${url}${path}`]
    const output = String(spawnSync(command as string, args, { encoding: 'utf8' }).stdout)
    if (/Non-2xx/.test(output)) throw new Error(`non-2xx answers from ${url}: ${output}`)
    return {
      rate: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
      requests: Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN),
      p99Ms: wrkMilliseconds(output, '99'),
    }
  }
  const result = await load(url, body, { connections, duration: seconds }, path)
  if (result.non2xx > 0) throw new Error(`${result.non2xx} non-2xx answers from ${url}${path}`)
  return { rate: result.requests.average, requests: result.requests.total, p99Ms: result.latency.p99 }
}

/** Clock ticks per second, the unit of /proc's CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100

/**
 * The fields of a /proc stat file (a process's or a thread's, /proc/PID/task/TID/stat) after the
 * command name, which may hold spaces and parentheses: [0] is field 3 of proc(5), the state.
 */
export function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

/** CPU seconds in user space and in the kernel from a /proc stat file (utime, field 14; stime, 15). */
export function statCpuTimes(path: string): { user: number, system: number } {
  const fields = statFields(path)
  return { user: Number(fields[11]) / CLOCK_TICKS, system: Number(fields[12]) / CLOCK_TICKS }
}

/** CPU seconds a process has used (all threads) in user space and in the kernel, from /proc; NaN off Linux. */
export function cpuTimes(pid: number | undefined): { user: number, system: number } {
  try {
    return statCpuTimes(`/proc/${pid}/stat`)
  } catch {
    return { user: Number.NaN, system: Number.NaN }
  }
}

/**
 * CPU seconds a process has used (user + system). CPU time per request is the per-request cost
 * itself, and drifts less than req/s when other work shares the core.
 */
export function cpuSeconds(pid: number | undefined): number {
  const { user, system } = cpuTimes(pid)
  return user + system
}

/** The median of some measurements (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] as number : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}
