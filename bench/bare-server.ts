/**
 * The baseline for `npm run bench`: a bare node:http server doing the same work as
 * POST /api/hash with sha256 (read the JSON body, crypto.hash, JSON reply), and nothing else:
 * no validation, no rate limiting, no logging.
 */
import { createServer } from 'node:http'
import { createHash } from 'node:crypto'

const server = createServer((request, response) => {
  if (request.url === '/api/health') {
    response.end('{"status":"ok"}')
    return
  }
  const chunks: Buffer[] = []
  request.on('data', (chunk: Buffer) => chunks.push(chunk))
  request.on('end', () => {
    const started = performance.now()
    const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string }
    const hash = createHash('sha256').update(input, 'utf8').digest('hex')
    const body = JSON.stringify({ hash, length: hash.length, processingTimeMs: performance.now() - started, algorithm: 'sha256', encoding: 'hex' })
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    response.end(body)
  })
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
