/**
 * Replay protection: a webhook that verified is remembered, by its id (or, for profiles without
 * one, by the content its signature covers), until no request could accept it again (index.ts
 * says until when), and a second one with the same identity is refused as `replayed`. The store is
 * the rate-limit store: this process's memory, or with REDIS_URL the same Redis every replica
 * shares (plugins/rate-limit-redis.ts, the only module that talks to Redis), so a webhook replayed
 * to another replica is caught too.
 *
 * A store never forgets a webhook before its time: when it is full it refuses to remember another
 * (ReplayStoreFull, a 503 the sender retries), since forgetting one early would let its replay
 * through. Each caller (an API key, or a client address: the rate limit's bucket) may hold at most
 * a share of it, so that one caller cannot fill it for the others.
 *
 * What is stored is a SHA-256 of the profile, the key (its name, or its secret or public key) and
 * the identity: never the payload, a secret or an id in the clear. Only webhooks whose signature and timestamp are valid are
 * remembered, so a forger cannot spend an id ahead of the real sender.
 */
import { hash } from 'node:crypto'
import type { MaybePromise } from '../domain/maybe-async.js'

export type ReplayStoreState = 'memory' | 'redis' | 'degraded'

/** Which bound a refused webhook met: the whole store's, or the caller's share of it. */
export type ReplayLimit = 'store' | 'caller'

export interface ReplayStore {
  /**
   * Whether `key` is remembered now. With `remember`, an unseen key is recorded until `expiresAtMs`
   * (milliseconds since the epoch) in the same step (of two concurrent checks of one key, exactly
   * one sees it unseen), counted against `caller`'s share. Rejects with ReplayStoreUnavailable when
   * the store cannot answer, and with ReplayStoreFull when it cannot remember one more without
   * forgetting one that has not expired. The answer is at once from memory, a promise from Redis.
   */
  seen(key: string, expiresAtMs: number, remember: boolean, caller: string): MaybePromise<boolean>
  state(): ReplayStoreState
  /** Webhooks refused because the store (or the caller's share) was full, since start: for the metrics. */
  refusals(): Readonly<Record<ReplayLimit, number>>
  /** Webhooks remembered now, where the store can tell cheaply (memory). */
  size?(): number
}

export class ReplayStoreUnavailable extends Error {
  constructor() {
    super('the replay store is unavailable')
    this.name = 'ReplayStoreUnavailable'
  }
}

export class ReplayStoreFull extends Error {
  /**
   * `limit`: the bound that was met; `retryAfterSeconds`: when a place frees, as far as the store
   * knows; `storeBound`: what bounds the whole store, in the operator's words.
   */
  constructor(readonly limit: ReplayLimit, readonly retryAfterSeconds: number, readonly storeBound = 'WEBHOOK_REPLAY_MEMORY_MAX') {
    super(limit === 'caller' ? 'the caller\'s share of the replay store is full' : 'the replay store is full')
    this.name = 'ReplayStoreFull'
  }
}

/** Whole seconds from `now` until `at`, at least 1: a Retry-After. */
export const secondsUntil = (at: number, now: number): number => Math.max(1, Math.ceil((at - now) / 1000))

/** The store key of one delivery: base64url SHA-256, 43 characters. */
export function replayKey(profile: string, scope: Uint8Array, token: readonly Uint8Array[]): string {
  // The scope's length first, so that no two (scope, token) pairs run together into the same input.
  const head = Buffer.from(`hashd webhook replay\0${profile}\0${scope.length}\0`)
  // One-shot crypto.hash: a Hash object per request costs about as much as hashing an id.
  return hash('sha256', Buffer.concat([head, scope, ...token]), 'base64url')
}

/** A binary min-heap by `priority`: the soonest expiry on top. */
class MinHeap<T> {
  readonly #items: T[] = []
  constructor(readonly priority: (item: T) => number) {}

  get size(): number {
    return this.#items.length
  }

  peek(): T | undefined {
    return this.#items[0]
  }

  push(item: T): void {
    const items = this.#items
    let index = items.push(item) - 1
    const value = this.priority(item)
    while (index > 0) {
      const parent = (index - 1) >> 1
      if (this.priority(items[parent] as T) <= value) break
      items[index] = items[parent] as T
      index = parent
    }
    items[index] = item
  }

