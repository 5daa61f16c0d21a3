/**
 * Freeing upload chunks once hashed (src/upload/release.ts): which buffers may be freed, and that
 * uploads whose chunks are freed still hash every byte, through HTTP, where a freed buffer read
 * again would show as missing bytes: raw and multipart bodies written in uneven pieces, several
 * requests pipelined on one connection (so one socket read holds the end of one body and the start
 * of the next), and multipart uploads large enough for the hash threads to push back on the socket
 * (so the multipart reader waits on them mid-chunk). Digests are checked against node:crypto (OpenSSL)
 * over the same bytes. Where the runtime lacks ArrayBuffer.prototype.transfer (Node 20), nothing is
 * freed, which the first test checks instead.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes, randomInt } from 'node:crypto'
import { connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { canReleaseChunks, releaseChunk } from '../src/upload/release.js'
import { startServer, type TestServer } from './helpers/server.js'

const hex = (algorithm: string, data: Uint8Array) => createHash(algorithm).update(data).digest('hex')
const BOUNDARY = 'release-test-boundary-4f2a'

function multipartBody(file: Uint8Array, algorithms: string): Buffer {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="algorithms"\r\n\r\n${algorithms}\r\n`
      + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ])
}

interface Upload { head: string, body: Buffer, file: Uint8Array, algorithms: string[] }

function rawUpload(file: Uint8Array, algorithms: string[]): Upload {
  return { head: `PUT /api/filehash?algorithms=${algorithms.join(',')} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: ${file.length}\r\n\r\n`, body: Buffer.from(file), file, algorithms }
}

function formUpload(file: Uint8Array, algorithms: string[]): Upload {
  const body = multipartBody(file, algorithms.join(','))
  return { head: `POST /api/filehash HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`, body, file, algorithms }
}

/**
 * Sends the uploads pipelined on one connection, in pieces of random size (the first piece of each
 * request runs into the next one's head), and returns the answers' bodies in order.
 */
async function pipelined(port: number, uploads: Upload[]): Promise<Array<Record<string, unknown>>> {
  const wire = Buffer.concat(uploads.flatMap((upload) => [Buffer.from(upload.head), upload.body]))
  const socket = connect(port, '127.0.0.1')
  const received: Buffer[] = []
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  const closed = new Promise<void>((resolve, reject) => { socket.on('end', resolve); socket.on('error', reject) })
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  for (let offset = 0; offset < wire.length;) {
    const piece = wire.subarray(offset, offset + randomInt(1, 200_000))
    offset += piece.length
    if (!socket.write(piece)) await new Promise((resolve) => socket.once('drain', resolve))
    if (randomInt(4) === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  // Read until every answer is in, then close.
  const answers: Array<Record<string, unknown>> = []
  const deadline = Date.now() + 60_000
  while (answers.length < uploads.length) {
    if (Date.now() > deadline) {
      socket.destroy()
      assert.fail(`${answers.length} of ${uploads.length} answers within 60 s`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
    const text = Buffer.concat(received).toString('latin1')
    answers.length = 0
    for (const match of text.matchAll(/HTTP\/1\.1 (\d+)[^]*?\r\ncontent-length: (\d+)[^]*?\r\n\r\n/gi)) {
      const start = (match.index ?? 0) + match[0].length
      const length = Number(match[2])
      if (start + length > text.length) break
      answers.push({ status: Number(match[1]), ...JSON.parse(text.slice(start, start + length)) as Record<string, unknown> })
    }
  }
  socket.end()
  await closed
  return answers
}

function assertDigests(answer: Record<string, unknown>, upload: Upload, label: string): void {
  assert.equal(answer.status, 200, `${label}: ${JSON.stringify(answer)}`)
  assert.equal(answer.size, upload.file.length, label)
  const hashes = answer.hashes as Record<string, string>
  for (const algorithm of upload.algorithms) assert.equal(hashes[algorithm], hex(algorithm, upload.file), `${label}: ${algorithm}`)
}

describe('freeing upload chunks once hashed', () => {
  it('frees only a buffer that is wholly one chunk of this body, and only where the runtime can', () => {
    const whole = Buffer.alloc(65536, 1)
    const slice = Buffer.alloc(65536, 2).subarray(10)
    releaseChunk(whole)
    releaseChunk(slice)
    assert.equal(whole.length, canReleaseChunks ? 0 : 65536, 'a chunk that is its whole buffer is freed (read as empty after)')
    assert.equal(slice.length, 65526, 'a slice of a larger buffer is never freed')
    // Freed twice (a chunk handed over again): the second time does nothing rather than throw.
    releaseChunk(whole)
    releaseChunk(Buffer.alloc(0))
  })

  describe('through HTTP', () => {
    let server: TestServer
    before(async () => { server = await startServer({ RATE_LIMIT_MAX: '0' }) })
    after(async () => { await server.close() })
    const port = () => Number(new URL(server.url).port)

    it('raw and multipart uploads pipelined on one connection, in uneven pieces, hash every byte', async () => {
      const uploads = [
        rawUpload(randomBytes(3 * 1024 * 1024 + 17), ['sha256', 'md5']),
        formUpload(randomBytes(2 * 1024 * 1024 + 5), ['sha256']),
        rawUpload(randomBytes(700_001), ['sha1']),
        formUpload(randomBytes(5 * 1024 * 1024 + 3), ['sha512', 'md5', 'sha1']),
        rawUpload(randomBytes(1), ['sha256']),
      ]
      const answers = await pipelined(port(), uploads)
      uploads.forEach((upload, index) => assertDigests(answers[index] as Record<string, unknown>, upload, `upload ${index}`))
    })

    it('multipart uploads whose hash threads push back on the socket hash every byte', async () => {
      // 24 MiB with four algorithms: the threads fall behind the socket, so the multipart reader
      // waits on them mid-chunk while later body chunks arrive.
      const uploads = [formUpload(randomBytes(24 * 1024 * 1024 + 11), ['sha512', 'sha256', 'md5', 'sha1']), formUpload(randomBytes(1024 * 1024), ['sha512', 'md5'])]
      const answers = await pipelined(port(), uploads)
      uploads.forEach((upload, index) => assertDigests(answers[index] as Record<string, unknown>, upload, `upload ${index}`))
    })
  })
})
