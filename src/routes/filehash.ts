/**
 * POST /api/filehash: a multipart upload streamed through every requested hasher. The text fields
 * (`algorithms`, `encoding`) must come before the `file` part, because hashing starts with the
 * file's first byte; they may also be given in the query string.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart'
import type { Config } from '../config.js'
import { OUTPUT_ENCODINGS, type OutputEncoding } from '../domain/encoding.js'
import { MAX_FILE_ALGORITHMS, parseAlgorithmList, startFileDigests } from '../domain/filehash.js'
import { MAX_EXPECTED_LENGTH, matchExpected, parseExpected, type ExpectedDigest } from '../domain/expected.js'
import { problems } from '../problem.js'
import { countHashedBytes } from '../observe.js'
import { errorResponses } from './schemas.js'

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY = 70
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
          algorithms: { type: 'string', default: 'sha256', description: `Comma-separated algorithm names, at most ${MAX_FILE_ALGORITHMS}; duplicates collapse. Send before the file part.` },
          encoding: { type: 'string', enum: [...OUTPUT_ENCODINGS], default: 'hex', description: 'Send before the file part.' },
          expected: { type: 'string', maxLength: MAX_EXPECTED_LENGTH, description: 'Optional checksum to compare against every digest, in constant time: hex (any case), base64 or base64url, or one line of a checksum file (`<hex>  <name>` as in SHA256SUMS, or `SHA256 (<name>) = <hex>`; the name is ignored). The response then has `matches`. Send before the file part.' },
          file: { type: 'string', format: 'binary', description: 'Exactly one file, at most MAX_FILE_SIZE bytes' },
        },
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
  },
}

const Query = Type.Object({
  algorithms: Type.Optional(Type.String({ maxLength: 1024 })),
  encoding: Type.Optional(Type.Union(OUTPUT_ENCODINGS.map((encoding) => Type.Literal(encoding)))),
  expected: Type.Optional(Type.String({ maxLength: MAX_EXPECTED_LENGTH, description: 'A checksum to compare against every digest; see the form field' })),
}, { additionalProperties: false })

function readEncoding(value: string): OutputEncoding {
  if (!(OUTPUT_ENCODINGS as readonly string[]).includes(value)) {
    throw problems.validation(`encoding must be one of ${OUTPUT_ENCODINGS.join(', ')}`, [{ pointer: '/body/encoding', message: 'unknown encoding' }])
  }
  return value as OutputEncoding
}

export const fileHashRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  // Registered here, inside this route's encapsulation context, so JSON routes pay nothing for it.
  await app.register(multipart, { throwFileSizeLimit: true })
  app.post('/api/filehash', {
    config: { accepts: 'multipart/form-data' },
    // Refuse before reading a byte: a declared length past the limit, or an oversized boundary.
    onRequest: async (request) => {
      const declared = Number(request.headers['content-length'] ?? NaN)
      if (Number.isFinite(declared) && declared > config.maxFileSize + ENVELOPE_BYTES) {
        throw problems.tooLarge(`The upload declares ${declared} bytes; MAX_FILE_SIZE is ${config.maxFileSize}`)
      }
      const boundary = /boundary="?([^";]*)"?/i.exec(request.headers['content-type'] ?? '')?.[1]
      if (boundary === undefined || boundary.length === 0 || boundary.length > MAX_BOUNDARY) {
        throw problems.validation(`The multipart boundary must be 1 to ${MAX_BOUNDARY} characters (RFC 2046)`)
      }
    },
    schema: {
      tags: ['files'],
      summary: 'Hash an uploaded file with several algorithms in one pass',
      description: 'The file is streamed through the hashers as it arrives: held in memory one chunk at a time, never written to disk, discarded after. Text fields must precede the file part (or go in the query string).',
      querystring: Query,
      response: {
        200: Type.Object({
          name: Type.String({ description: 'The uploaded file name, as the client sent it' }),
          size: Type.Integer({ description: 'Bytes hashed' }),
          hashes: Type.Record(Type.String(), Type.String(), { description: 'Canonical algorithm name → digest' }),
          matches: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { description: 'Only with `expected`: canonical algorithm name → whether its digest equals the expected checksum' })),
        }),
        ...errorResponses,
      },
    },
  }, async (request) => {
    let algorithmList = request.query.algorithms
    let encoding: OutputEncoding = request.query.encoding ?? 'hex'
    let expected: ExpectedDigest | undefined = request.query.expected === undefined ? undefined : parseExpected(request.query.expected, '/querystring/expected')
    let result: { name: string, size: number, hashes: Record<string, string>, matches?: Record<string, boolean> } | undefined
    const parts = request.parts({
      limits: { fileSize: config.maxFileSize, files: 2, fields: 4, parts: 6, fieldSize: 4096, fieldNameSize: 64, headerPairs: 16 },
    })
    for await (const part of parts as AsyncIterableIterator<MultipartFile | MultipartValue>) {
      if (part.type === 'field') {
        if (result) throw problems.validation(`Send the "${part.fieldname}" field before the file part: hashing starts with the file's first byte`)
        if (part.fieldname === 'algorithms') algorithmList = String(part.value)
        else if (part.fieldname === 'encoding') encoding = readEncoding(String(part.value))
        else if (part.fieldname === 'expected') expected = parseExpected(String(part.value))
        else throw problems.validation(`Unknown field "${part.fieldname.slice(0, 64)}"; the form takes file, algorithms, encoding and expected`, [{ pointer: `/body/${part.fieldname.slice(0, 64)}`, message: 'unknown property' }])
        continue
      }
      if (part.fieldname !== 'file') throw problems.validation(`The file part must be named "file", not "${part.fieldname.slice(0, 64)}"`)
      if (result) throw problems.validation('Send exactly one file part')
      const digests = await startFileDigests(parseAlgorithmList(algorithmList))
      for await (const chunk of part.file) digests.update(chunk as Buffer)
      if (part.file.truncated) throw problems.tooLarge(`The file is larger than MAX_FILE_SIZE (${config.maxFileSize} bytes)`)
      result = { name: part.filename, size: digests.size, hashes: digests.finish(encoding) }
      if (expected) result.matches = matchExpected(expected, result.hashes, encoding)
      for (const algorithm of Object.keys(result.hashes)) countHashedBytes('filehash', algorithm, result.size)
    }
    if (!result) throw problems.validation('The form has no "file" part', [{ pointer: '/body/file', message: 'required' }])
    return result
  })
}
