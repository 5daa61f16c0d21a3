/**
 * Where work runs: password schemes always on the worker pool, digests and HMACs inline while the
 * input is small (a thread hop costs more than hashing a few KiB) and on the pool above
 * `INLINE_DIGEST_MAX_BYTES`, so a 1 MiB input of a slow algorithm never holds the event loop.
 */
import type { Config } from '../config.js'
import type { Task, TaskValue } from '../workers/tasks.js'
import { runInline, WorkPool, type WorkResult, type WorkStats } from '../workers/pool.js'

export class Engine {
  readonly config: Config
  readonly #pool: WorkPool

  constructor(config: Config) {
    this.config = config
    this.#pool = new WorkPool({ threads: config.workerThreads, maxQueue: config.workQueueMax })
  }

  run<T extends TaskValue>(task: Task, signal?: AbortSignal): Promise<WorkResult<T>> {
    const size = task.op === 'hmac' ? task.message.length + task.key.length : task.input.length
    const offload = task.op === 'password-hash' || task.op === 'password-verify' || size >= this.config.inlineDigestMaxBytes
    return offload ? this.#pool.run<T>(task, signal) : runInline<T>(task)
  }

  /** The worker pool's load, for monitoring. */
  workStats(): WorkStats {
    return this.#pool.stats()
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
