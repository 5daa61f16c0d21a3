/**
 * The context line of the /range row of `npm run bench`: a bare node:http server answering GET
 * /range/{prefix} from memory, with the answers bench/pwned.ts read for its sample of prefixes
 * straight from the corpus text (RANGE_ANSWERS, a JSON file of prefix → body). No validation,
 * rate limiting, logging or disk read: the floor of an HTTP answer of that size, which a store
 * that is never loaded whole cannot reach (the row's peer is bench/store-range-server.ts).
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'

const answers = new Map(Object.entries(JSON.parse(readFileSync(process.env.RANGE_ANSWERS ?? '', 'utf8')) as Record<string, string>)
  .map(([prefix, body]) => [`/range/${prefix}`, Buffer.from(body, 'latin1')]))

const server = createServer((request, response) => {
  if (request.url === '/api/health') {
    response.end('{"status":"ok"}')
    return
  }
  const body = answers.get(request.url ?? '')
  if (body === undefined) {
    response.writeHead(404).end()
    return
  }
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length })
  response.end(body)
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
