/**
 * An AbortSignal that fires when the client disconnects before its response is complete, so
 * password work still waiting in the pool's queue is dropped instead of computed for no one.
 */
export function clientGone(reply: { raw: NodeJS.EventEmitter & { writableFinished: boolean } }): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) controller.abort() })
  return controller.signal
}
