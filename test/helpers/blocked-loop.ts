/**
 * A request on a kept-alive connection after this process's event loop was blocked.
 *
 * Tests run the tools they compare against synchronously (execFileSync, spawnSync), and on a
 * loaded machine one call can take longer than hashd's keep-alive timeout (5 s, src/app.ts). A
 * connection that fetch pooled before the call may then be closed by the server (a hashd process
 * closed it during the call; a server in this process closes it as soon as its timers run) while
 * this process, whose loop did not run, still holds it as idle: the next request sent on it meets
 * the close (ECONNRESET, "other side closed") before any answer, and the server never read it.
 * A client with a live event loop drops such a connection when the close arrives; browsers and
 * HTTP clients send a request again when a reused connection fails that way.
 *
 * `sendPooled` does both, and only after a blocked loop: it lets the loop turn (timers, then the
 * reading of pending closes) before sending, and sends once more on a fresh connection when the
 * reused one was closed under the request. Any other failure, and any failure without a block
 * before it, is the test's.
 */
import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises'

/** A loop that has not turned for this long counts as blocked (far below the 5 s keep-alive). */
const BLOCKED_MS = 1000
const TICK_MS = 100

let lastTick = performance.now()
setInterval(() => { lastTick = performance.now() }, TICK_MS).unref()

/** fetch's failure when the pooled connection it wrote on was closed before an answer began. */
function closedUnderRequest(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } })?.cause?.code
  return error instanceof TypeError && (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET')
}

export async function sendPooled(send: () => Promise<Response>, body?: unknown): Promise<Response> {
  if (performance.now() - lastTick < BLOCKED_MS) return send()
  await sleep(1)
  await immediate()
  // The pool may hold more than one such connection; each failed send drops one.
  for (let tries = 1; ; tries++) {
    try {
      return await send()
    } catch (error) {
      // A stream can be read once; anything else (a string, bytes, a Blob, a form) can be sent again.
      if (!closedUnderRequest(error) || body instanceof ReadableStream || tries === 3) throw error
    }
  }
}
