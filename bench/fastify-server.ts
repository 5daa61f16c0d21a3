/**
 * A second baseline for `npm run bench`: Fastify with the same sha256 handler, a JSON body schema
 * and a response schema (as hashd's routes have), and nothing else (no hooks, no logging, no
 * limits). Between it and the bare node:http server lies the framework's cost; between it and
 * hashd, the cost of hashd's own validation, logging, limits, metrics and error model.
 */
import { createHash } from 'node:crypto'
import Fastify from 'fastify'

const app = Fastify({ logger: false })
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
  const hash = createHash('sha256').update((request.body as { input: string }).input, 'utf8').digest('hex')
  return { hash, length: hash.length, processingTimeMs: performance.now() - started, algorithm: 'sha256', encoding: 'hex' }
})
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) })
// SIGINT too, so that a run under --cpu-prof ends with its profile written.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => { void app.close().then(() => process.exit(0)) })
