/**
 * @fastify/rate-limit's two stores, which its plugin builds internally and does not type for direct
 * use (plugins/rate-limit.ts calls them from its own hook). Both count with `incr`: a fixed window
 * per key, reporting the count so far and the milliseconds left in the window.
 */
declare module '@fastify/rate-limit/store/LocalStore.js' {
  /** An LRU of `cache` keys (toad-cache) in this process's memory. */
  const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => {
    incr(key: string, callback: (error: Error | null, result: { current: number, ttl: number } | null) => void, timeWindowMs: number, max: number): void
    /** Its LRU of counters (toad-cache's LruMap), which a batch's extra count goes into (plugins/rate-limit.ts). */
    lru: {
      get(key: string): { current: number, ttl: number, iterationStartMs: number } | undefined
      set(key: string, value: { current: number, ttl: number, iterationStartMs: number }): void
    }
  }
  export default LocalStore
}

declare module '@fastify/rate-limit/store/RedisStore.js' {
  /** INCR and PEXPIRE/PTTL in one Lua script (EVALSHA), keys under `prefix`. */
  const RedisStore: new (continueExceeding: boolean, exponentialBackoff: boolean, redis: unknown, prefix: string) => {
    incr(key: string, callback: (error: Error | null, result: { current: number, ttl: number } | null) => void, timeWindowMs: number, max: number): void
  }
  export default RedisStore
}