  pop(): T | undefined {
    const items = this.#items
    const top = items[0]
    const last = items.pop()
    if (items.length === 0 || last === undefined) return top
    const value = this.priority(last)
    let index = 0
    for (;;) {
      let child = 2 * index + 1
      if (child >= items.length) break
      if (child + 1 < items.length && this.priority(items[child + 1] as T) < this.priority(items[child] as T)) child++
      if (this.priority(items[child] as T) >= value) break
      items[index] = items[child] as T
      index = child
    }
    items[index] = last
    return top
  }
}

/** A caller's remembered webhooks, as their expiries (soonest on top). */
type CallerShare = MinHeap<number>

interface Entry {
  key: string
  expiresAt: number
  share: CallerShare
  caller: string
}

/** How many expired entries an insert drops on the way, when the store is not full. */
const EVICT_STEP = 8

/**
 * In memory: a Map from key to entry, and the entries in a min-heap by expiry, from which expired
 * ones are dropped a few at each insert (all of them when the store or a caller's share is full,
 * before refusing). Each caller's share is a heap of its expiries: entries leave the store in expiry
 * order, so the one that leaves is always its caller's soonest, and the share's top says when the
 * caller gets a place back (the Retry-After). Keys leave the Map by `delete(key)`, never by
 * iterating it: a Map iterated from the front after many deletes walks every deleted slot until V8
 * compacts it.
 */
export class MemoryReplayStore implements ReplayStore {
  readonly #entries = new Map<string, Entry>()
  readonly #byExpiry = new MinHeap<Entry>((entry) => entry.expiresAt)
  readonly #shares = new Map<string, CallerShare>()
  readonly #maxEntries: number
  readonly #callerMax: number
  readonly #now: () => number
  readonly #refusals: Record<ReplayLimit, number> = { store: 0, caller: 0 }

  /** `callerMax`: the most one caller may hold at once; 0 for no share (one caller may fill the store). */
  constructor(maxEntries = 100_000, callerMax = 0, now: () => number = Date.now) {
    this.#maxEntries = maxEntries
    this.#callerMax = callerMax
    this.#now = now
  }

  seen(key: string, expiresAtMs: number, remember: boolean, caller: string): boolean {
    const now = this.#now()
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt > now) return true
    if (!remember) return false
    this.#evict(now, EVICT_STEP)
    if (this.#full(caller) !== undefined) this.#evict(now, Infinity)
    const limit = this.#full(caller)
    if (limit !== undefined) {
      this.#refusals[limit]++
      const soonest = limit === 'caller' ? this.#shares.get(caller)?.peek() : this.#byExpiry.peek()?.expiresAt
      throw new ReplayStoreFull(limit, secondsUntil(soonest ?? now, now))
    }
    let share = this.#shares.get(caller)
    if (share === undefined) this.#shares.set(caller, share = new MinHeap<number>((expiry) => expiry))
    // A key seen before but expired may still sit in the heap: its old entry leaves it in its turn,
    // and (no longer the Map's) leaves the Map alone.
    const added: Entry = { key, expiresAt: expiresAtMs, share, caller }
    this.#entries.set(key, added)
    this.#byExpiry.push(added)
    share.push(expiresAtMs)
    return false
  }

  state(): ReplayStoreState {
    return 'memory'
  }

  refusals(): Readonly<Record<ReplayLimit, number>> {
    return this.#refusals
  }

  /** Entries held, the expired ones not yet dropped included. */
  size(): number {
    return this.#byExpiry.size
  }

  /** The bound a new entry of `caller` would go past, if any. */
  #full(caller: string): ReplayLimit | undefined {
    if (this.#callerMax > 0 && (this.#shares.get(caller)?.size ?? 0) >= this.#callerMax) return 'caller'
    if (this.#byExpiry.size >= this.#maxEntries) return 'store'
    return undefined
  }

  /** Drops up to `most` expired entries, soonest first. */
  #evict(now: number, most: number): void {
    for (let dropped = 0; dropped < most; dropped++) {
      const entry = this.#byExpiry.peek()
      if (entry === undefined || entry.expiresAt > now) return
      this.#byExpiry.pop()
      if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key)
      // Entries leave in expiry order, so this is the share's soonest (or one as soon).
      entry.share.pop()
      if (entry.share.size === 0 && this.#shares.get(entry.caller) === entry.share) this.#shares.delete(entry.caller)
    }
  }
}
