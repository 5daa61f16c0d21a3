/**
 * The peer of the /range row of `npm run bench`: a bare node:http server that answers
 * GET /range/{prefix} as hashd's route does underneath, with hashd's own store code
 * (src/screening/store.ts: the read that never waits, else libuv's pool; src/screening/range.ts:
 * the text) and the same headers as hashd's answer, but without a framework, hooks, validation,
 * rate limit, metrics or logs: the row is what the rest of hashd's request costs. Beside
 * bench/bare-range-server.ts (the same answers from memory, the row's context), it splits the
 * rest: what reading the store and writing the text cost.
 */
import { createServer } from 'node:http'
import { PwnedStore, type PrefixRecords } from '../src/screening/store.js'
import { rangeText } from '../src/screening/range.js'

const store = PwnedStore.open(process.env.PWNED_STORE ?? '', 'PWNED_STORE', 'sha1')
const PATH = /^\/range\/([0-9A-Fa-f]{5})$/
let requests = 0

const server = createServer((request, response) => {
  if (request.url === '/api/health') {
    response.end('{"status":"ok"}')
    return
  }
  const prefix = PATH.exec(request.url ?? '')?.[1]?.toUpperCase()
  if (prefix === undefined) {
    response.writeHead(404).end()
    return
  }
  const answer = (records: PrefixRecords): void => {
    const body = rangeText(records)
    response.writeHead(200, {
      'x-request-id': `store-${requests++}`, 'x-content-type-options': 'nosniff', 'access-control-allow-origin': '*', vary: 'Add-Padding',
      etag: `"${store.id}-sha1-${prefix}"`, 'cache-control': 'public, max-age=2678400', 'last-modified': store.lastModified,
      'content-type': 'text/plain', 'content-length': body.length,
    })
    response.end(body)
  }
  const index = Number.parseInt(prefix, 16)
  const cached = store.prefixNow(index)
  if (cached !== null) answer(cached)
  else store.prefix(index).then(answer, () => response.writeHead(503).end())
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
