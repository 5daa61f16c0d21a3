/**
 * Dropbox's `content_hash` (Dropbox developer reference, "Content hash"): the file is cut into
 * 4 MiB blocks (4,194,304 bytes; the last may be shorter), each block is hashed with SHA-256, and
 * the SHA-256 of those binary digests one after another is written in lower-case hex. An empty
 * file has no blocks: its content hash is the SHA-256 of nothing.
 */
import { createHash, type Hash } from 'node:crypto'
import { BlockDigests } from './block-digests.js'
import { hex } from './encoding.js'
import { fixedSegments, opensslSegmentDigest, type SegmentedHash } from './segments.js'
import type { ContentHasher } from './types.js'

export const DROPBOX_BLOCK_BYTES = 4 * 1024 * 1024

export class DropboxContentHash implements ContentHasher {
  /** The outer SHA-256 takes each block digest as it is made, so nothing is kept per block. */
  readonly #overall: Hash = createHash('sha256')
  readonly #blocks = new BlockDigests('sha256', DROPBOX_BLOCK_BYTES, (digest) => this.#overall.update(digest))

  update(chunk: Uint8Array): void {
    this.#blocks.update(chunk)
  }

  finish(): string {
    this.#blocks.flush()
    return hex(this.#overall.digest())
  }
}

/** Split by data (segments.ts): a segment is a block. */
export const dropboxSegments: SegmentedHash = {
  segmentStart: fixedSegments(DROPBOX_BLOCK_BYTES),
  segmentDigest: () => opensslSegmentDigest('sha256'),
  emptyIsOneSegment: false,
  combine: (blocks) => hex(createHash('sha256').update(Buffer.concat(blocks)).digest()),
}
