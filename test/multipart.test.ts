/**
 * src/upload/multipart.ts, hashd's streaming multipart/form-data reader (RFC 7578 over RFC 2046
 * §5.1):
 * - against @fastify/busboy, the independent reference parser: random bodies (random boundaries
 *   from the RFC's bchars, preambles, parts with names, file names and Content-Types in several
 *   spellings, content full of near-delimiters, epilogues) read by both, hashd's cut into random
 *   pieces and fed through consumers that sometimes make it wait, busboy's whole: the same parts,
 *   names, file names and bytes, in order;
 * - hand-written bodies with exact expectations (the RFC's examples, transport padding, preambles,
 *   empty parts, UTF-8 and escaped file names, boundaryOf);
 * - every refusal with its status and detail (400 malformed, 413 limits, 499 a body that closes);
 * - end to end through the real server's POST /api/filehash.
 *
 * The random cases come from a seeded generator (xorshift32): a failure names its seed, and
 * HASHD_MULTIPART_SEED picks another base seed to explore.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { PassThrough, Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { Busboy } from '@fastify/busboy'
import { Problem } from '../src/problem.js'
import { MAX_FORM_PARTS } from '../src/routes/filehash.js'
import { boundaryOf, collect, readMultipart, type MultipartLimits, type PartConsumer, type PartHead } from '../src/upload/multipart.js'
import { whichever } from './helpers/events.js'
import { Random } from './helpers/random.js'
import { sendInPieces } from './helpers/send.js'
import { startServer, type TestServer } from './helpers/server.js'

const BASE_SEED = Number(process.env.HASHD_MULTIPART_SEED ?? 0x7578_2046) >>> 0 || 0x7578_2046

const caseSeed = (index: number): number => (Math.imul(BASE_SEED ^ (index + 1), 0x9e3779b1) >>> 0) || 1

/** Large enough never to be what stops a body. */
const ROOMY: MultipartLimits = { parts: 100, headerBytes: 8192, headerLines: 16, bodyBytes: 1e9, tooLargeDetail: 'x' }

interface ReadPart {
  name: string
  filename?: string
  contentType?: string
  content: Buffer
}

// ---------------------------------------------------------------------------------------------
// Feeding bodies to readMultipart
// ---------------------------------------------------------------------------------------------

/** How a consumer paces the reader: the chance that write, end and onPart each return a promise (resolved after a setImmediate). */
interface Pacing {
  write: number
  end: number
  part: number
}

const NO_WAITS: Pacing = { write: 0, end: 0, part: 0 }
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface ReadOptions {
  limits?: MultipartLimits
  pacing?: Pacing
  /** Seeds the pacing's choices. */
  seed?: number
  /** Readable.from (each piece one chunk, synchronous) or a PassThrough written piece by piece across turns. */
  via?: 'from' | 'passthrough'
}

/**
 * Reads `pieces` (each a chunk of the body, copied so the reader may free it) with readMultipart,
 * recording every part. The consumers check the reader's side of the contract as it goes: no call
 * while a promise the consumer returned is pending, no write after end, end once per part.
 */
async function readPieces(pieces: Buffer[], boundary: string, options: ReadOptions = {}): Promise<ReadPart[]> {
  const random = new Random(options.seed ?? 1)
  const pacing = options.pacing ?? NO_WAITS
  const parts: ReadPart[] = []
  /** A promise this side returned is pending: the reader must not call anything until it settles. */
  let busy = false
  const waitThen = (): Promise<void> => {
    busy = true
    return nextTurn().then(() => { busy = false })
  }
  const onPart = (head: PartHead): PartConsumer | Promise<PartConsumer> => {
    assert.ok(!busy, 'onPart while a consumer\'s promise was pending')
    assert.ok(parts.every((part) => (part as { ended?: boolean }).ended), 'a new part before the last one ended')
    const part: ReadPart & { ended?: boolean, chunks: Buffer[] } = { ...head, content: Buffer.alloc(0), chunks: [] }
    parts.push(part)
    const consumer: PartConsumer = {
      write(bytes) {
        assert.ok(!busy, 'write while a consumer\'s promise was pending')
        assert.ok(!part.ended, 'write after end')
        assert.ok(bytes.length > 0, 'an empty write')
        part.chunks.push(Buffer.from(bytes))
        return random.chance(pacing.write) ? waitThen() : undefined
      },
      end() {
        assert.ok(!busy, 'end while a consumer\'s promise was pending')
        assert.ok(!part.ended, 'end twice')
        part.ended = true
        part.content = Buffer.concat(part.chunks)
        return random.chance(pacing.end) ? waitThen() : undefined
      },
    }
    return random.chance(pacing.part) ? waitThen().then(() => consumer) : consumer
  }
  const copies = pieces.map((piece) => Buffer.from(piece))
  let body: Readable
  if (options.via === 'passthrough') {
    const stream = new PassThrough()
    body = stream
    const writer = new Random((options.seed ?? 1) ^ 0x5a5a5a5a)
    void (async () => {
      for (const piece of copies) {
        if (stream.destroyed) return
        if (!stream.write(piece)) await whichever(stream, 'drain', 'close')
        if (writer.chance(0.2)) await nextTurn()
      }
      stream.end()
    })()
  } else {
    body = Readable.from(copies)
  }
  try {
    await readMultipart(body, boundary, options.limits ?? ROOMY, onPart)
  } finally {
    body.destroy()
  }
  assert.ok(!busy, 'readMultipart resolved while a consumer\'s promise was pending')
  return parts.map((part) => {
    assert.ok((part as { ended?: boolean }).ended, `part ${JSON.stringify(part.name)} never ended`)
    const { name, filename, contentType, content } = part
    return { name, ...(filename !== undefined ? { filename } : {}), ...(contentType !== undefined ? { contentType } : {}), content }
  })
}

const read = (body: Buffer | string, boundary: string, options: ReadOptions = {}): Promise<ReadPart[]> =>
  readPieces([typeof body === 'string' ? Buffer.from(body, 'latin1') : body], boundary, options)

/** The Problem a promise rejects with (failing if it resolves, or rejects with anything else). */
async function refusal(promise: Promise<unknown>): Promise<Problem> {
  try {
    await promise
  } catch (error) {
    assert.ok(error instanceof Problem, `a Problem, not ${String(error)}`)
    return error
  }
  assert.fail('the body was accepted')
}

