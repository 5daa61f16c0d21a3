/**
 * A real redis-server for the tests that share rate limits: started on a free loopback port with
 * persistence off (`--save '' --appendonly no`), stopped and started again on the same port to
 * test failure and recovery, and torn down after. Call only from tests or hooks that are skipped
 * without redis-server (`skipUnless('redis-server')`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface TestRedis {
  url: string
  port: number
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>
  /** Starts it again on the same port and waits until it answers PING. */
  start(): Promise<void>
  /** Freezes the server (SIGSTOP): connections stay open and nothing answers, like a hung Redis. */
  pause(): void
  /** Thaws it (SIGCONT). */
  resume(): void
  /** Sends one command in the inline protocol and returns the raw reply. */
  command(line: string): Promise<string>
  /** Stops it for good and removes its directory. */
  destroy(): Promise<void>
}

/** A port the kernel just handed out and released; another process taking it in between is unlikely. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

/** One inline command to a Redis at `host:port`, its one-line reply (PING, CONFIG SET, CLIENT PAUSE…). */
export function sendRedis(line: string, port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host)
    let reply = ''
    socket.setTimeout(1_000, () => { socket.destroy(); reject(new Error('redis did not answer')) })
    socket.on('error', reject)
    socket.on('connect', () => socket.write(`${line}\r\n`))
    socket.on('data', (chunk) => {
      reply += String(chunk)
      if (reply.endsWith('\r\n')) { socket.end(); resolve(reply) }
    })
  })
}

/**
 * Script calls (EVALSHA, and EVAL when a script was not loaded yet) this Redis has run since its
 * last `CONFIG RESETSTAT`: how often hashd's rate limit called it (its only scripts when no webhook
 * is checked).
 */
export async function scriptCalls(redis: TestRedis): Promise<number> {
  const stats = await redis.command('INFO commandstats')
  return [...stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0)
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort()
  // Its working directory is a fresh temporary one, so nothing it might write lands in the repo.
  const dir = mkdtempSync(join(tmpdir(), 'hashd-redis-'))
  let child: ChildProcess | undefined
  let exited: Promise<void> = Promise.resolve()
  let output = ''

  const start = async () => {
    output = ''
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    exited = new Promise((resolve) => child?.once('exit', () => resolve()))
    const deadline = Date.now() + 10_000
    for (;;) {
      try {
        if ((await sendRedis('PING', port)).startsWith('+PONG')) return
      } catch { /* not listening yet */ }
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not start: ${output}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await exited
    }
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    stop,
    start,
    command: (line) => sendRedis(line, port),
    pause: () => { child?.kill('SIGSTOP') },
    resume: () => { child?.kill('SIGCONT') },
    destroy: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
