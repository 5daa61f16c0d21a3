/**
 * `npm run bench:similarity`: hashd's ssdeep and TLSH of one upload against the reference tools on
 * the same file, in the same run. A random file of BENCH_FILE_MIB (default 64) MiB; hashd started
 * as `npm start` starts it (LOG_LEVEL=warn, RATE_LIMIT_MAX=0) takes it as a raw PUT with
 * `algorithms=ssdeep`, then `tlsh`, then both; Debian's `ssdeep -b` and the TLSH reference's
 * `tlsh -f` (TLSH_BIN, the `bin/tlsh` a build of github.com/trendmicro/tlsh makes; skipped when
 * unset) hash the file from disk. Each row is the best of BENCH_ROUNDS (default 3) wall times, and
 * the ratio is the tool's time over hashd's (above 1: hashd is faster).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { hasProgram, start, stop } from './servers.js'
import { curlPut, randomFile, timed } from './uploads.js'

const FILE_MIB = Number(process.env.BENCH_FILE_MIB ?? 64)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const TLSH_BIN = process.env.TLSH_BIN

const best = (run: () => number): number => Math.min(...Array.from({ length: ROUNDS }, run))

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'hashd-bench-similarity-'))
  const file = join(scratch, 'random.bin')
  randomFile(file, FILE_MIB)
  const server = await start(fileURLToPath(new URL('../src/server.js', import.meta.url)), { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' })
  try {
    const hashd = (algorithms: string) => best(curlPut(`${server.url}/api/filehash?algorithms=${algorithms}`, file))
    const ssdeep = hashd('ssdeep')
    const tlsh = hashd('tlsh')
    const both = hashd('ssdeep,tlsh')
    const tool = (command: string, args: string[]) => best(() => timed(command, args))
    const ssdeepTool = hasProgram('ssdeep') ? tool('ssdeep', ['-b', file]) : undefined
    const tlshTool = TLSH_BIN ? tool(TLSH_BIN, ['-f', file]) : undefined
    const row = (name: string, seconds: number, reference?: number, referenceName?: string) =>
      console.log(`${name.padEnd(28)} ${seconds.toFixed(2).padStart(6)} s  ${(FILE_MIB / seconds).toFixed(0).padStart(4)} MiB/s`
        + (reference === undefined ? '' : `   ${referenceName} ${reference.toFixed(2)} s, ratio ${(reference / seconds).toFixed(2)}`))
    console.log(`similarity bench: ${FILE_MIB} MiB random file, best of ${ROUNDS}`)
    row('hashd PUT ssdeep', ssdeep, ssdeepTool, 'ssdeep -b')
    row('hashd PUT tlsh', tlsh, tlshTool, 'tlsh -f')
    row('hashd PUT ssdeep,tlsh', both)
    if (ssdeepTool === undefined) console.log('ssdeep not installed (Debian: ssdeep): no reference row')
    if (tlshTool === undefined) console.log('TLSH_BIN not set: no TLSH reference row (build github.com/trendmicro/tlsh, then TLSH_BIN=…/bin/tlsh)')
  } finally {
    await stop(server)
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()