/** The body cut at every `size` bytes. */
function cutEvery(body: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = []
  for (let at = 0; at < body.length; at += size) pieces.push(body.subarray(at, at + size))
  return pieces
}

// ---------------------------------------------------------------------------------------------
// busboy, the reference
// ---------------------------------------------------------------------------------------------

/**
 * busboy's reading of a whole body: every part as a file (isPartAFile), so each comes as raw
 * bytes; paths in file names kept (preservePath), since hashd's reader returns them as sent.
 */
function busboyParts(contentType: string, body: Buffer): Promise<ReadPart[]> {
  return new Promise((resolve, reject) => {
    const parts: Array<ReadPart & { chunks: Buffer[] }> = []
    const busboy = Busboy({
      headers: { 'content-type': contentType },
      preservePath: true,
      isPartAFile: () => true,
      limits: { headerSize: 64 * 1024, headerPairs: 100 },
    })
    busboy.on('file', (name, stream, filename) => {
      const part: ReadPart & { chunks: Buffer[] } = { name, content: Buffer.alloc(0), chunks: [] }
      if (filename !== undefined) part.filename = filename
      parts.push(part)
      stream.on('data', (chunk: Buffer) => part.chunks.push(chunk))
    })
    busboy.on('error', reject)
    busboy.on('finish', () => resolve(parts.map(({ name, filename, chunks }) => ({ name, ...(filename !== undefined ? { filename } : {}), content: Buffer.concat(chunks) }))))
    busboy.end(body)
  })
}

// ---------------------------------------------------------------------------------------------
// Random bodies
// ---------------------------------------------------------------------------------------------

