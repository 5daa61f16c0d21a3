/** Starting and stopping the servers `npm run bench` compares, each in its own process. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export interface Started { child: ChildProcess, url: string, /** The file its stdout goes to. */ log: string }

/** Whether a program is on PATH (wrk, taskset, curl, rhash, openssl are optional). */
export function hasProgram(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0
}

/** A port that is free now: the OS picks one, and it is handed to the server process. */
export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * The Node flags `npm start` gives hashd (package.json's start script, e.g. a smaller V8 young
 * generation), so that the bench measures hashd as it is started. BENCH_NODE_FLAGS, when set,
 * replaces them for every bench that starts hashd: `BENCH_NODE_FLAGS="--max-semi-space-size=8
 * --trace-gc" npm run soak` soaks the server without its old-generation ceiling and traces its
 * collections into the server's log (the soak prints where).
 */
export function startFlags(): string[] {
  const override = process.env.BENCH_NODE_FLAGS
  if (override !== undefined) return override.split(' ').filter((flag) => flag !== '')
  const here = dirname(fileURLToPath(import.meta.url))
  const manifest = JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } }
  const command = /\bnode ((?:--\S+ )*)dist\/src\/server\.js/.exec(manifest.scripts.start)
  if (!command) throw new Error('package.json start script does not run node dist/src/server.js')
  return (command[1] ?? '').split(' ').filter((flag) => flag !== '')
}

/**
 * Starts a server process and waits until it answers. Its stdout (hashd's access log) goes to a
 * file, as in a deployment, not to a pipe this busy process would drain late. `cpus` pins it
 * with taskset (when present), so the load generator can have the other core. hashd gets the
 * Node flags of `npm start` (startFlags), any other script none, unless `nodeFlags` says otherwise.
 */
export async function start(script: string, env: Record<string, string> = {}, cpus?: string, nodeFlags?: string[]): Promise<Started> {
  const port = await freePort()
  const logPath = join(tmpdir(), `hashd-bench-${process.pid}-${port}.log`)
  const log = openSync(logPath, 'w')
  const node = [process.execPath, ...(nodeFlags ?? (script.endsWith('src/server.js') ? startFlags() : [])), script]
  const [command, args] = cpus !== undefined && hasProgram('taskset')
    ? ['taskset', ['-c', cpus, ...node]]
    : [node[0] as string, node.slice(1)]
  const child = spawn(command, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', log, 'inherit'] })
  closeSync(log)
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`)
    try {
      await fetch(`${url}/api/health`)
      return { child, url, log: logPath }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${script} did not start`)
}

export async function stop(server: Started): Promise<void> {
  if (server.child.exitCode !== null) return
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}
