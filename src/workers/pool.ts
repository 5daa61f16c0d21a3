/**
 * The worker pool: password hashing and large digests run on piscina's worker threads so the event
 * loop keeps serving cheap requests. The work in flight (running plus waiting) is bounded here,
 * not by piscina's maxQueue, which piscina does not apply to tasks that carry an AbortSignal; when
 * the bound is reached the caller gets 503 with Retry-After instead of an ever-growing backlog.
 *
 * Tasks are also admitted by memory: each declares what it will allocate (memory.ts), and a task
 * starts only while a thread is free and the running tasks' memory plus its own fits
 * MAX_WORK_MEMORY_BYTES. Waiting tasks start strictly in arrival order, so a large argon2 task at
 * the head is not overtaken (starved) by a stream of small ones that would fit beside the others.
 *
 * Where an admitted task runs: a password task whose scheme does not block its caller (bcrypt;
 * argon2 of a UTF-8 password: their native code runs on libuv's thread pool, see
 * PasswordScheme.blocksCaller) is started from the event loop, and everything else on a piscina
 * thread. Each piscina thread is a V8 isolate with the algorithm modules loaded (10–14 MB of heap
 * under load on Node 24), which a bcrypt or argon2 hash only waits in; under `npm run soak` they
 * were two of the process's five isolates. libuv's pool also serves the file system and DNS, and
 * has UV_THREADPOOL_SIZE threads (4 unless set): at most one fewer than that run this way at
 * once, and the rest go to piscina's threads. Both kinds count alike against the bounds above.
 */
import { Piscina } from 'piscina'
import { passwordSchemeNamed } from '../algorithms/registry.js'
import { Problem, problems } from '../problem.js'
import { declaredMemoryBytes } from './memory.js'
import { runTask, type Task, type TaskOutcome, type TaskValue } from './tasks.js'

export interface WorkResult<T extends TaskValue> { value: T, ms: number }

/** What the pool is doing, for GET /api/health and metrics. */
export interface PoolStats {
  threads: number
  running: number
  queued: number
  memoryBudgetBytes: number
  memoryInUseBytes: number
  /** Tasks handed to a thread since start (a request refused before any work never adds one). */
  started: number
  /** Requests refused with 503 since start (the bound on running plus waiting was reached). */
  rejected: number
}

interface Waiter { bytes: number, start: () => void }

/** libuv's thread pool size: UV_THREADPOOL_SIZE as libuv reads it (1–1024), else its default of 4. */
export function libuvPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const size = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '', 10)
  return Number.isInteger(size) && size > 0 ? Math.min(size, 1024) : 4
}

/** A password task whose scheme waits on libuv's pool for this input rather than computing on its caller. */
export function runsOnLibuvPool(task: Task): boolean {
  if (task.op !== 'password-hash' && task.op !== 'password-verify') return false
  const scheme = passwordSchemeNamed(task.scheme)
  return scheme.blocksCaller !== undefined && !scheme.blocksCaller(task.input)
}

export class WorkPool {
  readonly #piscina: Piscina
  /** Tasks running or waiting, and how many of them the threads plus the queue may hold. */
  #inFlight = 0
  readonly #capacity: number
  readonly #threads: number
  readonly #memoryBudget: number
  #running = 0
  #memoryInUse = 0
  /** Admitted to the bound but not yet started, in arrival order. */
  readonly #waiting: Waiter[] = []
  #rejected = 0
  #started = 0
  /** Tasks running from the event loop on libuv's pool, and how many may at once. */
  #onLibuvPool = 0
  readonly #libuvPoolMax = Math.max(1, libuvPoolSize() - 1)

