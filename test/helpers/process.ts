/**
 * The real hashd as a child process (`node dist/src/server.js`), for tests that need several
 * instances, signals (SIGHUP), a process's own memory figures (/proc/PID/status), or its exit
 * status. It binds an ephemeral loopback port; the URL is read from its "listening at" log line.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('../../src/server.js', import.meta.url))

export interface SpawnedHashd {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  /** Resolves when a log line whose `msg` matches has been written (counting from line `after`). */
  logged(message: RegExp, after?: number): Promise<void>
  /** Log lines so far. */
  lines(): number
  /** SIGTERM unless it has exited, then wait for the exit. */
  stop(): Promise<void>
}

export interface HashdProcess extends SpawnedHashd { url: string }

/** Spawns hashd with this environment (plus PATH, loopback and an ephemeral port) without waiting. */
export function spawnHashd(env: Record<string, string>): SpawnedHashd {
  const child = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', RATE_LIMIT_MAX: '0', WORKER_THREADS: '2', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
  const logged = (message: RegExp, after = 0) => new Promise<void>((resolve, reject) => {
    const check = () => {
      const found = stdout.split('\n').slice(after).some((line) => {
        try { return message.test(String((JSON.parse(line) as { msg?: unknown }).msg)) } catch { return false }
      })
      if (found) { clearInterval(timer); clearTimeout(deadline); resolve() }
    }
    const timer = setInterval(check, 10)
    const deadline = setTimeout(() => { clearInterval(timer); reject(new Error(`no log line ${message}; stdout: ${stdout} stderr: ${stderr}`)) }, 15_000)
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return { child, stdout: () => stdout, stderr: () => stderr, exited, logged, lines: () => stdout.split('\n').length - 1, stop }
}

/** Spawns hashd and waits until it listens; returns its URL with the process. */
export async function startHashd(env: Record<string, string> = {}): Promise<HashdProcess> {
  const hashd = spawnHashd(env)
  try {
    await Promise.race([
      hashd.logged(/listening at http:\/\//),
      hashd.exited.then(() => { throw new Error(`hashd exited: ${hashd.stderr()} ${hashd.stdout()}`) }),
    ])
  } catch (error) {
    await hashd.stop()
    throw error
  }
  const url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(hashd.stdout())?.[1]
  if (!url) throw new Error(hashd.stdout())
  return { ...hashd, url }
}

/**
 * What a new client gets: 'refused' (the listener is closed), 'reset' (accepted by the kernel just
 * before the listener closed, then dropped unanswered) or the HTTP status of GET /api/ready.
 */
export function newClientOutcome(url: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1')
    let received = ''
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write('GET /api/ready HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'))
    socket.on('data', (chunk: string) => { received += chunk })
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? 'refused' : error.code === 'ECONNRESET' ? 'reset' : String(error.code)))
    socket.on('close', () => resolve(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 'reset'))
  })
}

/**
 * Waits until new connections are refused: the listener closes a few event-loop turns after the
 * "shutting down" log line (Fastify runs the preClose hooks first), so a client connecting in
 * between is still answered, with 503.
 */
export async function untilRefused(url: string): Promise<void> {
  for (let tries = 0; await newClientOutcome(url) !== 'refused'; tries++) {
    if (tries >= 500) throw new Error('new connections were still accepted')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
