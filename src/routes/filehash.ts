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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { OUTPUT_ENCODINGS, type OutputEncoding } from '../domain/encoding.js'
import { CONTENT_HASH_PARAMETERS, planContentHashes, type ContentHashParameter, type ContentHashPlan, type ContentHashStage, type GivenParameter } from '../domain/content-hashes.js'
import { MAX_FILE_ALGORITHMS, parseFileAlgorithms, PDQ, type FileAlgorithms } from '../domain/filehash.js'
import type { Engine } from '../domain/engine.js'
import { ImageBytes, pdqOfUpload } from '../domain/pdq-upload.js'
import type { PdqResult } from '../similarity/pdq/index.js'
import { contentHashes } from '../content-hashes/index.js'
import { formatBytes } from '../content-hashes/parameters.js'
import { MAX_EXPECTED_LENGTH, matchExpected, parseExpected, type ExpectedDigest } from '../domain/expected.js'
import { countHashedBytes } from '../observe.js'
import { problems } from '../problem.js'
import { encodeDigests } from '../upload/encode.js'
import { declaredLength, isMultipart, refuseEarly } from '../upload/early-refusal.js'
import { boundaryOf, collect, readMultipart, type PartConsumer, type PartHead } from '../upload/multipart.js'
import { chooseSink, computesContentHashes, hashUpload } from '../upload/pipeline.js'
import { withInlineStage, type DigestSink } from '../upload/sink.js'
import { HashThreads } from '../upload/threads.js'
import { AlgorithmList, documentView, errorResponsesWith, OutputEncoding as OutputEncodingSchema, PdqHashSchema } from './schemas.js'

/**
 * The content hashes' parameters that a request may give in the query or as form fields (all but
 * `name`, which the route already takes as the file name and which is btih's and magnet's torrent name too).
 */
const CONTENT_FIELDS = [...CONTENT_HASH_PARAMETERS.keys()].filter((name) => name !== 'name')

/** The form's text fields, each at most MAX_FIELD_BYTES. */
const FORM_FIELDS: readonly string[] = ['algorithms', 'encoding', 'expected', 'dihedral', ...CONTENT_FIELDS]
const MAX_FIELD_BYTES = 4096
/** Parts a form may have: each field once, the file, and room for two repeats; one more is 413. */
export const MAX_FORM_PARTS = FORM_FIELDS.length + 3
/** A part's header block: a Content-Disposition with a long file name, a Content-Type. */
const MAX_PART_HEADER_BYTES = 8 * 1024

/** Room for the multipart envelope (boundaries, part headers, the text fields) around the file. */
const ENVELOPE_BYTES = 64 * 1024

/**
 * A byte size as parameters.ts's parseByteSize reads it: digits, then B, KiB, MiB or GiB in any
 * case, after one space at most (two runs of spaces side by side would backtrack quadratically).
 */
const BYTE_SIZE_PATTERN = '^\\s*[0-9]{1,16}(\\s?([bB]|[kKmMgG][iI][bB]))?\\s*$'

/**
 * A content-hash parameter as a query (or form) field, read from the registry: the entries that
 * take it, what it means, its bounds. No `default` keyword: ajv would fill it in, and each entry
 * applies its own default (checksumType's differs between the CRCs and the SHAs).
 */
function contentParameterSchema(name: string, { spec, descriptions, takenBy, choices }: ContentHashParameter) {
  const what = `For ${takenBy.join(', ')}: ${descriptions.join('; ')}.`
  // Defaults differ between entries (checksumType: FULL_OBJECT for the CRCs, COMPOSITE for the SHAs): each is named with its entries.
  const byDefault = new Map<string, string[]>()
  for (const entry of contentHashes) {
    const fallback = entry.parameters[name]?.default
    if (fallback === undefined) continue
    const shown = typeof fallback === 'number' ? formatBytes(fallback) : fallback
    byDefault.set(shown, [...byDefault.get(shown) ?? [], entry.name])
  }
  const defaults = byDefault.size === 0 ? ''
    : byDefault.size === 1 ? ` Default ${[...byDefault.keys()][0] as string}.`
      : ` Default ${[...byDefault].map(([shown, entries]) => `${shown} for ${entries.join(', ')}`).join('; ')}.`
  const misuse = ` Out of bounds, or given without an algorithm that takes it: 422 urn:hashd:problem:invalid-parameter naming /querystring/${name}.`
  switch (spec.kind) {
    case 'bytes':
      return Type.String({
        minLength: 1, maxLength: 32, pattern: BYTE_SIZE_PATTERN,
        description: `${what} Bytes, or a whole number of KiB, MiB or GiB (8MiB); ${formatBytes(spec.min)} to ${formatBytes(spec.max)}.${defaults}${misuse}`,
      })
    case 'choice':
      return Type.Unsafe<string>({ type: 'string', enum: choices, description: `${what}${defaults} Each algorithm takes the values it knows; another is 422.${misuse}` })
    case 'text':
      return Type.String({ minLength: spec.minBytes, maxLength: spec.maxBytes, description: `${what}${defaults}${misuse}` })
  }
}

