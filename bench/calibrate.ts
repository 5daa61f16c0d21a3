/**
 * `npm run bench:calibrate`: does hashing with the options POST /api/calibrate returns take about
 * the target time on this server?
 *
 * Starts hashd as `npm start` does, asks /api/calibrate for each supported scheme at a target
 * (BENCH_TARGET_MS, default 250), then hashes BENCH_RUNS times (default 7) with the options it
 * returned, one request at a time, and prints the median of the server-side hashing time
 * (`processingTimeMs`) and of the request's wall time beside the target and the time calibration
 * measured. A median more than 35% from the target is marked: either the target is below the
 * OWASP minimum (calibration's warning says so) or above a cap, or the machine's load changed
 * between calibrating and hashing (on a shared machine, rerun).
 */
import { performance } from 'node:perf_hooks'
import { start, stop } from './servers.js'

const TARGET_MS = Number(process.env.BENCH_TARGET_MS ?? 250)
const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const ALGORITHMS = (process.env.BENCH_ONLY ?? 'argon2id,bcrypt,bcrypt-sha256,scrypt,pbkdf2-sha256,pbkdf2-sha512,yescrypt').split(',')
const NEAR = 0.35

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

async function post(url: string, body: unknown): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

async function main(): Promise<void> {
  const server = await start('dist/src/server.js', { RATE_LIMIT_MAX: '0', CALIBRATE_RATE_LIMIT_MAX: '0', LOG_LEVEL: 'warn' })
  console.log(`target ${TARGET_MS} ms, ${RUNS} hashes each, one at a time`)
  console.log(['algorithm'.padEnd(14), 'options'.padEnd(44), 'calibrated'.padStart(10), 'hash median'.padStart(12), 'wall median'.padStart(12), 'vs target'.padStart(10), ''].join(' '))
  let off = 0
  try {
    for (const algorithm of ALGORITHMS) {
      const calibrated = await post(`${server.url}/api/calibrate`, { algorithm, targetMs: TARGET_MS })
      if (calibrated.status !== 200) {
        console.log(`${algorithm.padEnd(14)} calibrate: ${calibrated.status} ${String(calibrated.body.detail)}`)
        continue
      }
      const options = calibrated.body.options as Record<string, number>
      const work: number[] = []
      const wall: number[] = []
      for (let run = 0; run < RUNS; run++) {
        const started = performance.now()
        const hashed = await post(`${server.url}/api/hash`, { input: `bench password ${run}`, algorithm, options, pepper: false })
        wall.push(performance.now() - started)
        if (hashed.status !== 200) throw new Error(`${algorithm}: /api/hash ${hashed.status} ${String(hashed.body.detail)}`)
        work.push(hashed.body.processingTimeMs as number)
      }
      const ratio = median(work) / TARGET_MS
      const near = Math.abs(ratio - 1) <= NEAR
      if (!near) off++
      const warnings = calibrated.body.warnings as string[]
      const shown = Object.entries(options).filter(([name]) => !['saltLength', 'hashLength', 'keyLength'].includes(name)).map(([name, value]) => `${name}=${value}`).join(',')
      console.log([
        algorithm.padEnd(14), shown.padEnd(44), `${(calibrated.body.measuredMs as number).toFixed(0)} ms`.padStart(10),
        `${median(work).toFixed(0)} ms`.padStart(12), `${median(wall).toFixed(0)} ms`.padStart(12), `${ratio.toFixed(2)}×`.padStart(10),
        near ? 'near' : `OFF${warnings.length > 0 ? ` (${warnings.join('; ')})` : ''}`,
      ].join(' '))
    }
  } finally {
    await stop(server)
  }
  console.log(off === 0 ? `every median within ${NEAR * 100}% of the target` : `${off} median(s) more than ${NEAR * 100}% from the target`)
}

await main()
