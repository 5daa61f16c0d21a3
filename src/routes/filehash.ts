/**
 * POST /api/filehash: an upload streamed through every requested hasher (src/upload/ is the
 * pipeline). Two forms:
 * - multipart/form-data, the form the spec names: the text fields (`algorithms`, `encoding`) must
 *   come before the `file` part, because hashing starts with the file's first byte; they may also
 *   be given in the query string;
 * - the raw body: `Content-Type: application/octet-stream`, the body is the file, and
 *   `algorithms`, `encoding` and `name` are in the query string. PUT takes the same raw form, with
 *   or without a Content-Type, since `curl -T file URL` sends PUT and no Content-Type.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { OUTPUT_ENCODINGS, type OutputEncoding } from '../domain/encoding.js'
import { MAX_FILE_ALGORITHMS, parseAlgorithmList } from '../domain/filehash.js'
import { MAX_EXPECTED_LENGTH, matchExpected, parseExpected, type ExpectedDigest } from '../domain/expected.js'
import { countHashedBytes } from '../observe.js'
import { problems } from '../problem.js'
import { encodeDigests } from '../upload/encode.js'
import { boundaryOf, collect, isFormData, MAX_BOUNDARY, readMultipart, type PartConsumer, type PartHead } from '../upload/multipart.js'
import { chooseSink, hashUpload } from '../upload/pipeline.js'
import { HashThreads } from '../upload/threads.js'
import { AlgorithmList, documentView, errorResponsesWith, OutputEncoding as OutputEncodingSchema } from './schemas.js'

/** The form's text fields, each at most MAX_FIELD_BYTES. */
const FORM_FIELDS = ['algorithms', 'encoding', 'expected'] as const
const MAX_FIELD_BYTES = 4096
/** A part's header block: a Content-Disposition with a long file name, a Content-Type. */
const MAX_PART_HEADER_BYTES = 8 * 1024

/** Room for the multipart envelope (boundaries, part headers, the text fields) around the file. */
const ENVELOPE_BYTES = 64 * 1024

export const fileHashRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          algorithms: { ...documentView(AlgorithmList('filehash', MAX_FILE_ALGORITHMS)) as object, description: `${AlgorithmList('filehash', MAX_FILE_ALGORITHMS).description} Send before the file part.` },
          encoding: { type: 'string', enum: [...OUTPUT_ENCODINGS], default: 'hex', description: 'Send before the file part; lowercase as written.' },
          expected: { type: 'string', minLength: 1, maxLength: MAX_EXPECTED_LENGTH, pattern: '\\S', description: 'Optional checksum to compare against every digest, in constant time: hex (any case), base64 or base64url, or one line of a checksum file (`<hex>  <name>` as in SHA256SUMS, or `SHA256 (<name>) = <hex>`; the name is ignored). The response then has `matches`, and a warning when the checksum\'s length fits none of the requested algorithms. Send before the file part.' },
          file: { type: 'string', format: 'binary', description: 'Exactly one file, at most MAX_FILE_SIZE bytes' },
        },
        // The form takes these fields and no others: any other field or file part is 400 with its pointer.
        additionalProperties: false,
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
    'application/octet-stream': {
      schema: { type: 'string', format: 'binary', description: 'The file itself, at most MAX_FILE_SIZE bytes; algorithms, encoding and name go in the query string' },
    },
  },
}

/** PUT /api/filehash: the raw form only (what `curl -T` sends, with or without a Content-Type). */
export const fileHashPutBody = {
  required: true,
  content: { 'application/octet-stream': fileHashRequestBody.content['application/octet-stream'] },
}

const Query = Type.Object({
  algorithms: Type.Optional(AlgorithmList('filehash', MAX_FILE_ALGORITHMS)),
  encoding: Type.Optional(OutputEncodingSchema),
  name: Type.Optional(Type.String({ maxLength: 255, description: 'The file name to echo back, for the raw-body form' })),
  expected: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_EXPECTED_LENGTH, pattern: '\\S', description: 'A checksum to compare against every digest; see the form field' })),
}, { additionalProperties: false })

type FileHashQuery = { algorithms?: string, encoding?: OutputEncoding, name?: string, expected?: string }
interface FileHashResult { name: string, size: number, hashes: Record<string, string>, matches?: Record<string, boolean>, warnings?: string[] }

const expectedFromQuery = (query: FileHashQuery): ExpectedDigest | undefined =>
  query.expected === undefined ? undefined : parseExpected(query.expected, '/querystring/expected')

/** The response: digests in the asked encoding, `matches` when a checksum was expected, bytes counted for metrics. */
function answer(name: string, size: number, hashes: Record<string, string>, encoding: OutputEncoding, expected: ExpectedDigest | undefined): FileHashResult {
  for (const algorithm of Object.keys(hashes)) countHashedBytes('filehash', algorithm, size)
  if (!expected) return { name, size, hashes }
  const warning = lengthWarning(expected, hashes, encoding)
  return { name, size, hashes, matches: matchExpected(expected, hashes, encoding), ...(warning ? { warnings: [warning] } : {}) }
}

