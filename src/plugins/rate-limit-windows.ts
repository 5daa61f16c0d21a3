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
 * Leases: a call to Redis takes what its request needs plus a lease (RATE_LIMIT_LEASE_PERCENT of
 * the budget, at most LEASE_MAX), and the requests that follow are admitted from the lease in this
 * process, with no call, until it runs out. A request that arrives while that call is in flight
 * claims part of the lease it asked for and is decided by its answer, so no request waits for more
 * than one call (the REDIS_COMMAND_TIMEOUT_MS bound); one that finds nothing left to claim makes a
 * call of its own. Redis's count includes every lease, so the instances together never admit more
 * than the limit; what a lease leaves unused when its window ends is lost, so a client may get up
 * to (instances − 1) leases fewer than its limit in a window. Under a flood this is one call per
 * lease rather than one per request. With no lease (0 %, or a budget under 100 at 1 %) every
 * request that the local count does not refuse makes one call, as without leases.
 *
 * A refused take costs nothing: neither count grows (the Redis script adds only what fits), so a
 * batch that is refused does not use up its caller's budget. A budget is checked and charged `n`
 * at a time (a batch's items at once).
 */

/** The most a lease holds, whatever the budget: one call to Redis per this many requests at most. */
export const LEASE_MAX = 100

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
 * The shared side (rate-limit-redis.ts): takes up to `n` from `key`, as much as stays within `max`,
 * in a window of `windowMs` that the first take starts; answers the count after it, what it took
 * (0 to n) and the window's ms left.
 */
export interface SharedCounter {
  take(key: string, n: number, max: number, windowMs: number, done: (error: Error | null, current: number, taken: number, ttlMs: number) => void): void
}

interface Waiting {
  n: number
  max: number
  done: (decision: Decision) => void
}

/** A call to Redis in flight: the takes it will decide, and what it asked for that none has claimed yet. */
interface Reservation {
  takes: Waiting[]
  unclaimed: number
}

interface Window {
  resetAt: number
  /** Admissions this process knows of in the window: its own, or the shared count less its lease. */
  current: number
  /** Taken from Redis's count in this window and not yet used by a request of this process. */
  lease: number
  /** The latest call in flight for this window while part of what it asks for is unclaimed. */
  open: Reservation | null
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
  readonly #leasePercent: number
  readonly #onSharedFailure: () => void
  /** bucket → its window; a Map kept in least-recently-used order (the first key is evicted). */
  readonly #windows = new Map<string, Window>()

  /**
   * @param options.namespace what the shared keys of this budget start with after REDIS_PREFIX
   *   (nothing for requests, `items:` for batch items)
   * @param options.maxClients buckets kept in memory; past it the least recently used is forgotten
   * @param options.leasePercent the lease a call to Redis takes beyond what it needs, in percent of
   *   the budget (at most LEASE_MAX); 0: each call takes only what its requests need
   * @param options.onSharedFailure called for each take decided locally because Redis did not answer
   */
  constructor(options: { windowMs: number, maxClients: number, namespace: string, shared?: SharedCounter | undefined, leasePercent?: number, onSharedFailure?: () => void }) {
    this.#windowMs = options.windowMs
    this.#maxClients = options.maxClients
    this.#namespace = options.namespace
    this.#shared = options.shared
    this.#leasePercent = options.leasePercent ?? 0
    this.#onSharedFailure = options.onSharedFailure ?? (() => {})
  }

  #window(bucket: string, now: number): Window {
    const windows = this.#windows
    let window = windows.get(bucket)
    if (window !== undefined) {
      windows.delete(bucket)
      if (window.resetAt <= now) { window.resetAt = now + this.#windowMs; window.current = 0; window.lease = 0; window.open = null }
    } else {
      if (windows.size >= this.#maxClients) windows.delete(windows.keys().next().value as string)
      window = { resetAt: now + this.#windowMs, current: 0, lease: 0, open: null }
    }
    windows.set(bucket, window)
    return window
  }

  /**
   * Takes `n` from `bucket`'s budget of `max` in its window. `done` is called once: at once when
   * there is no shared counter, the lease covers it or the local count refuses, else when Redis
   * answers or its command times out.
   */
  take(bucket: string, n: number, max: number, done: (decision: Decision) => void): void {
    const now = Date.now()
    const window = this.#window(bucket, now)
    const { resetAt } = window
    if (window.current + n > max) {
      done({ allowed: false, current: window.current, resetMs: resetAt - now, local: this.#shared === undefined, resetAt })
      return
    }
    if (window.lease >= n) {
      window.lease -= n
      window.current += n
      done({ allowed: true, current: window.current, resetMs: resetAt - now, local: false, resetAt })
      return
    }
    if (this.#shared === undefined) {
      window.current += n
      done({ allowed: true, current: window.current, resetMs: resetAt - now, local: true, resetAt })
      return
    }
    const open = window.open
    if (open !== null && open.unclaimed >= n) {
      open.unclaimed -= n
      open.takes.push({ n, max, done })
      return
    }
    this.#reserve(bucket, window, { n, max, done })
  }

  /** A call to Redis for `first` and a lease beyond it, which takes arriving meanwhile may claim. */
  #reserve(bucket: string, window: Window, first: Waiting): void {
    const lease = Math.min(LEASE_MAX, Math.floor(first.max * this.#leasePercent / 100))
    const asked = first.n + lease
    const reservation: Reservation = { takes: [first], unclaimed: lease }
    if (lease > 0) window.open = reservation
    const sent = Date.now()
    this.#shared!.take(this.#namespace + bucket, asked, first.max, this.#windowMs, (error, current, taken, ttlMs) => {
      const answered = Date.now()
      if (window.open === reservation) window.open = null
      const { takes } = reservation
      if (error !== null) {
        // Decided on this process's count (and what is left of its lease, which Redis counted).
        for (const take of takes) {
          const decision = { resetMs: window.resetAt - answered, resetAt: window.resetAt }
          if (window.lease >= take.n && window.current + take.n <= take.max) {
            window.lease -= take.n
            window.current += take.n
            take.done({ allowed: true, current: window.current, local: false, ...decision })
          } else {
            this.#onSharedFailure()
            const allowed = window.current + take.n <= take.max
            if (allowed) window.current += take.n
            take.done({ allowed, current: window.current, local: true, ...decision })
          }
        }
        return
      }
      // Redis measured ttlMs somewhere between sending and answering (a busy event loop may read
      // the answer late): its window ends within [sent + ttlMs, answered + ttlMs]. The local window
      // follows it. The same window keeps its lease and the larger count (this process may have
      // admitted requests Redis never saw while it did not answer); in another one (another instance
      // started it, or Redis lost it) the old lease is gone and Redis's count is the one that counts.
      const same = window.resetAt >= sent + ttlMs - SAME_WINDOW_MS && window.resetAt <= answered + ttlMs + SAME_WINDOW_MS
      if (!same) window.lease = 0
      window.lease += taken
      window.resetAt = sent + ttlMs
      // Redis's count less this process's lease: every admission of every instance, and the other
      // instances' leases. The local count is never below it (nor, in the same window, below this
      // process's own admissions), and no take goes past the budget on it, lease or not.
      const shared = current - window.lease
      window.current = same ? Math.max(window.current, shared) : shared
      const decision = { resetMs: window.resetAt - answered, local: false, resetAt: window.resetAt }
      // What Redis took covers every claim when it took all it was asked; when it took less, the
      // budget is spent, and the takes it does not cover (in order of arrival) are refused.
      for (const take of takes) {
        const allowed = window.current + take.n <= take.max && window.lease >= take.n
        if (allowed) {
          window.lease -= take.n
          window.current += take.n
        }
        take.done({ allowed, current: window.current, ...decision })
      }
    })
  }

  /**
   * Gives back `n` that `decision` took from `bucket` (a request that a later budget refused costs
   * nothing): to the lease when Redis counted it, so that the next request uses it with no call.
   * A give-back to a window that has ended does nothing.
   */
  giveBack(bucket: string, n: number, decision: Decision): void {
    const window = this.#windows.get(bucket)
    if (window === undefined || Math.abs(window.resetAt - decision.resetAt) > SAME_WINDOW_MS) return
    window.current = Math.max(0, window.current - n)
    if (!decision.local && this.#shared !== undefined) window.lease += n
  }
}
