/**
 * Tiger/192 (Anderson and Biham, "Tiger: A Fast New Hash Function", FSE 1996), Tiger2, which
 * differs only in padding with 0x80 (as MD4/SHA do) where Tiger pads with 0x01, and the Tiger Tree
 * Hash root (THEX, 1,024-byte leaves), all computed by wasm/tiger.c compiled to WebAssembly
 * (scripts/build-tiger-wasm.sh writes wasm/tiger-wasm.ts).
 *
 * Output is the three state words in little-endian byte order, as the reference implementation's
 * byte output, RHash (`--tiger`, `--tth`), PHP's tiger192,3 and the TTH tools write it.
 *
 * The module is compiled once, at load. An instance has its own memory and serves one hasher at a
 * time, so hashers running side by side on one thread never share state; a finished hasher hands
 * its instance back to a small pool for the next, and one abandoned unfinished is simply collected.
 * The S-boxes are generated once per thread by the paper's procedure, in the first instance, and
 * copied into the others.
 */
import type { Hasher } from '../types.js'
import { TIGER_WASM_BASE64 } from './wasm/tiger-wasm.js'
import { wasmInstances } from './wasm/instances.js'

/** The exports of wasm/tiger.c; addresses are byte offsets into `memory`. */
interface TigerExports {
  memory: { buffer: ArrayBuffer }
  tiger_generate_sboxes(): void
  tiger_sboxes(): number
  tiger_input(): number
  tiger_output(): number
  tiger_begin(pad: number): void
  tiger_update(length: number): void
  tiger_end(): void
  tth_begin(): void
  tth_update(length: number): void
  tth_end(): void
}

/** TIGER_INPUT_BYTES in tiger.c: the most one update call takes. */
const INPUT_BYTES = 65536
const SBOX_BYTES = 4 * 256 * 8
const DIGEST_BYTES = 24
/** Idle instances kept per thread; more are left to the garbage collector. */
const POOL_SIZE = 8

const tigerModule = wasmInstances<TigerExports>(TIGER_WASM_BASE64)
const pool: TigerCore[] = []
let sboxes: Uint8Array | undefined

class TigerCore {
  readonly exports: TigerExports
  /** The whole memory; it never grows (tiger.c fixes it at two pages), so this view stays valid. */
  readonly #memory: Uint8Array
  readonly #input: number

  constructor() {
    this.exports = tigerModule()
    this.#memory = new Uint8Array(this.exports.memory.buffer)
    this.#input = this.exports.tiger_input()
    const table = this.#memory.subarray(this.exports.tiger_sboxes(), this.exports.tiger_sboxes() + SBOX_BYTES)
    if (sboxes) {
      table.set(sboxes)
    } else {
      this.exports.tiger_generate_sboxes()
      sboxes = table.slice()
    }
  }

  static acquire(): TigerCore {
    return pool.pop() ?? new TigerCore()
  }

  release(): void {
    if (pool.length < POOL_SIZE) pool.push(this)
  }

  /** Copies `data` into the instance, 64 KiB at a time, and hands each piece to `update`. */
  feed(data: Uint8Array, update: (length: number) => void): void {
    for (let position = 0; position < data.length; position += INPUT_BYTES) {
      const piece = data.subarray(position, position + INPUT_BYTES)
      this.#memory.set(piece, this.#input)
      update(piece.length)
    }
  }

  output(): Uint8Array {
    const at = this.exports.tiger_output()
    return this.#memory.slice(at, at + DIGEST_BYTES)
  }
}

/** A hasher over one instance, which goes back to the pool when the result is read. */
abstract class TigerHasher {
  #core: TigerCore | undefined = TigerCore.acquire()

  protected core(): TigerCore {
    if (!this.#core) throw new Error('hasher already finished')
    return this.#core
  }

  protected result(end: (exports: TigerExports) => void): Uint8Array {
    const core = this.core()
    end(core.exports)
    const out = core.output()
    this.#core = undefined
    core.release()
    return out
  }
}

export class Tiger extends TigerHasher implements Hasher {
  /** `version` 1 is the original Tiger (pads 0x01); 2 is Tiger2 (pads 0x80). */
  constructor(version: 1 | 2 = 1) {
    super()
    this.core().exports.tiger_begin(version === 1 ? 0x01 : 0x80)
  }

  update(data: Uint8Array): void {
    const core = this.core()
    core.feed(data, core.exports.tiger_update)
  }

  digest(): Uint8Array {
    return this.result((exports) => exports.tiger_end())
  }
}

/**
 * The root of the Tiger Tree Hash (THEX, J. Chapweske and G. Mohr, 2003) over 1,024-byte leaves:
 * a leaf's hash is Tiger(0x00 ‖ leaf), an inner node's Tiger(0x01 ‖ left ‖ right), a node without
 * a sibling moves up unchanged (THEX §2.1), and an empty file is one empty leaf.
 */
export class TigerTree extends TigerHasher implements Hasher {
  constructor() {
    super()
    this.core().exports.tth_begin()
  }

  update(data: Uint8Array): void {
    const core = this.core()
    core.feed(data, core.exports.tth_update)
  }

  digest(): Uint8Array {
    return this.result((exports) => exports.tth_end())
  }
}
