/**
 * eMule's AICH root hash (Advanced Intelligent Corruption Handling; the aMule wiki's "AICH" page,
 * eMule's SHAHashSet.cpp, and RHash's `aich.c`, whose `--aich` output this matches).
 *
 * The file is cut into ed2k chunks of 9,728,000 bytes, and each chunk into 53 blocks: 52 of
 * 184,320 bytes (180 KiB) and a last one of 143,360 bytes. Each block is hashed with SHA-1, and
 * a SHA-1 tree (parent = SHA-1(left ‖ right)) is built over the blocks of each chunk and then over
 * the chunks. The tree is not the THEX one: a node of n leaves splits into halves of ⌈n/2⌉ and
 * ⌊n/2⌋, and which side gets the larger half depends on the node itself: a left child (and the
 * root) gives the larger half to its left, a right child to its right (eMule's
 * CAICHHashTree::m_bIsLeftBranch). So a chunk's subtree hash depends on whether the chunk is a left
 * or a right leaf of the file's tree, and both are kept per chunk until the end. A file of one
 * block hashes to the SHA-1 of its bytes (the empty file too). Printed in base32 (RFC 4648), as in
 * ed2k links (`h=`) and `urn:aich:` magnets.
 */
import { createHash, type Hash } from 'node:crypto'
import { ED2K_CHUNK_BYTES } from '../algorithms/impl/ed2k.js'
import { base32 } from './encoding.js'
import { opensslSegmentDigest, type SegmentedHash } from './segments.js'
import type { ContentHasher } from './types.js'

export const AICH_BLOCK_BYTES = 184_320
/** Blocks per ed2k chunk: 52 whole ones and a shorter last one. */
const BLOCKS_PER_CHUNK = Math.ceil(ED2K_CHUNK_BYTES / AICH_BLOCK_BYTES)

function sha1Pair(left: Uint8Array, right: Uint8Array): Uint8Array {
  return createHash('sha1').update(left).update(right).digest()
}

/** The root of `count` leaves from `first` on, the node being a left child (or the root) when `isLeft`. */
function treeRoot(first: number, count: number, isLeft: boolean, leaf: (index: number, isLeft: boolean) => Uint8Array): Uint8Array {
  if (count === 1) return leaf(first, isLeft)
  const leftCount = isLeft ? Math.ceil(count / 2) : Math.floor(count / 2)
  return sha1Pair(treeRoot(first, leftCount, true, leaf), treeRoot(first + leftCount, count - leftCount, false, leaf))
}

export class AichHash implements ContentHasher {
  /** Per finished chunk: its subtree's root as a left leaf and as a right leaf. */
  readonly #chunks: { left: Uint8Array, right: Uint8Array }[] = []
  /** The block digests of the chunk in progress (at most 53). */
  #blocks: Uint8Array[] = []
  #block: Hash = createHash('sha1')
  #blockFill = 0
  /** Bytes of the current chunk seen so far. */
  #chunkFill = 0

  update(chunk: Uint8Array): void {
    let position = 0
    while (position < chunk.length) {
      const blockEnd = Math.min(this.#chunkFill - this.#blockFill + AICH_BLOCK_BYTES, ED2K_CHUNK_BYTES)
      const take = Math.min(blockEnd - this.#chunkFill, chunk.length - position)
      this.#block.update(chunk.subarray(position, position + take))
      this.#blockFill += take
      this.#chunkFill += take
      position += take
      if (this.#chunkFill === blockEnd) this.#endBlock()
      if (this.#chunkFill === ED2K_CHUNK_BYTES) this.#endChunk()
    }
  }

  #endBlock(): void {
    this.#blocks.push(this.#block.digest())
    this.#block = createHash('sha1')
    this.#blockFill = 0
  }

  #endChunk(): void {
    const blocks = this.#blocks
    const leaf = (index: number) => blocks[index] as Uint8Array
    this.#chunks.push({ left: treeRoot(0, blocks.length, true, leaf), right: treeRoot(0, blocks.length, false, leaf) })
    this.#blocks = []
    this.#chunkFill = 0
  }

  finish(): string {
    if (this.#blockFill > 0) this.#endBlock()
    if (this.#blocks.length > 0) this.#endChunk()
    const chunks = this.#chunks
    if (chunks.length === 0) return base32(this.#block.digest())
    const root = treeRoot(0, chunks.length, true, (index, isLeft) => {
      const pair = chunks[index] as { left: Uint8Array, right: Uint8Array }
      return isLeft ? pair.left : pair.right
    })
    return base32(root)
  }
}

/**
 * AICH split by data (segments.ts): a segment is a block, so a chunk's 53 blocks spread over the
 * threads; the blocks' SHA-1s are then put into chunks and trees as `AichHash` does.
 */
export const aichSegments: SegmentedHash = {
  segmentStart: (index) => Math.floor(index / BLOCKS_PER_CHUNK) * ED2K_CHUNK_BYTES + (index % BLOCKS_PER_CHUNK) * AICH_BLOCK_BYTES,
  segmentDigest: () => opensslSegmentDigest('sha1'),
  emptyIsOneSegment: true,
  combine(blocks) {
    const chunks: { left: Uint8Array, right: Uint8Array }[] = []
    for (let first = 0; first < blocks.length; first += BLOCKS_PER_CHUNK) {
      const count = Math.min(BLOCKS_PER_CHUNK, blocks.length - first)
      const leaf = (index: number) => blocks[first + index] as Uint8Array
      chunks.push({ left: treeRoot(0, count, true, leaf), right: treeRoot(0, count, false, leaf) })
    }
    return base32(treeRoot(0, chunks.length, true, (index, isLeft) => {
      const pair = chunks[index] as { left: Uint8Array, right: Uint8Array }
      return isLeft ? pair.left : pair.right
    }))
  },
}
