/**
 * The multipart reader (src/upload/multipart.ts, with delimiter-search.ts inside it).
 *
 * Input: a Content-Type parameter list (read with boundaryOf), a chunking seed, and the body.
 * The body is read twice: in one chunk, and cut into chunks of 1 to 64 bytes chosen by the seed,
 * as a slow client would send it. Both readings must give the same parts (names, filenames,
 * content types, bytes) and the same end: the reader is a streaming state machine, and where a
 * chunk ends must never change what it reads. (Of a refused body's last, unfinished part, one
 * reading may have handed on fewer bytes: those it held back as a possible delimiter.)
 *
 * Expected refusals (readMultipart's documented ones): a Problem 400 (malformed body: its detail
 * starts "Malformed multipart body") or 413 (a limit: parts, header bytes, header lines).
 * Anything else thrown is a finding.
 */
import { Problem } from '../../src/problem.js'
import { boundaryOf, MAX_BOUNDARY, MultipartReader, type MultipartLimits, type PartHead } from '../../src/upload/multipart.js'
import { fields, invariant, isProblem } from '../support.js'

const LIMITS: MultipartLimits = { parts: 16, headerBytes: 512, headerLines: 8, bodyBytes: Number.MAX_SAFE_INTEGER, tooLargeDetail: 'too large' }

interface Reading {
  parts: Array<{ head: PartHead, content: Buffer, ended: boolean }>
  /** 'ok', or the refusal's status and detail. */
  end: string
}

const isRefusal = (error: unknown): error is Problem =>
  isProblem(error, [413]) || (isProblem(error, [400]) && error.detail.startsWith('Malformed multipart body'))

function read(boundary: string, chunks: Buffer[]): Reading {
  const parts: Array<{ head: PartHead, pieces: Buffer[], ended: boolean }> = []
  const reader = new MultipartReader(boundary, LIMITS, (head) => {
    const part = { head, pieces: [] as Buffer[], ended: false }
    parts.push(part)
    return {
      write(bytes) {
        part.pieces.push(Buffer.from(bytes))
        return undefined
      },
      end() {
        part.ended = true
        return undefined
      },
    }
  })
  let end = 'ok'
  try {
    for (const chunk of chunks) {
      const wait = reader.feed(chunk)
      invariant(wait === undefined, 'the reader waited although no consumer asked it to')
    }
    reader.end()
  } catch (error) {
    if (!isRefusal(error)) throw error
    end = `${error.status} ${error.detail}`
  }
  return { parts: parts.map(({ head, pieces, ended }) => ({ head, content: Buffer.concat(pieces), ended })), end }
}

/** Chunk sizes from a small xorshift generator, so that one seed byte gives many cut points. */
function chunked(body: Buffer, seed: number): Buffer[] {
  const chunks: Buffer[] = []
  let state = (seed * 2654435761) >>> 0 || 1
  for (let at = 0; at < body.length;) {
    state ^= state << 13; state >>>= 0
    state ^= state >>> 17
    state ^= state << 5; state >>>= 0
    const size = 1 + (state % 64)
    chunks.push(Buffer.from(body.subarray(at, at + size)))
    at += size
  }
  return chunks
}

const describe = (reading: Reading): string => JSON.stringify({
  end: reading.end,
  parts: reading.parts.map((part) => ({ ...part.head, content: part.content.toString('latin1'), ended: part.ended })),
})

export function fuzz(data: Buffer): void {
  const [parameters, seed, body] = fields(data, 3) as [Buffer, Buffer, Buffer]
  const boundary = boundaryOf(`multipart/form-data; ${parameters.toString('latin1')}`)
  // readMultipart refuses these before any reader exists (400).
  if (boundary === undefined || boundary.length === 0 || boundary.length > MAX_BOUNDARY) return
  const whole = read(boundary, body.length === 0 ? [] : [Buffer.from(body)])
  const pieces = read(boundary, chunked(body, seed.reduce((hash, byte) => (hash * 31 + byte) >>> 0, seed.length)))
  if (whole.end !== 'ok' && whole.end === pieces.end) {
    // A refused body's last part is dropped (its consumer aborted), and what of it was handed on
    // depends on where the chunks ended: the bytes that may begin a delimiter are held back until
    // the next chunk says. Only that part's content may differ, one a prefix of the other.
    const [last, lastPiece] = [whole.parts.at(-1), pieces.parts.at(-1)]
    if (last && lastPiece && !last.ended && !lastPiece.ended) {
      const [shorter, longer] = last.content.length <= lastPiece.content.length ? [last, lastPiece] : [lastPiece, last]
      invariant(longer.content.subarray(0, shorter.content.length).equals(shorter.content), 'chunking changed a refused body\'s last part beyond what it holds back')
      last.content = lastPiece.content = shorter.content
    }
  }
  invariant(describe(whole) === describe(pieces), `chunking changed the reading: ${describe(whole)} vs ${describe(pieces)}`)
  for (const part of whole.parts.slice(0, -1)) invariant(part.ended, 'a part before the last was not ended')
  if (whole.end === 'ok') invariant(whole.parts.every((part) => part.ended), 'a body read to its end left a part open')
}
