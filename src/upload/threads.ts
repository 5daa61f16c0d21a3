/**
 * The fan-out stage on threads: an upload's hashers spread over worker threads, so several
 * algorithms use several cores while the socket is read (cf. RHash's single pass, here split by
 * algorithm rather than by data, since every hasher must see every byte in order).
 *
 * The main thread copies each chunk once into a ring of shared memory and tells each thread which
 * range to hash; each thread reports how far it has read. A chunk that does not fit until the
 * slowest thread has moved on makes `write` return a promise, and the source pauses the socket
 * until it settles. An abort sets a shared flag every thread checks before each range and hands
 * the threads back at once.
 *
 * Each thread owns one ring for its whole life, and an upload writes into the ring of its first
 * thread: memory is one ring per thread, allocated when the thread starts and freed when it ends,
 * never per upload. A ring per upload (8 MiB, at some 280 uploads/s of 1 MiB) drove RSS past
 * 700 MB under load and kept it there: a shared buffer's memory is freed only once every isolate
 * that saw it has collected its handle, and the hash threads allocate so little that they collect
 * rarely, so dozens of rings were alive at once; once glibc had raised its mmap threshold past
 * 8 MiB (it does so on the first large free) they came from the main heap, which fragmented and
 * was never given back (see memory-tuning.ts for the allocator settings).
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { plainOpensslName } from '../algorithms/hashers.js'
import type { DigestAlgorithm, DigestSplit } from '../algorithms/types.js'
import { findContentHash } from '../content-hashes/index.js'
import type { DataSplit } from '../content-hashes/segments.js'
import { Problem } from '../problem.js'
import type { ContentHashingSink, ThreadContentHash } from './sink.js'

export type ToThread =
  | { t: 'start', id: number, lane: number, ring: SharedArrayBuffer, control: SharedArrayBuffer, progress: SharedArrayBuffer, algorithms: ThreadAlgorithm[], contentHashes: ThreadContentHash[] }
  /** Hash `length` bytes from `start`; `skip` bytes of the ring before them were left empty (see #put), and count as read. */
  | { t: 'data', start: number, length: number, skip: number }
  | { t: 'end' }
  | { t: 'abort' }

/**
 * An algorithm as a thread receives it. `openssl` names a plain OpenSSL digest, which the thread
 * makes with node:crypto directly; only other algorithms make it load the registry (hash-wasm,
 * the hand-written ones, the password schemes' modules), which cost each new thread about 0.12 s of
 * CPU and 6 MiB (a cold 2 MB four-algorithm upload: 0.19–0.22 s of CPU per thread before, 0.07–0.09 after).
 */
export interface ThreadAlgorithm { name: string, outputBytes: number, openssl?: string, share?: AlgorithmShare }

/** Share `index` of `count` of a digest split by data; the thread reports its state under `key`. */
export interface AlgorithmShare { index: number, count: number, key: string }

/** An algorithm as a lane runs it: whole, or one share of it. */
export type LaneAlgorithm = DigestAlgorithm & { share?: AlgorithmShare }

function forThread(algorithm: LaneAlgorithm): ThreadAlgorithm {
  const { name, outputBytes, share } = algorithm
  const openssl = plainOpensslName(algorithm)
  return { name, outputBytes, ...(openssl === undefined ? {} : { openssl }), ...(share === undefined ? {} : { share }) }
}

/** Replies name the upload they belong to: a thread handed back after an abort may still answer for it. */
export type FromThread =
  /** Sent only while the main thread waits for room (CONTROL_WAITING): a wake-up, the count is shared. */
  | { t: 'progress', id: number }
  /** `contentHashes`: each content hash's text by its `key ?? name`. */
  | { t: 'done', id: number, digests: Array<[string, Uint8Array]>, contentHashes: Array<[string, string]> }
  /** `problem`: the request's fault, found by a content hasher (a partSize that makes too many parts), rebuilt on the main thread. */
  | { t: 'error', id: number, message: string, problem?: ThreadProblem }

/** A `Problem` as plain values, since a class does not survive a thread's message. */
export interface ThreadProblem { status: number, type: string, title: string, detail: string, extensions: Record<string, unknown> }

const MiB = 1024 * 1024

/** A word, for the ring's copies (see #put). The ring's size is a multiple of it, so a chunk that wraps stays in step. */
const ALIGNMENT = 8
/** Chunks shorter than this are not moved into step with the ring (see #put). */
const ALIGN_MIN_BYTES = 4096

