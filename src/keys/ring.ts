/**
 * The key ring's model, shared by every secret hashd holds (the pepper, named HMAC keys): a key is
 * a name with versions, as in Vault's Transit engine, and each version is in one state:
 *
 * - `staged`: it verifies, but new values are not made with it yet. A rotation across replicas is
 *   safe: stage the new version everywhere, then promote it, so no replica meets a value made under
 *   a version it does not know.
 * - `current`: new values are made with it. Exactly one version is current.
 * - `previous`: an older version that still verifies (what a rotation leaves behind); values made
 *   under it verify with a recommendation to rotate them to the current version.
 * - `retired`: it no longer verifies. Kept in the file, it says "this version existed and was
 *   retired" instead of "unknown version", and it can be brought back by editing one word.
 *
 * A keys file writes the first three with an option on the version's line (`state=staged`,
 * `state=current`, `state=retired`); a line without one is the current version when it is the
 * newest such line and no line says `state=current`, a previous version when it is older than the
 * current one, and staged when it is newer than one marked `state=current` (a roll-back leaves the
 * newer version verifying without making it current). `min-verify-version` (HMAC keys) is Vault's
 * `min_decryption_version`: versions below it no longer verify, whatever their state.
 */
import { ConfigError } from '../config.js'

/** The states a line may write (`state=…`). */
export const WRITTEN_STATES = ['staged', 'current', 'retired'] as const
export type WrittenState = typeof WRITTEN_STATES[number]
/** The state of a version in force: the written ones, and `previous` for older versions that still verify. */
export type VersionState = WrittenState | 'previous'

/** One line of a keys file, as a version of a key. */
export interface VersionEntry<S> {
  /** The id values carry (`k2` for the pepper, `3` for an HMAC key). */
  id: string
  /** Its place in time: the line's order (pepper) or the version number (HMAC keys). */
  ordinal: number
  written: WrittenState | undefined
  material: S
  where: string
}

export interface KeyVersion<S> {
  readonly id: string
  readonly ordinal: number
  readonly state: VersionState
  /** Whether a value made under it verifies: not retired, and not below min-verify-version. */
  readonly verifies: boolean
  readonly material: S
}

/** Reads `state=` from a line's options. */
export function writtenState(value: string | undefined, where: string): WrittenState | undefined {
  if (value === undefined) return undefined
  if ((WRITTEN_STATES as readonly string[]).includes(value)) return value as WrittenState
  throw new ConfigError(`${where}: state= must be ${WRITTEN_STATES.join(', ')}`)
}

/** A key: a name and its versions, oldest first, one of them current. */
export class VersionedKey<S> {
  readonly name: string
  readonly versions: readonly KeyVersion<S>[]
  readonly current: KeyVersion<S>
  /** Versions below this ordinal do not verify; null when there is no floor. */
  readonly minVerify: number | null
  /** The versions that verify, newest first (the order a verify without a version tries them in). */
  readonly verifying: readonly KeyVersion<S>[]
  readonly #byId: ReadonlyMap<string, KeyVersion<S>>

  constructor(name: string, versions: KeyVersion<S>[], current: KeyVersion<S>, minVerify: number | null) {
    this.name = name
    this.versions = versions
    this.current = current
    this.minVerify = minVerify
    this.verifying = versions.filter((version) => version.verifies).reverse()
    this.#byId = new Map(versions.map((version) => [version.id, version]))
  }

  /** The version with this id, in whatever state, or undefined when the file does not have it. */
  version(id: string): KeyVersion<S> | undefined { return this.#byId.get(id) }

  /** Whether values under `version` should move to the current version (it is older and still verifies). */
  rotateRecommended(version: KeyVersion<S>): boolean { return version.verifies && version.ordinal < this.current.ordinal }

  /** Why a value under `version` does not verify, or null when it does. */
  refusal(version: KeyVersion<S>): string | null {
    if (version.state === 'retired') return `version ${version.id} of key ${this.name} is retired`
    if (!version.verifies) return `version ${version.id} of key ${this.name} is below its min-verify-version ${this.minVerify}`
    return null
  }
}

/**
 * The versions of one key with their states resolved as described above. `entries` may come in
 * any order; ids must be unique (the caller's messages name the id's kind). `minVerify` is the
 * floor's ordinal with the line that set it.
 */
export function versionedKey<S>(name: string, entries: VersionEntry<S>[], minVerify: { ordinal: number, where: string } | null = null): VersionedKey<S> {
  const sorted = [...entries].sort((a, b) => a.ordinal - b.ordinal)
  const last = sorted.at(-1)
  if (!last) throw new Error(`key ${name} has no versions`)
  const marked = sorted.filter((entry) => entry.written === 'current')
  if (marked.length > 1) {
    throw new ConfigError(`${marked[1]!.where}: key ${name} already has a version marked state=current (${marked[0]!.where.replace(/^.* line /, 'line ')})`)
  }
  const chosen = marked[0] ?? sorted.filter((entry) => entry.written === undefined).at(-1)
  if (!chosen) {
    throw new ConfigError(`${last.where}: key ${name} has no version that can be current: every version is staged or retired (remove state= from the one to use)`)
  }
  if (minVerify && chosen.ordinal < minVerify.ordinal) {
    throw new ConfigError(`${minVerify.where}: min-verify-version ${minVerify.ordinal} of key ${name} is above its current version ${chosen.id}`)
  }
  const versions = sorted.map((entry): KeyVersion<S> => {
    const state: VersionState = entry === chosen ? 'current'
      : entry.written ?? (entry.ordinal > chosen.ordinal ? 'staged' : 'previous')
    const verifies = state !== 'retired' && (minVerify === null || entry.ordinal >= minVerify.ordinal)
    return { id: entry.id, ordinal: entry.ordinal, state, verifies, material: entry.material }
  })
  return new VersionedKey(name, versions, versions[sorted.indexOf(chosen)]!, minVerify?.ordinal ?? null)
}
