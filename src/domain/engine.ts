/**
 * Where work runs: password schemes always through the worker pool (which starts bcrypt and argon2
 * from the event loop, their native code on libuv's threads, and the others on its threads), digests and HMACs inline while the
 * input is small (a thread hop costs more than hashing a few KiB) and on the pool above
 * `INLINE_DIGEST_MAX_BYTES`, so a 1 MiB input of a slow algorithm never holds the event loop.
 */
import type { Config } from '../config.js'
import type { ParsedJson, Task, TaskValue } from '../workers/tasks.js'
import { runInline, WorkPool, type PoolStats, type WorkResult } from '../workers/pool.js'

export class Engine {
  readonly config: Config
  readonly #pool: WorkPool

  constructor(config: Config) {
    this.config = config
    this.#pool = new WorkPool({ threads: config.workerThreads, maxQueue: config.workQueueMax, memoryBudgetBytes: config.maxWorkMemoryBytes })
  }

  /** A JSON request body over JSON_INLINE_MAX_BYTES (plugins/body.ts), parsed on the pool. */
  async parseJson(body: Uint8Array): Promise<unknown> {
    return (await this.#pool.run<ParsedJson>({ op: 'json', input: body })).value.json
  }

  run<T extends TaskValue>(task: Task, signal?: AbortSignal): Promise<WorkResult<T>> {
    const size = task.op === 'hmac' ? task.message.length + task.key.length : task.input.length
    const offload = task.op === 'password-hash' || task.op === 'password-verify' || size >= this.config.inlineDigestMaxBytes
    return offload ? this.#pool.run<T>(task, signal) : runInline<T>(task)
  }

  /** The worker pool's threads, queue and memory in use (health detail, metrics). */
  stats(): PoolStats {
    return this.#pool.stats()
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
