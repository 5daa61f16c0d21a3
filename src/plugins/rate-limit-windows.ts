/**
 * The counting behind the rate limit: a fixed window per client that starts with its first
 * request (as @fastify/rate-limit's stores count), kept in this process and, with REDIS_URL, in
 * Redis for every instance.
 *
 * The local count is never skipped. It holds the largest count this process knows of for the
 * client's window: its own admissions, and the shared count whenever Redis answers (the local
 * window then ends when Redis's does). So:
 * - a request the local count already refuses is refused without a call to Redis (a flood past
 *   its budget costs one Map lookup per request);
 * - when Redis is slow or down, the local count decides alone, with the same budget: one instance
 *   never admits more than the limit in a window, and N instances at most N times it. A limit never
 *   disappears (a flood that delays the event loop past the command timeout is still counted);
 * - when Redis answers again, its count is the shared one and the local count follows it.
 *
 * A refused take costs nothing: neither count grows (the Redis script adds only what fits), so a
 * batch that is refused does not use up its caller's budget. A budget is checked and charged `n`
 * at a time (a batch's items at once).
 */

/** What a take decided, and the count it was decided on. */
export interface Decision {
  allowed: boolean
  /** The count of the window after this take (before it, when refused). */
  current: number
  /** Milliseconds until the window ends. */
  resetMs: number
  /** Decided by this process alone: no shared counter, or it did not answer in time. */
  local: boolean
  /** When (epoch ms) the window it was counted in ends: which window, for giveBack. */
  resetAt: number
}

/**
 * The shared side (rate-limit-redis.ts): takes `n` from `key` if the count stays within `max`, in
 * a window of `windowMs` that the first take starts; answers the count and the window's ms left.
 */
export interface SharedCounter {
  take(key: string, n: number, max: number, windowMs: number, done: (error: Error | null, current: number, allowed: boolean, ttlMs: number) => void): void
}

interface Window {
  resetAt: number
  current: number
}

/**
 * Two ends of a window this close are the same window seen by two clocks (the local one started at
 * the request's arrival, Redis's when its script ran); further apart, another instance started the
 * shared window, or Redis lost it (a restart), and Redis's is the one that counts.
 */
const SAME_WINDOW_MS = 1_000

export class WindowCounter {
  readonly #windowMs: number
  readonly #maxClients: number
  readonly #namespace: string
  readonly #shared: SharedCounter | undefined
  readonly #onSharedFailure: () => void
  /** bucket → its window; a Map kept in least-recently-used order (the first key is evicted). */
  readonly #windows = new Map<string, Window>()

  /**
   * @param options.namespace what the shared keys of this budget start with after REDIS_PREFIX
   *   (nothing for requests, `items:` for batch items)
   * @param options.maxClients buckets kept in memory; past it the least recently used is forgotten
   * @param options.onSharedFailure called for each take decided locally because Redis did not answer
   */
  constructor(options: { windowMs: number, maxClients: number, namespace: string, shared?: SharedCounter | undefined, onSharedFailure?: () => void }) {
    this.#windowMs = options.windowMs
    this.#maxClients = options.maxClients
    this.#namespace = options.namespace
    this.#shared = options.shared
    this.#onSharedFailure = options.onSharedFailure ?? (() => {})
  }

  #window(bucket: string, now: number): Window {
    const windows = this.#windows
    let window = windows.get(bucket)
    if (window !== undefined) {
      windows.delete(bucket)
      if (window.resetAt <= now) { window.resetAt = now + this.#windowMs; window.current = 0 }
    } else {
      if (windows.size >= this.#maxClients) windows.delete(windows.keys().next().value as string)
      window = { resetAt: now + this.#windowMs, current: 0 }
    }
    windows.set(bucket, window)
    return window
  }

  /**
   * Takes `n` from `bucket`'s budget of `max` in its window. `done` is called once: at once when
   * there is no shared counter or the local count refuses, else when Redis answers or its command
   * times out.
   */
  take(bucket: string, n: number, max: number, done: (decision: Decision) => void): void {
    const sent = Date.now()
    const window = this.#window(bucket, sent)
    const { resetAt } = window
    if (window.current + n > max) {
      done({ allowed: false, current: window.current, resetMs: resetAt - sent, local: this.#shared === undefined, resetAt })
      return
    }
    window.current += n
    const shared = this.#shared
    if (shared === undefined) {
      done({ allowed: true, current: window.current, resetMs: resetAt - sent, local: true, resetAt })
      return
    }
    shared.take(this.#namespace + bucket, n, max, this.#windowMs, (error, current, allowed, ttlMs) => {
      const answered = Date.now()
      if (error !== null) {
        // Counted here already: admitted on this process's count, which had room for it.
        this.#onSharedFailure()
        done({ allowed: true, current: window.current, resetMs: window.resetAt - answered, local: true, resetAt: window.resetAt })
        return
      }
      // Redis measured ttlMs somewhere between sending and answering (a busy event loop may read
      // the answer late): its window ends within [sent + ttlMs, answered + ttlMs]. The local window
      // follows it. The same window keeps the larger count (this process may have admitted
      // requests Redis never saw while it did not answer); another one takes Redis's.
      const same = window.resetAt >= sent + ttlMs - SAME_WINDOW_MS && window.resetAt <= answered + ttlMs + SAME_WINDOW_MS
      const mine = allowed ? window.current : window.current - n
      window.current = same ? Math.max(mine, current) : current
      window.resetAt = sent + ttlMs
      done({ allowed, current, resetMs: window.resetAt - answered, local: false, resetAt: window.resetAt })
    })
  }

  /**
   * Gives back `n` that `decision` took from `bucket` (a request that a later budget refused costs
   * nothing). Best effort: a give-back that misses only errs on the side of counting.
   */
  giveBack(bucket: string, n: number, decision: Decision): void {
    const window = this.#windows.get(bucket)
    if (window !== undefined && Math.abs(window.resetAt - decision.resetAt) <= SAME_WINDOW_MS) window.current = Math.max(0, window.current - n)
    if (this.#shared !== undefined && !decision.local) this.#shared.take(this.#namespace + bucket, -n, Number.MAX_SAFE_INTEGER, this.#windowMs, () => {})
  }
}
