/**
 * The upload baseline for `npm run bench`: a bare node:http server that streams the raw request
 * body into one sha256 and answers with its hex; nothing else (no limits, no validation, no log).
 */
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'

const server = createServer((request, response) => {
  if (request.url === '/api/health') {
    response.end('{"status":"ok"}')
    return
  }
  const hash = createHash('sha256')
  let size = 0
  request.on('data', (chunk: Buffer) => { size += chunk.length; hash.update(chunk) })
  request.on('end', () => response.end(JSON.stringify({ size, hashes: { sha256: hash.digest('hex') } })))
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
