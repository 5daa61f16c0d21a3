/**
 * The real hashd as a child process (`node dist/src/server.js`), for tests that need several
 * instances, a process's own memory figures (/proc/PID/status), or its refusal to start.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('../../src/server.js', import.meta.url))

export interface HashdProcess {
  child: ChildProcess
  url: string
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  stop(): Promise<void>
}

/** Spawns hashd with this environment (plus PATH, loopback and an ephemeral port) without waiting. */
export function spawnHashd(env: Record<string, string>): Omit<HashdProcess, 'url'> {
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
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return { child, stdout: () => stdout, stderr: () => stderr, exited, stop }
}

/** Spawns hashd and waits for its "listening at" log line. */
export async function startHashd(env: Record<string, string> = {}): Promise<HashdProcess> {
  const spawned = spawnHashd(env)
  const deadline = Date.now() + 15_000
  for (;;) {
    const url = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(spawned.stdout())?.[1]
    if (url) return { ...spawned, url }
    if (spawned.child.exitCode !== null || Date.now() > deadline) {
      await spawned.stop()
      throw new Error(`hashd did not start: ${spawned.stderr()} ${spawned.stdout()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
