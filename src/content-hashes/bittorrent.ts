/**
 * BitTorrent's content hashes of a single file.
 *
 * `btih` (BEP 3): the SHA-1 of the bencoded `info` dictionary of a single-file v1 torrent,
 * `{length, name, piece length, pieces}`, where `pieces` is the SHA-1 of every piece one after
 * another (the last piece may be shorter). Nothing else goes in: no `private` flag, no source tag,
 * as `rhash --btih` makes it. Without `pieceLength` the piece length is RHash's default
 * (`bt_default_piece_length` in RHash's `torrent.c`, from uTorrent): 16 KiB below 16 MiB, 8 MiB
 * from 4 GiB, and otherwise 1/1024 of the smallest power of two above the size (32 KiB for
 * exactly 16 MiB). That depends on the size, which must then be given up front.
 *
 * `bt2-root` (BEP 52): a file's `pieces root`, the root of a SHA-256 Merkle tree whose leaves are
 * the SHA-256s of the file's 16 KiB blocks (the last may be shorter, and is hashed as it is). The
 * leaves are padded with all-zero hashes to a power of two. It does not depend on the piece length
 * ("identical files always result in the same root hash"). An empty file has no pieces root
 * (BEP 52: files of length zero carry no `pieces root`): its result is the empty string.
 */
import { createHash } from 'node:crypto'
import { bencode } from './bencode.js'
import { BlockDigests } from './block-digests.js'
import { hex } from './encoding.js'
import { GiB, invalidParameter, KiB, MiB } from './parameters.js'
import { MerkleStack } from './merkle.js'
import { fixedSegments, opensslSegmentDigest, type SegmentedHash } from './segments.js'
import type { ContentHasher } from './types.js'

export const BT_MIN_PIECE_BYTES = 16 * KiB
export const BT_MAX_PIECE_BYTES = 256 * MiB
export const BT2_BLOCK_BYTES = 16 * KiB

/** RHash's default piece length for a single file of `size` bytes (RHash torrent.c, bt_default_piece_length). */
export function rhashDefaultPieceLength(size: number): number {
  if (size < 16 * MiB) return BT_MIN_PIECE_BYTES
  if (size >= 4 * GiB) return 8 * MiB
  let topBit = 32 * MiB
  while (topBit <= size) topBit *= 2
  return topBit / 1024
}

/** Checks the stream's length against a `size` given up front. */
class SizeCheck {
  readonly #size: number | undefined
  seen = 0

  constructor(size: number | undefined) {
    this.#size = size
  }

  add(bytes: number): void {
    this.seen += bytes
    if (this.#size !== undefined && this.seen > this.#size) throw this.#mismatch()
  }

  end(): void {
    if (this.#size !== undefined && this.seen !== this.#size) throw this.#mismatch()
  }

  #mismatch() {
    return invalidParameter('size', `size is ${this.#size} bytes, and the content is ${this.seen > (this.#size ?? 0) ? 'longer' : `${this.seen} bytes`}`)
  }
}

export class BtihV1 implements ContentHasher {
  readonly #name: string
  readonly #pieceLength: number
  readonly #pieces: Uint8Array[] = []
  readonly #size: SizeCheck
  readonly #blocks: BlockDigests

  /** Either `pieceLength` or `size` (for RHash's default piece length) must be given. */
  constructor(name: string, pieceLength: number | undefined, size: number | undefined) {
    if (pieceLength === undefined && size === undefined) {
      throw invalidParameter('size', 'btih needs pieceLength, or the size up front to choose RHash\'s default piece length')
    }
    this.#name = name
    this.#pieceLength = pieceLength ?? rhashDefaultPieceLength(size as number)
    this.#size = new SizeCheck(size)
    this.#blocks = new BlockDigests('sha1', this.#pieceLength, (digest) => this.#pieces.push(digest))
  }

  update(chunk: Uint8Array): void {
    this.#size.add(chunk.length)
    this.#blocks.update(chunk)
  }

  finish(): string {
    this.#size.end()
    this.#blocks.flush()
    return infoHash(this.#name, this.#pieceLength, this.#size.seen, this.#pieces)
  }
}

function infoHash(name: string, pieceLength: number, length: number, pieces: readonly Uint8Array[]): string {
  const info = bencode({ length, name, 'piece length': pieceLength, pieces: Buffer.concat(pieces) })
  return hex(createHash('sha1').update(info).digest())
}

/** btih split by data (segments.ts): a segment is a piece. Undefined without a piece length or a size, as `BtihV1` then refuses. */
export function btihSegments(name: string, pieceLength: number | undefined, size: number | undefined): SegmentedHash | undefined {
  if (pieceLength === undefined && size === undefined) return undefined
  const length = pieceLength ?? rhashDefaultPieceLength(size as number)
  return {
    segmentStart: fixedSegments(length),
    segmentDigest: () => opensslSegmentDigest('sha1'),
    emptyIsOneSegment: false,
    combine(pieces, seen) {
      const check = new SizeCheck(size)
      check.add(seen)
      check.end()
      return infoHash(name, length, seen, pieces)
    },
  }
}

const sha256Pair = (left: Uint8Array, right: Uint8Array): Uint8Array => createHash('sha256').update(left).update(right).digest()

/** pad(h): the root of 2^h zero leaves, made once per height. */
const PAD: Uint8Array[] = [new Uint8Array(32)]
function pad(height: number): Uint8Array {
  while (PAD.length <= height) {
    const below = PAD[PAD.length - 1] as Uint8Array
    PAD.push(sha256Pair(below, below))
  }
  return PAD[height] as Uint8Array
}

export class Bt2PiecesRoot implements ContentHasher {
  readonly #tree = new MerkleStack(sha256Pair)
  readonly #blocks = new BlockDigests('sha256', BT2_BLOCK_BYTES, (digest) => this.#tree.push(digest))

  update(chunk: Uint8Array): void {
    this.#blocks.update(chunk)
  }

  finish(): string {
    this.#blocks.flush()
    const root = this.#tree.paddedRoot(pad)
    return root ? hex(root) : ''
  }
}
