/**
 * The audit log's writer: appends lines (line.ts) to a file opened O_APPEND, or to standard output,
 * one write at a time, in the order the lines were asked for. Each write(2) holds whole lines: all
 * those asked for in one run of JavaScript (up to 256), so a tailer never reads part of a line.
 *
 * - **Group commit in the same turn.** The first line asked for schedules the write as a microtask:
 *   it runs when the callback that asked for it returns, before the event loop moves on. A busy
 *   server's answers of one turn all pass the audit's onSend hook inside one callback
 *   (plugins/batched-writes.ts lets them go together), so their lines go out in one write(2) and the
 *   answers leave in that same turn, as unaudited answers do. (A write scheduled for the loop's next
 *   phase, as it once was, held every audited answer one more turn: at 50 connections that cost more
 *   CPU than the line's cryptography, in collections of requests kept alive longer.) The lines that
 *   arrive while a write waits (a key in a token, whose MACs are made off the loop) go out in the
 *   next write together.
 * - **No promise per line on the hot path.** `enqueue` settles a line through a callback; `append`
 *   is the promise form over it, for everything that is not on a request's way out.
 *
 * - **Backpressure.** Lines wait in a queue of at most AUDIT_QUEUE_MAX; `append` waits for room
 *   when it is full, so a slow disk slows the keyed requests down instead of growing memory.
 * - **Errors reach the caller.** `append` settles when its line is written, and rejects when the
 *   write fails (disk full, file gone, read-only): the caller decides to fail closed or go on. A
 *   write cut short is cut back (ftruncate to the last whole line), so the next line starts clean.
 * - **Durability (fsync policy).** A line whose `append` has resolved is in the kernel's page cache:
 *   it survives the process being killed (SIGKILL), not a power cut. Each checkpoint is followed
 *   by fdatasync(2), so everything up to the latest checkpoint survives a power cut too. A sync per
 *   line would cost a disk flush per keyed request.
 * - **Crash safety.** On opening a file whose last line has no newline (a write cut by SIGKILL or a
 *   power cut), the writer ends that fragment with a newline and its `start` line says how many
 *   bytes it was (`torn`), so the verifier can tell a crash from an edit.
 * - **Rotation.** Before each write(2) the writer compares the file at the path with the one it
 *   holds (one stat(2) per write, so per group of lines, not per line): a smaller size is a
 *   truncation (logrotate `copytruncate`), another inode or no file is a replacement (`create`, or
 *   a move); the path is opened again and a `rotate` line is written first. A rotation between two
 *   lines of one group is seen before that group's write, so no line of the group lands in the old
 *   file after the rotation was done. Every line carries the previous line's hash, so the new
 *   file's first line carries the old file's head and the chain goes on across files. SIGHUP
 *   (plugins/audit.ts) makes the check at once rather than at the next write.
 */
import { closeSync, constants, type Stats, fdatasync, fstatSync, ftruncateSync, openSync, readSync, statSync, write, writeSync } from 'node:fs'
import { ConfigError } from '../config.js'
import { makeCheckpoint, type Checkpoint } from './checkpoint.js'
import type { AuditKey } from './key.js'
import { GENESIS, macMatches, makeLine, parseLine, sha256Hex, type LineFields, type LineType } from './line.js'

export type AuditSink = { kind: 'file', path: string } | { kind: 'stdout' }