/** `size` also takes its value from the raw body's Content-Length, which the registry does not know of. */
const SIZE_NOTE = ' Without it, the raw body\'s Content-Length serves; a file of another size is 422 naming size (or content-length).'

const contentParameterSchemas = Object.fromEntries(CONTENT_FIELDS.map((name) => {
  const schema = contentParameterSchema(name, CONTENT_HASH_PARAMETERS.get(name) as ContentHashParameter)
  return [name, name === 'size' ? { ...schema, description: `${schema.description as string}${SIZE_NOTE}` } : schema]
}))

const CONTENT_HASH_NAMES = contentHashes.map((entry) => entry.name)
/** Names beside the digests in `algorithms`: the content hashes, and PDQ. */
const OTHER_HASH_NAMES = [...CONTENT_HASH_NAMES, PDQ]

const DIHEDRAL_DESCRIPTION = 'With pdq, `true` adds `dihedral` to `hashes.pdq`: the seven hashes of the image rotated and flipped, as Meta\'s reference computes them from the same DCT.'

export const fileHashRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          algorithms: { ...documentView(AlgorithmList('filehash', MAX_FILE_ALGORITHMS, OTHER_HASH_NAMES)) as object, description: `${AlgorithmList('filehash', MAX_FILE_ALGORITHMS, OTHER_HASH_NAMES).description} Send before the file part.` },
          encoding: { type: 'string', enum: [...OUTPUT_ENCODINGS], default: 'hex', description: 'Send before the file part; lowercase as written.' },
          dihedral: { type: 'string', enum: ['true', 'false'], default: 'false', description: `${DIHEDRAL_DESCRIPTION} Send before the file part.` },
          expected: { type: 'string', minLength: 1, maxLength: MAX_EXPECTED_LENGTH, pattern: '\\S', description: 'Optional checksum to compare against every digest, in constant time: hex (any case), base64 or base64url, or one line of a checksum file (`<hex>  <name>` as in SHA256SUMS, or `SHA256 (<name>) = <hex>`; the name is ignored). The response then has `matches`, and a warning when the checksum\'s length fits none of the requested algorithms. Send before the file part.' },
          ...Object.fromEntries(Object.entries(contentParameterSchemas).map(([name, schema]) => [name, { ...schema, description: `${schema.description as string} Send before the file part; as a form field, its problems point to /body/${name}.` }])),
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
  algorithms: Type.Optional(AlgorithmList('filehash', MAX_FILE_ALGORITHMS, OTHER_HASH_NAMES)),
  encoding: Type.Optional(OutputEncodingSchema),
  name: Type.Optional(Type.String({ maxLength: 255, description: 'The file name to echo back, for the raw-body form. Also btih\'s torrent name (its info dictionary\'s name: a base name, 1 to 255 bytes of UTF-8) and magnet\'s (its dn, and its btih\'s); for the multipart form btih and magnet take the file part\'s filename when this is absent' })),
  expected: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_EXPECTED_LENGTH, pattern: '\\S', description: 'A checksum to compare against every digest; see the form field' })),
  dihedral: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], default: 'false', description: DIHEDRAL_DESCRIPTION })),
  ...Object.fromEntries(Object.entries(contentParameterSchemas).map(([name, schema]) => [name, Type.Optional(schema)])),
}, { additionalProperties: false })

export type FileHashQuery = { algorithms?: string, encoding?: OutputEncoding, name?: string, expected?: string, dihedral?: 'true' | 'false' } & Partial<Record<string, string>>
export interface FileHashResult { name: string, size: number, hashes: Record<string, string | PdqResult>, matches?: Record<string, boolean>, warnings?: string[] }

const expectedFromQuery = (query: FileHashQuery): ExpectedDigest | undefined =>
  query.expected === undefined ? undefined : parseExpected(query.expected, '/querystring/expected')

/** The content-hash parameters in the query string (`name` among them: btih's and magnet's torrent name). */
function contentParametersFromQuery(query: FileHashQuery): Map<string, GivenParameter> {
  const given = new Map<string, GivenParameter>()
  for (const name of CONTENT_HASH_PARAMETERS.keys()) {
    const value = query[name]
    if (value !== undefined) given.set(name, { value, pointerBase: '/querystring' })
  }
  return given
}

