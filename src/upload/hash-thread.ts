/**
 * A hashing thread of the upload fan-out (threads.ts). It serves one upload at a time: `start`
 * names the algorithms, the content hashes (registry name and resolved parameters, or one of
 * /api/filehash/verify's own: content-hashes/verification.ts) and the shared ring, each `data` names a range of the ring to hash, `end`
 * asks for the digests. After each range it records how far it has read in shared memory, so the
 * main thread can reuse that part of the ring, and wakes the main thread only if it is waiting.
 * Messages arrive in order on one port, so every hasher sees every chunk in order.
 */
import { parentPort } from 'node:worker_threads'
import { opensslHasher } from '../algorithms/hashers.js'
import type { Hasher } from '../algorithms/types.js'
import type { ContentHasher } from '../content-hashes/index.js'
import { Problem } from '../problem.js'
import type { ThreadContentHash } from './sink.js'
import { CONTROL_ABORT, CONTROL_WAITING, type FromThread, type ThreadAlgorithm, type ToThread } from './threads.js'

if (parentPort === null) throw new Error('hash-thread.js runs as a worker thread')
const port = parentPort

let ring: Uint8Array<ArrayBufferLike> = new Uint8Array(0)
let control: Int32Array<ArrayBufferLike> = new Int32Array(2)
let progress: BigInt64Array<ArrayBufferLike> = new BigInt64Array(1)
let lane = 0
let hashers: Array<[string, Hasher]> = []
let contentHashers: Array<[string, ContentHasher]> = []
/** Whether the current upload still wants work: false once it ended, failed or was dropped. */
let active = false
let consumed = 0
let id = 0
/** Messages are handled one after another, since creating a WASM hasher is asynchronous. */
let queue: Promise<void> = Promise.resolve()

/** The registry, loaded on first need: plain OpenSSL digests (the common uploads) never need it. */
let registry: Promise<typeof import('../algorithms/registry.js')> | undefined

async function hasherFor({ name, outputBytes, openssl, share }: ThreadAlgorithm): Promise<Hasher> {
  if (openssl !== undefined) return opensslHasher(openssl)(outputBytes)
  registry ??= import('../algorithms/registry.js')
  const algorithm = (await registry).digestNamed(name)
  if (share === undefined) return algorithm.create(outputBytes)
  if (algorithm.split === undefined) throw new Error(`${name} is not split by data`)
  return algorithm.split.share(share.index, share.count)
}

/** The content-hash registry (and verify's own hashers), loaded only when an upload asks for a content hash. */
let contentRegistry: Promise<typeof import('../content-hashes/verification.js')> | undefined

async function contentHasherFor(hash: ThreadContentHash): Promise<ContentHasher> {
  contentRegistry ??= import('../content-hashes/verification.js')
  return (await contentRegistry).createPlainHasher(hash)
}

function send(message: FromThread): void {
  port.postMessage(message)
}

/** Drops the upload's hashers and reports why: a problem (the request's fault) whole, anything else by its name only. */
function fail(error: unknown): void {
  hashers = []
  contentHashers = []
  active = false
  if (error instanceof Problem) {
    const { status, type, title, detail, extensions } = error
    send({ t: 'error', id, message: error.name, problem: { status, type, title, detail, extensions } })
  } else {
    send({ t: 'error', id, message: error instanceof Error ? error.name : 'hasher failed' })
  }
}

async function handle(message: ToThread): Promise<void> {
  switch (message.t) {
    case 'start':
      id = message.id
      ring = new Uint8Array(message.ring)
      control = new Int32Array(message.control)
      progress = new BigInt64Array(message.progress)
      lane = message.lane
      consumed = 0
      hashers = []
      contentHashers = []
      active = true
      try {
        hashers = await Promise.all(message.algorithms.map(async (algorithm): Promise<[string, Hasher]> => [algorithm.share?.key ?? algorithm.name, await hasherFor(algorithm)]))
        contentHashers = await Promise.all(message.contentHashes.map(async (hash): Promise<[string, ContentHasher]> => [hash.key ?? hash.name, await contentHasherFor(hash)]))
      } catch (error) {
        fail(error)
      }
      return
    case 'data': {
      // Set by the main thread when the upload is dropped: skip what is still queued.
      if (Atomics.load(control, CONTROL_ABORT) !== 0 || !active) return
      const chunk = ring.subarray(message.start, message.start + message.length)
      try {
        for (const [, hasher] of hashers) hasher.update(chunk)
        for (const [, hasher] of contentHashers) hasher.update(chunk)
      } catch (error) {
        fail(error)
        return
      }
      consumed += message.skip + message.length
      // The count goes through shared memory; a message only when the main thread waits for room.
      Atomics.store(progress, lane, BigInt(consumed))
      if (Atomics.load(control, CONTROL_WAITING) !== 0) send({ t: 'progress', id })
      return
    }
    case 'end':
      if (Atomics.load(control, CONTROL_ABORT) !== 0 || !active) return
      try {
        send({
          t: 'done', id,
          digests: hashers.map(([name, hasher]) => [name, hasher.digest()]),
          contentHashes: contentHashers.map(([name, hasher]) => [name, hasher.finish()]),
        })
      } catch (error) {
        fail(error)
      }
      hashers = []
      contentHashers = []
      active = false
      return
    case 'abort':
      hashers = []
      contentHashers = []
      active = false
      return
  }
}

port.on('message', (message: ToThread) => {
  queue = queue.then(() => handle(message))
})
