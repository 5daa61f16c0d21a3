/**
 * Responses finished during one turn of the event loop are written out together at its end, as
 * Redis writes its replies just before it waits for the next events (`beforeSleep` →
 * `handleClientsWithPendingWrites`), rather than each the moment it is ready.
 *
 * Why: every response written to a client that is waiting wakes that client up, and when client
 * and server share a machine (a reverse proxy, a sidecar, the bench's load generator) the wake-up
 * is paid by the server's write(2): on this VM's 2 cores, perf put 5–11 µs of a short /api/hash
 * in `tcp_sendmsg`'s wake-up of the other core (docs/benchmarks.md). Written one by one, each
 * response wakes the client again, and the requests it sends back arrive one or two per turn, so
 * every request also pays a whole turn of the loop. Written together, the first wakes the client
 * and the others reach it while it runs; its next requests then arrive together too.
 *
 * The cost is latency within a busy turn: a response waits for the other handlers of the same turn
 * to finish (the requests that arrived with it), never for new I/O. With one request per turn it
 * still leaves in that turn, after the turn's other callbacks. Measured figures, both ways,
 * are in docs/benchmarks.md (`npm run bench:ablate`, variant unbatched).
 *
 * Mechanism: an onSend hook holds each reply's continuation; the first one of a turn schedules a
 * setImmediate (the loop's check phase, right after the poll phase that ran the handlers), which
 * lets them all go in the order they finished. Every reply Fastify writes passes through it
 * (routes, 404s, errors, the page's files); the answers to malformed HTTP, which Node's
 * clientError handler writes before a request exists (plugins/errors.ts), do not.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

async function batchedWritesPlugin(app: FastifyInstance): Promise<void> {
  let waiting: Array<() => void> = []
  const writeAll = (): void => {
    const batch = waiting
    waiting = []
    for (const write of batch) {
      try {
        write()
      } catch (error) {
        // The error path itself failed; the others of the turn still go.
        app.log.error({ err: error }, 'a response could not be written')
      }
    }
  }
  app.addHook('onSend', (_request, reply, payload, done) => {
    const write = (): void => {
      try {
        done(null, payload)
      } catch (error) {
        // Writing the head can throw (a header value Node refuses). Fastify answers such a throw
        // from a handler with its error path (wrap-thenable.js); so does this, and the other
        // replies of the turn still go.
        reply.send(error)
      }
    }
    if (waiting.push(write) === 1) setImmediate(writeAll)
  })
}

export default fp(batchedWritesPlugin, { name: 'batched-writes' })
