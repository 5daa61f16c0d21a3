/**
 * Replay protection: a webhook that verified is remembered, by its id (or, for profiles without
 * one, by the content its signature covers), for the replay window, and a second one with the same
 * identity is refused as `replayed`. The store is the rate-limit store: this process's memory, or
 * with REDIS_URL the same Redis every replica shares (plugins/rate-limit-redis.ts, the only module
 * that talks to Redis), so a webhook replayed to another replica is caught too.
 *
 * What is stored is a SHA-256 of the profile, the key (its name, or its secret or public key) and
 * the identity: never the payload, a secret or an id in the clear. Only webhooks whose signature and timestamp are valid are
 * remembered, so a forger cannot spend an id ahead of the real sender.
 */
import { hash } from 'node:crypto'
import type { MaybePromise } from '../domain/maybe-async.js'

export type ReplayStoreState = 'memory' | 'redis' | 'degraded'

export interface ReplayStore {
  /**
   * Whether `key` was already seen within its window. With `remember`, records it for `ttlMs` in
   * the same step (of two concurrent checks of one key, exactly one sees it unseen). Rejects with
   * ReplayStoreUnavailable when the store cannot answer. The answer is at once from memory, a
   * promise from Redis.
   */
  seen(key: string, ttlMs: number, remember: boolean): MaybePromise<boolean>
  state(): ReplayStoreState
}

export class ReplayStoreUnavailable extends Error {
  constructor() {
    super('the replay store is unavailable')
    this.name = 'ReplayStoreUnavailable'
  }
}

/** The store key of one delivery: base64url SHA-256, 43 characters. */
export function replayKey(profile: string, scope: Uint8Array, token: readonly Uint8Array[]): string {
  // The scope's length first, so that no two (scope, token) pairs run together into the same input.
  const head = Buffer.from(`hashd webhook replay\0${profile}\0${scope.length}\0`)
  // One-shot crypto.hash: a Hash object per request costs about as much as hashing an id.
  return hash('sha256', Buffer.concat([head, scope, ...token]), 'base64url')
}

/**
 * In memory: a Map from key to expiry, and the keys in insertion order in an array read from a head
 * index. Each insert drops expired keys from the front (a few at a time) and, past `maxEntries`, the
 * oldest (documented: a replica alone, past that many webhooks in one window, forgets the oldest
 * early). Keys leave the Map by `delete(key)`, never by iterating it: a Map iterated from the front
 * after many deletes walks every deleted slot until V8 compacts it, which made an insert into a full
 * store cost some hundred microseconds.
 */
export class MemoryReplayStore implements ReplayStore {
  readonly #expiries = new Map<string, number>()
  #order: string[] = []
  #head = 0
  readonly #maxEntries: number
  readonly #now: () => number

  constructor(maxEntries = 100_000, now: () => number = Date.now) {
    this.#maxEntries = maxEntries
    this.#now = now
  }

  seen(key: string, ttlMs: number, remember: boolean): boolean {
    const now = this.#now()
    const expiry = this.#expiries.get(key)
    if (expiry !== undefined && expiry > now) return true
    if (!remember) return false
    // A key seen before but expired keeps its place in the order; it is only given a new expiry.
    if (expiry === undefined) this.#order.push(key)
    this.#expiries.set(key, now + ttlMs)
    this.#evict(now)
    return false
  }

  state(): ReplayStoreState {
    return 'memory'
  }

  get size(): number {
    return this.#expiries.size
  }

  #evict(now: number): void {
    for (let dropped = 0; this.#head < this.#order.length; dropped++) {
      const key = this.#order[this.#head] as string
      const full = this.#expiries.size > this.#maxEntries
      if (!full && (dropped >= 8 || (this.#expiries.get(key) ?? 0) > now)) break
      this.#expiries.delete(key)
      this.#head++
    }
    // The consumed front is let go once it is most of the array.
    if (this.#head >= 1024 && this.#head * 2 >= this.#order.length) {
      this.#order = this.#order.slice(this.#head)
      this.#head = 0
    }
  }
}