/**
 * A checksum whose length fits none of the requested digests can never match: every `matches`
 * entry is false because of its length, not its bytes, which the client should be told (a pasted
 * SHA-512 against the default sha256, say). Lengths are public; this does not weaken the
 * constant-time comparison.
 */
function lengthWarning(expected: ExpectedDigest, hashes: Record<string, string>, encoding: OutputEncoding): string | null {
  const digestLengths = Object.entries(hashes).map(([algorithm, digest]) => {
    const bytes = Buffer.from(digest, encoding)
    return [algorithm, bytes.toString(encoding) === digest ? bytes.length : null] as const
  })
  const fits = digestLengths.some(([, length]) => length === null || expected.readings.some((reading) => reading.length === length))
  if (fits) return null
  // The first reading is the one the text is read as (hex where it is hex); the others are fallbacks.
  const length = expected.readings[0]?.length ?? 0
  return `expected is a ${length}-byte digest, and no requested digest has that length (${digestLengths.map(([algorithm, bytes]) => `${algorithm}: ${bytes}`).join(', ')}), so none can match; add the algorithm that made it to algorithms`
}

/**
 * The name without any directory a client put before it (`C:\Users\me\a.iso` from old
 * browsers, `../a.iso`): the last segment after / or \, as busboy and so @fastify/multipart gave it.
 */
function withoutPath(filename: string): string {
  const name = filename.slice(Math.max(filename.lastIndexOf('/'), filename.lastIndexOf('\\')) + 1)
  return name === '.' || name === '..' ? '' : name
}

const isMultipart = (request: FastifyRequest): boolean => isFormData(request.headers['content-type'])

function declaredLength(request: FastifyRequest): number | undefined {
  const declared = Number(request.headers['content-length'] ?? NaN)
  return Number.isFinite(declared) ? declared : undefined
}

function readEncoding(value: string): OutputEncoding {
  if (!(OUTPUT_ENCODINGS as readonly string[]).includes(value)) {
    throw problems.validation(`encoding must be one of ${OUTPUT_ENCODINGS.join(', ')}`, [{ pointer: '/body/encoding', message: `must be one of ${OUTPUT_ENCODINGS.join(', ')}` }])
  }
  return value as OutputEncoding
}

