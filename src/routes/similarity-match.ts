/**
 * POST /api/similarity/match: a hash (or up to MATCH_MAX_ITEMS of them) against the similarity
 * banks (src/similarity/match.ts, over the banks of src/similarity/bank-folder.ts). Batches go
 * through the one batch runner (routes/batch.ts): each item is a match of its own, counted against
 * the rate limit's items budget as every batch item is. POST /api/similarity/match/file: an upload
 * hashed by the /api/filehash pipeline (ssdeep, TLSH, PDQ in one pass) and its hashes matched.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import type { Engine } from '../domain/engine.js'
import { PDQ, type FileAlgorithms } from '../domain/filehash.js'
import { algorithmFor } from '../domain/algorithm-lookup.js'
import type { DigestAlgorithm } from '../algorithms/types.js'
import { problems } from '../problem.js'
import type { PdqResult } from '../similarity/pdq/index.js'
import { checkUploadMatch, matchUpload, UPLOAD_MATCH_ALGORITHMS, type UploadMatchAlgorithm, type UploadMatchOptions } from '../similarity/match.js'
import { isMultipart } from '../upload/early-refusal.js'
import { refuseLargeUpload, takeUploads, uploadHasher } from './filehash.js'
import { PdqHashSchema } from './schemas.js'
import { BANK_NAME } from '../similarity/bank-names.js'
import { comparers } from '../similarity/compare.js'
import { checkMatchTop, DIHEDRAL_NAMES, MATCH_DEFAULT_LIMIT, MATCH_MAX_BANKS, MATCH_MAX_ITEMS, MATCH_MAX_LIMIT, MatchGatherer, matchHash, type MatchRequest, type MatchResult } from '../similarity/match.js'
import { BATCH_DESCRIPTION, batchableBody, batchableResponse, batchBodyLimit, batchOrSingle } from './batch.js'
import { documentedAs, errorResponsesWith, problemResponse } from './schemas.js'

const MATCH_ALGORITHMS = ['pdq', 'tlsh', 'ssdeep', 'md5', 'sha1', 'sha256']
const defaultOf = (name: string) => comparers.find((comparer) => comparer.name === name)?.defaultThreshold ?? 0

const PdqHex = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'A PDQ hash, 64 hex digits' })

export const MatchAnswer = Type.Object({
  algorithm: Type.Unsafe<string>({ type: 'string', enum: MATCH_ALGORITHMS, description: 'The type matched (the canonical name of `algorithm`)' }),
  banks: Type.Array(Type.String(), { description: 'The banks searched, by name' }),
  maxDistance: Type.Optional(Type.Integer({ minimum: 0, description: 'The distance used (pdq, tlsh; 0 for the digests)' })),
  minScore: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'The score used (ssdeep)' })),
  matches: Type.Array(Type.Object({
    bank: Type.String({ description: 'The bank the entry is in' }),
    id: Type.String({ description: 'The entry\'s id, as imported' }),
    label: Type.Union([Type.String(), Type.Null()], { description: 'The entry\'s label, or null' }),
    distance: Type.Optional(Type.Integer({ minimum: 0, description: 'pdq: Hamming distance (0–256); tlsh: the reference\'s distance; digests: 0' })),
    score: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'ssdeep: libfuzzy\'s score' })),
    variant: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['original', ...DIHEDRAL_NAMES], description: 'With dihedral: the image\'s hash nearest to the entry (among equals, the first of original and the dihedral order)' })),
  }), { description: 'Every entry within the threshold (exact recall), nearest first (distance ascending, score descending), then by bank name, then in the bank\'s order (hash, then id); at most `limit`' }),
  truncated: Type.Boolean({ description: 'true when more entries matched than `limit`' }),
})

export type MatchAnswerType = MatchResult

export const matchDescription = (config: Config['batch']) =>
  'Looks a hash up in the similarity banks of SIMILARITY_BANKS_DIR (docs/similarity.md): every entry within the threshold is returned (exact recall), nearest first. '
  + `Thresholds: \`maxDistance\` for pdq (default ${defaultOf('pdq')}) and tlsh (default ${defaultOf('tlsh')}), \`minScore\` for ssdeep (default ${defaultOf('ssdeep')}); md5, sha1 and sha256 banks match the same digest only (maxDistance 0). `
  + `Without \`banks\`, every bank of the hash's type is searched (those the API key's banks= lists, when it has one); \`limit\` (default ${MATCH_DEFAULT_LIMIT}, at most ${MATCH_MAX_LIMIT}) cuts the list and \`truncated\` says so. `
  + 'PDQ: `dihedral` takes the seven other hashes /api/filehash?dihedral=true gives (`hashes.pdq.dihedral`), and an entry matches at its least distance to any of the eight (`variant` names which). '
  + 'Rules the schema cannot state: `algorithm` is required (in a batch, at the top or in each item); a hash not of the algorithm\'s form is 400 naming the field (/body/hash, /body/items/3/hash, /body/dihedral/<name>); '
  + 'maxDistance or minScore out of the algorithm\'s range or given to the other kind (minScore is ssdeep\'s; a digest takes maxDistance 0 only), and lengthTerm with anything but tlsh or dihedral with anything but pdq are 400 naming the field; '
  + 'a name in `banks` that is no bank is 404 urn:hashd:problem:unknown-bank naming it; a bank of another type is 422 urn:hashd:problem:bank-type-mismatch; '
  + 'a server without SIMILARITY_BANKS_DIR, or without any bank of the type (that the API key may search), is 422 urn:hashd:problem:no-banks, so that no answer says "no match" for want of banks; '
  + 'a bank outside the API key\'s banks= is 403 insufficient-scope (scope banks) naming it.'
  + BATCH_DESCRIPTION('match', config).replace(' Password work is refused (422 password-in-batch): per item, or whole when the top asks for it.', '')
  + ` A match batch takes at most ${MATCH_MAX_ITEMS} items.`

export const matchRoute: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const batch = { ...config.batch, maxItems: Math.min(config.batch.maxItems, MATCH_MAX_ITEMS) }
  app.post('/api/similarity/match', {
    config: { accepts: 'application/json' },
    bodyLimit: batchBodyLimit(config),
    schema: {
      tags: ['similarity'],
      summary: 'Which entries of the similarity banks are within a distance (or above a score) of a hash',
      description: matchDescription(batch),
      body: batchableBody({
        algorithm: Type.Optional(documentedAs(Type.String({ minLength: 1, maxLength: 64, description: `The hash's type: ${MATCH_ALGORITHMS.join(', ')} (any case). Required, at the top or in each item.` }), { enum: MATCH_ALGORITHMS, 'x-hashd-case-insensitive': true })),
        hash: Type.String({ minLength: 1, maxLength: 256, description: 'The hash: PDQ as 64 hex digits, TLSH as `T1` and 70 hex digits, ssdeep as it prints it, a digest in hex. Not of the algorithm\'s form: 400 naming the field.' }),
        banks: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: BANK_NAME.source }), {
          minItems: 1, maxItems: MATCH_MAX_BANKS, uniqueItems: true,
          description: 'The banks to search, by name (a bank file\'s name without .bank); default every bank of the algorithm\'s type. An unknown name is 404, a bank of another type 422, one outside the API key\'s banks= 403.',
        })),
        maxDistance: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: `pdq (0–256, default ${defaultOf('pdq')}) and tlsh (default ${defaultOf('tlsh')}): the largest distance that matches. A digest takes 0 only.` })),
        minScore: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: `ssdeep only: the smallest score that matches (default ${defaultOf('ssdeep')})` })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MATCH_MAX_LIMIT, default: MATCH_DEFAULT_LIMIT, description: `The most matches in the answer (across the banks); default ${MATCH_DEFAULT_LIMIT}` })),
        lengthTerm: Type.Optional(Type.Boolean({ description: 'tlsh only: false leaves out the length term, as the reference\'s -xlen does. Default true' })),
        dihedral: Type.Optional(Type.Object(Object.fromEntries(DIHEDRAL_NAMES.map((name) => [name, Type.Optional(PdqHex)])), {
          additionalProperties: false, minProperties: 1,
          description: 'pdq only: the image\'s other hashes, as /api/filehash?dihedral=true gives them in hashes.pdq.dihedral; an entry matches at its least distance to any of them',
        })),
      }, batch, { single: [{ required: ['algorithm'] }] }),
      response: {
        200: batchableResponse(MatchAnswer),
        404: problemResponse('urn:hashd:problem:unknown-bank: a name in `banks` that is no bank of SIMILARITY_BANKS_DIR (`bank` names it, with a pointer at it)'),
        ...errorResponsesWith({
          400: 'no algorithm; a hash not of the algorithm\'s form (naming the field: /body/hash, /body/items/<i>/hash, /body/dihedral/<name>); maxDistance, minScore, lengthTerm or dihedral not for the algorithm, or out of its range',
          422: 'bank-type-mismatch (a bank of `banks` holds another type); no-banks (no SIMILARITY_BANKS_DIR, or no bank of the type the API key may search)',
        }),
      },
    },
  }, async (request, reply) => {
    const context = app.matchContext(request)
    // A batch's PDQ searches are gathered and run together (MatchGatherer: a third to a half more
    // lookups per CPU second than one by one on a large bank), all of its items in flight at once.
    const gatherer = (request.body as { items?: unknown }).items === undefined ? null : new MatchGatherer(() => app.banks?.value ?? null)
    const run = (item: MatchRequest) => gatherer === null ? matchHash(item, context) : gatherer.match(item, context)
    return batchOrSingle<MatchRequest, MatchResult>(app, config, request, reply, run, 'hash', {
      otherAlgorithm: () => true,
      checkTop: (top) => checkMatchTop(top, context),
      inFlight: () => MATCH_MAX_ITEMS,
    })
  })
}

/** Upload fields that take a bounded whole number, as exact patterns (the query string is text; the schema states the range). */
const DIGITS = {
  pdqMaxDistance: { pattern: '^(25[0-6]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$', range: '0 to 256' },
  tlshMaxDistance: { pattern: '^(10000|[1-9]?[0-9]{1,3})$', range: '0 to 10000' },
  ssdeepMinScore: { pattern: '^(100|[1-9][0-9]?)$', range: '1 to 100' },
  limit: { pattern: `^(1000|[1-9][0-9]{0,2})$`, range: `1 to ${MATCH_MAX_LIMIT}` },
} as const