/** What the writer logs to (the app's logger). */
export interface AuditProcessLog {
  info(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface AuditWriterOptions {
  sink: AuditSink
  key: AuditKey
  /** Lines that may wait to be written; `append` waits beyond it. */
  queueMax: number
  checkpointLines: number
  checkpointSeconds: number
  log: AuditProcessLog
}

export interface AuditWriterStatus {
  failing: boolean
  /** The errno code of the last failed write while failing. */
  lastError: string | null
  /** Lines in the chain so far (the last seq). */
  lines: number
  queued: number
}

/** How an item ends: null when it was written, the error when it could not be. */
export type Settle = (error: unknown) => void

type Item =
  | { kind: 'line', type: LineType, time: string, fields: LineFields, settle: Settle }
  | { kind: 'checkpoint' | 'check', settle: Settle }

/** A settle for the promise forms: resolve, or reject with the error. */
const settleWith = (resolve: () => void, reject: (error: unknown) => void): Settle => (error) => { if (error === null) resolve(); else reject(error) }
const ignore: Settle = () => {}

/** The most lines one write(2) carries. */
const GROUP_MAX = 256

/** The tail of a file that is read to find where the chain stands. */
const TAIL_BYTES = 1024 * 1024

interface Tail { seq: number, head: string, tornBytes: number, /** The last whole line, to check it is under the key. */ last: string | null }

/** Where the chain in `path` stands: the last whole line's seq and hash, and a torn fragment after it. */
function readTail(path: string, size: number): Tail {
  if (size === 0) return { seq: 0, head: GENESIS, tornBytes: 0, last: null }
  const length = Math.min(size, TAIL_BYTES)
  const buffer = Buffer.alloc(length)
  const fd = openSync(path, 'r')
  try { readSync(fd, buffer, 0, length, size - length) } finally { closeSync(fd) }
  const lastNewline = buffer.lastIndexOf(0x0a)
  const tornBytes = length - 1 - lastNewline
  if (lastNewline < 0) {
    if (length < size) throw new ConfigError(`AUDIT_LOG ${path}: its last ${length} bytes hold no whole line; it is not an audit log`)
    return { seq: 0, head: GENESIS, tornBytes, last: null }
  }
  const before = buffer.lastIndexOf(0x0a, lastNewline - 1)
  if (before < 0 && length < size) throw new ConfigError(`AUDIT_LOG ${path}: its last line is longer than ${length} bytes; it is not an audit log`)
  const text = buffer.subarray(before + 1, lastNewline).toString('utf8')
  const line = parseLine(text)
  if (typeof line === 'string') throw new ConfigError(`AUDIT_LOG ${path}: its last whole line is not an audit line (${line}); name a new file or an audit log`)
  return { seq: line.seq, head: sha256Hex(text), tornBytes, last: text }
}

function errnoCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | null)?.code ?? 'EIO'
}

export class AuditWriter {
  readonly #options: AuditWriterOptions
  #fd: number
  /** Device and inode of the open file, to notice a replacement. */
  #identity = ''
  /** The file's size after our last whole line, to notice a truncation and cut back a torn write. */
  #size = 0
  #seq: number
  #head: string
  #queue: Item[] = []
  #waiting: (() => void)[] = []
  #draining = false
  /** A drain is set for the next turn of the event loop (#push). */
  #scheduled = false
  #sinceCheckpoint = 0
  #latest: Checkpoint | null = null
  /** The last checkpoint's sync and publication (#writeCheckpoint), which the next one waits for. */
  #published: Promise<void> = Promise.resolve()
  #failing = false
  #lastError: string | null = null
  #closed = false
  /** The file ends in a fragment a crash left: the next write ends it with a newline first. */
  #endTorn = false
  #timer: NodeJS.Timeout | undefined
  /** What opening the file found: a fragment left by a crash, and the last whole line. */
  readonly #tail: Pick<Tail, 'tornBytes' | 'last'> = { tornBytes: 0, last: null }

