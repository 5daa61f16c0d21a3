/**
 * The Tiger Tree Hash of Direct Connect and Gnutella, as DC++ and RHash (`--tth`) compute it:
 * the THEX tree (J. Chapweske and G. Mohr, "Tree Hash EXchange format", 2003) over Tiger/192 with
 * 1,024-byte leaves. A leaf's hash is Tiger(0x00 ‖ leaf), an inner node's Tiger(0x01 ‖ left ‖
 * right), and a node without a sibling moves up unchanged (THEX §2.1). An empty file is one empty
 * leaf. The whole tree is built inside the WebAssembly Tiger (algorithms/impl/tiger.ts), a 64 KiB
 * chunk at a time. Printed in base32 (RFC 4648), 39 characters, as in `urn:tree:tiger:` magnet links.
 */
import { TigerTree } from '../algorithms/impl/tiger.js'
import { base32 } from './encoding.js'
import type { ContentHasher } from './types.js'

export class TigerTreeHash implements ContentHasher {
  readonly #tree = new TigerTree()

  update(chunk: Uint8Array): void {
    this.#tree.update(chunk)
  }

  finish(): string {
    return base32(this.#tree.digest())
  }
}
