/**
 * `npm run bench:start`: the time from `npm start` to the first answer, on a built tree. Each
 * round starts the server on a free loopback port, waits for its "listening at" line, and times
 * until GET /api/health has answered 200, counted from the moment the command was started. The peer
 * is the server's own command, `node <npm start's flags> dist/src/server.js`, without npm and the
 * build check: what `npm start` adds is the ratio. A B B A order, START_ROUNDS rounds (default 3),
 * medians. `--stale` adds a row for a start after a source changed (src/server.ts touched, so npm
 * start rebuilds first), which rewrites dist/ in place.
 *
 * Run it with nothing else listening on the tree; it runs `npm start` in this checkout.
 */
import { spawn } from 'node:child_process'
import { readFileSync, utimesSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { range, recordFigure } from './figures.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const ROUNDS = Number(process.env.START_ROUNDS ?? 3)
const startScript = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
const nodeFlags = /\bnode((?: --\S+)*) dist\/src\/server\.js/.exec(startScript)?.[1]?.trim().split(' ').filter(Boolean) ?? []

function health(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(`${url}/api/health`, (response) => { response.resume(); resolve(response.statusCode ?? 0) }).on('error', reject).end()
  })
}

/** Milliseconds from spawning `command` to the first 200 from GET /api/health. */
async function timeToFirstAnswer(command: string, args: string[]): Promise<number> {
  const began = performance.now()
  const child = spawn(command, args, {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '0' },
  })
  let output = ''
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const look = (chunk: Buffer) => {
        output += chunk.toString()
        const found = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
        if (found) resolve(found[1]!)
      }
      child.stdout.on('data', look)
      child.stderr.on('data', look)
      child.on('exit', (code) => reject(new Error(`${command} exited (${code}) before listening: ${output.slice(-2000)}`)))
    })
    for (;;) {
      if (await health(url).catch(() => 0) === 200) return performance.now() - began
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  } finally {
    // npm, its shell and node: the whole group.
    if (child.pid !== undefined) try { process.kill(-child.pid, 'SIGTERM') } catch { /* gone */ }
    await new Promise((resolve) => { if (child.exitCode !== null || child.signalCode !== null) resolve(null); else child.once('exit', resolve) })
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`

async function main(): Promise<void> {
  console.log(`hashd bench:start: time from the command to the first answer of GET /api/health, node ${process.version}, ${ROUNDS} rounds A B B A, medians`)
  // A first start warms the OS's file cache, as any start after the first one finds it.
  await timeToFirstAnswer('npm', ['start', '--silent'])
  const npmStart: number[] = []
  const direct: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    npmStart.push(await timeToFirstAnswer('npm', ['start', '--silent']))
    direct.push(await timeToFirstAnswer(process.execPath, [...nodeFlags, 'dist/src/server.js']))
    direct.push(await timeToFirstAnswer(process.execPath, [...nodeFlags, 'dist/src/server.js']))
    npmStart.push(await timeToFirstAnswer('npm', ['start', '--silent']))
  }
  const a = median(npmStart)
  const b = median(direct)
  console.log(`npm start on a built tree:           ${seconds(a)} (runs ${npmStart.map(seconds).join(', ')})`)
  console.log(`node dist/src/server.js (the peer):  ${seconds(b)} (runs ${direct.map(seconds).join(', ')})`)
  console.log(`npm start / the peer: ${(a / b).toFixed(2)}× (npm and the build check add ${((a - b) / 1000).toFixed(2)} s)`)
  recordFigure('npm-start', {
    range: range(npmStart.map((ms) => ms / 1000), 1), median: (a / 1000).toFixed(1),
    peerRange: range(direct.map((ms) => ms / 1000), 1), peerMedian: (b / 1000).toFixed(1),
  })
  if (process.argv.includes('--stale')) {
    const now = new Date()
    utimesSync(join(root, 'src', 'server.ts'), now, now)
    const stale = await timeToFirstAnswer('npm', ['start', '--silent'])
    console.log(`npm start after a source changed (rebuilds first): ${seconds(stale)}, ${(stale / a).toFixed(1)}× a built start`)
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
