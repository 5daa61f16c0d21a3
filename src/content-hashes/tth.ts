/**
 * The Tiger Tree Hash of Direct Connect and Gnutella, as DC++ and RHash (`--tth`) compute it:
 * the THEX tree (J. Chapweske and G. Mohr, "Tree Hash EXchange format", 2003) over Tiger/192 with
 * 1,024-byte leaves. A leaf's hash is Tiger(0x00 ‖ leaf), an inner node's Tiger(0x01 ‖ left ‖
 * right), and a node without a sibling moves up unchanged (THEX §2.1). An empty file is one empty
 * leaf. The whole tree is built inside the WebAssembly Tiger (algorithms/impl/tiger.ts), a 64 KiB
 * chunk at a time. Printed in base32 (RFC 4648), 39 characters, as in `urn:tree:tiger:` magnet links.
 *
 * Split by data (segments.ts): every 1 MiB segment is a complete subtree of 1,024 leaves, except
 * the last, whose own root (lone nodes promoted inside it) is what the whole tree's fold from the
 * right makes of it; so the roots of the segments, folded as leaves of a tree of their own
 * (MerkleStack), give the file's root.
 */
import { Tiger, TigerTree } from '../algorithms/impl/tiger.js'
import { base32 } from './encoding.js'
import { MerkleStack } from './merkle.js'
import { fixedSegments, type SegmentDigest, type SegmentedHash } from './segments.js'
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

/** 1,024 leaves: a power of two, so every segment but the last is a complete subtree. */
export const TTH_SEGMENT_BYTES = 1024 * 1024

const INNER = Uint8Array.of(0x01)

function tigerParent(left: Uint8Array, right: Uint8Array): Uint8Array {
  const tiger = new Tiger(1)
  tiger.update(Buffer.concat([INNER, left, right]))
  return tiger.digest()
}

class SubtreeDigest implements SegmentDigest {
  #tree: TigerTree | undefined

  begin(): void {
    this.#tree = new TigerTree()
  }

  update(bytes: Uint8Array): void {
    (this.#tree as TigerTree).update(bytes)
  }

  end(): Uint8Array {
    return (this.#tree as TigerTree).digest()
  }
}

export const tthSegments: SegmentedHash = {
  segmentStart: fixedSegments(TTH_SEGMENT_BYTES),
  segmentDigest: () => new SubtreeDigest(),
  emptyIsOneSegment: true,
  combine(digests) {
    const tree = new MerkleStack(tigerParent)
    for (const digest of digests) tree.push(digest)
    return base32(tree.root() as Uint8Array)
  },
}
