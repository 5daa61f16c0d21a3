/**
 * hashd under `npm start`: npm must not stand between a signal and the server. What npm 11 does
 * (@npmcli/run-script, lib/signal-manager.js): it runs the script through `sh -c`, forwards only
 * SIGINT and SIGTERM, and to that shell, not to the server: Debian's dash does not pass them on
 * (it dies of SIGTERM and leaves its child), and any other signal, SIGHUP among them, ends npm
 * itself. Either way the server would be left orphaned, serving on with whatever it had, while
 * the user believes it stopped or reloaded.
 *
 * So hashd names itself (`process.title = 'hashd'`: `pgrep -x hashd`, `pidof hashd` and
 * `pkill -HUP -x hashd` find the server however it was started, and signals sent to it directly
 * always arrive), and under npm it follows npm: it finds npm's process among its ancestors at
 * start and, once a second, checks that it is still there (the same process: its start time is
 * compared too). When npm is gone, the server shuts down gracefully, as on SIGTERM, and logs why
 * and how to signal it directly (docs/operations.md, "Signals"). Linux only (it reads /proc);
 * elsewhere, and outside npm, this does nothing.
 */
import { readFileSync } from 'node:fs'

/** The name `ps`, `pgrep -x`, `pidof` and `pkill -x` know the server by (at most 15 characters: Linux's comm). */
export const PROCESS_TITLE = 'hashd'

interface ProcStat { comm: string, state: string, ppid: number, startTime: string }

/** /proc/PID/stat: the command name (which may hold spaces and parentheses), the parent, the start time. */
export function procStat(pid: number): ProcStat | null {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  const open = text.indexOf('(')
  const close = text.lastIndexOf(')')
  if (open < 0 || close < open) return null
  const fields = text.slice(close + 2).split(' ')
  // proc(5): after the name come state (3), ppid (4) … starttime (22).
  return { comm: text.slice(open + 1, close), state: fields[0] ?? '', ppid: Number(fields[1]), startTime: fields[19] ?? '' }
}

/**
 * npm's process among this one's ancestors (through the shell it runs scripts with), when this
 * process runs as an npm script: npm sets npm_lifecycle_event for its scripts, and names its own
 * process `npm <command>`.
 */
export function findNpmParent(env: NodeJS.ProcessEnv = process.env, start = process.ppid): { pid: number, startTime: string } | null {
  if (env.npm_lifecycle_event === undefined) return null
  let pid = start
  for (let depth = 0; depth < 6 && pid > 1; depth++) {
    const stat = procStat(pid)
    if (stat === null) return null
    if (stat.comm === 'npm' || stat.comm.startsWith('npm ')) return { pid, startTime: stat.startTime }
    pid = stat.ppid
  }
  return null
}

/**
 * Calls `gone` once when npm's process (found at start) is no longer there. Returns the function
 * that stops watching, or null when there is no npm to follow. The timer does not keep the process alive.
 */
export function followNpmParent(gone: (npmPid: number) => void, intervalMs = 1_000): (() => void) | null {
  const npm = findNpmParent()
  if (npm === null) return null
  const timer = setInterval(() => {
    // An npm that has exited but not yet been reaped by its parent is a zombie (Z): gone all the same.
    const stat = procStat(npm.pid)
    if (stat !== null && stat.startTime === npm.startTime && stat.state !== 'Z' && stat.state !== 'X') return
    clearInterval(timer)
    gone(npm.pid)
  }, intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