export const fileHashRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  // Both forms: the body is left unread here and streamed by the handler (the form read by
  // upload/multipart.ts). Only this route's context has the parser, and its media-type check
  // (plugins/body.ts) runs first.
  app.addContentTypeParser('*', (_request, _payload, done) => { done(null, undefined) })
  const threads = new HashThreads()
  app.addHook('onClose', async () => { await threads.close() })

  const tooLarge = `The file is larger than MAX_FILE_SIZE (${config.maxFileSize} bytes)`

  /** The raw form: the request body is the file. */
  async function hashRaw(request: FastifyRequest<{ Querystring: FileHashQuery }>): Promise<FileHashResult> {
    const algorithms = parseAlgorithmList(request.query.algorithms, '/querystring/algorithms')
    const expected = expectedFromQuery(request.query)
    const encoding = request.query.encoding ?? 'hex'
    const { size, digests } = await hashUpload(request.raw, algorithms, {
      maxBytes: config.maxFileSize, tooLargeDetail: tooLarge, expectedBytes: declaredLength(request), threads,
      // Only chunks that are wholly their buffer, which hold this body's bytes alone (release.ts).
      release: true,
    })
    return answer(request.query.name ?? '', size, encodeDigests(algorithms, digests, encoding), encoding, expected)
  }

  /** The multipart form: text fields, then exactly one file part, hashed as it arrives. */
  async function hashForm(request: FastifyRequest<{ Querystring: FileHashQuery }>): Promise<FileHashResult> {
    let algorithmList = request.query.algorithms
    let algorithmPointer = '/querystring/algorithms'
    let encoding: OutputEncoding = request.query.encoding ?? 'hex'
    let expected = expectedFromQuery(request.query)
    let fileSeen = false
    let result: FileHashResult | undefined
    // Called when a field ends: before any file part begins, which the check at each part's start makes sure of.
    const setField = (name: string, value: string): void => {
      if (name === 'algorithms') {
        algorithmList = value
        algorithmPointer = '/body/algorithms'
      } else if (name === 'encoding') encoding = readEncoding(value)
      else if (name === 'expected') expected = parseExpected(value)
    }
    const filePart = async (head: PartHead): Promise<PartConsumer> => {
      if (head.name !== 'file') {
        throw problems.validation(`The file part must be named "file", not "${head.name.slice(0, 64)}"`,
          [{ pointer: `/body/${head.name.slice(0, 64)}`, message: 'unknown file part; the file part is named "file"' }])
      }
      if (fileSeen) throw problems.validation('Send exactly one file part')
      fileSeen = true
      const algorithms = parseAlgorithmList(algorithmList, algorithmPointer)
      const sink = await chooseSink(algorithms, { expectedBytes: declaredLength(request), threads })
      const filename = withoutPath(head.filename ?? '')
      let size = 0
      return {
        write(bytes) {
          size += bytes.length
          if (size > config.maxFileSize) throw problems.tooLarge(tooLarge)
          return sink.write(bytes)
        },
        end() {
          return sink.finish().then((digests) => {
            result = answer(filename, size, encodeDigests(algorithms, digests, encoding), encoding, expected)
          })
        },
        abort: () => sink.abort(),
      }
    }
    await readMultipart(request.raw, boundaryOf(request.headers['content-type']) ?? '', {
      parts: 6, headerBytes: MAX_PART_HEADER_BYTES, headerLines: 16,
      bodyBytes: config.maxFileSize + ENVELOPE_BYTES, tooLargeDetail: tooLarge,
    }, (head) => {
      if (head.filename !== undefined) return filePart(head)
      if (!(FORM_FIELDS as readonly string[]).includes(head.name)) {
        throw problems.validation(`Unknown field "${head.name.slice(0, 64)}"; the form takes file, algorithms, encoding and expected`, [{ pointer: `/body/${head.name.slice(0, 64)}`, message: 'unknown property' }])
      }
      if (fileSeen) throw problems.validation(`Send the "${head.name}" field before the file part: hashing starts with the file's first byte`)
      return collect(MAX_FIELD_BYTES, () => problems.tooLarge(`The "${head.name}" field is larger than ${MAX_FIELD_BYTES} bytes`),
        (value) => setField(head.name, value.toString('utf8')))
    })
    if (!result) throw problems.validation('The form has no "file" part', [{ pointer: '/body/file', message: 'required' }])
    return result
  }

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FileHashResult> => {
    const withQuery = request as FastifyRequest<{ Querystring: FileHashQuery }>
    try {
      return await (isMultipart(request) ? hashForm(withQuery) : hashRaw(withQuery))
    } catch (error) {
      // Refused before the body was read to its end (a limit cut, a bad field): close the connection
      // after the answer rather than have Node read and discard the rest of a large upload (it lingers
      // for a few seconds so the client reads the answer: src/lingering-close.ts).
      if (!request.raw.complete) reply.header('connection', 'close')
      throw error
    }
  }

  // Refuse before reading a byte: a declared length past the limit, or an oversized boundary.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const declared = declaredLength(request)
    const multipartBody = isMultipart(request)
    const envelope = multipartBody ? ENVELOPE_BYTES : 0
    if (declared !== undefined && declared > config.maxFileSize + envelope) {
      // The body is never read: close after the answer instead of reading and discarding it.
      reply.header('connection', 'close')
      throw problems.tooLarge(`The upload declares ${declared} bytes; MAX_FILE_SIZE is ${config.maxFileSize}`)
    }
    if (!multipartBody) return
    const boundary = boundaryOf(request.headers['content-type'])
    if (boundary === undefined || boundary.length === 0 || boundary.length > MAX_BOUNDARY) {
      throw problems.validation(`The multipart boundary must be 1 to ${MAX_BOUNDARY} characters (RFC 2046)`)
    }
  }

  const response = {
    200: Type.Object({
      name: Type.String({ description: 'The uploaded file name, as the client sent it (the multipart filename, or the name query parameter; empty if none)' }),
      size: Type.Integer({ description: 'Bytes hashed' }),
      hashes: Type.Record(Type.String(), Type.String(), { description: 'Canonical algorithm name → digest' }),
      matches: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { description: 'Only with `expected`: canonical algorithm name → whether its digest equals the expected checksum' })),
      warnings: Type.Optional(Type.Array(Type.String(), { description: 'Only with `expected`: present when its length fits none of the requested digests, so every match is false for that reason' })),
    }),
    ...errorResponsesWith({
      400: 'an unknown or misplaced form field or file part (pointer /body/<name>), a field after the file part, no file part or two, '
        + 'an `expected` that is not a digest or checksum line, a malformed multipart body or boundary; '
        + 'query-string fields have pointers /querystring/<name>, form fields /body/<name>',
    }),
  }

  app.post('/api/filehash', {
    config: { accepts: ['multipart/form-data', 'application/octet-stream'] },
    onRequest,
    schema: {
      tags: ['files'],
      summary: 'Hash an uploaded file with several algorithms in one pass',
      description: 'The file is streamed through the hashers as it arrives: held in memory one chunk at a time, never written to disk, discarded after. ' +
        'Multipart: text fields must precede the file part (or go in the query string). Raw: `Content-Type: application/octet-stream`, the body is the file, ' +
        'and algorithms, encoding and name go in the query string (`curl --data-binary @file -H "Content-Type: application/octet-stream" URL`). ' +
        'With several algorithms and a large file, the hashers run on several threads.',
      querystring: Query,
      response,
    },
  }, handler)

  app.put('/api/filehash', {
    config: { accepts: ['application/octet-stream', ''] },
    onRequest,
    schema: {
      tags: ['files'],
      summary: 'Hash a file sent as the raw request body (what `curl -T file URL` sends)',
      description: 'The same as POST /api/filehash in its raw form: the body is the file, with or without `Content-Type: application/octet-stream`; algorithms, encoding and name go in the query string.',
      querystring: Query,
      response,
    },
  }, handler)
}
