/**
 * A second baseline for `npm run bench`: Fastify with the same sha256 handler, a JSON body schema
 * and a response schema (as hashd's routes have), and nothing else (no hooks, no logging, no
 * limits). Between it and the bare node:http server lies the framework's cost; between it and
 * hashd, the cost of hashd's own validation, logging, limits, metrics and error model, less what
 * hashd's batched writes (plugins/batched-writes.ts) save.
 */
import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import batchedWritesPlugin from '../src/plugins/batched-writes.js'

const app = Fastify({ logger: false })
// bench:ablate's bare-batched variant: the same server with hashd's batched writes, to show what
// they are worth on their own.
if (process.env.BENCH_BATCHED_WRITES === '1') await app.register(batchedWritesPlugin)
// bench:ablate's bare-spin variant: this many µs of busy work added to each request, to show what
// a µs of work in a server costs in CPU per request under this load.
const spinMilliseconds = Number(process.env.BENCH_SPIN_US ?? 0) / 1000
app.get('/api/health', async () => ({ status: 'ok' }))
app.post('/api/hash', {
  schema: {
    body: {
      type: 'object', required: ['input'], additionalProperties: false,
      properties: { input: { type: 'string', maxLength: 1_048_576 }, algorithm: { type: 'string', maxLength: 64 } },
    },
    response: {
      200: {
        type: 'object',
        properties: { hash: { type: 'string' }, length: { type: 'integer' }, processingTimeMs: { type: 'number' }, algorithm: { type: 'string' }, encoding: { type: 'string' } },
      },
    },
  },
}, async (request) => {
  const started = performance.now()
  // Only in that variant, so that the bare peer itself does no extra call.
  if (spinMilliseconds > 0) while (performance.now() - started < spinMilliseconds) { /* the added work */ }
  const hash = createHash('sha256').update((request.body as { input: string }).input, 'utf8').digest('hex')
  return { hash, length: hash.length, processingTimeMs: performance.now() - started, algorithm: 'sha256', encoding: 'hex' }
})
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
// SIGINT too, so that a run under --cpu-prof ends with its profile written.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => { void app.close().then(() => process.exit(0)) })
