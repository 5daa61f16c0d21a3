/**
 * The ssdeep and TLSH hashers the registry runs: the per-byte work in WebAssembly with SIMD
 * (wasm/similarity.c; scripts/build-similarity-wasm.sh writes wasm/similarity-wasm.ts), the rest in
 * TypeScript. They give exactly what ssdeep.ts's and tlsh.ts's hashers give, which the tests check in
 * any chunking against each other, libfuzzy and the TLSH reference; those two stay as the readable
 * statement of each algorithm.
 *
 * As for Tiger (algorithms/impl/tiger.ts): the module is compiled once, at load; an instance has its
 * own memory and serves one hasher at a time; a finished hasher hands its instance back to a small
 * pool. An instance builds TLSH's pair tables (448 KiB) the first time it hashes TLSH.
 */
import { problems } from '../problem.js'
import { SSDEEP_MAX_INPUT_BYTES } from './ssdeep.js'
import { formatTlsh, PEARSON, TLSH_MAX_INPUT_BYTES, tlshFromCounts, type TlshDigest } from './tlsh.js'
import { SIMILARITY_WASM_BASE64 } from './wasm/similarity-wasm.js'
import { wasmInstances } from '../algorithms/impl/wasm/instances.js'

/** The exports of wasm/similarity.c; addresses are byte offsets into `memory`. */
interface SimilarityExports {
  memory: { buffer: ArrayBuffer }
  sim_input(): number
  sim_output(): number
  ssdeep_begin(): void
  ssdeep_size(total: number): void
  ssdeep_update(length: number): void
  ssdeep_digest(): number
  tlsh_table(): number
  tlsh_buckets(): number
  tlsh_checksum(): number
  tlsh_begin(): void
  tlsh_update(length: number): void
  tlsh_update_part(length: number, from: number, to: number, withChecksum: number): void
}

/** SIM_INPUT_BYTES in similarity.c: the most one update call takes. */
const INPUT_BYTES = 65536
const TLSH_BUCKETS = 256
/** Idle instances kept per thread; more are left to the garbage collector. */
const POOL_SIZE = 4

const similarityModule = wasmInstances<SimilarityExports>(SIMILARITY_WASM_BASE64)
const pool: SimilarityCore[] = []

class SimilarityCore {
  readonly exports: SimilarityExports
  /** The whole memory; it never grows (fixed by the build script), so this view stays valid. */
  readonly memory: Uint8Array
  readonly #input: number

  constructor() {
    this.exports = similarityModule()
    this.memory = new Uint8Array(this.exports.memory.buffer)
    this.#input = this.exports.sim_input()
    this.memory.set(PEARSON, this.exports.tlsh_table())
  }

  static acquire(): SimilarityCore {
    return pool.pop() ?? new SimilarityCore()
  }

  release(): void {
    if (pool.length < POOL_SIZE) pool.push(this)
  }

  /** Copies `data` into the instance, 64 KiB at a time, and hands each piece to `update`. */
  feed(data: Uint8Array, update: (length: number) => void): void {
    for (let position = 0; position < data.length; position += INPUT_BYTES) {
      const piece = data.subarray(position, position + INPUT_BYTES)
      this.memory.set(piece, this.#input)
      update(piece.length)
    }
  }
}

/** A hasher over one instance, which goes back to the pool when the result is read. */
abstract class CoreHasher {
  #core: SimilarityCore | undefined = SimilarityCore.acquire()

  protected core(): SimilarityCore {
    if (!this.#core) throw new Error('hasher already finished')
    return this.#core
  }

  protected finished(): void {
    const core = this.core()
    this.#core = undefined
    core.release()
  }
}

/** ssdeep.ts's SsdeepHasher, in WebAssembly: `digest()` gives the string `ssdeep -b` prints. */
export class FastSsdeepHasher extends CoreHasher {
  #totalSize = 0

  constructor() {
    super()
    this.core().exports.ssdeep_begin()
  }

