/**
 * The similarity banks in force: every `<name>.bank` file of SIMILARITY_BANKS_DIR, opened with the
 * bank library (banks/) and kept current by the one reload mechanism (file-reload.ts, watching the
 * folder). A bank's name is its file's name without `.bank`, as `npm run bank:import` wrote it;
 * other files (an import's temporary file, a README) are not banks.
 *
 * A reload looks at each file on its own: an unchanged file keeps its open bank; a new or replaced
 * one is opened and checked (banks/ refuses a corrupt, truncated or other-version file) before it
 * replaces the bank of its name; a refused file leaves the bank of its name in force (none, for a
 * new name) and its reason is shown by /api/health until the file opens. A removed file's bank
 * goes. The set changes in one step, and a bank that leaves it is closed then: searches are
 * synchronous (banks/), and each lookup takes the banks from the set in force when it runs, so no
 * search is ever in flight on a bank being closed.
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { ConfigError } from '../config.js'
import { reloadable, type Reloadable } from '../file-reload.js'
import { BANK_EXTENSION, BANK_NAME, BANK_NAME_RULE } from './bank-names.js'
import { openBank, type Bank, type BankType } from './banks/index.js'

export { BANK_EXTENSION, BANK_NAME, BANK_NAME_RULE }

/** A bank file that could not be opened: the reason names the file (banks/ BankFileError). */
export interface BankRefusal {
  at: string
  reason: string
}

/** What /api/health shows of one bank name. */
export interface BankStatus {
  name: string
  /** serving: a version is in force (lastError: a newer file was refused); refused: none is. */
  state: 'serving' | 'refused'
  type?: BankType
  count?: number
  dataSha256?: string
  bytes?: number
  loadedAt?: string
  lastError?: BankRefusal
}

interface Loaded { bank: Bank, fingerprint: string, loadedAt: string }

/** One version of the folder: the banks in force by name, and the files refused. */
export class BankSet {
  readonly banks: ReadonlyMap<string, Loaded>
  readonly refused: ReadonlyMap<string, BankRefusal & { fingerprint: string }>

  constructor(banks: ReadonlyMap<string, Loaded>, refused: ReadonlyMap<string, BankRefusal & { fingerprint: string }>) {
    this.banks = banks
    this.refused = refused
  }

  get(name: string): Bank | undefined { return this.banks.get(name)?.bank }

  /** The banks of a type, by name. */
  ofType(type: BankType): Bank[] {
    return [...this.banks.values()].filter((loaded) => loaded.bank.type === type).map((loaded) => loaded.bank).sort((a, b) => (a.name < b.name ? -1 : 1))
  }

  statuses(): BankStatus[] {
    const names = [...new Set([...this.banks.keys(), ...this.refused.keys()])].sort()
    return names.map((name) => {
      const loaded = this.banks.get(name)
      const refusal = this.refused.get(name)
      const lastError = refusal === undefined ? {} : { lastError: { at: refusal.at, reason: refusal.reason } }
      if (loaded === undefined) return { name, state: 'refused' as const, ...lastError }
      const { bank } = loaded
      return { name, state: 'serving' as const, type: bank.type, count: bank.count, dataSha256: bank.dataSha256, bytes: bank.bytes, loadedAt: loaded.loadedAt, ...lastError }
    })
  }
}

const reasonOf = (error: unknown, file: string): string => {
  const reason = (error as { reason?: unknown }).reason
  if (typeof reason === 'string') return `SIMILARITY_BANKS_DIR ${file}: ${reason}`
  if (error instanceof ConfigError) return error.message
  return `SIMILARITY_BANKS_DIR ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`
}

function fileFingerprint(file: string): string | null {
  try {
    const stats = statSync(file, { bigint: true })
    return stats.isFile() ? `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}` : null
  } catch {
    return null
  }
}

/**
 * The next version of the folder from the one in force: unchanged files keep their banks, changed
 * ones are opened; a file that does not open keeps the bank in force of its name.
 */
