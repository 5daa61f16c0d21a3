/**
 * A v1 torrent's pieces checked one by one, as a client's recheck does (BEP 3: the file cut into
 * `piece length` pieces, the last one shorter, each with its SHA-1 in `pieces`). It streams like
 * a content hasher, so the hash threads run it beside the others, and it answers how many pieces
 * differ and the first that does, rather than one hash. The hashes compared are public (they are in
 * the .torrent), so a plain comparison is enough.
 */
import { BlockDigests } from './block-digests.js'
import type { ContentHasher } from './types.js'

const SHA1_BYTES = 20

/** What the check found; `firstMismatch` is a 0-based piece index, as clients number pieces. */
export interface PieceCheckResult {
  /** The pieces the torrent lists. */
  pieces: number
  /** Of those, how many the file's bytes matched. */
  matched: number
  /** The first piece that differs (or that the file is too short to fill), or null. */
  firstMismatch: number | null
  /** The bytes the file had. */
  length: number
}

export class PieceCheck implements ContentHasher {
  readonly #expected: Uint8Array
  readonly #pieces: number
  readonly #blocks: BlockDigests
  /** The current piece's index. */
  #piece = 0
  #matched = 0
  #firstMismatch: number | null = null
  #length = 0

  constructor(pieceLength: number, expected: Uint8Array) {
    if (!Number.isSafeInteger(pieceLength) || pieceLength <= 0) throw new RangeError('pieceLength must be a positive integer')
    if (expected.length % SHA1_BYTES !== 0) throw new RangeError('the expected hashes are not 20-byte SHA-1s')
    this.#expected = expected
    this.#pieces = expected.length / SHA1_BYTES
    this.#blocks = new BlockDigests('sha1', pieceLength, (digest) => this.#endPiece(digest))
  }

  update(chunk: Uint8Array): void {
    this.#length += chunk.length
    this.#blocks.update(chunk)
  }

  /** Compares a piece's SHA-1 with the torrent's; a piece past the listed ones differs. */
  #endPiece(digest: Buffer): void {
    const index = this.#piece
    const expected = index < this.#pieces ? this.#expected.subarray(index * SHA1_BYTES, index * SHA1_BYTES + SHA1_BYTES) : undefined
    if (expected !== undefined && Buffer.compare(digest, expected) === 0) this.#matched++
    else this.#firstMismatch ??= index
    this.#piece++
  }

  result(): PieceCheckResult {
    this.#blocks.flush()
    // Pieces the file was too short to reach differ too.
    if (this.#piece < this.#pieces) this.#firstMismatch ??= this.#piece
    return { pieces: this.#pieces, matched: this.#matched, firstMismatch: this.#firstMismatch, length: this.#length }
  }

  /** The result as JSON text, the form a hash thread sends back. */
  finish(): string {
    return JSON.stringify(this.result())
  }
}
