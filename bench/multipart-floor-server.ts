/**
 * The server of `npm run bench:multipart-floor`: bare node:http, no framework, no limits, no log.
 * It hashes one upload with sha256 in one of four ways, chosen by the path, to show what a
 * multipart body costs over a raw one on this machine whoever parses it:
 * - `/raw`: the body is the file (as bare-upload-server.ts);
 * - `/busboy`: the file part of a multipart/form-data body, parsed by @fastify/busboy, the parser
 *   under @fastify/multipart, which read hashd's forms before its own reader;
 * - `/reader`: the same through hashd's multipart reader (src/upload/multipart.ts) without the rest
 *   of hashd: its delimiter search and hand-over, on their own;
 * - `/no-search`: the same without any search: everything after the part's headers but the
 *   closing delimiter is hashed. Not a parser (a delimiter inside the file would go unseen): it
 *   is the floor, the cost of a multipart body if finding its end were free.
 * Each answers `{ size, hashes: { sha256 } }`. Only what curl -F sends is handled: one part.
 * Every mode but busboy's frees each body chunk once read (src/upload/release.ts), as hashd does:
 * on this machine that alone makes uploads several per cent faster, so leaving it out of one
 * mode would show up as that mode's cost. busboy hands on slices of the chunks, which cannot be.
 */
import { createHash, type Hash } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Busboy } from '@fastify/busboy'
import { boundaryOf as boundaryParameter, readMultipart } from '../src/upload/multipart.js'
import { releaseChunk } from '../src/upload/release.js'

const HEADERS_END = Buffer.from('\r\n\r\n')

function answer(response: ServerResponse, size: number, hash: Hash): void {
  response.end(JSON.stringify({ size, hashes: { sha256: hash.digest('hex') } }))
}

const boundaryOf = (request: IncomingMessage) => boundaryParameter(request.headers['content-type'])

function raw(request: IncomingMessage, response: ServerResponse): void {
  const hash = createHash('sha256')
  let size = 0
  request.on('data', (chunk: Buffer) => { size += chunk.length; hash.update(chunk); releaseChunk(chunk) })
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

function reader(request: IncomingMessage, response: ServerResponse): void {
  const hash = createHash('sha256')
  let size = 0
  readMultipart(request, boundaryOf(request) ?? '', {
    parts: 6, headerBytes: 8192, headerLines: 16, bodyBytes: Number.MAX_SAFE_INTEGER, tooLargeDetail: '',
  }, () => ({
    write(bytes) { size += bytes.length; hash.update(bytes); return undefined },
    end() { return undefined },
  })).then(() => answer(response, size, hash), (error: unknown) => {
    response.statusCode = 400
    response.end(String(error))
  })
}

function noSearch(request: IncomingMessage, response: ServerResponse): void {
  // curl -F ends the body with CRLF "--" boundary "--" CRLF and nothing after.
  const closing = `\r\n--${boundaryOf(request) ?? ''}--\r\n`.length
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
    releaseChunk(chunk)
  })
  request.on('end', () => answer(response, size, hash))
}

const modes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
  '/raw': raw, '/busboy': busboy, '/reader': reader, '/no-search': noSearch,
}

const server = createServer((request, response) => {
  if (request.url === '/api/health') { response.end('{"status":"ok"}'); return }
  const mode = modes[request.url ?? '']
  if (!mode) { response.statusCode = 404; response.end(); return }
  mode(request, response)
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
