/**
 * `npm run bench:log-lines`: the cost of writing one access line, as hashd writes them (StdoutLog
 * in src/plugins/logging.ts: the lines of one event-loop turn handed to pino's asynchronous
 * destination as one string) against one sonic-boom write per line (pino's destination as it
 * comes, which hashd used before). Each writes LOG_LINES lines (default 300,000) of an access
 * line's size to a file in the temporary directory, yielding to the event loop every
 * `lines per turn` lines as a busy server does between batches of requests, in A B B A order;
 * building the lines alone is measured too, and is included in both.
 */
import { openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { StdoutLog } from '../src/plugins/logging.js'

const LINES = Number(process.env.LOG_LINES ?? 300_000)
const file = join(tmpdir(), `hashd-log-lines-${process.pid}.log`)

function accessLine(i: number): string {
  return `{"level":30,"time":${Date.now()},"pid":${process.pid},"hostname":"bench","reqId":"bench-${i.toString(36)}","method":"POST",` +
    `"route":"/api/hash","url":"/api/hash","statusCode":200,"responseTime":${performance.now() % 1},"remoteAddress":"127.0.0.1","msg":"request completed"}\n`
}

async function microsPerLine(write: (line: string) => void, perTurn: number): Promise<number> {
  const started = process.hrtime.bigint()
  for (let i = 0; i < LINES; i++) {
    write(accessLine(i))
    if (i % perTurn === perTurn - 1) await new Promise((resolve) => setImmediate(resolve))
  }
  return Number(process.hrtime.bigint() - started) / LINES / 1000
}

async function main(): Promise<void> {
  console.log(`hashd bench:log-lines: ${LINES} access lines to a file, node ${process.version}; µs per line (A B B A means)`)
  try {
    for (const perTurn of [5, 50]) {
      const buildOnly = await microsPerLine(() => {}, perTurn)
      const perLine = pino.destination({ dest: openSync(file, 'w'), sync: false })
      const gathered = new StdoutLog(openSync(file, 'w'))
      const a1 = await microsPerLine((line) => { perLine.write(line) }, perTurn)
      const b1 = await microsPerLine((line) => { gathered.writeAccessLine(line) }, perTurn)
      const b2 = await microsPerLine((line) => { gathered.writeAccessLine(line) }, perTurn)
      const a2 = await microsPerLine((line) => { perLine.write(line) }, perTurn)
      perLine.flushSync()
      gathered.flushSync()
      console.log(`${String(perTurn).padStart(3)} lines per turn: one write per line ${((a1 + a2) / 2).toFixed(2)} µs, ` +
        `gathered per turn (hashd) ${((b1 + b2) / 2).toFixed(2)} µs, building the line alone ${buildOnly.toFixed(2)} µs`)
    }
  } finally {
    rmSync(file, { force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
