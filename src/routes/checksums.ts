/**
 * POST /api/checksums: files checked against a published checksum list, and the list against its
 * signature (src/checksums/ is the domain, src/upload/ the pipeline each file goes through).
 *
 * multipart/form-data, in this order: `checksums` (a file part or a text field), then the
 * optional `algorithm`, `strict`, `signature` and `publicKey` (each a field or a file part), then
 * one or more `file` parts. Everything before the first file is held in memory within its limit;
 * each file is hashed as it streams by, once, through only the algorithms its lines name.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { answer, MAX_PUBLIC_KEY_BYTES, MAX_SIGNATURE_BYTES, reportAsText, startCheck, type ChecksumAnswer, type ChecksumInputs, type StartedCheck } from '../checksums/index.js'
import { countHashedBytes } from '../observe.js'
import { Problem, problems } from '../problem.js'
import { declaredLength, refuseEarly } from '../upload/early-refusal.js'
import { boundaryOf, collect, readMultipart, type PartConsumer } from '../upload/multipart.js'
import { drain } from '../upload/drain.js'
import { chooseSink } from '../upload/pipeline.js'
import { HashThreads } from '../upload/threads.js'
import { errorResponses } from './schemas.js'

/** A part's header block: a Content-Disposition with a long file name, a Content-Type. */
const MAX_PART_HEADER_BYTES = 8 * 1024
/** The `algorithm` and `strict` fields. */
const MAX_FIELD_BYTES = 4096
/** Room for the multipart envelope around the parts: boundaries and part headers. */
const ENVELOPE_BYTES = 64 * 1024
const TEXT_PARTS = ['checksums', 'signature', 'publicKey'] as const

/** These error responses with a text/plain form beside problem+json (Accept: text/plain). */
function textAlternative(responses: typeof errorResponses, statuses: number[]): typeof errorResponses {
  const text = { 'text/plain': { schema: Type.String({ description: 'The refusal as one line: `hashd: <problem type>: <detail>`' }) } }
  return Object.fromEntries(Object.entries(responses).map(([status, response]) =>
    [status, statuses.includes(Number(status)) ? { ...response, content: { ...response.content, ...text } } : response])) as typeof errorResponses
}
type TextPart = typeof TEXT_PARTS[number]


/**
 * `Accept: text/plain` (and not JSON ahead of it) asks for `sha256sum -c`'s output, and for this
 * route's own refusals (400, 413, 415, 422: a bad signature, a list with no usable line…) as one
 * text line (plugins/errors.ts, `problemsAsText`).
 */
function wantsText(request: FastifyRequest): boolean {
  const accept = (request.headers.accept ?? '').toLowerCase()
  const text = accept.indexOf('text/plain')
  if (text < 0) return false
  const json = accept.indexOf('application/json')
  return json < 0 || text < json
}

function readStrict(value: string): boolean {
  const normalized = value.trim().toLowerCase()
  if (['true', '1', 'yes', 'on'].includes(normalized)) return true
  if (['false', '0', 'no', 'off', ''].includes(normalized)) return false
  throw problems.validation('strict must be true or false', [{ pointer: '/body/strict', message: 'not a boolean' }])
}

