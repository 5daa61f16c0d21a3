/**
 * Values that are ready at once on the common path and a promise only when work left the event
 * loop (a large digest on the pool, a Redis round trip). A request answered on the tick it arrived
 * makes no promise at all, which is a measurable share of a short request (`npm run bench`, the
 * HMAC and webhook rows): an `async` function makes one per call, and each `await` a microtask.
 */
export type MaybePromise<T> = T | Promise<T>

/** `next(value)`, at once when `value` is not a promise, after it when it is. */
export function then<T, R>(value: MaybePromise<T>, next: (value: T) => R): R | Promise<Awaited<R>> {
  return value instanceof Promise ? value.then(next) as Promise<Awaited<R>> : next(value)
}