const BANK_LIST = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}(,[A-Za-z0-9][A-Za-z0-9._-]{0,63}){0,63}$'
const UPLOAD_ALGORITHMS_DESCRIPTION = `Which of ${UPLOAD_MATCH_ALGORITHMS.join(', ')} to hash and match with, separated by commas (any case); default ssdeep,tlsh. pdq only for images (JPEG, PNG, WebP, GIF): anything else is 422 not-an-image.`

const FileMatchQuery = Type.Object({
  algorithms: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z]{3,6}(,[A-Za-z]{3,6}){0,2}$', description: UPLOAD_ALGORITHMS_DESCRIPTION })),
  dihedral: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], description: 'With pdq, true also hashes the image rotated and flipped, and an entry matches at its least distance to any of the eight' })),
  name: Type.Optional(Type.String({ maxLength: 255, description: 'The file name to echo back (the raw form)' })),
  banks: Type.Optional(Type.String({ minLength: 1, maxLength: 4159, pattern: BANK_LIST, description: 'The banks to search, by name, separated by commas; default every bank of each algorithm\'s type. Unknown: 404; of a type none of the algorithms hashes: 422; outside the API key\'s banks=: 403' })),
  pdqMaxDistance: Type.Optional(Type.String({ pattern: DIGITS.pdqMaxDistance.pattern, description: `PDQ's largest distance that matches, ${DIGITS.pdqMaxDistance.range}; default ${defaultOf('pdq')}` })),
  tlshMaxDistance: Type.Optional(Type.String({ pattern: DIGITS.tlshMaxDistance.pattern, description: `TLSH's largest distance that matches, ${DIGITS.tlshMaxDistance.range}; default ${defaultOf('tlsh')}` })),
  ssdeepMinScore: Type.Optional(Type.String({ pattern: DIGITS.ssdeepMinScore.pattern, description: `ssdeep's smallest score that matches, ${DIGITS.ssdeepMinScore.range}; default ${defaultOf('ssdeep')}` })),
  limit: Type.Optional(Type.String({ pattern: DIGITS.limit.pattern, description: `The most matches per algorithm, ${DIGITS.limit.range}; default ${MATCH_DEFAULT_LIMIT}` })),
  lengthTerm: Type.Optional(Type.Unsafe<'true' | 'false'>({ type: 'string', enum: ['true', 'false'], description: 'TLSH: false leaves out the length term. Default true' })),
}, { additionalProperties: false })

