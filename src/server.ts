/**
 * Entry point: read the configuration, start listening (then write PID_FILE), and on SIGTERM/SIGINT
 * turn unready, stop accepting, finish in-flight requests, remove PID_FILE, then exit 0
 * (docs/deployment.md, "Shutdown").
 */
import type { Logger } from 'pino'
import { ConfigError, loadConfig } from './config.js'
import { tuneMemory } from './memory-tuning.js'
import { followNpmParent, PROCESS_TITLE } from './npm-parent.js'
import { claimPidFile, removePidFile, writePidFile } from './pid-file.js'

async function main(): Promise<void> {
  // Findable by name (`pgrep -x hashd`, `pidof hashd`) however it was started: see npm-parent.ts.
  // With several instances on a host, a name finds them all; PID_FILE names this one.
  process.title = PROCESS_TITLE
  let config
  let pidFile: ReturnType<typeof claimPidFile> | null = null
  // A signal before the app exists finds nothing to drain, so it ends the process at once. It needs
  // a handler all the same: as a container's PID 1, node is not ended by a signal it does not handle
  // (the kernel drops default-action signals sent to PID 1), and `podman stop` would wait out its
  // grace period and SIGKILL.
  const stopBeforeStart = () => {
    if (pidFile !== null) removePidFile(pidFile.path)
    process.exit(0)
  }
  process.once('SIGTERM', stopBeforeStart)
  process.once('SIGINT', stopBeforeStart)
  try {
    config = loadConfig()
    // Before anything starts: a PID_FILE naming another running hashd refuses the start (pid-file.ts).
    pidFile = config.pidFile === null ? null : claimPidFile(config.pidFile)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hashd: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }
  // Before the app starts its threads: glibc reads the arena limit when it makes a new arena.
  const memory = tuneMemory(config.memoryTuning)
  // Loaded only now, so that the handlers above are in place while the app's modules load, which
  // takes a second or more on a busy machine.
  const { buildApp } = await import('./app.js')
  const app = await buildApp(config)
  memory.onReclaim = (reclaimed) => app.log.debug(reclaimed, 'memory reclaimed while quiet')
  app.log.debug({ malloc: memory.applied, skipped: memory.skipped, whenQuiet: memory.whenQuiet }, 'memory tuning')
  // Counted only for the warning when a drain is cut off.
  let connectionCount = 0
  app.server.on('connection', (socket) => {
    connectionCount++
    socket.once('close', () => { connectionCount-- })
  })
  const openConnections = () => connectionCount

  // Graceful drain (Kubernetes sends SIGTERM, docker stop too; SIGINT is Ctrl-C). app.close() runs
  // the preClose hooks at once (readiness turns 503, requests still arriving on a kept-alive
  // connection get 503 with Retry-After), closes the listener (new connections are refused) and idle
  // keep-alive connections, waits for every request in flight (a password hash on a thread, an
  // upload still streaming in), then stops the worker threads; only then does the process exit 0.
  // SHUTDOWN_TIMEOUT_MS bounds the wait: when it passes, the requests still open are cut off (their
  // connections are destroyed, the threads stop with the process) and the exit code is 1, so a
  // supervisor's record shows the drain did not complete. A repeated signal changes nothing: a
  // Ctrl-C under `npm start` reaches node twice (from the terminal and forwarded by npm).
  let closing = false
  // Exits once the log lines written so far are out (plugins/logging.ts, StdoutLog.flush), so that
  // a supervisor's log ends with the line saying how the process ended; a stuck stdout delays the
  // exit by a second at most.
  const exit = (code: number) => {
    // Should the loop empty first, the process ends with this code all the same.
    process.exitCode = code
    if (pidFile !== null) removePidFile(pidFile.path)
    const now = () => process.exit(code)
    setTimeout(now, 1000).unref()
    // Fastify's logger type leaves out pino's flush, which hands the callback to the stream's.
    const logger = app.log as unknown as Logger
    logger.flush(now)
  }
  const abandon = (reason: string) => {
    app.log.warn({ openConnections: openConnections() }, `${reason}; exiting with requests still open`)
    app.server.closeAllConnections()
    exit(1)
  }
  const shutdown = (signal: NodeJS.Signals | 'npm exited') => {
    if (closing) return
    closing = true
    app.log.info({ signal, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'shutting down: finishing in-flight requests')
    const deadline = setTimeout(() => abandon('shutdown deadline (SHUTDOWN_TIMEOUT_MS) passed'), config.shutdownTimeoutMs)
    deadline.unref()
    const started = performance.now()
    app.close().then(() => {
      app.log.info({ drainMs: Math.round(performance.now() - started) }, 'shut down: every request finished')
      exit(0)
    }, (error: unknown) => {
      app.log.error({ err: error }, 'error while closing')
      exit(1)
    })
  }
  // Before listening: a signal that comes while the port opens drains like any other.
  process.off('SIGTERM', stopBeforeStart)
  process.off('SIGINT', stopBeforeStart)
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (error) {
    // app.close() of a shutdown that began while the port opened makes listen fail: the shutdown exits.
    if (closing) return
    throw error
  }
  if (closing) return
  if (pidFile !== null) {
    if (pidFile.replaced !== null) {
      app.log.warn({ pidFile: pidFile.path, replacedPid: pidFile.replaced }, 'PID_FILE named no running hashd (left by a process that stopped without its shutdown?); replaced')
    }
    writePidFile(pidFile.path)
    app.log.info({ pidFile: pidFile.path, pid: process.pid }, 'PID file written')
  }
  // Under `npm start`, npm ends on a signal it does not forward (SIGHUP) and leaves this process
  // running if its shell dies of one it does (SIGTERM): follow it out, and say how to signal hashd itself.
  // The advice names this process (its PID, and PID_FILE when set), not every hashd on the host.
  const self = pidFile === null ? String(process.pid) : `"$(cat ${pidFile.path})"`
  followNpmParent((npmPid) => {
    app.log.warn({ npmPid, pid: process.pid, pidFile: pidFile?.path },
      'npm (npm start) exited while hashd ran under it: npm forwards only SIGINT and SIGTERM, and only to its shell, and dies of the rest; ' +
      `shutting down rather than run on orphaned. Signal hashd itself (process ${process.pid}): kill -HUP ${self} reloads the keys files, kill -TERM ${self} stops it`)
    shutdown('npm exited')
  })
}

main().catch((error: unknown) => {
  // Configuration read while building the app (API_KEYS_FILE) fails the same way as the environment's.
  if (error instanceof ConfigError) {
    process.stderr.write(`hashd: ${error.message}\n`)
    process.exit(2)
  }
  process.stderr.write(`hashd failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
