/**
 * The server of `npm run bench:multipart-floor`: bare node:http, no framework, no limits, no log.
 * It hashes one upload with sha256 in one of four ways, chosen by the path, to show what a
 * multipart body costs over a raw one on this machine whoever parses it:
 * - `/raw`: the body is the file (as bare-upload-server.ts);
 * - `/busboy`: the file part of a multipart/form-data body, parsed by @fastify/busboy, the parser
 *   under @fastify/multipart and so under hashd's multipart form;
 * - `/sliced-search`: the least a correct streaming parser can do for a body of one file part:
 *   skip the part's headers, then search each 8 KiB slice for the delimiter (RFC 2046 §5.1.1,
 *   CRLF "--" boundary) with Buffer.indexOf and hash the slice at once, while it is still in the
 *   core's cache; the last bytes of each chunk wait for the next, in case a delimiter straddles
 *   the two;
 * - `/no-search`: the same without any search: everything after the part's headers but the
 *   closing delimiter is hashed. Not a parser (a delimiter inside the file would go unseen): it
 *   is the floor, the cost of a multipart body if finding its end were free.
 * Each answers `{ size, hashes: { sha256 } }`. Only what curl -F sends is handled: one part.
 */
import { createHash, type Hash } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Busboy } from '@fastify/busboy'

const SLICE = 8 * 1024
const HEADERS_END = Buffer.from('\r\n\r\n')

function answer(response: ServerResponse, size: number, hash: Hash): void {
  response.end(JSON.stringify({ size, hashes: { sha256: hash.digest('hex') } }))
}

function boundaryOf(request: IncomingMessage): string {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(request.headers['content-type'] ?? '')
  if (!match) throw new Error('no boundary')
  return (match[1] ?? match[2]) as string
}

function raw(request: IncomingMessage, response: ServerResponse): void {
  const hash = createHash('sha256')
  let size = 0
  request.on('data', (chunk: Buffer) => { size += chunk.length; hash.update(chunk) })
  request.on('end', () => answer(response, size, hash))
}

function busboy(request: IncomingMessage, response: ServerResponse): void {
  const parser = Busboy({ headers: request.headers as { 'content-type': string } })
  const hash = createHash('sha256')
  let size = 0
  parser.on('file', (_field, file) => {
    file.on('data', (chunk: Buffer) => { size += chunk.length; hash.update(chunk) })
  })
  parser.on('finish', () => answer(response, size, hash))
  request.pipe(parser)
}

/**
 * Hands each chunk of the file part (after its headers) to `onFile`; the first chunk is the rest of
 * the one in which the headers end.
 */
function afterPartHeaders(request: IncomingMessage, onFile: (chunk: Buffer) => void): void {
  let head: Buffer | undefined = Buffer.alloc(0)
  request.on('data', (chunk: Buffer) => {
    if (head === undefined) { onFile(chunk); return }
    head = Buffer.concat([head, chunk])
    const end = head.indexOf(HEADERS_END)
    if (end === -1) return
    const rest = head.subarray(end + HEADERS_END.length)
    head = undefined
    onFile(rest)
  })
}

function slicedSearch(request: IncomingMessage, response: ServerResponse): void {
  const delimiter = Buffer.from(`\r\n--${boundaryOf(request)}`)
  const hash = createHash('sha256')
  let size = 0
  let carried: Buffer | undefined
  let ended = false
  const hashUpTo = (data: Buffer, end: number) => { hash.update(data.subarray(0, end)); size += end }
  afterPartHeaders(request, (chunk) => {
    if (ended) return
    const tailRoom = delimiter.length - 1
    const data = chunk
    if (carried) {
      // A delimiter may start in the bytes carried over and end in this chunk.
      const joined = Buffer.concat([carried, chunk.subarray(0, tailRoom)])
      const found = joined.indexOf(delimiter)
      if (found !== -1 && (found < carried.length || chunk.length < tailRoom)) { hashUpTo(joined, found); ended = true; return }
      if (chunk.length < tailRoom) {
        // Too short to search past: hash what can no longer start a delimiter, carry the rest.
        const settled = Math.max(0, joined.length - tailRoom)
        hashUpTo(joined, settled)
        carried = Buffer.from(joined.subarray(settled))
        return
      }
      hashUpTo(carried, carried.length)
      carried = undefined
    }
    const keep = Math.min(tailRoom, data.length)
    const searched = data.length - keep
    for (let start = 0; start < searched; start += SLICE) {
      const end = Math.min(start + SLICE, searched)
      // Searched up to delimiter.length - 1 bytes past the slice: a delimiter that starts inside it.
      const found = data.subarray(start, end + tailRoom).indexOf(delimiter)
      if (found !== -1) { hashUpTo(data.subarray(start), found); ended = true; return }
      hashUpTo(data.subarray(start, end), end - start)
    }
    carried = Buffer.from(data.subarray(searched))
  })
  request.on('end', () => answer(response, size, hash))
}

function noSearch(request: IncomingMessage, response: ServerResponse): void {
  // curl -F ends the body with CRLF "--" boundary "--" CRLF and nothing after.
  const closing = `\r\n--${boundaryOf(request)}--\r\n`.length
  const hash = createHash('sha256')
  let size = 0
  let carried: Buffer | undefined
  afterPartHeaders(request, (chunk) => {
    // The last `closing` bytes seen are held back: they may be the closing delimiter.
    let data = chunk
    if (carried && chunk.length >= closing) { hash.update(carried); size += carried.length }
    else if (carried) data = Buffer.concat([carried, chunk])
    const settled = Math.max(0, data.length - closing)
    hash.update(data.subarray(0, settled))
    size += settled
    carried = Buffer.from(data.subarray(settled))
  })
  request.on('end', () => answer(response, size, hash))
}

const modes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
  '/raw': raw, '/busboy': busboy, '/sliced-search': slicedSearch, '/no-search': noSearch,
}

const server = createServer((request, response) => {
  if (request.url === '/api/health') { response.end('{"status":"ok"}'); return }
  const mode = modes[request.url ?? '']
  if (!mode) { response.statusCode = 404; response.end(); return }
  mode(request, response)
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
