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
import type { KeysFileLine, KeysFileOption } from './file.js'

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
  /** The state its line writes, and the option's field; undefined without `state=`. */
  written: { state: WrittenState, field: number } | undefined
  material: S
  /** Its line, for messages (which name lines and fields, never what they hold). */
  place: KeysFileLine
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
export function writtenState(option: KeysFileOption | undefined, entry: KeysFileLine): VersionEntry<unknown>['written'] {
  if (option === undefined) return undefined
  if ((WRITTEN_STATES as readonly string[]).includes(option.value)) return { state: option.value as WrittenState, field: option.field }
  throw entry.error(`state= must be ${WRITTEN_STATES.join(', ')}`, option.field)
}

/** The floor of a key (`min-verify-version`), with the line and field that set it. */
export interface MinVerify {
  ordinal: number
  place: KeysFileLine
  field: number
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

/** `line 3` or `lines 1, 3`: where a key's versions are, for messages that may not name the key. */
function linesOf(entries: readonly { place: KeysFileLine }[]): string {
  const numbers = [...new Set(entries.map((entry) => entry.place.line))].sort((a, b) => a - b)
  return `${numbers.length === 1 ? 'line' : 'lines'} ${numbers.join(', ')}`
}

/**
 * The versions of one key with their states resolved as described above. `entries` may come in
 * any order; ids must be unique (the caller's messages name the id's kind). `minVerify` is the
 * floor with the line that set it. Messages name lines and fields, not the key: its name is a
 * field of the file like any other.
 */
export function versionedKey<S>(name: string, entries: VersionEntry<S>[], minVerify: MinVerify | null = null): VersionedKey<S> {
  const sorted = [...entries].sort((a, b) => a.ordinal - b.ordinal)
  const last = sorted.at(-1)
  if (!last) throw new Error('a key without versions')
  const marked = sorted.filter((entry) => entry.written?.state === 'current')
  if (marked.length > 1) {
    const [first, second] = marked as [VersionEntry<S>, VersionEntry<S>]
    throw second.place.error(`state=current is written for another version of the same key too (line ${first.place.line}); one version is current`, second.written!.field)
  }
  const chosen = marked[0] ?? sorted.filter((entry) => entry.written === undefined).at(-1)
  if (!chosen) {
    throw last.place.error(`the key on ${linesOf(sorted)} has no version that can be current: every version is staged or retired (remove state= from the one to use)`)
  }
  if (minVerify && chosen.ordinal < minVerify.ordinal) {
    throw minVerify.place.error(`min-verify-version is above the key's current version (line ${chosen.place.line})`, minVerify.field)
  }
  const versions = sorted.map((entry): KeyVersion<S> => {
    const state: VersionState = entry === chosen ? 'current'
      : entry.written?.state ?? (entry.ordinal > chosen.ordinal ? 'staged' : 'previous')
    const verifies = state !== 'retired' && (minVerify === null || entry.ordinal >= minVerify.ordinal)
    return { id: entry.id, ordinal: entry.ordinal, state, verifies, material: entry.material }
  })
  return new VersionedKey(name, versions, versions[sorted.indexOf(chosen)]!, minVerify?.ordinal ?? null)
}
