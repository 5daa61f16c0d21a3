/**
 * A PDQ bank's slice tables built on worker threads (table-thread.ts), each thread a share of the
 * slices, for openBank. Building them on the event loop held it for a whole table's build at a
 * time (11 tables at 10 M entries), so a server reloading a large bank stalled its answers; on the
 * threads the loop stays free, and the slices build side by side on the machine's cores. The
 * threads read the hashes where they lie (a SharedArrayBuffer) and hand each table back without a
 * copy (the tables' buffers are transferred).
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { GroupTable } from './group.js'
import { chooseSlicing, PdqSearcher, type Slicing } from './pdq.js'

/**
 * At most this many threads: each holds three working arrays of the bank's count (120 MB at
 * 10 M entries) while it builds.
 */
const MAX_TABLE_THREADS = 4

/** What a table thread is given (its workerData). */
export interface TableJob {
  hashes: SharedArrayBuffer
  byteOffset: number
  count: number
  slicing: Slicing
  /** The slices this thread builds, in order. */
  slices: number[]
}

/** A table a thread built, and its slice. */
export interface TableReply extends GroupTable { slice: number }

/**
 * A bank's PDQ searcher, its tables (if its size calls for any) built on the threads. `hashes`
 * must lie in a SharedArrayBuffer, which the threads read.
 */
export async function openPdqSearcher(hashes: Buffer, count: number, signal?: AbortSignal): Promise<PdqSearcher> {
  const slicing = chooseSlicing(count)
  if (slicing === null) return new PdqSearcher(hashes, count, null)
  return new PdqSearcher(hashes, count, slicing, await buildTablesInThreads(hashes, count, slicing, signal))
}

/** The tables; `signal` aborted: the threads are stopped and it rejects with the signal's reason. */
async function buildTablesInThreads(hashes: Buffer, count: number, slicing: Slicing, signal?: AbortSignal): Promise<GroupTable[]> {
  if (!(hashes.buffer instanceof SharedArrayBuffer)) throw new TypeError('the hashes must lie in a SharedArrayBuffer for the table threads')
  const threads = Math.max(1, Math.min(availableParallelism(), MAX_TABLE_THREADS, slicing.slices))
  const tables: GroupTable[] = new Array<GroupTable>(slicing.slices)
  const shares = Array.from({ length: threads }, (_, thread) => Array.from({ length: slicing.slices }, (_, slice) => slice).filter((slice) => slice % threads === thread))
  const workers: Worker[] = []
  try {
    signal?.throwIfAborted()
    const aborted = new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }))
    await Promise.race([aborted, Promise.all(shares.map((slices) => new Promise<void>((resolve, reject) => {
      const job: TableJob = { hashes: hashes.buffer as SharedArrayBuffer, byteOffset: hashes.byteOffset, count, slicing, slices }
      const worker = new Worker(new URL('./table-thread.js', import.meta.url), { workerData: job })
      workers.push(worker)
      let built = 0
      worker.on('message', (reply: TableReply) => {
        tables[reply.slice] = { ids: reply.ids, offsets: reply.offsets }
        built++
      })
      worker.on('error', reject)
      worker.on('exit', (code) => {
        if (built === slices.length) resolve()
        else reject(new Error(`a PDQ table thread ended (exit code ${code}) with ${built} of its ${slices.length} tables built`))
      })
    })))])
  } catch (error) {
    // Aborted, or one thread failed: the others' tables are of no use.
    await Promise.all(workers.map((worker) => worker.terminate()))
    throw error
  }
  return tables
}