/**
 * Bytes copied into the ring before the lanes are told of them: one message per lane for every
 * 256 KiB (four socket reads) rather than per chunk, so a thread wakes, and the main thread posts,
 * a quarter as often. Anything not yet posted is posted before the main thread waits for room, and
 * at the end.
 */
const POST_BYTES = 256 * 1024

/** Int32 slots of an upload's control memory: set to drop the upload; set while the main thread waits for room. */
export const CONTROL_ABORT = 0
export const CONTROL_WAITING = 1

/**
 * Relative cost per byte of OpenSSL's hashes, measured on an AMD EPYC with SHA extensions
 * (md5 ≈ 250, sha1 ≈ 650, sha256 ≈ 500, sha512 ≈ 260 MiB/s on one core): used only to balance
 * algorithms across threads. Anything else counts as slow.
 */
const RELATIVE_COST: Record<string, number> = { md5: 4, sha1: 1.5, sha224: 2, sha256: 2, sha384: 3.8, sha512: 3.8, 'sha512-224': 3.8, 'sha512-256': 3.8, crc32: 1, xxh64: 0.5, xxh3: 0.5, xxh128: 0.5, blake3: 1 }
const DEFAULT_COST = 6

/**
 * A content hash's relative cost per byte, for balancing only, on RELATIVE_COST's scale (SHA-256 =
 * 2): each one's hash-thread CPU seconds alone over a 256 MiB upload (`BENCH_ONLY=content`, AMD EPYC
 * with SHA extensions, Node 20), which put OpenSSL's SHA-1 and SHA-256, hash-wasm's CRCs and the
 * trees and parts around SHA-1 and SHA-256 at about the same cost, MD5 at 2.3 times it, hashd's
 * WebAssembly Tiger tree at 2.9 times, and the magnet link (TTH, AICH, btih and ed2k's MD4) at 6.7.
 * A share of a hash split by data costs its part. Anything not listed counts as DEFAULT_COST.
 */
const CONTENT_HASH_COST: Record<string, number> = {
  's3-etag': 4.6, 'gcs-md5': 4.6, 'azure-md5': 4.6, 's3-sha1': 2, 'aich': 2, 'btih': 2.3, 'git-blob-sha1': 2,
  's3-sha256': 2, 'dropbox': 2.1, 'bt2-root': 2.9, 'git-blob-sha256': 2, 's3-crc32': 2, 's3-crc32c': 2, 's3-crc64nvme': 2.3, 'gcs-crc32c': 2,
  'quickxor': 2, 'ipfs-cid': 2.6, 'tth': 5.7, 'magnet': 13.4,
}

/** verify's hashers cost what the entry they wrap costs; its piece check is a SHA-1; a share of a split hash, its part. */
function contentHashCost({ name, params, share }: ThreadContentHash): number {
  if (name === 'verify:pieces') return CONTENT_HASH_COST.btih ?? DEFAULT_COST
  const entry = name === 'verify:entry' ? String(params.entry) : name
  return (CONTENT_HASH_COST[entry] ?? DEFAULT_COST) / (share?.count ?? 1)
}

/** A content hash split by data over the threads: its shares' keys, and how to put them together. */
export interface SplitHash { key: string, split: DataSplit, shareKeys: string[] }

/**
 * Splits each content hash that is a function of independent segments (segments.ts: Tiger tree
 * subtrees, AICH blocks, pieces, parts) into `shares` shares, one per thread, so one such hash uses
 * every core rather than one; the others stay whole. RHash reads on one core; this is where hashd
 * gets ahead of it on a multi-core machine.
 */
export function splitByData(contentHashes: readonly ThreadContentHash[], shares: number): { hashes: ThreadContentHash[], splits: SplitHash[] } {
  const hashes: ThreadContentHash[] = []
  const splits: SplitHash[] = []
  for (const hash of contentHashes) {
    const split = shares >= 2 && hash.share === undefined ? findContentHash(hash.name)?.split?.(hash.params) : undefined
    if (split === undefined) {
      hashes.push(hash)
      continue
    }
    const key = hash.key ?? hash.name
    const shareKeys = Array.from({ length: shares }, (_, index) => `${key}#share${index}`)
    shareKeys.forEach((shareKey, index) => hashes.push({ name: hash.name, params: hash.params, key: shareKey, share: { index, count: shares } }))
    splits.push({ key, split, shareKeys })
  }
  return { hashes, splits }
}

/** A digest split by data over the threads: its shares' keys, and how to put them together. */
export interface SplitDigest { name: string, split: DigestSplit, shareKeys: string[] }

