/**
 * What /api/health and the metrics show of the breached-password stores in force: their facts
 * (kind, hashes, dates) and the reads made of them, counted per kind across reloads. The screening
 * plugin registers the stores and the stores count their reads here; the metrics plugin reads them
 * when Prometheus scrapes. Data only: it imports nothing of the store (store-facts.ts).
 */
import type { HashKind, StoreFacts } from './store-facts.js'

const sources = new Set<() => StoreFacts | null>()
const reads = new Map<HashKind, { ok: number, failed: number, cached: number }>()

/** Adds a source of facts (a store setting); returns the function that removes it. */
export function registerStore(source: () => StoreFacts | null): () => void {
  sources.add(source)
  return () => { sources.delete(source) }
}

export function storesInForce(): StoreFacts[] {
  return [...sources].map((source) => source()).filter((facts): facts is StoreFacts => facts !== null)
}

/** A read of a store; `cached`: answered from the page cache on the event loop (page-cache-read.ts), not through the pool. */
export function noteStoreRead(kind: HashKind, ok: boolean, cached = false): void {
  let counts = reads.get(kind)
  if (counts === undefined) reads.set(kind, counts = { ok: 0, failed: 0, cached: 0 })
  if (ok) counts.ok++
  else counts.failed++
  if (cached) counts.cached++
}

export function storeReads(): Array<{ kind: HashKind, ok: number, failed: number, cached: number }> {
  return [...reads].map(([kind, counts]) => ({ kind, ...counts }))
}
