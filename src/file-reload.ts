/**
 * Files the server reads at start and again while it runs: keys files (API keys, pepper keys, and
 * every other secret of the key ring), TLS certificates, data stores. One mechanism for all of them:
 *
 * - **When the file changes on disk.** The watch is on the file's folder (and on the folder of the
 *   file it resolves to), not on the file: editors and `mv` replace a file rather than write it,
 *   and a Kubernetes Secret or ConfigMap volume is updated by swapping its `..data` symlink to a new
 *   folder, which changes neither the mounted path nor, through it, any watch on it
 *   (kubernetes/kubernetes pkg/volume/util/atomic_writer.go). A change is judged by the resolved
 *   file's identity, size and times, so events about other files in the folder cost one stat.
 *   A slow poll backs the watch up where inotify does not work (NFS and some overlays). A source
 *   read from a whole folder (the similarity banks) names it in `folders`: the folder itself is
 *   watched, and a change is judged by its listing and each entry's identity, size and times.
 * - **On SIGHUP**, always (an operator asked for it).
 *
 * A load that throws keeps the value in force: a typo during a rotation does not take the service
 * down. The failure is logged (a ConfigError's message names the variable, file, line and field
 * and never quotes one, keys/file.ts; anything else is logged as unreadable), counted in the
 * metrics and shown by `/api/health` until a load succeeds. At start, a load that throws is the caller's to handle (a
 * ConfigError stops the server).
 */