  update(data: Uint8Array): void {
    this.#totalSize += data.length
    if (this.#totalSize > SSDEEP_MAX_INPUT_BYTES) throw new RangeError(`ssdeep hashes at most ${SSDEEP_MAX_INPUT_BYTES} bytes`)
    const core = this.core()
    const { exports } = core
    // ssdeep.ts counts a whole update's size before its first byte; so does the C.
    exports.ssdeep_size(this.#totalSize)
    core.feed(data, (length) => exports.ssdeep_update(length))
  }

  digest(): string {
    const core = this.core()
    const length = core.exports.ssdeep_digest()
    const at = core.exports.sim_output()
    const text = Buffer.from(core.memory.subarray(at, at + length)).toString('latin1')
    this.finished()
    return text
  }
}

/** tlsh.ts's TlshHasher, in WebAssembly. `digest()` throws a 422 problem for input too short or too uniform. */
export class FastTlshHasher extends CoreHasher {
  #length = 0

  constructor() {
    super()
    this.core().exports.tlsh_begin()
  }

  update(data: Uint8Array): void {
    const core = this.core()
    const { exports } = core
    core.feed(data, (length) => exports.tlsh_update(length))
    this.#length += data.length
    if (this.#length > TLSH_MAX_INPUT_BYTES) throw problems.unprocessable('tlsh-input', 'Input not hashable with TLSH', `TLSH hashes at most ${TLSH_MAX_INPUT_BYTES} bytes`)
  }

  finish(): TlshDigest {
    const core = this.core()
    const at = core.exports.tlsh_buckets()
    const buckets = new Uint32Array(core.memory.buffer.slice(at, at + 4 * TLSH_BUCKETS))
    const checksum = core.exports.tlsh_checksum()
    this.finished()
    return tlshFromCounts(buckets, this.#length, checksum)
  }

  digest(): string {
    return formatTlsh(this.finish())
  }
}

/**
 * The bytes a share counts come in spans of INPUT_BYTES (so one update call touches at most two, and
 * what it counts is one range). In each cycle of 2·count − 1 spans share 0 counts one and every other
 * share two: share 0 also steps the checksum through every byte, which alone costs about 0.4 of what
 * counting the buckets does (in-process, 32 MiB of random bytes), so the two shares of two threads
 * cost about the same (0.58 and 0.63 of the whole hash's CPU time there).
 */
const SHARE_SPAN_BYTES = INPUT_BYTES

/** Which share counts the span at `index`. */
function spanOwner(index: number, count: number): number {
  return Math.ceil((index % (2 * count - 1)) / 2)
}

/** A share's state: the 256 bucket counts (little-endian u32), then the input's length (f64), then the checksum. */
const SHARE_STATE_BYTES = 4 * TLSH_BUCKETS + 8 + 1

/**
 * Share `index` of `count` of FastTlshHasher, for the hash threads (upload/threads.ts): it sees every
 * byte, counts the buckets of its spans only, and share 0 alone keeps the checksum, which chains
 * through every byte. `combineTlshShares` adds the counts up: each triplet reads the four bytes
 * before it, which every share has seen, so a span's first triplets need nothing from another share.
 */
export class FastTlshShareHasher extends CoreHasher {
  readonly #index: number
  readonly #count: number
  #length = 0

  constructor(index: number, count: number) {
    super()
    this.#index = index
    this.#count = count
    this.core().exports.tlsh_begin()
  }

  update(data: Uint8Array): void {
    const core = this.core()
    const { exports } = core
    const withChecksum = this.#index === 0 ? 1 : 0
    let position = this.#length
    core.feed(data, (length) => {
      const [from, to] = this.#countedRange(position, length)
      exports.tlsh_update_part(length, from, to, withChecksum)
      position += length
    })
    this.#length += data.length
    if (this.#length > TLSH_MAX_INPUT_BYTES) throw problems.unprocessable('tlsh-input', 'Input not hashable with TLSH', `TLSH hashes at most ${TLSH_MAX_INPUT_BYTES} bytes`)
  }

  /** The part of the `length` bytes at `position` that this share counts, relative to them (empty: from = to). */
  #countedRange(position: number, length: number): [number, number] {
    let from = length
    let to = length
    const first = Math.floor(position / SHARE_SPAN_BYTES)
    const last = Math.floor((position + length - 1) / SHARE_SPAN_BYTES)
    for (let span = first; span <= last; span++) {
      if (spanOwner(span, this.#count) !== this.#index) continue
      const start = Math.max(0, span * SHARE_SPAN_BYTES - position)
      const end = Math.min(length, (span + 1) * SHARE_SPAN_BYTES - position)
      if (from === length) from = start
      to = end
    }
    return from === length ? [0, 0] : [from, to]
  }

  /** The state `combineTlshShares` reads. */
  digest(): Uint8Array {
    const core = this.core()
    const at = core.exports.tlsh_buckets()
    const state = new Uint8Array(SHARE_STATE_BYTES)
    state.set(core.memory.subarray(at, at + 4 * TLSH_BUCKETS))
    const view = new DataView(state.buffer)
    view.setFloat64(4 * TLSH_BUCKETS, this.#length, true)
    state[4 * TLSH_BUCKETS + 8] = core.exports.tlsh_checksum()
    this.finished()
    return state
  }
}

/** TLSH from every share's state, in share order: the counts added up, share 0's checksum. */
export function combineTlshShares(states: readonly Uint8Array[]): TlshDigest {
  const buckets = new Uint32Array(TLSH_BUCKETS)
  let length = 0
  let checksum = 0
  states.forEach((state, index) => {
    if (state.length !== SHARE_STATE_BYTES) throw new Error('not a TLSH share state')
    const view = new DataView(state.buffer, state.byteOffset, state.byteLength)
    for (let bucket = 0; bucket < TLSH_BUCKETS; bucket++) buckets[bucket] = buckets[bucket]! + view.getUint32(4 * bucket, true)
    if (index === 0) {
      length = view.getFloat64(4 * TLSH_BUCKETS, true)
      checksum = state[4 * TLSH_BUCKETS + 8]!
    }
  })
  return tlshFromCounts(buckets, length, checksum)
}
