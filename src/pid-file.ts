/**
 * PID_FILE: a file naming this server's process, so that a tool can signal one instance of several
 * on a host (`kill -HUP "$(cat /run/hashd/3001.pid)"`), where `pidof hashd` and `pkill -x hashd`
 * reach every one (docs/operations.md, "Signals"). As nginx's `pid` and Redis's `pidfile`:
 *
 * - **written once the server listens**, so that the file never names a process that failed to
 *   start, and never before the signals it is for are handled; written whole to a temporary file in
 *   the same folder and renamed over the path (rename(2) is atomic), so a reader sees the old file
 *   or the new one, never a part of it, and a symlink at the path is replaced, not followed;
 * - **removed when the server exits through its shutdown** (SIGTERM, SIGINT, npm gone, the drain
 *   deadline), and only while it still names this process, so that an instance never deletes
 *   another's file.
 *
 * At start the file may name a process already. A running hashd other than this one: the start is
 * refused (exit status 2), as PostgreSQL refuses a data directory whose postmaster.pid names a
 * live postmaster; two instances given one file would leave it naming one of them, and a reload
 * sent through it would reach the other never. Anything else (a process that has exited, a crash
 * or a `kill -9` having left the file; a PID the kernel has since given to another program; a file
 * that holds no PID) is replaced, with a warning, as nginx and Redis overwrite a stale file. A
 * process is recognised as hashd by its name in /proc (npm-parent.ts, PROCESS_TITLE); where there
 * is no /proc, any live process counts.
 */
import { accessSync, constants, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { ConfigError } from './config.js'
import { PROCESS_TITLE, procStat } from './npm-parent.js'

export interface ClaimedPidFile {
  /** The file, as an absolute path. */
  path: string
  /** The PID an earlier, stale file named (or its first bytes when it named none), replaced once the server listens; null when there was none. */
  replaced: string | null
}

/** Whether `pid` is a running hashd: its name in /proc, or, without /proc, any live process. */
function isRunningHashd(pid: number): boolean {
  const stat = procStat(pid)
  if (stat !== null) return stat.comm === PROCESS_TITLE && stat.state !== 'Z' && stat.state !== 'X'
  if (statSync('/proc/self/stat', { throwIfNoEntry: false }) !== undefined) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Checks, before the server starts, that PID_FILE may be written: its folder exists and can be
 * written, and the file names no other running hashd. Throws a ConfigError otherwise.
 */
export function claimPidFile(file: string, pid = process.pid): ClaimedPidFile {
  const path = resolve(file)
  const folder = dirname(path)
  try {
    accessSync(folder, constants.W_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new ConfigError(`PID_FILE ${path}: its folder ${code === 'ENOENT' ? 'does not exist' : `cannot be written (${code ?? 'error'})`}`)
  }
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { path, replaced: null }
    throw new ConfigError(`PID_FILE ${path} cannot be read (${code ?? 'error'})`)
  }
  const named = /^\s*(\d{1,10})\s*$/.exec(text)?.[1]
  if (named !== undefined && Number(named) !== pid && isRunningHashd(Number(named))) {
    throw new ConfigError(`PID_FILE ${path} names process ${named}, a hashd that is running: give each instance its own PID_FILE, or stop that one first`)
  }
  return { path, replaced: named ?? (text.trim() === '' ? '(empty)' : '(no PID)') }
}

/** Writes `pid` to the file atomically: a temporary file in its folder, renamed over it. */
export function writePidFile(path: string, pid = process.pid): void {
  const temporary = join(dirname(path), `.${basename(path)}.${pid}.tmp`)
  try {
    // wx, after clearing the name: never through a file or link left at the temporary name.
    rmSync(temporary, { force: true })
    writeFileSync(temporary, `${pid}\n`, { mode: 0o644, flag: 'wx' })
    renameSync(temporary, path)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw new Error(`PID_FILE ${path} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
}

/** Removes the file if it still names `pid`; returns whether it did. Never throws: the process is on its way out. */
export function removePidFile(path: string, pid = process.pid): boolean {
  try {
    if (readFileSync(path, 'utf8').trim() !== String(pid)) return false
    unlinkSync(path)
    return true
  } catch {
    return false
  }
}