  constructor(options: { threads: number, maxQueue: number, memoryBudgetBytes: number }) {
    this.#capacity = options.threads + options.maxQueue
    this.#threads = options.threads
    this.#memoryBudget = options.memoryBudgetBytes
    this.#piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      // Threads start on first use, not at boot: each loads the algorithm modules (about 30 MB of
      // RSS apiece), which an idle server need not hold; idleTimeout ends them again when quiet.
      minThreads: 0,
      maxThreads: options.threads,
      // Each worker runs one memory-hard hash at a time; more would only thrash.
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
      // Piscina's run- and wait-time histograms (two HDR histograms, 360 KB each) are never read:
      // the pool's metrics are hashd's own (hashd_work_* in plugins/metrics.ts).
      recordTiming: false,
    })
  }

  async run<T extends TaskValue>(task: Task, signal?: AbortSignal): Promise<WorkResult<T>> {
    if (this.#inFlight >= this.#capacity) {
      this.#rejected++
      throw problems.overloaded(1)
    }
    if (signal?.aborted) throw problems.clientClosed()
    this.#inFlight++
    // A task larger than the whole budget (a budget set below the 1 MiB a small task declares)
    // would wait forever; it runs alone instead.
    const bytes = Math.min(declaredMemoryBytes(task), this.#memoryBudget)
    let outcome: TaskOutcome
    try {
      const waiting = this.#admit(bytes, signal)
      if (waiting) await waiting
      try {
        outcome = this.#onLibuvPool < this.#libuvPoolMax && runsOnLibuvPool(task)
          ? await this.#runOnLibuvPool(task, signal)
          : await this.#piscina.run(task, signal ? { signal } : {})
      } finally {
        this.#release(bytes)
      }
    } catch (error) {
      if (signal?.aborted) throw problems.clientClosed()
      throw error
    } finally {
      this.#inFlight--
    }
    return settle<T>(outcome)
  }

  /**
   * Native work already started cannot be stopped, so a client that leaves meanwhile frees its slot
   * only when the work ends (piscina ends a thread instead); its caps bound how long that takes.
   */
  async #runOnLibuvPool(task: Task, signal?: AbortSignal): Promise<TaskOutcome> {
    this.#onLibuvPool++
    try {
      const outcome = await runTask(task)
      if (signal?.aborted) throw problems.clientClosed()
      return outcome
    } finally {
      this.#onLibuvPool--
    }
  }

  stats(): PoolStats {
    return {
      threads: this.#threads, running: this.#running, queued: this.#waiting.length,
      memoryBudgetBytes: this.#memoryBudget, memoryInUseBytes: this.#memoryInUse, rejected: this.#rejected, started: this.#started,
    }
  }

  #fits(bytes: number): boolean {
    return this.#running < this.#threads && this.#memoryInUse + bytes <= this.#memoryBudget
  }

  #take(bytes: number): void {
    this.#started++
    this.#running++
    this.#memoryInUse += bytes
  }

  /** Starts the task's accounting now (returns undefined) or a promise that resolves when it may start. */
  #admit(bytes: number, signal?: AbortSignal): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#fits(bytes)) {
      this.#take(bytes)
      return undefined
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiting.indexOf(waiter)
        if (index !== -1) this.#waiting.splice(index, 1)
        reject(problems.clientClosed())
        // The head may have left: whoever is next may fit now.
        this.#startWaiting()
      }
      const waiter: Waiter = {
        bytes,
        start: () => {
          signal?.removeEventListener('abort', onAbort)
          this.#take(bytes)
          resolve()
        },
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(waiter)
    })
  }

  #release(bytes: number): void {
    this.#running--
    this.#memoryInUse -= bytes
    this.#startWaiting()
  }

  /** Starts waiting tasks from the head while they fit; never skips the head (FIFO). */
  #startWaiting(): void {
    while (this.#waiting.length > 0 && this.#fits((this.#waiting[0] as Waiter).bytes)) {
      (this.#waiting.shift() as Waiter).start()
    }
  }

  async close(): Promise<void> {
    await this.#piscina.close()
  }
}

/** The same work on the calling thread, for inputs small enough that a thread hop would cost more. */
export async function runInline<T extends TaskValue>(task: Task): Promise<WorkResult<T>> {
  return settle<T>(await runTask(task))
}

function settle<T extends TaskValue>(outcome: TaskOutcome): WorkResult<T> {
  if (!outcome.ok) {
    const { status, type, title, detail } = outcome.problem
    throw new Problem(status, type, title, detail)
  }
  return { value: outcome.value as T, ms: outcome.ms }
}