type FileMatchQueryType = { algorithms?: string, dihedral?: 'true' | 'false', name?: string, banks?: string, pdqMaxDistance?: string, tlshMaxDistance?: string, ssdeepMinScore?: string, limit?: string, lengthTerm?: 'true' | 'false' }

/** `algorithms` of the upload form: ssdeep, tlsh and pdq only, each once, in the order asked. */
function uploadAlgorithms(list: string | undefined, pointer: string): FileAlgorithms {
  const names = (list ?? 'ssdeep,tlsh').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  const chosen = [...new Set(names)]
  if (chosen.length === 0 || !chosen.every((name): name is UploadMatchAlgorithm => (UPLOAD_MATCH_ALGORITHMS as readonly string[]).includes(name))) {
    throw problems.validation(`algorithms takes ${UPLOAD_MATCH_ALGORITHMS.join(', ')}, separated by commas`, [{ pointer, message: `not a list of ${UPLOAD_MATCH_ALGORITHMS.join(', ')}` }])
  }
  return {
    digests: chosen.filter((name) => name !== PDQ).map((name) => algorithmFor(name, 'filehash', pointer) as DigestAlgorithm),
    contentHashes: [], pdq: chosen.includes(PDQ), order: chosen,
  }
}

const wholeNumber = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text))