export const checksumsRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['checksums'],
        properties: {
          checksums: { type: 'string', format: 'binary', description: `The checksum list (a file part or a text field), at most MAX_CHECKSUM_LIST_BYTES bytes (1 MiB by default) and MAX_CHECKSUM_LINES lines (20,000): GNU lines (\`<digest>  <name>\`, \`<digest> *<name>\`, a leading \`\\\` for escaped names), BSD tagged lines (\`SHA256 (<name>) = <digest>\`, as coreutils --tag, b2sum, xxhsum, rhash --bsd and openssl dgst write them), hex or base64 digests, mixed algorithms, CRLF, blank and \`#\` lines. Optional only with an embedded signify signature (\`signify -S -e\`), which carries the list.` },
          algorithm: { type: 'string', description: 'The algorithm of untagged (GNU) lines. Without it, the list\'s file name (SHA512SUMS, B3SUMS, x.sha256) or the digest\'s length decides, and those entries say `algorithmGuessed: true`.' },
          strict: { type: 'string', enum: ['true', 'false'], default: 'false', description: 'true: a listed file that was not sent also makes `ok` false.' },
          signature: { type: 'string', format: 'binary', description: `A detached signature of the list, at most ${MAX_SIGNATURE_BYTES} bytes: minisign (.minisig, legacy or prehashed), signify (.sig), or OpenPGP (armored or binary). Checked before any line is read.` },
          publicKey: { type: 'string', format: 'binary', description: `The key to check it with, at most ${MAX_PUBLIC_KEY_BYTES} bytes: minisign's RW… line or key file, signify's .pub, or an OpenPGP public key (armored or binary).` },
          file: { type: 'array', items: { type: 'string', format: 'binary' }, description: `The files, at most MAX_CHECKSUM_FILES parts (64 by default), each at most MAX_FILE_SIZE bytes, the whole body at most MAX_CHECKSUM_BODY_BYTES. Send them after every other field. Each is matched to the list by its exact name, then by its base name.` },
        },
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
  },
}

const FileResult = Type.Object({
  name: Type.String({ description: 'The name as the list writes it (unescaped), or the uploaded name for an unlisted file' }),
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('missing'), Type.Literal('unlisted')]),
  algorithm: Type.Optional(Type.String({ description: 'Canonical algorithm name; absent for unlisted files' })),
  algorithmGuessed: Type.Optional(Type.Boolean({ description: 'true when the algorithm came from the list\'s file name or the digest\'s length, not from a tag or the algorithm field' })),
  line: Type.Optional(Type.Integer({ description: 'The entry\'s line in the list (1-based)' })),
  expected: Type.Optional(Type.String({ description: 'The list\'s digest, hex (lowercase) or base64 as the list wrote it' })),
  actual: Type.Optional(Type.String({ description: 'The computed digest, in the same encoding; absent for a missing file' })),
  file: Type.Optional(Type.String({ description: 'The uploaded name, when the file matched by base name only' })),
  size: Type.Optional(Type.Integer({ description: 'Bytes hashed' })),
})

const SignatureResult = Type.Object({
  verified: Type.Literal(true),
  scheme: Type.Union([Type.Literal('minisign'), Type.Literal('signify'), Type.Literal('openpgp')]),
  keyId: Type.String({ description: 'minisign: the key id as minisign prints it; signify: the key number in hex; OpenPGP: the signing key\'s 16-digit key id' }),
  trustedComment: Type.Optional(Type.String({ description: 'minisign: the trusted comment, authenticated by its global signature' })),
  fingerprint: Type.Optional(Type.String({ description: 'OpenPGP: the primary key\'s fingerprint' })),
  userId: Type.Optional(Type.String({ description: 'OpenPGP: the primary key\'s first user id' })),
})

const CheckResponse = Type.Object({
  ok: Type.Boolean({ description: 'true only when at least one file was checked and every listed file sent matched; with strict, no listed file may be missing either' }),
  strict: Type.Boolean(),
  files: Type.Array(FileResult, { description: 'Every list entry in list order, then the unlisted files' }),
  counts: Type.Object({ ok: Type.Integer(), failed: Type.Integer(), missing: Type.Integer(), unlisted: Type.Integer() }),
  skipped: Type.Array(Type.Object({ line: Type.Integer(), reason: Type.String(), tag: Type.Optional(Type.String({ description: 'The tag, for "unknown algorithm tag"' })) }),
    { description: 'Lines that were not used (malformed, or an algorithm hashd cannot check); at most 100' }),
  skippedLines: Type.Integer({ description: 'How many lines were skipped in all' }),
  signature: Type.Optional(SignatureResult),
})

