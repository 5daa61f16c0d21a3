import type { EventEmitter } from 'node:events'

/**
 * Resolves on the first of several events and removes the listeners of the others, so that a
 * loop waiting for `drain` or `close` on every full write does not pile up `close` listeners
 * (Node's MaxListenersExceededWarning, which reads as a leak).
 */
export function whichever(emitter: EventEmitter, ...events: string[]): Promise<string> {
  return new Promise((resolve) => {
    const handlers = events.map((event) => {
      const handler = () => {
        events.forEach((name, index) => emitter.off(name, handlers[index] as () => void))
        resolve(event)
      }
      emitter.once(event, handler)
      return handler
    })
  })
}