function uploadOptions(query: FileMatchQueryType, algorithms: readonly UploadMatchAlgorithm[]): UploadMatchOptions {
  const pdq = wholeNumber(query.pdqMaxDistance)
  const tlsh = wholeNumber(query.tlshMaxDistance)
  const ssdeep = wholeNumber(query.ssdeepMinScore)
  const limit = wholeNumber(query.limit)
  return {
    algorithms,
    ...(query.banks === undefined ? {} : { banks: [...new Set(query.banks.split(','))] }),
    ...(pdq === undefined ? {} : { pdqMaxDistance: pdq }),
    ...(tlsh === undefined ? {} : { tlshMaxDistance: tlsh }),
    ...(ssdeep === undefined ? {} : { ssdeepMinScore: ssdeep }),
    ...(limit === undefined ? {} : { limit }),
    ...(query.lengthTerm === undefined ? {} : { lengthTerm: query.lengthTerm === 'true' }),
  }
}

export const fileMatchRequestBody = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          algorithms: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z]{3,6}(,[A-Za-z]{3,6}){0,2}$', description: `${UPLOAD_ALGORITHMS_DESCRIPTION} Send before the file part.` },
          dihedral: { type: 'string', enum: ['true', 'false'], default: 'false', description: 'With pdq: also match the image rotated and flipped. Send before the file part.' },
          file: { type: 'string', format: 'binary', description: 'Exactly one file, at most MAX_FILE_SIZE bytes' },
        },
        additionalProperties: false,
      },
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
    'application/octet-stream': {
      schema: { type: 'string', format: 'binary', description: 'The file itself, at most MAX_FILE_SIZE bytes; the options go in the query string' },
    },
  },
}

const FileMatchAnswer = Type.Object({
  name: Type.String({ description: 'The uploaded file name (the multipart filename, or the name query parameter; empty if none)' }),
  size: Type.Integer({ description: 'Bytes hashed' }),
  hashes: Type.Object({
    ssdeep: Type.Optional(Type.String({ description: 'As ssdeep prints it' })),
    tlsh: Type.Optional(Type.String({ description: 'T1 and 70 hex digits, as the reference prints it' })),
    pdq: Type.Optional(PdqHashSchema),
  }, { description: 'The hashes of the upload, as /api/filehash gives them' }),
  matches: Type.Object({
    ssdeep: Type.Optional(MatchAnswer),
    tlsh: Type.Optional(MatchAnswer),
    pdq: Type.Optional(MatchAnswer),
  }, { description: 'Per algorithm, its matches as POST /api/similarity/match answers them; `banks` is empty when there is no bank of its type to search' }),
})

