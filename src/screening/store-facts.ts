/**
 * What a breached-password store is, as data: its kind of hash and the facts /api/health and the
 * metrics show. The store (store.ts) fills them in; the status (status.ts) keeps them for the
 * readers. Neither of those imports the other's module for them, so imports run one way:
 * store.ts → status.ts → this file.
 */

export type HashKind = 'sha1' | 'ntlm'

/** The store's facts /api/health and the metrics show. */
export interface StoreFacts {
  kind: HashKind
  file: string
  hashes: number
  occurrences: number
  bytes: number
  dataDate: string
  importedAt: string
  /** The first 16 hex digits of the data's SHA-256: names this version of the data (ETags). */
  id: string
}
