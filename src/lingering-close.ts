/**
 * Lingering close, as Apache httpd (`lingering_close()`, server/connection.c) and nginx
 * (`lingering_close`, `lingering_time`, `lingering_timeout`) do it.
 *
 * Why: hashd refuses some requests before it has read their body: a 413 for a body or upload past
 * its limit, a 400 for a form that breaks RFC 2046 part way. It then answers with
 * `Connection: close` rather than read the rest of a large body, and Node's HTTP server closes the
 * socket as soon as the answer is written. Closing a TCP socket with received data still unread
 * makes the kernel send a reset instead of a FIN (RFC 9293 §3.6.1; RFC 9112 §9.6 describes the
 * problem for HTTP), and a client still sending its body then sees the reset (EPIPE, ECONNRESET)
 * and may never read the answer waiting in its own buffer: test/lingering-close.test.ts has such a
 * client, answered while it sends, which without lingering gets EPIPE and reads nothing.
 *
 * Mechanism: Node closes such a socket with `destroySoon()` once the answer is written
 * (`resOnFinish` in lib/_http_server.js). On hashd's sockets that call, when the request being
 * received is not complete, sends the FIN after the answer and keeps reading: Node's parser goes on
 * reading the body, and its request drops it. The socket is destroyed when the body has arrived,
 * when the client closes, or after LINGER_MS, whichever comes first: a client that keeps sending
 * past that gets the reset, having had LINGER_MS to read the answer.
 * Every other call (a complete request, a socket already half-closed, a server shutting down)
 * closes as before.
 */
import type { IncomingMessage, Server } from 'node:http'
import { Socket } from 'node:net'

/** How long a socket may go on receiving a refused body after its answer (nginx: 30 s in all, 5 s between reads). */
export const LINGER_MS = 5_000

/** Node's HTTP parser, as Node's server attaches it to each socket: `incoming` is the request it is reading. */
interface ParsedSocket extends Socket { parser?: { incoming?: IncomingMessage | null } | null }

const closeAtOnce = Socket.prototype.destroySoon

/** The sockets of one server that linger; `stop()` ends them and lingering, for a shutdown. */
export interface Lingering {
  stop(): void
}

/** Makes every connection of `server` linger on close when its request's body is still arriving. */
export function lingerOnClose(server: Server): Lingering {
  const lingering = new Set<Socket>()
  let stopped = false

  function lingeringDestroySoon(this: ParsedSocket): void {
    const receiving = this.parser?.incoming
    if (stopped || receiving == null || receiving.complete || !this.writable || this.destroyed) {
      closeAtOnce.call(this)
      return
    }
    const done = (): void => { this.destroy() }
    const timer = setTimeout(done, LINGER_MS)
    timer.unref()
    lingering.add(this)
    // The body's last bytes read (the parser ends the request); the client gone closes it too.
    receiving.once('end', done)
    this.once('close', () => {
      clearTimeout(timer)
      receiving.off('end', done)
      lingering.delete(this)
    })
    // What was reading the body has stopped (an upload cut at its limit pauses it, and Node dumps
    // only a body nobody read): drop the rest as it comes.
    receiving.unpipe()
    receiving.removeAllListeners('data')
    receiving.resume()
    // The FIN goes after the answer; reading goes on.
    this.end()
  }

  server.on('connection', (socket: Socket) => {
    socket.destroySoon = lingeringDestroySoon
  })
  // Over TLS (tls.ts) the HTTP parser reads the TLS socket, which an https server announces here.
  server.on('secureConnection', (socket: Socket) => {
    socket.destroySoon = lingeringDestroySoon
  })
  return {
    // A shutdown does not wait on bodies it has answered already: their sockets close now, and
    // later ones at once.
    stop() {
      stopped = true
      for (const socket of lingering) socket.destroy()
    },
  }
}