export const matchFileRoute: FastifyPluginAsyncTypebox<{ config: Config, engine: Engine }> = async (app, { config, engine }) => {
  const threads = takeUploads(app)
  const hashUpload = uploadHasher(config, engine, threads, { formFields: ['algorithms', 'dihedral'], algorithms: uploadAlgorithms })
  app.post('/api/similarity/match/file', {
    config: { accepts: ['multipart/form-data', 'application/octet-stream'] },
    onRequest: refuseLargeUpload(config),
    schema: {
      tags: ['similarity'],
      summary: 'Hash an upload with ssdeep, TLSH and PDQ in one pass and match the hashes against the similarity banks',
      description: 'The upload goes through the /api/filehash pipeline (multipart with `algorithms` and `dihedral` before the file part, or the raw body with them in the query string), '
        + 'then each hash is matched as POST /api/similarity/match matches it, against the banks of its type (or those of `banks`). The other options go in the query string. '
        + 'Checked before the upload is read: a name in `banks` that is no bank is 404 urn:hashd:problem:unknown-bank, one of a type no algorithm hashes 422 urn:hashd:problem:bank-type-mismatch, '
        + 'one outside the API key\'s banks= 403; a server without SIMILARITY_BANKS_DIR, or without a bank of any of the algorithms\' types, is 422 urn:hashd:problem:no-banks. '
        + 'An algorithm whose type has no bank is answered with `banks` empty. With tlsh, an upload under 50 bytes or too uniform is 422 urn:hashd:problem:tlsh-input; '
        + 'with pdq, an upload that is no image is 422 urn:hashd:problem:not-an-image and one that cannot be decoded 422 urn:hashd:problem:undecodable-image.',
      querystring: FileMatchQuery,
      response: {
        200: FileMatchAnswer,
        404: problemResponse('urn:hashd:problem:unknown-bank: a name in `banks` that is no bank of SIMILARITY_BANKS_DIR'),
        ...errorResponsesWith({
          400: '`algorithms` naming anything but ssdeep, tlsh and pdq (pointer /querystring/algorithms or /body/algorithms); an unknown or misplaced form field, no file part or two, a malformed multipart body',
          413: 'with pdq, an upload over MAX_IMAGE_SIZE, or an image of more than MAX_IMAGE_PIXELS pixels',
          422: 'no-banks, bank-type-mismatch (checked before the upload is read); tlsh-input, not-an-image, undecodable-image',
        }),
      },
    },
  }, async (request, reply) => {
    const query = request.query as FileMatchQueryType
    const context = app.matchContext(request)
    // What can be refused without the upload is refused before it is read. With the multipart
    // form, algorithms may still come in a field; the banks are checked against the query's.
    const asked = uploadAlgorithms(query.algorithms, '/querystring/algorithms').order as UploadMatchAlgorithm[]
    const formMayChoose = query.algorithms === undefined && isMultipart(request)
    checkUploadMatch(uploadOptions(query, formMayChoose ? UPLOAD_MATCH_ALGORITHMS : asked), context, '/querystring/banks')
    const hashed = await hashUpload(request as FastifyRequest, reply, { ...(query.algorithms === undefined ? {} : { algorithms: query.algorithms }), ...(query.dihedral === undefined ? {} : { dihedral: query.dihedral }), ...(query.name === undefined ? {} : { name: query.name }) })
    const algorithms = Object.keys(hashed.hashes) as UploadMatchAlgorithm[]
    const options = uploadOptions(query, algorithms)
    checkUploadMatch(options, context, '/querystring/banks')
    const pdq = hashed.hashes.pdq as PdqResult | undefined
    const hashes = { ssdeep: hashed.hashes.ssdeep as string | undefined, tlsh: hashed.hashes.tlsh as string | undefined, pdq: pdq?.hash }
    const matches = matchUpload(hashes, pdq?.dihedral, options, app.matchContext(request))
    return { name: hashed.name, size: hashed.size, hashes: hashed.hashes, matches }
  })
}
