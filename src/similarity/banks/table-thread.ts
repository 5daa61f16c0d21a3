/**
 * A worker thread of table-threads.ts: builds its share of a PDQ bank's slice tables over the
 * shared hashes and posts each back as it is done, its buffers transferred.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { groupScratch } from './group.js'
import { pdqTable } from './pdq.js'
import type { TableJob, TableReply } from './table-threads.js'

// Only as a table thread: imported elsewhere (the ReDoS gate loads every module), it does nothing.
if (parentPort !== null) {
  const port = parentPort
  const job = workerData as TableJob
  const words = new Uint32Array(job.hashes, job.byteOffset, job.count * 8)
  const keys = new Uint32Array(job.count)
  const scratch = groupScratch(job.count)
  for (const slice of job.slices) {
    const { ids, offsets } = pdqTable(words, job.count, job.slicing, slice, keys, scratch)
    const reply: TableReply = { slice, ids, offsets }
    port.postMessage(reply, [ids.buffer as ArrayBuffer, offsets.buffer as ArrayBuffer])
  }
}