export async function loadBankFolder(folder: string, previous: BankSet | null, log: FastifyBaseLogger): Promise<BankSet> {
  let names: string[]
  try {
    names = readdirSync(folder)
  } catch (error) {
    throw new ConfigError(`SIMILARITY_BANKS_DIR ${folder} cannot be read as a folder (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  const banks = new Map<string, Loaded>()
  const refused = new Map<string, BankRefusal & { fingerprint: string }>()
  for (const entry of names.filter((each) => each.endsWith(BANK_EXTENSION)).sort()) {
    const name = entry.slice(0, -BANK_EXTENSION.length)
    const file = join(folder, entry)
    const fingerprint = fileFingerprint(file)
    if (fingerprint === null) continue
    const before = previous?.banks.get(name)
    if (before !== undefined && before.fingerprint === fingerprint) {
      banks.set(name, before)
      const refusal = previous?.refused.get(name)
      if (refusal !== undefined) refused.set(name, refusal)
      continue
    }
    const refusedBefore = previous?.refused.get(name)
    if (refusedBefore !== undefined && refusedBefore.fingerprint === fingerprint) {
      // The same bad file as last time: not opened again, not logged again.
      refused.set(name, refusedBefore)
      if (before !== undefined) banks.set(name, before)
      continue
    }
    if (!BANK_NAME.test(name)) {
      const reason = `SIMILARITY_BANKS_DIR ${file}: a bank's name (its file name without .bank) must be ${BANK_NAME_RULE}`
      log.warn({ file, reason }, 'similarity bank refused')
      refused.set(name.slice(0, 64), { at: new Date().toISOString(), reason, fingerprint })
      continue
    }
    try {
      const bank = await openBank(file, name)
      banks.set(name, { bank, fingerprint, loadedAt: new Date().toISOString() })
      log.info({ bank: name, file, type: bank.type, count: bank.count, dataSha256: bank.dataSha256 }, before === undefined ? 'similarity bank opened' : 'similarity bank replaced')
    } catch (error) {
      const reason = reasonOf(error, file)
      refused.set(name, { at: new Date().toISOString(), reason, fingerprint })
      if (before !== undefined) banks.set(name, before)
      log.warn({ bank: name, file, reason }, before === undefined ? 'similarity bank refused' : 'similarity bank refused: the version in force stays')
    }
  }
  return new BankSet(banks, refused)
}

/** Closes the banks of `previous` that `next` no longer holds. */
function closeLeft(previous: BankSet, next: BankSet | null): void {
  for (const [name, loaded] of previous.banks) {
    if (next?.banks.get(name)?.bank !== loaded.bank) loaded.bank.close()
  }
}

/** The folder's banks, kept current; `close` stops watching and closes every bank. */
export interface BankFolder {
  readonly folder: string
  readonly value: BankSet
  readonly reload: Reloadable<BankSet>
  close(): void
}

/** Opens every bank of the folder, then watches it (file-reload.ts). A folder that cannot be listed is a ConfigError. */
export async function openBankFolder(folder: string, log: FastifyBaseLogger, pollMs?: number): Promise<BankFolder> {
  const first = await loadBankFolder(folder, null, log)
  let current = first
  const reload = reloadable<BankSet>({
    source: 'similarity-banks', what: `similarity banks (SIMILARITY_BANKS_DIR ${folder})`, files: [], folders: [folder], log, ...(pollMs === undefined ? {} : { pollMs }),
    load: () => first,
    loadAsync: () => loadBankFolder(folder, current, log),
    describe: (set) => ({ banks: set.banks.size, refused: set.refused.size }),
    swapped: (next, previous) => { current = next; closeLeft(previous, next) },
    discarded: (unused) => { closeLeft(unused, current) },
  })
  return {
    folder,
    get value() { return reload.value },
    reload,
    close() { reload.close(); closeLeft(reload.value, null) },
  }
}
