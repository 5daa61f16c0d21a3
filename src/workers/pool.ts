/**
 * The worker pool: password hashing and large digests run on piscina's worker threads so the event
 * loop keeps serving cheap requests. The work in flight (running plus waiting) is bounded here,
 * not by piscina's maxQueue, which piscina does not apply to tasks that carry an AbortSignal; when
 * the bound is reached the caller gets 503 with Retry-After instead of an ever-growing backlog.
 */
import { Piscina } from 'piscina'
import { Problem, problems } from '../problem.js'
import { runTask, type Task, type TaskOutcome, type TaskValue } from './tasks.js'

export interface WorkResult<T extends TaskValue> { value: T, ms: number }

export class WorkPool {
  readonly #piscina: Piscina
  /** Tasks running or waiting, and how many of them the threads plus the queue may hold. */
  #inFlight = 0
  readonly #capacity: number

  constructor(options: { threads: number, maxQueue: number }) {
    this.#capacity = options.threads + options.maxQueue
    this.#piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      // Threads start on first use, not at boot: each loads the algorithm modules (about 30 MB of
      // RSS apiece), which an idle server need not hold; idleTimeout ends them again when quiet.
      minThreads: 0,
      maxThreads: options.threads,
      // Each worker runs one memory-hard hash at a time; more would only thrash.
      concurrentTasksPerWorker: 1,
      idleTimeout: 60_000,
    })
  }

  async run<T extends TaskValue>(task: Task, signal?: AbortSignal): Promise<WorkResult<T>> {
    if (this.#inFlight >= this.#capacity) throw problems.overloaded(1)
    this.#inFlight++
    let outcome: TaskOutcome
    try {
      outcome = await this.#piscina.run(task, signal ? { signal } : {})
    } catch (error) {
      if (signal?.aborted) throw problems.clientClosed()
      throw error
    } finally {
      this.#inFlight--
    }
    return settle<T>(outcome)
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
