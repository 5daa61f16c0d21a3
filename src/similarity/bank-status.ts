/**
 * What the metrics show of the similarity banks in force: the bank folder's statuses, read when
 * Prometheus scrapes. The banks plugin registers its folder here; the metrics plugin, registered
 * before it, reads through this module rather than the plugin (as screening/status.ts does for the
 * breached-password stores). Data only.
 */
import type { BankStatus } from './bank-folder.js'

const sources = new Set<() => BankStatus[]>()

/** Adds a source of statuses (a bank folder); returns the function that removes it. */
export function registerBanks(source: () => BankStatus[]): () => void {
  sources.add(source)
  return () => { sources.delete(source) }
}

export function banksInForce(): BankStatus[] {
  return [...sources].flatMap((source) => source())
}
