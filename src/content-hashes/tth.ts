/**
 * The Tiger Tree Hash of Direct Connect and Gnutella, as DC++ and RHash (`--tth`) compute it:
 * the THEX tree (J. Chapweske and G. Mohr, "Tree Hash EXchange format", 2003) over Tiger/192 with
 * 1,024-byte leaves. A leaf's hash is Tiger(0x00 ‖ leaf), an inner node's Tiger(0x01 ‖ left ‖
 * right), and a node without a sibling moves up unchanged (THEX §2.1). An empty file is one empty
 * leaf. Printed in base32 (RFC 4648), 39 characters, as in `urn:tree:tiger:` magnet links.
 */
import { Tiger } from '../algorithms/impl/tiger.js'
import { base32 } from './encoding.js'
import { MerkleStack } from './merkle.js'
import type { ContentHasher } from './types.js'

export const TTH_LEAF_BYTES = 1024
const LEAF_PREFIX = Uint8Array.of(0x00)
const NODE_PREFIX = Uint8Array.of(0x01)

function innerNode(left: Uint8Array, right: Uint8Array): Uint8Array {
  const tiger = new Tiger(1)
  tiger.update(NODE_PREFIX)
  tiger.update(left)
  tiger.update(right)
  return tiger.digest()
}

export class TigerTreeHash implements ContentHasher {
  readonly #tree = new MerkleStack(innerNode)
  #leaf = TigerTreeHash.#newLeaf()
  #fill = 0

  static #newLeaf(): Tiger {
    const tiger = new Tiger(1)
    tiger.update(LEAF_PREFIX)
    return tiger
  }

  update(chunk: Uint8Array): void {
    let position = 0
    while (position < chunk.length) {
      const take = Math.min(TTH_LEAF_BYTES - this.#fill, chunk.length - position)
      this.#leaf.update(chunk.subarray(position, position + take))
      this.#fill += take
      position += take
      if (this.#fill === TTH_LEAF_BYTES) this.#endLeaf()
    }
  }

  #endLeaf(): void {
    this.#tree.push(this.#leaf.digest())
    this.#leaf = TigerTreeHash.#newLeaf()
    this.#fill = 0
  }

  finish(): string {
    // The tail is a leaf; so is the empty leaf of an empty file.
    if (this.#fill > 0 || this.#tree.leaves === 0) this.#endLeaf()
    return base32(this.#tree.root() as Uint8Array)
  }
}
