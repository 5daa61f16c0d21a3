/**
 * POST /api/filehash/verify: is this file the object a store describes? The store's metadata, as
 * it returned it (content-hashes/metadata/ reads it), then the file, hashed once as it streams by
 * through every hasher the metadata's fields need (domain/verify-file.ts plans them and judges the
 * results; src/upload/ is the pipeline).
 *
 * multipart/form-data, in this order: `metadata` (a text field, or a file part for a .torrent),
 * then exactly one `file` part. The metadata is read whole within its limit before the file's first
 * byte, so a shape hashd does not know is a 422 before anything is hashed.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { MAX_TEXT_METADATA_BYTES, MAX_TORRENT_BYTES, metadataShapes, readMetadata, type MetadataReading } from '../content-hashes/metadata/index.js'
import { createPlainHasher } from '../content-hashes/verification.js'
import { MAX_CONTENT_HASHERS, MAX_PART_SIZE_CANDIDATES, planVerification, type VerifyAnswer, type VerifyPlan } from '../domain/verify-file.js'
import { countHashedBytes } from '../observe.js'
import { Problem, problems } from '../problem.js'
import { drain } from '../upload/drain.js'
import { declaredLength, refuseEarly } from '../upload/early-refusal.js'
import { boundaryOf, collect, readMultipart, type PartConsumer } from '../upload/multipart.js'
import { chooseSink, computesContentHashes } from '../upload/pipeline.js'
import { withInlineStage, type DigestSink } from '../upload/sink.js'
import { HashThreads } from '../upload/threads.js'
import { errorResponsesWith } from './schemas.js'

/** A part's header block: a Content-Disposition with a long file name, a Content-Type. */
const MAX_PART_HEADER_BYTES = 8 * 1024
/** Room for the multipart envelope around the parts: boundaries and part headers. */
const ENVELOPE_BYTES = 64 * 1024
/** The metadata, the file, and one more, which is refused by name rather than counted. */
const MAX_PARTS = 3

export const fileVerifyRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['metadata', 'file'],
        properties: {
          metadata: {
            type: 'string', format: 'binary',
            description: `What the store returned, whole, sent before the file: a text field of at most ${MAX_TEXT_METADATA_BYTES} bytes (${metadataShapes.map((shape) => shape.accepts).join('; ')}), or a file part of at most ${MAX_TORRENT_BYTES} bytes for a .torrent. More is 413; a shape hashd does not know is 422.`,
          },
          file: { type: 'string', format: 'binary', description: 'Exactly one file, at most MAX_FILE_SIZE bytes, after the metadata' },
        },
        additionalProperties: false,
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
  },
}

const VerdictSchema = Type.Union([Type.Literal('match'), Type.Literal('mismatch'), Type.Literal('cannot-check')])

const FieldResult = Type.Object({
  field: Type.String({ description: 'The store\'s own name for the value (ETag, ChecksumCRC32C, md5Hash, file.hashes.quickXorHash, pieces, pieces root, xt=urn:btih, a git path), or `size` for the row that says the file\'s size is not the object\'s' }),
  verdict: VerdictSchema,
  expected: Type.String({ description: 'What the store reported, as the registry prints it' }),
  actual: Type.Optional(Type.String({ description: 'What the file gives, in the same form; for a torrent\'s pieces, how many differ and the first that does' })),
  reason: Type.Optional(Type.String({ description: 'Why the field did not match (`size`: the file\'s size is not the object\'s) or cannot be checked' })),
  partSize: Type.Optional(Type.Integer({ description: 'For a multipart ETag or composite checksum: the part size that matched, or the one the metadata gave' })),
  algorithm: Type.String({ description: 'The content hash (s3-etag, git-blob-sha1, btih…), the digest (sha1, ed2k…), sha1 for a torrent\'s pieces, or size' }),
})

