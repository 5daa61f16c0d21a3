/**
 * POST /api/similarity/match: a hash (or up to MATCH_MAX_ITEMS of them) against the similarity
 * banks (src/similarity/match.ts, over the banks of src/similarity/bank-folder.ts). Batches go
 * through the one batch runner (routes/batch.ts): each item is a match of its own, counted against
 * the rate limit's items budget as every batch item is.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Config } from '../config.js'
import { BANK_NAME } from '../similarity/bank-names.js'
import { comparers } from '../similarity/compare.js'
import { DIHEDRAL_NAMES, MATCH_DEFAULT_LIMIT, MATCH_MAX_BANKS, MATCH_MAX_ITEMS, MATCH_MAX_LIMIT, matchHash, matchType, type MatchRequest, type MatchResult } from '../similarity/match.js'
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
    variant: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['original', ...DIHEDRAL_NAMES], description: 'With dihedral: the image\'s hash nearest to the entry' })),
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
  + BATCH_DESCRIPTION('match', config).replace('Password work is refused (422 password-in-batch): per item, or whole when the top asks for it.', '')
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
    const run = (item: MatchRequest) => matchHash(item, context)
    return batchOrSingle<MatchRequest, MatchResult>(app, config, request, reply, run, 'hash', {
      otherAlgorithm: () => true,
      checkTop: (top) => { if (top.algorithm !== undefined) matchType(top.algorithm) },
    })
  })
}