/** RFC 2046 §5.1.1 bchars: a boundary is 1 to 70 of them, not ending in a space. */
const BCHARS = [..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=? "]
const ALNUM = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789']
const HEX = [...'0123456789abcdef']
const TOKEN_CHARS = [...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-.']
/** Characters of names and file names: quotes, backslashes, separators, spaces and non-ASCII (sent as raw UTF-8). */
const NAME_CHARS = [...TOKEN_CHARS, ...TOKEN_CHARS, ' ', ';', '=', ',', "'", ':', '(', ')', 'é', 'ï', '€', '名', '🙂', '"', '\\', '/']

function randomBoundary(random: Random): string {
  const style = random.int(10)
  if (style === 0) return `${'-'.repeat(24)}${random.text(HEX, 16)}` // curl
  if (style === 1) return `----WebKitFormBoundary${random.text(ALNUM, 16)}` // Chromium, Safari
  const length = style === 2 ? 1 : style === 3 ? 70 : random.chance(0.5) ? random.range(1, 12) : random.range(1, 70)
  const boundary = random.text(BCHARS, length)
  return boundary.endsWith(' ') ? `${boundary.slice(0, -1)}z` : boundary
}

/** The Content-Type a sender would write: the boundary as a token where it is one, else quoted. */
function contentTypeFor(random: Random, boundary: string): string {
  const token = /^[A-Za-z0-9'+_\-.]+$/.test(boundary)
  const value = token && random.chance(0.6) ? boundary : `"${boundary}"`
  return random.pick([`multipart/form-data; boundary=${value}`, `multipart/form-data;boundary=${value}`, `multipart/form-data; charset=utf-8; boundary=${value}`])
}

/**
 * A quoted-string as senders write it: `"` and `\` escaped as quoted-pairs, or (as browsers do) a
 * backslash sent raw where the next character is neither `"` nor `\`; both readers keep those.
 */
function quoted(random: Random, value: string): string {
  let out = '"'
  const chars = [...value]
  chars.forEach((char, index) => {
    const next = chars[index + 1]
    if (char === '"') out += '\\"'
    else if (char === '\\') out += next !== undefined && next !== '"' && next !== '\\' && random.chance(0.5) ? '\\' : '\\\\'
    else out += char
  })
  return `${out}"`
}

interface GeneratedPart {
  name: string
  filename?: string
  contentType?: string
  content: Buffer
  head: string
}

/** A part's header lines (UTF-8, as browsers send names): Content-Disposition in one of several spellings, perhaps a Content-Type and another header. */
function partHeaders(random: Random, name: string, filename: string | undefined, contentType: string | undefined): string {
  const nameToken = /^[A-Za-z0-9_.-]+$/.test(name) && random.chance(0.3)
  const nameParameter = `${random.pick(['name', 'name', 'NAME', 'Name'])}=${nameToken ? name : quoted(random, name)}`
  const parameters = [nameParameter]
  if (filename !== undefined) {
    const fileParameter = `${random.pick(['filename', 'filename', 'FileName'])}=${quoted(random, filename)}`
    if (random.chance(0.2)) parameters.unshift(fileParameter)
    else parameters.push(fileParameter)
  }
  const separator = random.pick(['; ', '; ', ';', ';  ', ';\r\n\t'])
  const disposition = `${random.pick(['Content-Disposition', 'content-disposition', 'CONTENT-DISPOSITION'])}: ${random.pick(['form-data', 'form-data', 'Form-Data'])}${separator}${parameters.join(separator === ';\r\n\t' ? '; ' : separator)}`
  const lines = [disposition]
  if (contentType !== undefined) lines.splice(random.int(2), 0, `${random.pick(['Content-Type', 'content-type'])}: ${contentType}`)
  if (random.chance(0.15)) lines.splice(random.int(lines.length + 1), 0, `X-Extra-${random.int(100)}: ${random.text(TOKEN_CHARS, random.int(30))}`)
  return lines.join('\r\n')
}

/** Bytes that look like the start of a delimiter, or of one spelled wrong. */
function nearDelimiters(random: Random, boundary: string): Buffer {
  const prefix = boundary.slice(0, random.int(boundary.length))
  const wrongLast = boundary.slice(0, -1) + (boundary.endsWith('x') ? 'y' : 'x')
  return Buffer.from(random.pick([
    '\r\n', '\r', '\n', '-', '--', '\r\n-', '\r\n--', `\r\n--${prefix}`, `\r\n--${prefix}`, `--${boundary}`, boundary,
    `\r\n--${wrongLast}`, `\r--${boundary}`, `\n--${boundary}`, `\r\n-${boundary}`, '\r\n\r\n', `\r\r\n--${prefix}`,
  ]), 'latin1')
}

function randomBytes(random: Random, large: boolean): Buffer {
  const length = large ? random.range(10_000, 120_000) : random.pick([random.range(0, 8), random.range(0, 64), random.range(0, 700)])
  return random.bytes(length)
}

/** Content made of random bytes and near-delimiters, in which the delimiter itself never occurs. */
function randomContent(random: Random, boundary: string, large: boolean): Buffer {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1')
  for (let attempt = 0; ; attempt++) {
    const pieces: Buffer[] = []
    for (let count = random.int(7); count > 0; count--) {
      pieces.push(random.chance(0.5) ? nearDelimiters(random, boundary) : randomBytes(random, false))
    }
    if (large) pieces.splice(random.int(pieces.length + 1), 0, randomBytes(random, true))
    const content = Buffer.concat(pieces)
    // With the header block's CRLF before and the next delimiter after, the first delimiter must
    // be that next one: the content neither holds one nor starts one with what surrounds it.
    const framed = Buffer.concat([Buffer.from('\r\n'), content, delimiter])
    if (framed.indexOf(delimiter) === 2 + content.length) return content
    if (attempt > 20) return Buffer.alloc(0)
  }
}

interface GeneratedBody {
  boundary: string
  contentType: string
  body: Buffer
  parts: GeneratedPart[]
  /** A one-line account of the body's shape, for failure messages. */
  shape: string
}

function randomBody(random: Random, large: boolean): GeneratedBody {
  const boundary = randomBoundary(random)
  const contentType = contentTypeFor(random, boundary)
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1')
  const chunks: Buffer[] = []
  const shape: string[] = []

  // The preamble: none, or bytes without the delimiter (not even at the very start).
  if (random.chance(0.5)) {
    for (let attempt = 0; ; attempt++) {
      const preamble = attempt > 20 ? Buffer.alloc(0) : randomContent(random, boundary, false)
      const framed = Buffer.concat([Buffer.from('\r\n'), preamble, delimiter])
      if (framed.indexOf(delimiter) === 2 + preamble.length) {
        chunks.push(preamble, delimiter)
        shape.push(`preamble ${preamble.length}`)
        break
      }
    }
  } else {
    chunks.push(Buffer.from(`--${boundary}`, 'latin1'))
    shape.push('no preamble')
  }

  const parts: GeneratedPart[] = []
  const count = random.range(1, 5)
  const largePart = large ? random.int(count) : -1
  for (let index = 0; index < count; index++) {
    const name = random.chance(0.05) ? '' : random.text(NAME_CHARS, random.range(1, 12))
    const filename = random.chance(0.5) ? (random.chance(0.05) ? '' : random.text(NAME_CHARS, random.range(1, 24))) : undefined
    const type = random.chance(0.4) ? random.pick(['application/octet-stream', 'text/plain; charset=utf-8', 'image/png', 'text/plain;charset=UTF-8']) : undefined
    const content = randomContent(random, boundary, index === largePart)
    const head = partHeaders(random, name, filename, type)
    const part: GeneratedPart = { name, content, head }
    if (filename !== undefined) part.filename = filename
    if (type !== undefined) part.contentType = type
    parts.push(part)
    chunks.push(Buffer.from(`\r\n${head}\r\n\r\n`, 'utf8'), content, delimiter)
    shape.push(`part ${index + 1}: ${JSON.stringify(head)} + ${content.length} bytes`)
  }
  chunks.push(Buffer.from('--'))

  // The epilogue: none, a CRLF, or anything at all (delimiters included: it is ignored), even
  // straight after the close delimiter's "--".
  const epilogue = random.pick([
    Buffer.alloc(0), Buffer.from('\r\n'), random.bytes(random.int(20)),
    Buffer.concat([Buffer.from('\r\n'), randomContent(random, boundary, false)]),
    Buffer.concat([Buffer.from('\r\n'), nearDelimiters(random, boundary), delimiter, Buffer.from('\r\n'), random.bytes(random.int(40))]),
  ])
  chunks.push(epilogue)
  shape.push(`epilogue ${epilogue.length}`)
  return { boundary, contentType, body: Buffer.concat(chunks), parts, shape: shape.join('; ') }
}

type Cut = 'whole' | '1 byte' | 'a few bytes' | 'random sizes' | '64 KiB' | 'around the delimiter\'s length'

function cutBody(random: Random, body: Buffer, boundary: string): { cut: Cut, pieces: Buffer[] } {
  const m = boundary.length + 4
  const cuts: Cut[] = body.length > 30_000 ? ['whole', 'random sizes', '64 KiB', 'around the delimiter\'s length'] : ['whole', '1 byte', 'a few bytes', 'random sizes', '64 KiB', 'around the delimiter\'s length']
  const cut = random.pick(cuts)
  if (cut === 'whole') return { cut, pieces: [body] }
  if (cut === '1 byte') return { cut, pieces: cutEvery(body, 1) }
  if (cut === '64 KiB') return { cut, pieces: cutEvery(body, 65536) }
  const pieces: Buffer[] = []
  for (let at = 0; at < body.length;) {
    const size = cut === 'a few bytes' ? random.range(1, 7)
      : cut === 'random sizes' ? random.pick([random.range(1, 16), random.range(1, 2000), random.range(1, 20_000)])
        : random.pick([m - 2, m - 1, m, m + 1, 2 * m - 1, 1, 2, 8191, 8192, 8193].filter((size) => size > 0))
    pieces.push(body.subarray(at, at + size))
    at += size
  }
  return { cut, pieces }
}

const show = (bytes: Buffer): string => JSON.stringify(bytes.subarray(0, 80).toString('latin1')) + (bytes.length > 80 ? `… (${bytes.length} bytes)` : '')

function assertSameParts(actual: ReadPart[], expected: ReadPart[], label: string, compareTypes: boolean): void {
  assert.equal(actual.length, expected.length, `${label}: ${actual.length} parts, expected ${expected.length}`)
  expected.forEach((want, index) => {
    const got = actual[index] as ReadPart
    assert.equal(got.name, want.name, `${label}: part ${index + 1} name`)
    assert.equal(got.filename, want.filename, `${label}: part ${index + 1} filename`)
    if (compareTypes) assert.equal(got.contentType, want.contentType, `${label}: part ${index + 1} Content-Type`)
    if (!got.content.equals(want.content)) {
      let first = 0
      while (first < got.content.length && got.content[first] === want.content[first]) first++
      assert.fail(`${label}: part ${index + 1} content differs from byte ${first}: ${got.content.length} bytes ${show(got.content.subarray(Math.max(0, first - 10)))}, expected ${want.content.length} bytes ${show(want.content.subarray(Math.max(0, first - 10)))}`)
    }
  })
}

describe('readMultipart against busboy on random bodies', () => {
  const BODIES = 500

  it(`${BODIES} random bodies, each read by busboy whole and by readMultipart cut two ways, with consumers that make it wait`, async () => {
    const cuts = new Map<string, number>()
    for (let index = 0; index < BODIES; index++) {
      const seed = caseSeed(index)
      const random = new Random(seed)
      const generated = randomBody(random, index % 25 === 0)
      const label = `seed ${seed} (body ${index}, HASHD_MULTIPART_SEED=${BASE_SEED}), boundary ${JSON.stringify(generated.boundary)}, ${generated.shape}`
      assert.equal(boundaryOf(generated.contentType), generated.boundary, `${label}: boundaryOf(${JSON.stringify(generated.contentType)})`)

      const reference = await busboyParts(generated.contentType, generated.body)
      // busboy must read what was generated (a check on the generator), and hashd what busboy read.
      assertSameParts(reference, generated.parts, `${label}: busboy against the generated parts`, false)

      for (const via of ['from', 'passthrough'] as const) {
        const { cut, pieces } = cutBody(random, generated.body, generated.boundary)
        cuts.set(cut, (cuts.get(cut) ?? 0) + 1)
        const pacing: Pacing = random.chance(0.3) ? NO_WAITS : { write: random.pick([0.1, 0.5, 1]), end: random.pick([0, 0.5, 1]), part: random.pick([0, 0.5, 1]) }
        const caseLabel = `${label}; cut: ${cut} (${pieces.length} pieces, sizes ${pieces.slice(0, 12).map((piece) => piece.length).join(',')}${pieces.length > 12 ? ',…' : ''}); via ${via}; pacing ${JSON.stringify(pacing)}`
        let parts: ReadPart[]
        try {
          parts = await readPieces(pieces, generated.boundary, { pacing, seed: seed ^ via.length, via })
        } catch (error) {
          assert.fail(`${caseLabel}: readMultipart refused: ${error instanceof Problem ? `${error.status} ${error.detail}` : String(error)}`)
        }
        assertSameParts(parts, reference, `${caseLabel}: readMultipart against busboy`, false)
        assertSameParts(parts, generated.parts, `${caseLabel}: readMultipart against the generated parts`, true)
      }
    }
    // Every way of cutting was used.
    assert.equal(cuts.size, 6, JSON.stringify([...cuts]))
  })
})

// ---------------------------------------------------------------------------------------------
// Hand-written bodies
// ---------------------------------------------------------------------------------------------

/** Text with LF line ends as CRLF, as on the wire. */
const crlf = (text: string): string => text.replace(/\n/g, '\r\n')
const text = (part: ReadPart): string => part.content.toString('utf8')

/** Reads a body whole, in 1-byte pieces and in 3-byte pieces, with waits, and checks all three agree; returns the parts. */
async function readEveryWay(body: Buffer | string, boundary: string): Promise<ReadPart[]> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'latin1') : body
  const whole = await read(bytes, boundary)
  for (const size of [1, 3]) {
    const pieces = await readPieces(cutEvery(bytes, size), boundary, { pacing: { write: 0.5, end: 0.5, part: 0.5 }, seed: size })
    assertSameParts(pieces, whole, `cut every ${size} bytes`, true)
  }
  return whole
}

describe('readMultipart on hand-written bodies', () => {
  it('RFC 7578 §4.5 and §4.7: the charset example, completed with its close delimiter', async () => {
    const body = crlf('--AaB03x\ncontent-disposition: form-data; name="field1"\ncontent-type: text/plain;charset=UTF-8\n'
      + 'content-transfer-encoding: quoted-printable\n\nJoe owes =E2=82=AC100.\n--AaB03x--')
    const parts = await readEveryWay(body, 'AaB03x')
    assert.equal(parts.length, 1)
    assert.equal(parts[0]?.name, 'field1')
    assert.equal(parts[0]?.filename, undefined)
    assert.equal(parts[0]?.contentType, 'text/plain;charset=UTF-8')
    // Content-Transfer-Encoding is not applied (RFC 7578 §4.7: senders must not use it).
    assert.equal(text(parts[0] as ReadPart), 'Joe owes =E2=82=AC100.')
  })

  it('RFC 7578 §4.7 exactly as printed (it stops at a delimiter, with no close delimiter) is refused as cut short', async () => {
    const body = crlf('--AaB03x\ncontent-disposition: form-data; name="field1"\ncontent-type: text/plain;charset=UTF-8\n'
      + 'content-transfer-encoding: quoted-printable\n\nJoe owes =E2=82=AC100.\n--AaB03x')
    const problem = await refusal(read(body, 'AaB03x'))
    assert.equal(problem.status, 400)
    assert.match(problem.detail, /ended before the closing boundary/)
  })

  it('RFC 7578 §4.2 and §4.6: _charset_, a text field and a file', async () => {
    const body = crlf('--AaB03x\ncontent-disposition: form-data; name="_charset_"\n\niso-8859-1\n'
      + '--AaB03x\ncontent-disposition: form-data; name="field1"\ncontent-type: text/plain;charset=windows-1250\n\nJoe owes \x80100.\n'
      + '--AaB03x\nContent-Disposition: form-data; name="files"; filename="file1.txt"\nContent-Type: text/plain\n\n... contents of file1.txt ...\n--AaB03x--\n')
    const parts = await readEveryWay(body, 'AaB03x')
    assert.deepEqual(parts.map((part) => [part.name, part.filename, part.contentType, part.content.toString('latin1')]), [
      ['_charset_', undefined, undefined, 'iso-8859-1'],
      ['field1', undefined, 'text/plain;charset=windows-1250', 'Joe owes \x80100.'],
      ['files', 'file1.txt', 'text/plain', '... contents of file1.txt ...'],
    ])
  })

  it('transport padding (spaces and tabs) after a delimiter and after the close delimiter', async () => {
    const body = '--b \t \r\nContent-Disposition: form-data; name="a"\r\n\r\none\r\n--b\t\r\nContent-Disposition: form-data; name="c"\r\n\r\ntwo\r\n--b--  \t\r\n'
    const parts = await readEveryWay(body, 'b')
    assert.deepEqual(parts.map((part) => [part.name, text(part)]), [['a', 'one'], ['c', 'two']])
  })

  it('the first delimiter at the very start (no preamble, no CRLF before it)', async () => {
    const parts = await readEveryWay('--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue\r\n--xyz--', 'xyz')
    assert.deepEqual(parts.map((part) => [part.name, text(part)]), [['a', 'value']])
  })

  it('a preamble holding the boundary, but never at a line start after CRLF, is skipped', async () => {
    const preamble = 'This is the preamble. --xyz is not a delimiter here,\r\nnor is\n--xyz (a bare LF) nor\r--xyz (a bare CR), nor \r\n-xyz.\r\n'
    const body = `${preamble}\r\n--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\ninside --xyz\r\n--xyz--\r\nepilogue\r\n--xyz\r\nContent-Disposition: form-data; name="ignored"\r\n\r\nx\r\n--xyz--\r\n`
    const parts = await readEveryWay(body, 'xyz')
    assert.deepEqual(parts.map((part) => [part.name, text(part)]), [['a', 'inside --xyz']])
  })

  it('content whose first line starts with the dash-boundary is a delimiter there, and what follows it on the line is refused', async () => {
    // RFC 2046 §5.1.1: the delimiter must not appear "on a line by itself or as the prefix of any
    // line" of a part; after the headers' CRLF CRLF, the second CRLF can be the delimiter's.
    const body = '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\n--xyz inside\r\n--xyz--\r\n'
    const problem = await refusal(readPieces([Buffer.from(body, 'latin1')], 'xyz'))
    assert.equal(problem.status, 400)
    assert.match(problem.detail ?? '', /boundary line/)
  })

  it('an empty file part, an empty field and a part whose content is only CRLFs', async () => {
    const body = '--b\r\nContent-Disposition: form-data; name="file"; filename="empty.bin"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n'
      + '--b\r\nContent-Disposition: form-data; name="field"\r\n\r\n\r\n'
      + '--b\r\nContent-Disposition: form-data; name="lines"\r\n\r\n\r\n\r\n\r\n--b--'
    const parts = await readEveryWay(body, 'b')
    assert.deepEqual(parts.map((part) => [part.name, part.filename, part.content.toString('latin1')]), [
      ['file', 'empty.bin', ''], ['field', undefined, ''], ['lines', undefined, '\r\n\r\n'],
    ])
  })

  it('content that ends in CR, in CRLF, or in a prefix of the delimiter keeps those bytes', async () => {
    for (const ending of ['\r', '\r\n', '\r\n-', '\r\n--', '\r\n--bound', '\r\r\n', '\r\n--boundarx']) {
      const body = Buffer.from(`--boundary\r\nContent-Disposition: form-data; name="a"\r\n\r\ndata${ending}\r\n--boundary--`, 'latin1')
      const parts = await readEveryWay(body, 'boundary')
      assert.equal(parts[0]?.content.toString('latin1'), `data${ending}`, JSON.stringify(ending))
    }
  })

  it('a UTF-8 file name sent as raw bytes comes back as the same string', async () => {
    const filename = 'naïve €.txt'
    const body = Buffer.concat([
      Buffer.from('--b\r\nContent-Disposition: form-data; name="file"; filename="'),
      Buffer.from(filename, 'utf8'),
      Buffer.from('"\r\n\r\nabc\r\n--b--'),
    ])
    const parts = await readEveryWay(body, 'b')
    assert.equal(parts[0]?.filename, filename)
    const name = await read(Buffer.concat([Buffer.from('--b\r\nContent-Disposition: form-data; name="'), Buffer.from('名前', 'utf8'), Buffer.from('"\r\n\r\nv\r\n--b--')]), 'b')
    assert.equal(name[0]?.name, '名前', 'a UTF-8 field name too')
  })

  it('quoted-pair escapes in a file name: \\" is a quote and \\\\ a backslash', async () => {
    const parts = await read('--b\r\nContent-Disposition: form-data; name="f"; filename="say \\"hi\\" \\\\o/.txt"\r\n\r\nx\r\n--b--', 'b')
    assert.equal(parts[0]?.filename, 'say "hi" \\o/.txt')
    // A name and a file name as tokens (unquoted), and extra spaces around the parameters.
    const tokens = await read('--b\r\nContent-Disposition: form-data ;  name=alpha ; filename=a.txt\r\n\r\nx\r\n--b--', 'b')
    assert.deepEqual([tokens[0]?.name, tokens[0]?.filename], ['alpha', 'a.txt'])
  })

  it('a raw backslash before another character is kept, as browsers send Windows paths (C:\\dir\\a.bin)', async () => {
    const parts = await read('--b\r\nContent-Disposition: form-data; name="f"; filename="C:\\dir\\a.bin"\r\n\r\nx\r\n--b--', 'b')
    assert.equal(parts[0]?.filename, 'C:\\dir\\a.bin')
    const reference = await busboyParts('multipart/form-data; boundary=b', Buffer.from('--b\r\nContent-Disposition: form-data; name="f"; filename="C:\\dir\\a.bin"\r\n\r\nx\r\n--b--'))
    assert.equal(reference[0]?.filename, 'C:\\dir\\a.bin', 'busboy reads it the same way')
  })

  it('filename* (RFC 8187) in UTF-8 is decoded, and wins over filename', async () => {
    const parts = await read('--b\r\nContent-Disposition: form-data; name="f"; filename="naive.txt"; filename*=UTF-8\'\'na%C3%AFve%20%E2%82%AC.txt\r\n\r\nx\r\n--b--', 'b')
    assert.equal(parts[0]?.filename, 'naïve €.txt')
  })

  it('an obsolete folded header line continues the one before', async () => {
    const parts = await read('--b\r\nContent-Disposition: form-data;\r\n name="folded";\r\n\tfilename="f.txt"\r\n\r\nx\r\n--b--', 'b')
    assert.deepEqual([parts[0]?.name, parts[0]?.filename], ['folded', 'f.txt'])
  })

  it('a part with headers and no body (its header block\'s last CRLF is the next delimiter\'s) ends at that delimiter', async () => {
    // RFC 2046 §5.1.1: body-part := MIME-part-headers [CRLF *OCTET]. Part "a" is a header line
    // and its CRLF, with no body; the next CRLF is the delimiter's. (busboy skips "a": its header
    // block never ends for it.)
    const body = '--b0\r\nContent-Disposition: form-data; name="a"\r\n\r\n--b0\r\nContent-Disposition: form-data; name="c"\r\n\r\nxyz\r\n--b0--\r\n'
    const parts = await readEveryWay(body, 'b0')
    assert.deepEqual(parts.map((part) => [part.name, text(part)]), [['a', ''], ['c', 'xyz']])
  })
})

describe('boundaryOf', () => {
  it('reads a token or a quoted string, with any case of the parameter name, and nothing else', () => {
    assert.equal(boundaryOf('multipart/form-data; boundary=AaB03x'), 'AaB03x')
    assert.equal(boundaryOf('multipart/form-data;boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW'), '----WebKitFormBoundary7MA4YWxkTrZu0gW')
    assert.equal(boundaryOf('multipart/form-data; boundary="simple boundary"'), 'simple boundary')
    assert.equal(boundaryOf('multipart/form-data; boundary="a:b=c?(d)/e,f"; charset=utf-8'), 'a:b=c?(d)/e,f')
    assert.equal(boundaryOf('multipart/form-data; boundary="q\\"uo\\\\te"'), 'q"uo\\te')
    assert.equal(boundaryOf('multipart/form-data; BOUNDARY=upper'), 'upper')
    assert.equal(boundaryOf('multipart/form-data; Boundary = "spaced" '), 'spaced')
    assert.equal(boundaryOf('multipart/form-data; charset=utf-8; boundary=last'), 'last')
    assert.equal(boundaryOf('multipart/form-data; boundary=token; charset=utf-8'), 'token')
    assert.equal(boundaryOf('multipart/form-data; boundary=""'), '')
    assert.equal(boundaryOf('multipart/form-data'), undefined)
    assert.equal(boundaryOf('multipart/form-data; xboundary=no'), undefined)
    assert.equal(boundaryOf(undefined), undefined)
  })
})

// ---------------------------------------------------------------------------------------------
// Refusals
// ---------------------------------------------------------------------------------------------

const FIELD = (name: string, value: string, boundary = 'b'): string => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`

describe('readMultipart refusals', () => {
  it('a body that ends before its close delimiter: 400, and the open part is aborted', async () => {
    for (const body of [
      '', 'just a preamble', '--b', '--b\r\n', '--b\r\nContent-Disposition: form-data; name="a"', '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\npartial',
      `${FIELD('a', 'v')}--b`, `${FIELD('a', 'v')}--b-`, `${FIELD('a', 'v')}--b\r\n`, `${FIELD('a', 'v').slice(0, -2)}`,
    ]) {
      for (const size of [1, 1000]) {
        let aborted = 0
        const problem = await refusal(readMultipart(Readable.from(cutEvery(Buffer.from(body), size)), 'b', ROOMY, () => ({
          write: () => undefined, end: () => undefined, abort: () => { aborted++ },
        })))
        assert.equal(problem.status, 400, JSON.stringify(body))
        assert.match(problem.detail, /ended before the closing boundary/, JSON.stringify(body))
        if (body.endsWith('partial')) assert.equal(aborted, 1, 'the part being read is aborted')
      }
    }
  })

  it('a part without Content-Disposition: 400', async () => {
    for (const body of ['--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--', '--b\r\n\r\nx\r\n--b--']) {
      const problem = await refusal(read(body, 'b'))
      assert.equal(problem.status, 400)
      assert.match(problem.detail, /no Content-Disposition/)
    }
  })

  it('a Content-Disposition that is not form-data, or has no name, or cannot be read: 400', async () => {
    for (const disposition of ['attachment; name="a"', 'inline', 'form-data', 'form-data; filename="a.txt"', 'form-datax; name="a"']) {
      const problem = await refusal(read(`--b\r\nContent-Disposition: ${disposition}\r\n\r\nx\r\n--b--`, 'b'))
      assert.equal(problem.status, 400, disposition)
      assert.match(problem.detail, /Content-Disposition is not form-data with a name|Content-Disposition cannot be read/, disposition)
    }
    for (const disposition of ['form-data; name="unterminated', 'form-data; name="a"; name="b"', 'form-data; name="a" junk']) {
      const problem = await refusal(read(`--b\r\nContent-Disposition: ${disposition}\r\n\r\nx\r\n--b--`, 'b'))
      assert.equal(problem.status, 400, disposition)
      assert.match(problem.detail, /Content-Disposition/, disposition)
    }
  })

  it('a header line without a colon, or with nothing before it: 400', async () => {
    for (const line of ['No colon here', ': no name']) {
      const problem = await refusal(read(`--b\r\nContent-Disposition: form-data; name="a"\r\n${line}\r\n\r\nx\r\n--b--`, 'b'))
      assert.equal(problem.status, 400, line)
      assert.match(problem.detail, /header line has no name/, line)
    }
  })

  it('text other than whitespace after a delimiter: 400', async () => {
    for (const after of ['x', ' x', '-x', '\rx', '\t\r\r\n', ' '.repeat(300)]) {
      const problem = await refusal(read(`--b${after}\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--b--`, 'b'))
      assert.equal(problem.status, 400, JSON.stringify(after))
      assert.match(problem.detail, /more after the boundary than whitespace/, JSON.stringify(after))
    }
    // A boundary that is a prefix of the one on the line: the rest is text after the delimiter.
    const longer = await refusal(read('--bb\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--b--', 'b'))
    assert.equal(longer.status, 400)
  })

  it('part headers over headerBytes: 413; at headerBytes, accepted', async () => {
    const limits = { ...ROOMY, headerBytes: 200 }
    const disposition = 'Content-Disposition: form-data; name="a"'
    const withHeaders = (bytes: number) => `--b\r\n${disposition}\r\nX-Pad: ${'p'.repeat(bytes - disposition.length - 2 - 'X-Pad: '.length)}\r\n\r\nv\r\n--b--`
    assert.equal((await read(withHeaders(200), 'b', { limits }))[0]?.name, 'a')
    for (const bytes of [201, 210, 5000]) {
      const problem = await refusal(read(withHeaders(bytes), 'b', { limits }))
      assert.equal(problem.status, 413, String(bytes))
      assert.match(problem.detail, /headers are larger than 200 bytes/)
    }
    // A header block that never ends is refused once past the limit, not read to the body's end.
    const endless = await refusal(readPieces([Buffer.from(`--b\r\n${disposition}\r\nX-Pad: `), Buffer.alloc(1 << 20, 0x70)], 'b', { limits }))
    assert.equal(endless.status, 413)
  })

  it('part headers of exactly headerBytes are accepted however the body is cut', async () => {
    const limits = { ...ROOMY, headerBytes: 200 }
    const disposition = 'Content-Disposition: form-data; name="a"'
    const body = `--b\r\n${disposition}\r\nX-Pad: ${'p'.repeat(200 - disposition.length - 2 - 'X-Pad: '.length)}\r\n\r\nv\r\n--b--`
    for (const size of [1, 2, 3, 7]) {
      const parts = await readPieces(cutEvery(Buffer.from(body), size), 'b', { limits })
      assert.equal(parts[0]?.name, 'a', `cut every ${size} bytes`)
    }
  })

  it('more header lines than headerLines: 413; exactly headerLines, accepted', async () => {
    const limits = { ...ROOMY, headerLines: 4 }
    const withLines = (count: number) => `--b\r\nContent-Disposition: form-data; name="a"\r\n${Array.from({ length: count - 1 }, (_, index) => `X-${index}: v`).join('\r\n')}\r\n\r\nv\r\n--b--`
    assert.equal((await read(withLines(4), 'b', { limits })).length, 1)
    const problem = await refusal(read(withLines(5), 'b', { limits }))
    assert.equal(problem.status, 413)
    assert.match(problem.detail, /more than 4 header lines/)
  })

  it('more parts than parts: 413; exactly parts, accepted', async () => {
    const limits = { ...ROOMY, parts: 3 }
    const withParts = (count: number) => `${Array.from({ length: count }, (_, index) => FIELD(`f${index}`, 'v')).join('')}--b--`
    assert.equal((await read(withParts(3), 'b', { limits })).length, 3)
    const problem = await refusal(read(withParts(4), 'b', { limits }))
    assert.equal(problem.status, 413)
    assert.match(problem.detail, /more than 3 parts/)
  })

  it('body bytes over bodyBytes: 413 with tooLargeDetail; exactly bodyBytes, accepted', async () => {
    const body = Buffer.from(`${FIELD('a', 'x'.repeat(1000))}--b--`)
    const at = { ...ROOMY, bodyBytes: body.length, tooLargeDetail: 'The file is larger than MAX_FILE_SIZE (test)' }
    assert.equal((await readPieces(cutEvery(body, 100), 'b', { limits: at })).length, 1)
    const over = { ...at, bodyBytes: body.length - 1 }
    for (const size of [1, 100, body.length]) {
      const problem = await refusal(readPieces(cutEvery(body, size), 'b', { limits: over }))
      assert.equal(problem.status, 413)
      assert.equal(problem.detail, 'The file is larger than MAX_FILE_SIZE (test)')
    }
    // The epilogue counts too.
    const problem = await refusal(read(Buffer.concat([body, Buffer.from('\r\nepilogue')]), 'b', { limits: at }))
    assert.equal(problem.status, 413)
  })

  it('collect: at maxBytes the value arrives whole; one byte more is its 413', async () => {
    const values: string[] = []
    const tooLarge = () => new Problem(413, 'about:blank', 'Content Too Large', 'field too large')
    await readMultipart(Readable.from(cutEvery(Buffer.from(`${FIELD('a', 'x'.repeat(10))}--b--`), 3)), 'b', ROOMY,
      () => collect(10, tooLarge, (bytes) => { values.push(bytes.toString()) }))
    assert.deepEqual(values, ['x'.repeat(10)])
    const problem = await refusal(readMultipart(Readable.from([Buffer.from(`${FIELD('a', 'x'.repeat(11))}--b--`)]), 'b', ROOMY,
      () => collect(10, tooLarge, () => assert.fail('completed'))))
    assert.equal(problem.status, 413)
    assert.equal(problem.detail, 'field too large')
    // An asynchronous onComplete is waited for.
    let completed = false
    await readMultipart(Readable.from([Buffer.from(`${FIELD('a', 'v')}--b--`)]), 'b', ROOMY,
      () => collect(10, tooLarge, async () => { await nextTurn(); completed = true }))
    assert.ok(completed)
  })

  it('an error from a consumer\'s write, end or onPart (thrown or rejected) reaches the caller', async () => {
    const body = Buffer.from(`${FIELD('a', 'value')}--b--`)
    const failure = new Error('the consumer failed')
    const consumers: Array<[string, () => PartConsumer | Promise<PartConsumer>]> = [
      ['write throws', () => ({ write: () => { throw failure }, end: () => undefined })],
      ['write rejects', () => ({ write: () => Promise.reject(failure), end: () => undefined })],
      ['end throws', () => ({ write: () => undefined, end: () => { throw failure } })],
      ['end rejects', () => ({ write: () => undefined, end: () => nextTurn().then(() => { throw failure }) })],
      ['onPart throws', () => { throw failure }],
      ['onPart rejects', () => Promise.reject(failure)],
    ]
    for (const [label, onPart] of consumers) {
      for (const size of [1, body.length]) {
        await assert.rejects(readMultipart(Readable.from(cutEvery(body, size)), 'b', ROOMY, onPart), (error) => error === failure, label)
      }
    }
  })

  it('an empty or 71-character boundary: 400 before reading; 70 characters, accepted', async () => {
    for (const boundary of ['', 'b'.repeat(71)]) {
      const problem = await refusal(read('--b--', boundary))
      assert.equal(problem.status, 400)
      assert.match(problem.detail, /boundary must be 1 to 70 characters/)
    }
    const boundary = 'b'.repeat(70)
    assert.equal((await read(`${FIELD('a', 'v', boundary)}--${boundary}--`, boundary)).length, 1)
  })

  it('a body that closes without ending (the client went away): 499, and the open part is aborted', async () => {
    const stream = new PassThrough()
    let aborted = 0
    const reading = readMultipart(stream, 'b', ROOMY, () => ({ write: () => undefined, end: () => undefined, abort: () => { aborted++ } }))
    stream.write('--b\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\nsome of the file')
    await nextTurn()
    stream.destroy()
    const problem = await refusal(reading)
    assert.equal(problem.status, 499)
    assert.equal(aborted, 1)
    // A reset socket (ECONNRESET) is the same; any other stream error is passed on as it is.
    const reset = new PassThrough()
    const resetReading = readMultipart(reset, 'b', ROOMY, () => ({ write: () => undefined, end: () => undefined }))
    reset.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    assert.equal((await refusal(resetReading)).status, 499)
    const broken = new PassThrough()
    const failure = new Error('disk on fire')
    const brokenReading = readMultipart(broken, 'b', ROOMY, () => ({ write: () => undefined, end: () => undefined }))
    broken.destroy(failure)
    await assert.rejects(brokenReading, (error) => error === failure)
  })
})

// ---------------------------------------------------------------------------------------------
// End to end: POST /api/filehash
// ---------------------------------------------------------------------------------------------

interface Answer {
  status: number
  type: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any
}

/**
 * Sends a multipart body over node:http, one write per piece, chunked (no Content-Length) or with
 * a Content-Length: chunked, each write is its own HTTP chunk, so the server's body arrives in
 * exactly these pieces however TCP groups them.
 */
async function send(url: string, boundary: string, pieces: Buffer[], framing: 'chunked' | 'length'): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  if (framing === 'length') headers['content-length'] = String(pieces.reduce((sum, piece) => sum + piece.length, 0))
  const { status, type, text } = await sendInPieces(`${url}/api/filehash`, 'POST', headers, pieces)
  let body: unknown = text
  try { body = JSON.parse(text) } catch { /* not JSON */ }
  return { status, type, body }
}

const fileForm = (boundary: string, file: Buffer, options: { fields?: Array<[string, string]>, filename?: string, extraHeaders?: string } = {}): Buffer => Buffer.concat([
  Buffer.from((options.fields ?? []).map(([name, value]) => FIELD(name, value, boundary)).join('')),
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.filename ?? 'upload.bin'}"\r\n${options.extraHeaders ?? ''}Content-Type: application/octet-stream\r\n\r\n`),
  file,
  Buffer.from(`\r\n--${boundary}--\r\n`),
])

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')
const md5 = (bytes: Uint8Array): string => createHash('md5').update(bytes).digest('hex')

