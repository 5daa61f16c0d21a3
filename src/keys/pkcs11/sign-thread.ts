/**
 * A thread that makes many HMACs in a token in one go (binding.ts `signMany`): for each message,
 * `C_SignInit` then `C_Sign` on the session it is given, called synchronously here, off the
 * event loop. One message from the event loop carries a whole group of messages and one answer
 * carries their MACs, so a group costs one hand-off between threads instead of two per MAC (each
 * koffi `.async` call is a hand-off to a libuv thread and back, about as long as SoftHSM2's own
 * C_Sign of a short message).
 *
 * The module is the one the event loop loaded and initialised (dlopen gives this thread the same
 * library, PKCS#11 state is per process); sessions and key handles are the pool's (token.ts). A
 * session serves one call at a time: the pool hands a session to one group, and this thread runs
 * the group's calls one after another.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'

type Koffi = typeof import('koffi')

/** A group: `data` holds the messages end to end, `ends` where each ends. */
export interface SignJob {
  id: number
  session: number
  mechanism: number
  key: number
  data: Uint8Array
  ends: Uint32Array
  outputBytes: number
}

/** The MACs end to end (each `outputBytes` long), or the first call that failed and its CK_RV. */
export type SignReply = { id: number, macs: Uint8Array } | { id: number, fn: 'C_SignInit' | 'C_Sign', rv: number }

if (parentPort !== null) {
  const port = parentPort
  const koffi = createRequire(import.meta.url)('koffi') as Koffi
  const lib = koffi.load((workerData as { modulePath: string }).modulePath)
  const ulong = 'unsigned long'
  // Pointers as bytes made here: CK_MECHANISM (mechanism, NULL, 0) and the CK_ULONG length.
  const signInit = lib.func('C_SignInit', ulong, [ulong, 'void *', ulong])
  const sign = lib.func('C_Sign', ulong, [ulong, 'void *', ulong, 'void *', 'void *'])
  const mechanism = Buffer.alloc(24)
  const length = Buffer.alloc(8)
  port.on('message', (job: SignJob) => {
    mechanism.writeBigUInt64LE(BigInt(job.mechanism), 0)
    const count = job.ends.length
    const macs = new Uint8Array(count * job.outputBytes)
    const out = Buffer.alloc(job.outputBytes)
    let start = 0
    for (let index = 0; index < count; index++) {
      const end = job.ends[index]!
      let rv = Number(signInit(job.session, mechanism, job.key))
      if (rv !== 0) { port.postMessage({ id: job.id, fn: 'C_SignInit', rv } satisfies SignReply); return }
      length.writeBigUInt64LE(BigInt(job.outputBytes), 0)
      rv = Number(sign(job.session, job.data.subarray(start, end), end - start, out, length))
      if (rv !== 0) { port.postMessage({ id: job.id, fn: 'C_Sign', rv } satisfies SignReply); return }
      macs.set(out, index * job.outputBytes)
      start = end
    }
    port.postMessage({ id: job.id, macs } satisfies SignReply, [macs.buffer])
  })
}