export const checksumsRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  // The body is left unread here and read by the handler (upload/multipart.ts). Only this route's
  // context has the parser, and its media-type check (plugins/body.ts) runs first.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => { done(null, undefined) })
  const threads = new HashThreads()
  app.addHook('onClose', async () => { await threads.close() })
  const limits = config.checksums
  /** The largest body taken: the files, the list, a signature, a key and the envelope around them. */
  const maxDeclaredBytes = limits.maxBodyBytes + limits.maxListBytes + MAX_SIGNATURE_BYTES + MAX_PUBLIC_KEY_BYTES + ENVELOPE_BYTES

  async function check(request: FastifyRequest): Promise<{ result: ChecksumAnswer, listName: string | undefined }> {
    const inputs: ChecksumInputs = { strict: false }
    let started: StartedCheck | undefined
    let files = 0
    let bodyBytes = 0
    const expectedBytes = declaredLength(request)
    const tooLate = (name: string) => problems.validation(`Send the "${name}" field before the first file part: checking starts with the first file`)

    /** `checksums`, `signature` or `publicKey`, a field or a file part: read whole within its limit. */
    const textPart = (name: TextPart, filename: string | undefined): PartConsumer => {
      const limit = name === 'checksums' ? limits.maxListBytes : name === 'signature' ? MAX_SIGNATURE_BYTES : MAX_PUBLIC_KEY_BYTES
      const detail = name === 'checksums'
        ? `The checksum list is larger than MAX_CHECKSUM_LIST_BYTES (${limit} bytes)`
        : `The ${name} part is larger than ${limit} bytes`
      return collect(limit, () => problems.tooLarge(detail), (value) => {
        if (name === 'checksums') {
          inputs.list = value
          if (filename) inputs.listName = filename
        } else {
          inputs[name] = value
        }
      })
    }

    /** A `file` part: hashed as it streams by through the algorithms its list lines name. */
    const filePart = async (filename: string): Promise<PartConsumer> => {
      if (++files > limits.maxFiles) throw problems.tooLarge(`More than MAX_CHECKSUM_FILES (${limits.maxFiles}) file parts`)
      // The signature and the list are checked here, before the first file's first byte is hashed.
      started ??= await startCheck(inputs, limits)
      const check = started.check
      const plan = check.plan(filename)
      const room = limits.maxBodyBytes - bodyBytes
      const maxBytes = Math.min(config.maxFileSize, room)
      const tooLarge = maxBytes === room
        ? `The files together are larger than MAX_CHECKSUM_BODY_BYTES (${limits.maxBodyBytes} bytes)`
        : `A file is larger than MAX_FILE_SIZE (${config.maxFileSize} bytes)`
      const sink = await chooseSink(plan.algorithms, { threads, ...(expectedBytes !== undefined ? { expectedBytes } : {}) })
      let size = 0
      return {
        write(bytes) {
          size += bytes.length
          if (size > maxBytes) throw problems.tooLarge(tooLarge)
          return sink.write(bytes)
        },
        end() {
          return sink.finish().then((digests) => {
            bodyBytes += size
            // Counted with /api/filehash's bytes: the same pipeline, and the metric's operation label set stays as it is.
            for (const algorithm of plan.algorithms) countHashedBytes('filehash', algorithm.name, size)
            check.record(plan, size, digests)
          })
        },
        abort: () => sink.abort(),
      }
    }

    await readMultipart(request.raw, boundaryOf(request.headers['content-type']) ?? '', {
      parts: limits.maxFiles + 8, headerBytes: MAX_PART_HEADER_BYTES, headerLines: 16,
      bodyBytes: maxDeclaredBytes, tooLargeDetail: `The request body is larger than MAX_CHECKSUM_BODY_BYTES (${limits.maxBodyBytes}) and the list, signature and key limits`,
    }, (head) => {
      const name = head.name.slice(0, 64)
      const isText = (TEXT_PARTS as readonly string[]).includes(head.name)
      if (head.filename !== undefined && !isText) {
        if (head.name !== 'file') throw problems.validation(`Unknown part "${name}"; files go in parts named "file"`, [{ pointer: `/body/${name}`, message: 'unknown property' }])
        // Checksum lists name files by their paths: the file name is kept as sent.
        return filePart(head.filename)
      }
      if (started) throw tooLate(name)
      if (isText) return textPart(head.name as TextPart, head.filename)
      if (head.name === 'algorithm') return collect(MAX_FIELD_BYTES, () => problems.tooLarge(`The "${name}" field is too large`), (value) => { inputs.algorithm = value.toString('utf8') })
      if (head.name === 'strict') return collect(MAX_FIELD_BYTES, () => problems.tooLarge(`The "${name}" field is too large`), (value) => { inputs.strict = readStrict(value.toString('utf8')) })
      throw problems.validation(`Unknown field "${name}"; the form takes checksums, algorithm, strict, signature, publicKey and file`, [{ pointer: `/body/${name}`, message: 'unknown property' }])
    })
    started ??= await startCheck(inputs, limits)
    return { result: answer(started, inputs.strict), listName: inputs.listName }
  }

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<ChecksumAnswer | string> => {
    try {
      const { result, listName } = await check(request)
      if (!wantsText(request)) return result
      // A status a script can test (curl -f): 200 only when the check passed, else 422, same text.
      reply.code(result.ok ? 200 : 422).type('text/plain; charset=utf-8')
      return reportAsText(result, { signature: result.signature, listName })
    } catch (error) {
      // Refused before the body was read to its end: drop the rest of a small body, so the client
      // reads the answer; close after the answer rather than read the rest of a large one. A 413
      // too: one for too many file parts or an oversized list can come with a small body, and
      // drain() itself declines a body declared larger than DRAIN_MAX_BYTES.
      if (!(error instanceof Problem && error.status < 500 ? await drain(request) : request.raw.complete)) {
        reply.header('connection', 'close')
      }
      throw error
    }
  }

  // Refuse before reading a byte: a declared length past the limit, or an oversized boundary.
  const onRequest = refuseEarly({
    maxDeclaredBytes,
    tooLargeDetail: (declared) => `The request declares ${declared} bytes; MAX_CHECKSUM_BODY_BYTES is ${limits.maxBodyBytes}`,
  })

  app.post('/api/checksums', {
    config: { accepts: 'multipart/form-data', problemsAsText: wantsText },
    onRequest,
    schema: {
      tags: ['files'],
      summary: 'Check files against a checksum list (SHA256SUMS, B3SUMS, …) and the list against its signature',
      description: 'multipart/form-data: `checksums` first, then the optional `algorithm`, `strict`, `signature` and `publicKey`, then the `file` parts. ' +
        'A signature is verified before any line of the list is read; a bad signature, the wrong key or an unsupported scheme is a 422 and no file is hashed. ' +
        'Each file is streamed once, never stored, through only the algorithms its lines name. The JSON answer is 200 whenever the request was processed; `ok` says whether the check passed. ' +
        'With `Accept: text/plain` the body is what `sha256sum -c` prints (`name: OK`, `name: FAILED`; with `strict`, `name: FAILED open or read` for a listed file not sent) and then its warnings, `hashd:` for `sha256sum:`, '
        + 'with a first line naming a verified signature (`hashd: good minisign signature of the checksum list by key …`); the status is 200 only when the check passed (`ok`), else 422 with the same text, '
        + 'so `curl -f` fails a CI job. This operation\'s refusals (400, 413, 415, 422) then come as one text line too: `hashd: <problem type>: <detail>`.',
      consumes: ['multipart/form-data'],
      produces: ['application/json', 'text/plain'],
      response: {
        200: {
          description: 'The check, done: in JSON whether or not it passed; as text (Accept: text/plain) only when it passed',
          content: {
            'application/json': { schema: CheckResponse },
            'text/plain': { schema: Type.String({ description: 'sha256sum -c output and warnings' }) },
          },
        },
        ...textAlternative(errorResponses, [400, 413, 415]),
        422: {
          description: 'A list with no usable line (the detail names the first bad line), a bad or malformed signature, a signature by another key, or an unsupported signature scheme; '
            + 'with Accept: text/plain, also a check that did not pass (a file FAILED, or none was verified), with the report as its text',
          content: { ...errorResponses[422].content, 'text/plain': { schema: Type.String({ description: 'The report, as for 200, or the refusal as one line' }) } },
        },
      },
    },
  }, handler)
}