function assertProblem(answer: Answer, status: number, detail: RegExp): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body))
  assert.match(answer.type, /^application\/problem\+json/)
  assert.equal(answer.body.status, status)
  assert.match(answer.body.detail, detail)
}

describe('POST /api/filehash through the real server', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('a body sent in 1-byte chunks, its file full of near-delimiters, still hashes right', async () => {
    const boundary = 'hashd-e2e-7f3a'
    const random = new Random(caseSeed(9999))
    const file = Buffer.concat(Array.from({ length: 40 }, () => random.chance(0.5) ? nearDelimiters(random, boundary) : random.bytes(random.int(40))))
    assert.equal(file.indexOf(`\r\n--${boundary}`), -1)
    const body = fileForm(boundary, file, { fields: [['algorithms', 'sha256,md5']], filename: 'near.bin' })
    const answer = await send(server.url, boundary, cutEvery(body, 1), 'chunked')
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    assert.equal(answer.body.name, 'near.bin')
    assert.equal(answer.body.size, file.length)
    assert.equal(answer.body.hashes.sha256, sha256(file))
    assert.equal(answer.body.hashes.md5, md5(file))
  })

  it('a larger file in uneven pieces (around the delimiter\'s length and 8 KiB), with a Content-Length', async () => {
    const boundary = '----WebKitFormBoundaryq1w2e3r4t5y6u7i8'
    const random = new Random(caseSeed(4242))
    const file = Buffer.concat([random.bytes(300_000), Buffer.from(`\r\n--${boundary.slice(0, -1)}`), random.bytes(1000)])
    const body = fileForm(boundary, file)
    const pieces: Buffer[] = []
    for (let at = 0; at < body.length;) {
      const size = random.pick([1, boundary.length + 3, boundary.length + 4, 8191, 8192, 65536, random.range(1, 30_000)])
      pieces.push(body.subarray(at, at + size))
      at += size
    }
    const answer = await send(server.url, boundary, pieces, 'length')
    assert.equal(answer.status, 200, JSON.stringify(answer.body))
    assert.equal(answer.body.size, file.length)
    assert.equal(answer.body.hashes.sha256, sha256(file))
  })

  it('a truncated body: 400 problem+json, "ended before the closing boundary"', async () => {
    const boundary = 'cut-short'
    const body = fileForm(boundary, Buffer.from('hello world'))
    for (const end of [body.length - 3, body.length - 20, 60]) {
      const answer = await send(server.url, boundary, [body.subarray(0, end)], 'length')
      assertProblem(answer, 400, /ended before the closing boundary/)
    }
  })

  it('a part header block over 8 KiB: 413', async () => {
    const boundary = 'big-headers'
    const body = fileForm(boundary, Buffer.from('x'), { extraHeaders: `X-Padding: ${'p'.repeat(9000)}\r\n` })
    assertProblem(await send(server.url, boundary, [body], 'length'), 413, /headers are larger than 8192 bytes/)
  })

  it(`${MAX_FORM_PARTS + 1} parts: 413 (${MAX_FORM_PARTS} are allowed)`, async () => {
    const boundary = 'many-parts'
    const fields = (count: number) => Array.from({ length: count }, (): [string, string] => ['encoding', 'hex'])
    const most = fileForm(boundary, Buffer.from('abc'), { fields: fields(MAX_FORM_PARTS - 1) })
    const ok = await send(server.url, boundary, [most], 'length')
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(ok.body.hashes.sha256, sha256(Buffer.from('abc')))
    const oneMore = fileForm(boundary, Buffer.from('abc'), { fields: fields(MAX_FORM_PARTS) })
    assertProblem(await send(server.url, boundary, [oneMore], 'length'), 413, new RegExp(`more than ${MAX_FORM_PARTS} parts`))
  })

  it('a field over 4096 bytes: 413', async () => {
    const boundary = 'long-field'
    const body = fileForm(boundary, Buffer.from('abc'), { fields: [['expected', 'a'.repeat(4097)]] })
    assertProblem(await send(server.url, boundary, cutEvery(body, 1000), 'length'), 413, /"expected" field is larger than 4096 bytes/)
  })

  it('a file name with a path echoes only its last segment', async () => {
    const boundary = 'paths'
    // As sent on the wire: a relative path, a Windows path with raw backslashes (as browsers send
    // them), and the same with the backslashes escaped as quoted-pairs.
    for (const filename of ['../x/a.bin', 'C:\\dir\\a.bin', 'C:\\\\dir\\\\a.bin']) {
      const answer = await send(server.url, boundary, [fileForm(boundary, Buffer.from('abc'), { filename })], 'length')
      assert.equal(answer.status, 200, JSON.stringify(answer.body))
      assert.equal(answer.body.name, 'a.bin', filename)
    }
  })
})