/**
 * Splits each digest that has a `split` (TLSH, whose bucket counts add up over the bytes) into
 * `shares` shares, one per thread, as splitByData does for content hashes; the others stay whole.
 */
export function splitDigestsByData(algorithms: readonly DigestAlgorithm[], shares: number): { algorithms: LaneAlgorithm[], splits: SplitDigest[] } {
  const spread: LaneAlgorithm[] = []
  const splits: SplitDigest[] = []
  for (const algorithm of algorithms) {
    if (shares < 2 || algorithm.split === undefined) {
      spread.push(algorithm)
      continue
    }
    const shareKeys = Array.from({ length: shares }, (_, index) => `${algorithm.name}#share${index}`)
    shareKeys.forEach((key, index) => spread.push({ ...algorithm, share: { index, count: shares, key } }))
    splits.push({ name: algorithm.name, split: algorithm.split, shareKeys })
  }
  return { algorithms: spread, splits }
}

/** What a lane hashes: digests (or shares of them), and content hashes made in the thread from their registry entry. */
export interface LaneWork { algorithms: LaneAlgorithm[], contentHashes: ThreadContentHash[] }

/**
 * Splits algorithms and content hashes into `lanes` groups of about equal cost (longest first,
 * onto the lightest lane). The shares of a split digest go to different lanes (each share passes
 * over every byte, so two in one lane would cost more than the whole digest), where there are
 * lanes enough.
 */
export function balance(algorithms: readonly LaneAlgorithm[], lanes: number, contentHashes: readonly ThreadContentHash[] = []): LaneWork[] {
  const items = [
    ...algorithms.map((algorithm) => ({
      cost: (RELATIVE_COST[algorithm.name] ?? DEFAULT_COST) / (algorithm.share?.count ?? 1),
      shareOf: algorithm.share === undefined ? undefined : algorithm.name,
      add: (work: LaneWork) => work.algorithms.push(algorithm),
    })),
    ...contentHashes.map((hash) => ({ cost: contentHashCost(hash), shareOf: undefined, add: (work: LaneWork) => work.contentHashes.push(hash) })),
  ]
  const groups = Array.from({ length: Math.min(lanes, items.length) }, () => ({ cost: 0, shares: new Set<string>(), work: { algorithms: [], contentHashes: [] } as LaneWork }))
  // Stable: equal costs keep their order, digests before content hashes.
  for (const item of items.sort((a, b) => b.cost - a.cost)) {
    const open = item.shareOf === undefined ? groups : groups.filter((group) => !group.shares.has(item.shareOf as string))
    const lightest = (open.length > 0 ? open : groups).reduce((best, group) => (group.cost < best.cost ? group : best))
    if (item.shareOf !== undefined) lightest.shares.add(item.shareOf)
    lightest.cost += item.cost
    item.add(lightest.work)
  }
  return groups.map((group) => group.work).filter((work) => work.algorithms.length + work.contentHashes.length > 0)
}

/** One worker thread and the upload it currently serves. */
class Lane {
  readonly worker: Worker
  /** The ring an upload led by this lane writes into; reused by every such upload (see above). */
  readonly ring: SharedArrayBuffer
  onMessage: ((message: FromThread) => void) | null = null
  onFailure: ((error: Error) => void) | null = null
  alive = true

  constructor(url: URL, ringBytes: number) {
    this.ring = new SharedArrayBuffer(ringBytes)
    this.worker = new Worker(url)
    this.worker.on('message', (message: FromThread) => this.onMessage?.(message))
    this.worker.on('error', (error) => this.onFailure?.(error))
    this.worker.on('exit', () => {
      this.alive = false
      this.onFailure?.(new Error('hash thread exited'))
    })
  }

  post(message: ToThread): void {
    this.worker.postMessage(message)
  }
}

export interface HashThreadsOptions {
  /** Threads at most; the default is one per core. */
  threads?: number
  /** Ring of shared memory per thread, bytes (an upload uses its first thread's). */
  ringBytes?: number
  /** Idle threads end after this long, so memory at rest stays low. */
  idleMs?: number
}

/**
 * Threads for upload hashing, started on first use and ended when idle. They are hashd's own,
 * apart from the piscina pool (workers/pool.ts): a streaming upload holds its threads for its
 * whole length, and password hashing should not queue behind it.
 */