  /**
   * Opens the sink now: a file that cannot be opened, or that is not an audit log, is a
   * ConfigError (the server does not start). `start` then writes the first lines.
   */
  constructor(options: AuditWriterOptions) {
    this.#options = options
    if (options.sink.kind === 'stdout') {
      this.#fd = 1
      this.#seq = 0
      this.#head = GENESIS
    } else {
      const { path } = options.sink
      try {
        this.#fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
      } catch (error) {
        throw new ConfigError(`AUDIT_LOG: cannot open ${path} for appending (${errnoCode(error)})`)
      }
      try {
        const stats = fstatSync(this.#fd)
        this.#identity = `${stats.dev}:${stats.ino}`
        const tail = readTail(path, stats.size)
        this.#seq = tail.seq
        this.#head = tail.head
        this.#size = stats.size
        this.#tail = tail
      } catch (error) {
        closeSync(this.#fd)
        throw error
      }
    }
  }

  /**
   * Checks that the log goes on under the same key (its last line's MAC; a ConfigError if not: a
   * new key needs a new file, or the log could never verify), then writes a `start` line and a
   * checkpoint, and starts the checkpoint timer.
   */
  async start(): Promise<void> {
    const { key, sink } = this.#options
    if (this.#tail.last !== null && !(await macMatches(key, this.#tail.last))) {
      if (sink.kind === 'file') closeSync(this.#fd)
      throw new ConfigError(`AUDIT_LOG ${sink.kind === 'file' ? sink.path : ''}: its last line is not under AUDIT_KEY (key ${key.id}); ` +
        'a log goes on under the key it began with: move the file away (rotate it) before changing the key')
    }
    const { tornBytes } = this.#tail
    const startFields = { pid: process.pid, keyId: key.id, ...(tornBytes > 0 ? { torn: { bytes: tornBytes } } : {}), ...(this.#seq > 0 ? {} : { chain: 'new' }) }
    // The fragment a crash left is ended with a newline before the start line, which says how long it was.
    this.#endTorn = tornBytes > 0
    this.#push({ kind: 'line', type: 'start', time: new Date().toISOString(), fields: startFields, settle: ignore })
    this.#push({ kind: 'checkpoint', settle: ignore })
    this.#timer = setInterval(() => {
      if (this.#sinceCheckpoint > 0 && !this.#queue.some((item) => item.kind === 'checkpoint')) this.#push({ kind: 'checkpoint', settle: ignore })
    }, this.#options.checkpointSeconds * 1000)
    this.#timer.unref()
  }

  get status(): AuditWriterStatus {
    return { failing: this.#failing, lastError: this.#failing ? this.#lastError : null, lines: this.#seq, queued: this.#queue.length }
  }

  /** The latest checkpoint written, or null before the first. */
  get checkpoint(): Checkpoint | null { return this.#latest }

  /** Writes a line; settles when it is written (or rejects with the write's error). Waits while the queue is full. */
  append(type: LineType, fields: LineFields, time = new Date().toISOString()): Promise<void> {
    return new Promise<void>((resolve, reject) => { this.enqueue(type, fields, time, settleWith(resolve, reject)) })
  }

  /**
   * Writes a line and calls `settle` once: with null when it is written, with the error when it
   * could not be (an ECLOSED error once the log is closed). While the queue is full the line
   * waits for room first.
   */
  enqueue(type: LineType, fields: LineFields, time: string, settle: Settle): void {
    if (this.#closed) { settle(Object.assign(new Error('the audit log is closed'), { code: 'ECLOSED' })); return }
    if (this.#queue.length >= this.#options.queueMax) { this.#waiting.push(() => { this.enqueue(type, fields, time, settle) }); return }
    this.#push({ kind: 'line', type, time, fields, settle })
  }

  /** Checks the file for a rotation now (SIGHUP), writing a `rotate` line when it was rotated. */
  checkRotation(): Promise<void> {
    return new Promise<void>((resolve, reject) => { this.#push({ kind: 'check', settle: settleWith(resolve, reject) }) })
  }

  /** Writes a checkpoint if lines were written since the last, syncs, and closes the file. */
  async close(): Promise<void> {
    if (this.#closed) return
    clearInterval(this.#timer)
    if (this.#sinceCheckpoint > 0) await new Promise<void>((resolve) => { this.#push({ kind: 'checkpoint', settle: () => { resolve() } }) })
    else await new Promise<void>((resolve) => { this.#push({ kind: 'check', settle: () => { resolve() } }) })
    // A checkpoint still being synced keeps the file open until it is on the disk.
    await this.#published
    this.#closed = true
    for (const wake of this.#waiting.splice(0)) wake()
    if (this.#options.sink.kind === 'file') {
      try { closeSync(this.#fd) } catch { /* already gone */ }
    }
  }

  #push(item: Item): void {
    this.#queue.push(item)
    if (this.#draining || this.#scheduled) return
    // The lines asked for in this run of JavaScript go out together: the drain starts when it
    // returns (a microtask), by when every answer let go in the same callback has added its line,
    // and before the loop moves on, so those answers leave in this turn (see the header).
    this.#scheduled = true
    queueMicrotask(() => {
      this.#scheduled = false
      if (!this.#draining) void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    this.#draining = true
    try {
      while (this.#queue.length > 0) {
        const first = this.#queue[0]!
        // The lines waiting now go out together, in one write(2): a line per loop turn would hold
        // every keyed request to the loop's pace (group commit, as databases do with their logs).
        let count = 1
        if (first.kind === 'line') while (count < GROUP_MAX && this.#queue[count]?.kind === 'line') count += 1
        const items = this.#queue.slice(0, count)
        let failure: unknown = null
        try {
          await this.#followRotation()
          if (first.kind === 'line') await this.#writeLines(items as Extract<Item, { kind: 'line' }>[])
          // A checkpoint asked for (the timer, close) settles once it is on the disk.
          else if (first.kind === 'checkpoint') await (await this.#writeCheckpoint()).published
          this.#succeeded()
        } catch (error) {
          this.#failed(error)
          failure = error
        }
        this.#queue.splice(0, count)
        // Settled once the group is out of the queue: a settle may send its answer at once, and a
        // line asked for meanwhile joins the next group.
        for (const item of items) this.#settle(item, failure)
        for (const wake of this.#waiting.splice(0, count)) wake()
        if (this.#sinceCheckpoint >= this.#options.checkpointLines) {
          // Written now; synced and published while the next lines are written.
          try {
            const { published } = await this.#writeCheckpoint()
            published.catch((error: unknown) => { this.#failed(error) })
          } catch (error) { this.#failed(error) }
        }
      }
    } finally {
      this.#draining = false
    }
  }

  /** Settles an item; a settle that throws (its answer could not be sent) does not stop the others of its group. */
  #settle(item: Item, failure: unknown): void {
    try {
      item.settle(failure)
    } catch (error) {
      this.#options.log.error({ err: error }, 'audit log: the caller of a written line failed')
    }
  }

  #succeeded(): void {
    if (!this.#failing) return
    this.#failing = false
    this.#options.log.info({ audit: this.status }, 'audit log: writing again')
  }

  #failed(error: unknown): void {
    const code = errnoCode(error)
    if (!this.#failing || code !== this.#lastError) this.#options.log.error({ audit: { code, lines: this.#seq } }, `audit log: a line could not be written (${code})`)
    this.#failing = true
    this.#lastError = code
  }

  /** A rotation since the last line: opens the path again if the file was replaced, and writes a `rotate` line. */
  async #followRotation(): Promise<void> {
    if (this.#options.sink.kind !== 'file') return
    const { path } = this.#options.sink
    let reason: 'truncated' | 'replaced' | 'missing' | null = null
    let stats: Stats | undefined
    try {
      stats = statSync(path)
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error
      reason = 'missing'
    }
    if (stats && `${stats.dev}:${stats.ino}` !== this.#identity) reason = 'replaced'
    if (reason !== null) {
      // O_CREAT: a file moved away (create) or removed is made again; a folder that is gone fails here.
      const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
      try { closeSync(this.#fd) } catch { /* the old file's descriptor */ }
      this.#fd = fd
      const opened = fstatSync(fd)
      this.#identity = `${opened.dev}:${opened.ino}`
      this.#size = opened.size
    } else if (stats && stats.size < this.#size) {
      reason = 'truncated'
      this.#size = stats.size
    }
    if (reason === null) return
    await this.#writeLine('rotate', new Date().toISOString(), { reason, keyId: this.#options.key.id })
    this.#options.log.info({ audit: { reason, lines: this.#seq } }, `audit log: the file was ${reason === 'truncated' ? 'truncated' : 'replaced'}; the chain goes on in the new file`)
  }

  async #writeLine(type: LineType, time: string, fields: LineFields): Promise<void> {
    await this.#writeLines([{ type, time, fields }])
  }

  /** Lines chained from the head, written with one write(2); the head moves only when all are written. */
  async #writeLines(lines: { type: LineType, time: string, fields: LineFields }[]): Promise<void> {
    let seq = this.#seq
    let head = this.#head
    let events = 0
    const texts: string[] = []
    for (const { type, time, fields } of lines) {
      seq += 1
      const made = makeLine(this.#options.key, seq, time, type, fields, head)
      const text = typeof made === 'string' ? made : await made
      texts.push(text)
      head = sha256Hex(text)
      if (type !== 'checkpoint') events += 1
    }
    const bytes = Buffer.from(`${this.#endTorn ? '\n' : ''}${texts.join('\n')}\n`, 'utf8')
    await this.#write(bytes)
    this.#endTorn = false
    this.#seq = seq
    this.#head = head
    this.#size += bytes.length
    this.#sinceCheckpoint += events
  }

  /**
   * Writes a checkpoint line, then has the file synced (fdatasync) and publishes the checkpoint
   * (`checkpoint`, the process log) once the sync is done: a published checkpoint is on the disk.
   * Resolves when the line is written, with the publication's promise: the lines after it are
   * written meanwhile (a sync takes milliseconds, in which every keyed request would wait).
   */
  async #writeCheckpoint(): Promise<{ published: Promise<void> }> {
    if (this.#seq === 0) return { published: Promise.resolve() }
    const checkpoint = await makeCheckpoint(this.#options.key, this.#seq, this.#head, new Date().toISOString())
    await this.#writeLine('checkpoint', checkpoint.time, { count: checkpoint.count, head: checkpoint.head, keyId: checkpoint.keyId, checkpointMac: checkpoint.mac })
    this.#sinceCheckpoint = 0
    const fd = this.#options.sink.kind === 'file' ? this.#fd : null
    // Syncs one after another, so checkpoints are published in order.
    const published = this.#published.then(async () => {
      if (fd !== null) await new Promise<void>((resolve, reject) => { fdatasync(fd, (error) => { if (error) reject(error); else resolve() }) })
      this.#latest = checkpoint
      this.#options.log.info({ auditCheckpoint: checkpoint }, 'audit checkpoint')
    })
    this.#published = published.catch(() => {})
    return { published }
  }

  /**
   * One write(2) of the whole line. To a file, a short or failed write is cut back to the last whole
   * line. To standard output (a pipe that may be non-blocking), a full pipe (EAGAIN) is waited out
   * and a short write finished, since nothing written to a pipe can be taken back.
   */
  async #write(bytes: Buffer): Promise<void> {
    const fd = this.#fd
    const once = (from: number) => new Promise<number>((resolve, reject) => {
      write(fd, bytes, from, bytes.length - from, null, (error, count) => { if (error) reject(error); else resolve(count) })
    })
    if (this.#options.sink.kind === 'stdout') {
      for (let done = 0; done < bytes.length;) {
        try {
          done += await once(done)
        } catch (error) {
          if (errnoCode(error) !== 'EAGAIN') throw error
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      }
      return
    }
    // To a file, on the event loop: an appending write(2) of a few kilobytes reaches the page cache
    // in microseconds, less than a hand-off to the thread pool and back costs (the process log is
    // written the same way). A disk too slow for that slows the server as a full queue would.
    let written: number
    try {
      written = writeSync(fd, bytes, 0, bytes.length)
    } catch (error) {
      this.#cutBack()
      throw error
    }
    if (written !== bytes.length) {
      this.#cutBack()
      throw Object.assign(new Error(`short write: ${written} of ${bytes.length} bytes`), { code: 'ENOSPC' })
    }
  }

  /** After a failed write, removes any part of the line that reached the file (never grows the file). */
  #cutBack(): void {
    if (this.#options.sink.kind !== 'file') return
    try {
      if (fstatSync(this.#fd).size > this.#size) ftruncateSync(this.#fd, this.#size)
    } catch { /* the next line's rotation check sees what is left */ }
  }
}