import { readdirSync, realpathSync, statSync, watch, type FSWatcher } from 'node:fs'
import { dirname, join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { ConfigError } from './config.js'

/** What /api/health and the metrics show of one reloadable source. */
export interface ReloadStatus {
  /** The source's name, from a fixed set (`api-keys`, `pepper-keys`, `tls`, …): a metrics label. */
  source: string
  /** When the value in force was loaded (ISO 8601). */
  loadedAt: string
  /** Loads since start that succeeded and failed, the first one included. */
  loads: number
  failures: number
  /** Set while the last attempt failed: the value in force is older than the file on disk. */
  lastError?: { at: string, reason: string }
}

export interface Reloadable<T> {
  /** The value in force. */
  readonly value: T
  readonly status: ReloadStatus
  /** Checks the files now, as a change event does (tests, and callers that know better). */
  check(): void
  /** Loads again whatever the files look like, as SIGHUP does. */
  reload(cause?: string): void
  /** Stops watching; the value stays readable. */
  close(): void
}

export interface ReloadableOptions<T> {
  source: string
  /** What the log lines call it (`API keys`); the source's name by default. */
  what?: string
  /** The files the value is read from; a change to any of them loads it again. */
  files: readonly string[]
  /**
   * Folders whose files the value is read from (a folder of similarity banks): a file added,
   * replaced or removed there loads it again. The watch is on the folder itself.
   */
  folders?: readonly string[]
  /** Reads the files. Throws (a ConfigError, ideally) when they do not make a valid value. */
  load: () => T
  /**
   * The same, without holding the event loop, for the loads while the server runs (a data store
   * whose checks read megabytes); `load` still makes the first value, before the server listens.
   * Loads do not overlap: a change seen during one is loaded again after it.
   */
  loadAsync?: () => Promise<T>
  log: FastifyBaseLogger
  /** What to log about a value just loaded: counts, ids, dates. Never secrets. */
  describe?: (value: T) => Record<string, unknown>
  /** Called after a new value is in force, with the one it replaced (to close a file, say). */
  swapped?: (next: T, previous: T) => void
  /** Called with a value loaded (by loadAsync) after close, which is never put in force. */
  discarded?: (unused: T) => void
  /** How long a burst of events settles before the files are read (a write in several pieces). */
  settleMs?: number
  /** The backstop poll's period (FILE_RELOAD_POLL_MS, 5 s by default); 0 turns it off. */
  pollMs?: number
}

/**
 * Every reloadable source of the process, for /api/health and the metrics (read when they are
 * asked). One process runs one server; tests that start several in one process see them all.
 */
const registry = new Set<Reloadable<unknown>>()

export function reloadStatuses(): ReloadStatus[] {
  return [...registry].map((entry) => ({ ...entry.status }))
}

/** Identity, size and times of the file a path resolves to, or the errno code when it has none. */
function fingerprint(file: string): string {
  try {
    const stats = statSync(file, { bigint: true })
    return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error'
  }
}

/** A folder's entries with the fingerprint of each, or the errno code when it cannot be listed. */
function folderFingerprint(folder: string): string {
  try {
    return readdirSync(folder).sort().map((name) => `${name}=${fingerprint(join(folder, name))}`).join('/')
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error'
  }
}

function safeReason(error: unknown): string {
  return error instanceof ConfigError ? error.message : 'unreadable'
}

/**
 * Loads the value now (a throw is the caller's), then keeps it up to date as described above.
 * The watchers and the poll timer do not keep the process alive.
 */
export function reloadable<T>(options: ReloadableOptions<T>): Reloadable<T> {
  const { source, files, load, log } = options
  const settleMs = options.settleMs ?? 100
  const pollMs = options.pollMs ?? 5_000
  const describe = options.describe ?? (() => ({}))
  const what = options.what ?? source

  const folders = options.folders ?? []
  const fingerprints = () => [...files.map(fingerprint), ...folders.map(folderFingerprint)].join('|')
  let seen = fingerprints()
  let value = load()
  const now = () => new Date().toISOString()
  const status: ReloadStatus = { source, loadedAt: now(), loads: 1, failures: 0 }

  const installed = (next: T, cause: string): void => {
    const previous = value
    value = next
    status.loadedAt = now()
    status.loads += 1
    delete status.lastError
    log.info({ source, cause, ...describe(next) }, `${what} reloaded (${cause})`)
    options.swapped?.(next, previous)
  }
  const failed = (error: unknown, cause: string): void => {
    const reason = safeReason(error)
    status.failures += 1
    status.lastError = { at: now(), reason }
    log.warn({ source, cause, reason }, `${what} not reloaded (${cause}): keeping the value in force`)
  }
  /** With loadAsync: whether a load runs now, and the cause of one asked for meanwhile. */
  let loading = false
  let pending: string | undefined
  let closed = false
  const attemptAsync = (loadAsync: () => Promise<T>, cause: string): void => {
    if (loading) { pending = cause; return }
    loading = true
    seen = fingerprints()
    loadAsync().then(
      (next) => { if (closed) options.discarded?.(next); else installed(next, cause) },
      (error: unknown) => { if (!closed) failed(error, cause) },
    ).catch((error: unknown) => {
      // What runs after a load (describe, swapped) failing must not become an unhandled rejection.
      failed(error, cause)
    }).finally(() => {
      loading = false
      const again = pending
      pending = undefined
      if (again !== undefined && !closed) attemptAsync(loadAsync, again)
    })
  }
  const attempt = (cause: string): void => {
    if (options.loadAsync) { attemptAsync(options.loadAsync, cause); return }
    seen = fingerprints()
    try {
      installed(load(), cause)
    } catch (error) {
      failed(error, cause)
    }
  }

  const check = (): void => {
    if (fingerprints() !== seen) attempt('changed on disk')
  }

  // Watch each file's folder and, when the path is a link, the folder it resolves to; re-armed
  // after every check, since a symlink swap moves the resolved folder.
  const watchers = new Map<string, FSWatcher>()
  const arm = (): void => {
    const watched = new Set<string>()
    for (const file of files) {
      watched.add(dirname(file))
      try { watched.add(dirname(realpathSync(file))) } catch { /* missing now: the poll notices its return */ }
    }
    for (const folder of folders) {
      watched.add(folder)
      try { watched.add(realpathSync(folder)) } catch { /* missing now: the poll notices its return */ }
    }
    for (const [folder, watcher] of watchers) {
      if (!watched.has(folder)) { watcher.close(); watchers.delete(folder) }
    }
    for (const folder of watched) {
      if (watchers.has(folder)) continue
      try {
        const watcher = watch(folder, { persistent: false }, soon)
        watcher.on('error', () => { watcher.close(); watchers.delete(folder) })
        watchers.set(folder, watcher)
      } catch { /* no inotify here, or the folder is gone: the poll covers it */ }
    }
  }
  const refresh = (): void => { check(); arm() }
  let settle: NodeJS.Timeout | undefined
  function soon(): void {
    clearTimeout(settle)
    settle = setTimeout(refresh, settleMs)
    settle.unref()
  }
  arm()
  const poll = pollMs > 0 ? setInterval(refresh, pollMs) : undefined
  poll?.unref()

  const onHangup = (): void => { attempt('SIGHUP') }
  process.on('SIGHUP', onHangup)

  const entry: Reloadable<T> = {
    get value() { return value },
    status,
    check: refresh,
    reload(cause = 'requested') { attempt(cause); arm() },
    close() {
      closed = true
      clearTimeout(settle)
      clearInterval(poll)
      for (const watcher of watchers.values()) watcher.close()
      watchers.clear()
      process.off('SIGHUP', onHangup)
      registry.delete(entry as Reloadable<unknown>)
    },
  }
  registry.add(entry as Reloadable<unknown>)
  return entry
}
