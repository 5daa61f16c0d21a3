/**
 * The eDonkey2000/eMule file hash (ed2k): the file is cut into chunks of 9,500 KiB (9,728,000
 * bytes); a file shorter than one chunk hashes to the MD4 of its bytes, a longer one to the MD4 of
 * the concatenated MD4s of its chunks.
 *
 * Files whose size is an exact multiple of the chunk size are ambiguous: the original eDonkey
 * client (the "red" hash) appends the MD4 of an empty final chunk, later eMule versions (the
 * "blue" hash) do not. hashd follows RHash (`--ed2k`), which appends it: for exactly 9,728,000
 * bytes the result is MD4(MD4(chunk) || MD4("")).
 */
import { createMD4 } from 'hash-wasm'
import type { IHasher } from 'hash-wasm/dist/lib/WASMInterface.js'
import type { Hasher } from '../types.js'

export const ED2K_CHUNK_BYTES = 9_728_000

class Ed2k implements Hasher {
  readonly #md4: IHasher
  readonly #chunkDigests: Uint8Array[] = []
  #chunkFill = 0

  constructor(md4: IHasher) {
    this.#md4 = md4
    md4.init()
  }

  update(data: Uint8Array): void {
    let position = 0
    while (position < data.length) {
      const take = Math.min(ED2K_CHUNK_BYTES - this.#chunkFill, data.length - position)
      this.#md4.update(data.subarray(position, position + take))
      this.#chunkFill += take
      position += take
      if (this.#chunkFill === ED2K_CHUNK_BYTES) {
        this.#chunkDigests.push(this.#md4.digest('binary'))
        this.#md4.init()
        this.#chunkFill = 0
      }
    }
  }

  digest(): Uint8Array {
    // The last chunk: the tail, or an empty chunk after an exact multiple (the "red" hash).
    const last = this.#md4.digest('binary')
    if (this.#chunkDigests.length === 0) return last
    this.#md4.init()
    for (const chunk of this.#chunkDigests) this.#md4.update(chunk)
    this.#md4.update(last)
    return this.#md4.digest('binary')
  }
}

export async function createEd2k(): Promise<Hasher> {
  return new Ed2k(await createMD4())
}