/**
 * The response: digests in the asked encoding and content hashes in their store's own form, in
 * request order; `matches` when a checksum was expected (digests only: a content hash is text in
 * its store's form, an ETag's `-N` say, not bytes in `encoding`); bytes counted for metrics.
 */
function answer(name: string, size: number, chosen: FileAlgorithms, digestHashes: Record<string, string>, contentHashes: ReadonlyMap<string, string>, encoding: OutputEncoding, expected: ExpectedDigest | undefined, pdq?: PdqResult): FileHashResult {
  const hashes: Record<string, string | PdqResult> = {}
  for (const algorithm of chosen.order) {
    const text = algorithm === PDQ ? pdq : digestHashes[algorithm] ?? contentHashes.get(algorithm)
    if (text === undefined) throw new Error(`no hash for ${algorithm}`)
    hashes[algorithm] = text
    countHashedBytes('filehash', algorithm, size)
  }
  if (!expected) return { name, size, hashes }
  if (chosen.digests.length === 0) return { name, size, hashes, matches: {}, warnings: ['expected is compared with digests only, and algorithms names none; a content hash is compared by reading it'] }
  const warning = lengthWarning(expected, digestHashes, encoding)
  return { name, size, hashes, matches: matchExpected(expected, digestHashes, encoding), ...(warning ? { warnings: [warning] } : {}) }
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

/**
 * The digests' sink with the content hashes' stage in front: the stage holds the size, and hashes
 * the content hashes itself only when the sink leaves them to it (an inline upload; see sink.ts).
 */
async function contentSink(digestSink: DigestSink, plan: ContentHashPlan): Promise<{ sink: DigestSink, content: ContentHashStage }> {
  const content = await plan.start(computesContentHashes(digestSink) ? () => digestSink.contentHashes() : undefined)
  return { sink: withInlineStage(digestSink, content), content }
}


function readDihedral(value: string): 'true' | 'false' {
  if (value !== 'true' && value !== 'false') {
    throw problems.validation('dihedral must be true or false', [{ pointer: '/body/dihedral', message: 'must be one of true, false' }])
  }
  return value
}

function readEncoding(value: string): OutputEncoding {
  if (!(OUTPUT_ENCODINGS as readonly string[]).includes(value)) {
    throw problems.validation(`encoding must be one of ${OUTPUT_ENCODINGS.join(', ')}`, [{ pointer: '/body/encoding', message: `must be one of ${OUTPUT_ENCODINGS.join(', ')}` }])
  }
  return value as OutputEncoding
}

/**
 * With pdq: the upload also goes to a collector beside the digests (domain/pdq-upload.ts), in the
 * same pass; the image is hashed once the upload has ended.
 */
function withImage(sink: DigestSink, chosen: FileAlgorithms, config: Config): { sink: DigestSink, image?: ImageBytes } {
  if (!chosen.pdq) return { sink }
  const image = new ImageBytes(config.images.maxBytes)
  return { sink: withInlineStage(sink, image), image }
}

/**
 * What a route built on this upload pipeline changes (POST /api/similarity/match/file): the form's
 * text fields, and how `algorithms` is read (the names it takes, its default).
 */
export interface UploadRules {
  formFields: readonly string[]
  algorithms: (list: string | undefined, pointer: string) => FileAlgorithms
}

const FILEHASH_RULES: UploadRules = { formFields: FORM_FIELDS, algorithms: parseFileAlgorithms }

/** The route's content-type parser: the body is left unread and streamed by the handler. Only the route's context has it. */
export function takeUploads(app: FastifyInstance): HashThreads {
  app.addContentTypeParser('*', (_request, _payload, done) => { done(null, undefined) })
  const threads = new HashThreads()
  app.addHook('onClose', async () => { await threads.close() })
  return threads
}

/**
 * Hashes an upload, raw or multipart, with the algorithms the request names: the /api/filehash
 * answer. `query` is the request's query string (its algorithms, encoding, dihedral, content-hash
 * parameters); the form's fields, before the file part, override it.
 */
export function uploadHasher(config: Config, engine: Engine, threads: HashThreads, rules: UploadRules = FILEHASH_RULES): (request: FastifyRequest, reply: FastifyReply, query: FileHashQuery) => Promise<FileHashResult> {
  const formFields = rules.formFields
  const maxFormParts = formFields.length + 3
  const tooLarge = `The file is larger than MAX_FILE_SIZE (${config.maxFileSize} bytes)`

  /** The raw form: the request body is the file. */
  async function hashRaw(request: FastifyRequest, query: FileHashQuery): Promise<FileHashResult> {
    const chosen = rules.algorithms(query.algorithms, '/querystring/algorithms')
    const expected = expectedFromQuery(query)
    const encoding = query.encoding ?? 'hex'
    const bodyLength = declaredLength(request)
    const plan = planContentHashes(chosen.contentHashes, contentParametersFromQuery(query), bodyLength === undefined ? {} : { bodyLength })
    const options = {
      maxBytes: config.maxFileSize, tooLargeDetail: tooLarge, expectedBytes: bodyLength, threads,
      // Only chunks that are wholly their buffer, which hold this body's bytes alone (release.ts).
      release: true,
    }
    const { sink: contentAndDigests, content } = await contentSink(await chooseSink(chosen.digests, options, plan.resolved), plan)
    const { sink, image } = withImage(contentAndDigests, chosen, config)
    const { size, digests } = await hashUpload(request.raw, chosen.digests, options, sink)
    const contentTexts = content.finish(size)
    const pdq = image && await pdqOfUpload(image, config.images, query.dihedral === 'true', engine)
    return answer(query.name ?? '', size, chosen, encodeDigests(chosen.digests, digests, encoding), contentTexts, encoding, expected, pdq)
  }

  /** The multipart form: text fields, then exactly one file part, hashed as it arrives. */
  async function hashForm(request: FastifyRequest, query: FileHashQuery): Promise<FileHashResult> {
    let algorithmList = query.algorithms
    let algorithmPointer = '/querystring/algorithms'
    let encoding: OutputEncoding = query.encoding ?? 'hex'
    let expected = expectedFromQuery(query)
    let dihedral = query.dihedral ?? 'false'
    const parameters = contentParametersFromQuery(query)
    let fileSeen = false
    let result: FileHashResult | undefined
    // Called when a field ends: before any file part begins, which the check at each part's start makes sure of.
    const setField = (name: string, value: string): void => {
      if (name === 'algorithms') {
        algorithmList = value
        algorithmPointer = '/body/algorithms'
      } else if (name === 'encoding') encoding = readEncoding(value)
      else if (name === 'expected') expected = parseExpected(value)
      else if (name === 'dihedral') dihedral = readDihedral(value)
      else parameters.set(name, { value, pointerBase: '/body' })
    }
    const filePart = async (head: PartHead): Promise<PartConsumer> => {
      if (head.name !== 'file') {
        throw problems.validation(`The file part must be named "file", not "${head.name.slice(0, 64)}"`,
          [{ pointer: `/body/${head.name.slice(0, 64)}`, message: 'unknown file part; the file part is named "file"' }])
      }
      if (fileSeen) throw problems.validation('Send exactly one file part')
      fileSeen = true
      const chosen = rules.algorithms(algorithmList, algorithmPointer)
      const filename = withoutPath(head.filename ?? '')
      // The body's Content-Length counts the whole form, so it is no file size: `size` must be given.
      const plan = planContentHashes(chosen.contentHashes, parameters, { fileName: filename })
      const { sink: contentAndDigests, content } = await contentSink(await chooseSink(chosen.digests, { expectedBytes: declaredLength(request), threads }, plan.resolved), plan)
      const { sink, image } = withImage(contentAndDigests, chosen, config)
      let size = 0
      return {
        write(bytes) {
          size += bytes.length
          if (size > config.maxFileSize) throw problems.tooLarge(tooLarge)
          return sink.write(bytes)
        },
        async end() {
          const digests = await sink.finish()
          const contentTexts = content.finish(size)
          const pdq = image && await pdqOfUpload(image, config.images, dihedral === 'true', engine)
          result = answer(filename, size, chosen, encodeDigests(chosen.digests, digests, encoding), contentTexts, encoding, expected, pdq)
        },
        abort: () => sink.abort(),
      }
    }
    await readMultipart(request.raw, boundaryOf(request.headers['content-type']) ?? '', {
      parts: maxFormParts, headerBytes: MAX_PART_HEADER_BYTES, headerLines: 16,
      bodyBytes: config.maxFileSize + ENVELOPE_BYTES, tooLargeDetail: tooLarge,
    }, (head) => {
      if (head.filename !== undefined) return filePart(head)
      if (!formFields.includes(head.name)) {
        throw problems.validation(`Unknown field "${head.name.slice(0, 64)}"; the form takes file, ${formFields.join(', ')}`, [{ pointer: `/body/${head.name.slice(0, 64)}`, message: 'unknown property' }])
      }
      if (fileSeen) throw problems.validation(`Send the "${head.name}" field before the file part: hashing starts with the file's first byte`)
      return collect(MAX_FIELD_BYTES, () => problems.tooLarge(`The "${head.name}" field is larger than ${MAX_FIELD_BYTES} bytes`),
        (value) => setField(head.name, value.toString('utf8')))
    })
    if (!result) throw problems.validation('The form has no "file" part', [{ pointer: '/body/file', message: 'required' }])
    return result
  }

  return async (request, reply, query) => {
    try {
      return await (isMultipart(request) ? hashForm(request, query) : hashRaw(request, query))
    } catch (error) {
      // Refused before the body was read to its end (a limit cut, a bad field): close the connection
      // after the answer rather than have Node read and discard the rest of a large upload (it lingers
      // for a few seconds so the client reads the answer: src/lingering-close.ts).
      if (!request.raw.complete) reply.header('connection', 'close')
      throw error
    }
  }
}

/** Refuses an upload before reading a byte: a declared length past the limit, or an oversized boundary. */
export const refuseLargeUpload = (config: Config) => refuseEarly({
  maxDeclaredBytes: (multipart) => config.maxFileSize + (multipart ? ENVELOPE_BYTES : 0),
  tooLargeDetail: (declared) => `The upload declares ${declared} bytes; MAX_FILE_SIZE is ${config.maxFileSize}`,
})

export const fileHashRoute: FastifyPluginAsyncTypebox<{ config: Config, engine: Engine }> = async (app, { config, engine }) => {
  // Both forms: the body is left unread here and streamed by the handler (the form read by
  // upload/multipart.ts). Only this route's context has the parser, and its media-type check
  // (plugins/body.ts) runs first.
  const threads = takeUploads(app)
  const hashUploadRequest = uploadHasher(config, engine, threads)
  const handler = (request: FastifyRequest, reply: FastifyReply): Promise<FileHashResult> =>
    hashUploadRequest(request, reply, (request as FastifyRequest<{ Querystring: FileHashQuery }>).query)
  const onRequest = refuseLargeUpload(config)


  const response = {
    200: Type.Object({
      name: Type.String({ description: 'The uploaded file name, as the client sent it (the multipart filename, or the name query parameter; empty if none)' }),
      size: Type.Integer({ description: 'Bytes hashed' }),
      hashes: Type.Record(Type.String(), Type.Union([Type.String(), PdqHashSchema]), { description: 'Canonical algorithm name → digest in `encoding`, or content hash in its store\'s own form (hex, base64 or base32, with -N for a multipart ETag or composite checksum; `encoding` does not apply), in request order; `pdq` is an object: `{hash, quality}`, and `dihedral` with dihedral=true' }),
      matches: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { description: 'Only with `expected`: canonical algorithm name → whether its digest equals the expected checksum' })),
      warnings: Type.Optional(Type.Array(Type.String(), { description: 'Only with `expected`: present when its length fits none of the requested digests, so every match is false for that reason' })),
    }),
    ...errorResponsesWith({
      413: 'with pdq, an upload over MAX_IMAGE_SIZE, or an image whose header declares more than MAX_IMAGE_PIXELS pixels (refused before decoding)',
      400: 'an unknown or misplaced form field or file part (pointer /body/<name>), a field after the file part, no file part or two, '
        + 'an `expected` that is not a digest or checksum line, a malformed multipart body or boundary; '
        + 'query-string fields have pointers /querystring/<name>, form fields /body/<name>',
      422: 'urn:hashd:problem:invalid-parameter for a content-hash parameter (partSize, multipartThreshold, checksumType, pieceLength, size, name, cidVersion) '
        + 'out of bounds, missing where an algorithm needs it (git-blob-*, and btih and magnet without pieceLength, need the size up front), or given without an algorithm that takes it, '
        + 'and for a file whose size is not the `size` given (or the Content-Length); `errors[0].pointer` names the field: /querystring/<name>, /body/<name> or /headers/content-length. '
        + 'With tlsh: urn:hashd:problem:tlsh-input for an upload under 50 bytes or too uniform (the reference\'s TNULL). '
        + 'With pdq: urn:hashd:problem:not-an-image for an upload that is no JPEG, PNG, WebP or GIF (`detected` names what it looks like), '
        + 'urn:hashd:problem:undecodable-image for one that starts as an image but cannot be decoded (truncated, corrupt)',
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
        'With several algorithms and a large file, the hashers run on several threads. ' +
        'Content hashes (s3-etag, dropbox, tth, btih, ipfs-cid, magnet…) are computed in the same pass and answered in their store\'s own form; their parameters go in the query string (or as form fields before the file).',
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