const VerifyResponse = Type.Object({
  verdict: Type.Union([VerdictSchema], { description: '`match` only when every field that could be checked matched and at least one could; `mismatch` when any field mismatched; `cannot-check` when none could be checked' }),
  shape: Type.String({ description: 'The metadata\'s shape: s3, gcs, azure, dropbox, onedrive, torrent, magnet or git-ls-tree' }),
  size: Type.Integer({ description: 'The file\'s size in bytes' }),
  fields: Type.Array(FieldResult, { description: 'One entry per value the metadata reports, in its order; first a `size` row when the file\'s size is not the object\'s' }),
})


const missingMetadata = (detail: string) => problems.validation(detail, [{ pointer: '/body/metadata', message: 'required before the file part' }])

export const fileVerifyRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  // The body is left unread here and read by the handler (upload/multipart.ts). Only this route's
  // context has the parser, and its media-type check (plugins/body.ts) runs first.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => { done(null, undefined) })
  const threads = new HashThreads()
  app.addHook('onClose', async () => { await threads.close() })
  /** The largest body taken: the file, the largest metadata and the envelope around them. */
  const maxDeclaredBytes = config.maxFileSize + MAX_TORRENT_BYTES + ENVELOPE_BYTES
  const fileTooLarge = `The file is larger than MAX_FILE_SIZE (${config.maxFileSize} bytes)`

  /**
   * The digests' sink and the content hashers: on the hash threads unless the upload is declared
   * small (pipeline.ts, chooseSink); otherwise hashed here, on the event loop, beside the digests.
   */
  async function sinkFor(plan: VerifyPlan, expectedBytes: number | undefined): Promise<{ sink: DigestSink, texts: () => ReadonlyMap<string, string> }> {
    const sink = await chooseSink(plan.digests, { threads, ...(expectedBytes !== undefined ? { expectedBytes } : {}) }, plan.hashers)
    if (computesContentHashes(sink)) return { sink, texts: () => sink.contentHashes() }
    const inline = await Promise.all(plan.hashers.map(async (hasher) => [hasher.key, await createPlainHasher(hasher)] as const))
    const stage = { write: (chunk: Uint8Array) => { for (const [, hasher] of inline) hasher.update(chunk) }, end: () => {} }
    return { sink: withInlineStage(sink, stage), texts: () => new Map(inline.map(([key, hasher]) => [key, hasher.finish()])) }
  }

  async function verify(request: FastifyRequest): Promise<VerifyAnswer> {
    let reading: MetadataReading | undefined
    let metadataSeen = false
    let fileSeen = false
    let result: VerifyAnswer | undefined

    const metadataPart = (isFile: boolean): PartConsumer => {
      metadataSeen = true
      // A .torrent is binary and up to 16 MiB; pasted text is at most 1 MiB (readMetadata's bounds, applied as it arrives).
      const limit = isFile ? MAX_TORRENT_BYTES : MAX_TEXT_METADATA_BYTES
      return collect(limit, () => problems.tooLarge(`The metadata is larger than ${limit} bytes${isFile ? '' : ' (a .torrent goes as a file part, up to 16 MiB)'}`), (value) => {
        reading = readMetadata(value)
      })
    }

    const filePart = async (fileName: string | undefined): Promise<PartConsumer> => {
      if (fileSeen) throw problems.validation('Send exactly one file part', [{ pointer: '/body/file', message: 'one file part only' }])
      fileSeen = true
      if (reading === undefined) throw missingMetadata('Send the "metadata" part before the file part: it says what to compute')
      const read = reading
      const plan = planVerification(read, { fileName })
      const { sink, texts } = await sinkFor(plan, declaredLength(request))
      let size = 0
      return {
        write(bytes) {
          size += bytes.length
          if (size > config.maxFileSize) throw problems.tooLarge(fileTooLarge)
          return sink.write(bytes)
        },
        end() {
          return sink.finish().then((digests) => {
            // Counted with /api/filehash's bytes, as /api/checksums does: the same pipeline, and the metric's operation label set stays as it is.
            for (const algorithm of plan.hashedWith) countHashedBytes('filehash', algorithm, size)
            result = plan.verdicts(size, digests, texts())
          })
        },
        abort: () => sink.abort(),
      }
    }

    await readMultipart(request.raw, boundaryOf(request.headers['content-type']) ?? '', {
      parts: MAX_PARTS, headerBytes: MAX_PART_HEADER_BYTES, headerLines: 16,
      bodyBytes: maxDeclaredBytes, tooLargeDetail: fileTooLarge,
    }, (head) => {
      const name = head.name.slice(0, 64)
      if (head.name === 'metadata') {
        if (fileSeen) throw missingMetadata('Send the "metadata" part before the file part: hashing starts with the file\'s first byte')
        if (metadataSeen) throw problems.validation('Send one "metadata" part', [{ pointer: '/body/metadata', message: 'one metadata part only' }])
        return metadataPart(head.filename !== undefined)
      }
      if (head.name === 'file') return filePart(head.filename)
      throw problems.validation(`Unknown part "${name}"; the form takes metadata, then file`, [{ pointer: `/body/${name}`, message: 'unknown property' }])
    })
    if (reading === undefined) throw missingMetadata('The form has no "metadata" part')
    if (result === undefined) throw problems.validation('The form has no "file" part', [{ pointer: '/body/file', message: 'required' }])
    return result
  }

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<VerifyAnswer> => {
    try {
      return await verify(request)
    } catch (error) {
      // Refused before the body's end: drop the rest of a small body, so the client reads the
      // answer; close after the answer rather than read the rest of a large one (as /api/checksums).
      if (!(error instanceof Problem && error.status < 500 ? await drain(request) : request.raw.complete)) {
        reply.header('connection', 'close')
      }
      throw error
    }
  }

  // Refuse before reading a byte: a declared length past the limit, or an oversized boundary.
  const onRequest = refuseEarly({
    maxDeclaredBytes,
    tooLargeDetail: (declared) => `The request declares ${declared} bytes; MAX_FILE_SIZE is ${config.maxFileSize}, and the metadata at most ${MAX_TORRENT_BYTES}`,
  })

  app.post('/api/filehash/verify', {
    config: { accepts: 'multipart/form-data' },
    onRequest,
    schema: {
      tags: ['files'],
      summary: 'Check a file against what a store reports about it (S3, Cloud Storage, Azure, Dropbox, OneDrive, Git, a .torrent, a magnet link)',
      description: 'multipart/form-data: `metadata` first (the store\'s JSON, `git ls-tree -l` lines or a magnet link as a text field; a .torrent as a file part), then one `file` part. '
        + 'The file is streamed once, never stored, through every hash the metadata\'s fields need, on the hash threads. The answer is 200 whenever the request was processed: `verdict` and each field\'s say whether the file matched. '
        + `A multipart ETag or composite checksum without a part size is tried at the part sizes the common tools use and the one \`-N\` and the size imply (at most ${MAX_PART_SIZE_CANDIDATES}); the field names the one that matched. At most ${MAX_CONTENT_HASHERS} content hashes run for one request, each part size counted; the fields past them cannot be checked. `
        + 'A v1 torrent\'s pieces are checked one by one, and the answer names the first that differs. A hash that needs the size up front (git-blob-*, a magnet\'s btih) takes it from the metadata, and without it cannot be checked. '
        + 'A file whose size is not the one the metadata reports mismatches every field, with reason `size`. '
        + '`git ls-tree` lines pasted whole: the verdict is about the file\'s own line, the one whose path (or its last segment) is the file part\'s filename, else those of the file\'s size, of which the one that matches; the other blobs\' lines are `cannot-check` (reason `another file: …`).',
      consumes: ['multipart/form-data'],
      response: {
        200: VerifyResponse,
        ...errorResponsesWith({
          400: 'no metadata part, or one after the file (pointer /body/metadata); no file part, or two (/body/file); an unknown part (/body/<name>); a malformed multipart body or boundary',
          422: 'urn:hashd:problem:unknown-metadata for metadata of no known shape, and urn:hashd:problem:invalid-metadata naming the field for metadata of a known shape that cannot be read (a .torrent that is not valid bencode, say)',
        }),
      },
    },
  }, handler)
}