export class HashThreads {
  readonly #url = new URL('./hash-thread.js', import.meta.url)
  readonly #max: number
  readonly #ringBytes: number
  readonly #idleMs: number
  readonly #idle: Lane[] = []
  #started = 0
  #idleTimer: NodeJS.Timeout | undefined
  #closed = false

  constructor(options: HashThreadsOptions = {}) {
    this.#max = options.threads ?? availableParallelism()
    this.#ringBytes = Math.ceil((options.ringBytes ?? 8 * MiB) / ALIGNMENT) * ALIGNMENT
    this.#idleMs = options.idleMs ?? 30_000
  }

  /** How many threads `sink` could have now. */
  get available(): number {
    return this.#closed ? 0 : this.#idle.length + (this.#max - this.#started)
  }

  /** Up to `wanted` threads, started if need be; fewer (maybe none) when others hold them. */
  #acquire(wanted: number): Lane[] {
    const lanes: Lane[] = []
    while (lanes.length < wanted && this.#idle.length > 0) lanes.push(this.#idle.pop() as Lane)
    while (lanes.length < wanted && this.#started < this.#max && !this.#closed) {
      const lane = new Lane(this.#url, this.#ringBytes)
      this.#started++
      lane.worker.once('exit', () => { this.#started--; this.#forget(lane) })
      lanes.push(lane)
    }
    return lanes
  }

  #forget(lane: Lane): void {
    const index = this.#idle.indexOf(lane)
    if (index !== -1) this.#idle.splice(index, 1)
  }

  #release(lanes: Lane[]): void {
    for (const lane of lanes) {
      lane.onMessage = null
      lane.onFailure = null
      if (this.#closed) void lane.worker.terminate()
      else if (lane.alive) this.#idle.push(lane)
    }
    clearTimeout(this.#idleTimer)
    if (this.#idle.length > 0 && !this.#closed) {
      this.#idleTimer = setTimeout(() => { for (const lane of this.#idle.splice(0)) void lane.worker.terminate() }, this.#idleMs)
      this.#idleTimer.unref()
    }
  }

  /**
   * A sink whose algorithms and content hashes are spread over threads, or null when too few threads
   * are free (the caller then hashes inline; its socket's own backpressure bounds that). Digests alone
   * need two threads, since OpenSSL's digests on the event loop cost less than one thread's hop; a
   * content hash takes one, since it may be slow (hashd's own Merkle trees and chunkings) and is
   * worth moving off the event loop by itself.
   */
  sink(algorithms: readonly DigestAlgorithm[], contentHashes: readonly ThreadContentHash[] = []): ContentHashingSink | null {
    // One slow hasher (a content hash, ssdeep, TLSH) is worth a thread of its own; fast digests, two.
    const fewest = contentHashes.length > 0 || algorithms.some((algorithm) => algorithm.kind === 'similarity') ? 1 : 2
    if (this.available < fewest || algorithms.length + contentHashes.length < fewest) return null
    const { hashes, splits } = splitByData(contentHashes, this.available)
    // A digest's shares each pass over every byte, and the event loop reads the socket beside them:
    // on 2 cores two TLSH shares took longer than TLSH on one thread (100 MiB, 1.7 s against 1.4 s,
    // medians of 8), so a digest is split only over the threads beyond one left for the event loop.
    const { algorithms: spread, splits: digestSplits } = splitDigestsByData(algorithms, this.available - 1)
    const groups = balance(spread, Math.min(this.available, spread.length + hashes.length), hashes)
    if (groups.length < fewest) return null
    const lanes = this.#acquire(groups.length)
    if (lanes.length < groups.length) {
      this.#release(lanes)
      return null
    }
    return new ThreadedSink(lanes, groups, (done) => this.#release(done), splits, digestSplits)
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#idleTimer)
    await Promise.all(this.#idle.splice(0).map((lane) => lane.worker.terminate()))
  }
}

let uploads = 0

class ThreadedSink implements ContentHashingSink {
  readonly #id = ++uploads
  readonly #lanes: Lane[]
  readonly #ring: Uint8Array
  readonly #control: Int32Array
  readonly #release: (lanes: Lane[]) => void
  /** How far the ring has been filled, counting the bytes left empty before a chunk (see #put). */
  #written = 0
  /** How far the lanes have been told of (`data` messages); at most `#written`. */
  #posted = 0
  /** Bytes left empty just after `#posted`, for the next `data` message to count as read. */
  #skip = 0
  /** How far each lane has read, written by the lanes (BigInt64 slots, one per lane). */
  readonly #progress: BigInt64Array
  /** Chunks that did not fit yet, in order, and the promise `write` handed out for them. */
  readonly #pending: Uint8Array[] = []
  #drained: Promise<void> | null = null
  #waiter: { resolve: () => void, reject: (error: Error) => void } | null = null
  #finisher: { resolve: (digests: Map<string, Uint8Array>) => void, reject: (error: Error) => void } | null = null
  readonly #digests = new Map<string, Uint8Array>()
  readonly #contentHashes = new Map<string, string>()
  #doneLanes = 0
  #failure: Error | null = null
  #released = false
  readonly #splits: readonly SplitHash[]
  readonly #digestSplits: readonly SplitDigest[]

  constructor(lanes: Lane[], groups: LaneWork[], release: (lanes: Lane[]) => void, splits: readonly SplitHash[] = [], digestSplits: readonly SplitDigest[] = []) {
    this.#lanes = lanes
    this.#release = release
    this.#splits = splits
    this.#digestSplits = digestSplits
    // The first lane's ring, which no other upload uses while this one holds the lane. A lane
    // handed back after an abort may still read its old ranges from a ring that the next upload
    // is filling, but only into the aborted upload's hashers, which are dropped. The control and
    // progress words stay per upload (16 bytes or so), so those stale reads never count as progress.
    const ring = (lanes[0] as Lane).ring
    const control = new SharedArrayBuffer(8)
    const progress = new SharedArrayBuffer(8 * lanes.length)
    this.#ring = new Uint8Array(ring)
    this.#control = new Int32Array(control)
    this.#progress = new BigInt64Array(progress)
    lanes.forEach((lane, index) => {
      lane.onMessage = (message) => { if (message.id === this.#id) this.#onMessage(index, message) }
      lane.onFailure = (error) => this.#fail(error)
      const work = groups[index] as LaneWork
      lane.post({ t: 'start', id: this.#id, lane: index, ring, control, progress, algorithms: work.algorithms.map(forThread), contentHashes: work.contentHashes })
    })
  }

  /** Free room in the ring: its size less what the slowest lane has not read yet. */
  #room(): number {
    let slowest = this.#written
    for (let lane = 0; lane < this.#progress.length; lane++) slowest = Math.min(slowest, Number(Atomics.load(this.#progress, lane)))
    return this.#ring.length - (this.#written - slowest)
  }

  write(chunk: Uint8Array): Promise<void> | undefined {
    if (this.#failure) throw this.#failure
    const most = this.#ring.length >>> 1
    if (this.#pending.length === 0 && chunk.length <= most && this.#room() >= chunk.length + ALIGNMENT - 1) {
      this.#put(chunk)
      if (this.#written - this.#posted >= POST_BYTES) this.#post()
      return undefined
    }
    // No room yet: keep a copy (the caller may reuse `chunk`), in pieces of at most half the ring
    // so each piece fits once the slowest thread moves on, and in order behind earlier ones.
    for (let offset = 0; offset < chunk.length; offset += most) this.#pending.push(Uint8Array.from(chunk.subarray(offset, offset + most)))
    // Ask the lanes for a wake-up, then look again: a lane that moved on before it saw the request
    // is seen here (both sides use sequentially consistent atomics, so one of them notices).
    Atomics.store(this.#control, CONTROL_WAITING, 1)
    this.#drain()
    if (this.#pending.length === 0) return undefined
    this.#drained ??= new Promise<void>((resolve, reject) => { this.#waiter = { resolve, reject } })
    return this.#drained
  }

  /** Moves waiting chunks into the ring as room frees up; settles `write`'s promise when all are in. */
  #drain(): void {
    while (this.#pending.length > 0 && this.#room() >= (this.#pending[0] as Uint8Array).length + ALIGNMENT - 1) this.#put(this.#pending.shift() as Uint8Array)
    // The lanes must know of everything in the ring while the main thread waits on them.
    this.#post()
    if (this.#pending.length > 0) return
    Atomics.store(this.#control, CONTROL_WAITING, 0)
    if (this.#waiter) {
      const waiter = this.#waiter
      this.#waiter = null
      this.#drained = null
      waiter.resolve()
    }
  }

  /**
   * Copies a chunk into the ring (in two ranges where it wraps); `#post` hands it to the lanes.
   *
   * V8 copies into shared memory with relaxed atomic stores (a data race there must not tear
   * anything), a word at a time only where source and destination sit at the same offset within
   * a word, and a byte at a time otherwise. A body whose first chunk is not a whole number of words
   * long (the rest of a socket read after the request's headers, or after a form's part headers)
   * put every later chunk out of step with the ring, and the copy ran byte by byte: 48 ms of the
   * main thread's time per 256 MiB form upload with two algorithms, 28 ms in step (docs/benchmarks.md).
   * So the chunk goes where its bytes line up with their source, up to ALIGNMENT - 1 bytes on, and
   * the lanes are told to count the bytes skipped as read.
   */
  #put(chunk: Uint8Array): void {
    const size = this.#ring.length
    const skew = (chunk.byteOffset - this.#written) & (ALIGNMENT - 1)
    // A short chunk is copied where it falls: a byte-wise copy of it costs less than a message.
    if (skew !== 0 && chunk.length >= ALIGN_MIN_BYTES) {
      // Whatever came before the gap is posted first, so that every range posted is contiguous.
      this.#post()
      this.#skip += skew
      this.#written += skew
    }
    let offset = 0
    while (offset < chunk.length) {
      const start = (this.#written % size)
      const length = Math.min(chunk.length - offset, size - start)
      this.#ring.set(chunk.subarray(offset, offset + length), start)
      this.#written += length
      offset += length
    }
  }

  /** Tells every lane of the bytes written since the last post: one range, or two where the ring wraps. */
  #post(): void {
    const size = this.#ring.length
    while (this.#posted + this.#skip < this.#written) {
      const from = this.#posted + this.#skip
      const start = from % size
      const length = Math.min(this.#written - from, size - start)
      for (const lane of this.#lanes) lane.post({ t: 'data', start, length, skip: this.#skip })
      this.#posted = from + length
      this.#skip = 0
    }
  }

  #onMessage(index: number, message: FromThread): void {
    switch (message.t) {
      case 'progress':
        this.#drain()
        return
      case 'done':
        for (const [name, digest] of message.digests) this.#digests.set(name, digest)
        for (const [name, text] of message.contentHashes) this.#contentHashes.set(name, text)
        if (++this.#doneLanes === this.#lanes.length) {
          this.#handBack()
          this.#combine().then(() => this.#finisher?.resolve(this.#digests), (error: unknown) => this.#fail(error instanceof Error ? error : new Error(String(error))))
        }
        return
      case 'error': {
        const problem = message.problem
        this.#fail(problem === undefined
          ? new Error(`hash thread: ${message.message}`)
          : new Problem(problem.status, problem.type, problem.title, problem.detail, { extensions: problem.extensions }))
      }
    }
  }

  #fail(error: Error): void {
    if (this.#failure) return
    this.#failure = error
    this.abort()
    this.#finisher?.reject(error)
  }

  /** Puts each split hash's shares together (a few thousand digests at most: a tree's top, a list of parts), and each split digest's. */
  async #combine(): Promise<void> {
    for (const { name, split, shareKeys } of this.#digestSplits) {
      const states = shareKeys.map((shareKey) => this.#digests.get(shareKey))
      if (states.some((state) => state === undefined)) throw new Error(`hash thread: a share of ${name} is missing`)
      for (const shareKey of shareKeys) this.#digests.delete(shareKey)
      this.#digests.set(name, split.combine(states as Uint8Array[]))
    }
    for (const { key, split, shareKeys } of this.#splits) {
      const texts = shareKeys.map((shareKey) => this.#contentHashes.get(shareKey))
      if (texts.some((text) => text === undefined)) throw new Error(`hash thread: a share of ${key} is missing`)
      for (const shareKey of shareKeys) this.#contentHashes.delete(shareKey)
      this.#contentHashes.set(key, await split.combine(texts as string[]))
    }
  }

  contentHashes(): Map<string, string> {
    return this.#contentHashes
  }

  async finish(): Promise<Map<string, Uint8Array>> {
    if (this.#failure) throw this.#failure
    if (this.#drained) await this.#drained
    this.#post()
    return new Promise((resolve, reject) => {
      this.#finisher = { resolve, reject }
      for (const lane of this.#lanes) lane.post({ t: 'end' })
    })
  }

  abort(): void {
    if (this.#released) return
    this.#pending.length = 0
    if (this.#waiter) {
      const waiter = this.#waiter
      this.#waiter = null
      waiter.reject(this.#failure ?? new Error('upload aborted'))
    }
    Atomics.store(this.#control, CONTROL_ABORT, 1)
    for (const lane of this.#lanes) lane.post({ t: 'abort' })
    this.#handBack()
  }

  #handBack(): void {
    if (this.#released) return
    this.#released = true
    this.#release(this.#lanes)
  }
}
