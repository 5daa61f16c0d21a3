/**
 * Hashers that /api/filehash/verify runs beside the registry's, and that a hash thread builds from
 * plain parameters as it builds a registry entry (upload/hash-thread.ts). They are internal: no
 * request names them, and they are not in the registry's table.
 * - `verify:pieces`: a v1 torrent's piece-by-piece check (pieces.ts); `pieceLength`, and `hashes`,
 *   the torrent's `pieces` in base64 (bounded by the 16 MiB .torrent limit).
 * - `verify:entry`: a registry entry (`entry`, then its parameters) whose failure is its own
 *   answer, not the upload's: a `git ls-tree` line of another size, say, must not stop the other
 *   fields from being checked.
 * Both answer JSON text: `PieceCheckResult`, or `EntryResult`.
 */
import { findContentHash, type ContentHasher } from './index.js'
import { PieceCheck } from './pieces.js'
import { Problem } from '../problem.js'

export const PIECES_HASHER = 'verify:pieces'
export const ENTRY_HASHER = 'verify:entry'

/** A `verify:entry` hasher's answer: the entry's text, or why it could not give one. */
export type EntryResult = { text: string } | { error: string }

/**
 * A hasher as a thread receives it: a registry name or one of the internal kinds above, and plain
 * parameters; with `share`, that share of a registry entry split by data (segments.ts).
 */
export interface PlainHasher { name: string, params: Record<string, string | number>, share?: { index: number, count: number } }

/** Problems (the input's fault) become the field's answer; anything else is a fault of hashd's and fails the upload. */
function failure(error: unknown): EntryResult {
  if (error instanceof Problem) return { error: error.detail }
  throw error
}

class EntryCheck implements ContentHasher {
  #hasher: ContentHasher | null
  #error: string | null

  constructor(hasher: ContentHasher | null, error: string | null) {
    this.#hasher = hasher
    this.#error = error
  }

  update(chunk: Uint8Array): void {
    if (this.#hasher === null) return
    try {
      this.#hasher.update(chunk)
    } catch (error) {
      this.#error = (failure(error) as { error: string }).error
      this.#hasher = null
    }
  }

  finish(): string {
    if (this.#hasher === null) return JSON.stringify({ error: this.#error ?? 'not computed' } satisfies EntryResult)
    try {
      return JSON.stringify({ text: this.#hasher.finish() } satisfies EntryResult)
    } catch (error) {
      return JSON.stringify(failure(error))
    }
  }
}

/** Makes a registry entry's hasher, or one of the internal kinds, from plain parameters. */
export async function createPlainHasher({ name, params, share }: PlainHasher): Promise<ContentHasher> {
  if (name === PIECES_HASHER) return new PieceCheck(Number(params.pieceLength), Buffer.from(String(params.hashes), 'base64'))
  if (name === ENTRY_HASHER) {
    const { entry: entryName, ...entryParams } = params
    const entry = findContentHash(String(entryName))
    if (entry === undefined) throw new Error(`no content hash ${String(entryName)}`)
    try {
      return new EntryCheck(await entry.create(entryParams), null)
    } catch (error) {
      return new EntryCheck(null, (failure(error) as { error: string }).error)
    }
  }
  const entry = findContentHash(name)
  if (entry === undefined) throw new Error(`no content hash ${name}`)
  if (share !== undefined) {
    const split = entry.split?.(params)
    if (split === undefined) throw new Error(`content hash ${name} does not split by data with these parameters`)
    return split.share(share.index, share.count)
  }
  return entry.create(params)
}
