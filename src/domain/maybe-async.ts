/**
 * Values that are ready at once on the common path and a promise only when work left the event
 * loop (a large digest on the pool, a Redis round trip). A request answered on the tick it arrived
 * makes no promise at all: an `async` function makes one per call, and each `await` a microtask,
 * a share of a request that takes microseconds.
 */
export type MaybePromise<T> = T | Promise<T>

/**
 * `next(value)`, at once when `value` is not a promise, after it when it is. Not named `then`: a
 * module that exports `then` is a thenable, and `await import()` of it would call that function.
 */
export function andThen<T, R>(value: MaybePromise<T>, next: (value: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? value.then(next) as Promise<Awaited<R>> : next(value)
}
