/** POST /api/similarity/compare: the score or distance of two similarity hashes (src/similarity/compare.ts). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { COMPARE_ALGORITHMS, compareHashes, comparers } from '../similarity/compare.js'
import { documentedAs, errorResponsesWith } from './schemas.js'

/** Longer than any similarity hash (ssdeep's longest is 140 characters). */
const MAX_HASH_LENGTH = 256

const thresholds = comparers.map((comparer) => `${comparer.name}: ${comparer.measure === 'distance' ? 'distance at most' : 'score at least'} ${comparer.defaultThreshold}`).join('; ')

const Hash = (which: string) => Type.String({
  minLength: 1, maxLength: MAX_HASH_LENGTH,
  description: `The ${which} hash: ssdeep as ssdeep prints it (\`blocksize:hash1:hash2\`), TLSH as its reference prints it (\`T1\` and 70 hex digits; the 70 digits alone are also read), or PDQ as 64 hex digits (\`hashes.pdq.hash\` of /api/filehash). Not of such a form: 400 naming the field.`,
})

export const similarityRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/similarity/compare', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['similarity'],
      summary: 'How alike two similarity hashes are: the ssdeep score (0–100), the TLSH distance or the PDQ distance (0–256)',
      description: 'Without `algorithm`, the hashes\' form says which they are; hashes of two kinds are 422 urn:hashd:problem:similarity-mismatch. '
        + `\`similar\` compares the score or distance with \`threshold\`, by default ${thresholds} (docs/similarity.md says why). `
        + 'ssdeep\'s score is libfuzzy\'s fuzzy_compare (0 for block sizes that cannot be compared); TLSH\'s distance is the reference\'s, with the length term unless `lengthTerm` is false; PDQ\'s is the Hamming distance of the 256 bits, as Meta\'s reference.',
      body: Type.Object({
        a: Hash('first'),
        b: Hash('second'),
        algorithm: Type.Optional(documentedAs(Type.String({ minLength: 1, maxLength: 64, description: 'ssdeep, tlsh or pdq; by default read from the hashes\' form. Any case; another name is 400.' }), { enum: COMPARE_ALGORITHMS, 'x-hashd-case-insensitive': true })),
        threshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, description: `The threshold of \`similar\` instead of the default (${thresholds}): a score from 0 to 100 for ssdeep, a distance from 0 for TLSH, from 0 to 256 for PDQ` })),
        lengthTerm: Type.Optional(Type.Boolean({ description: 'TLSH only (400 otherwise): false leaves out the length term, as the reference\'s -xlen does, so files of different sizes compare on their content alone. Default true' })),
      }, { additionalProperties: false }),
      response: {
        200: Type.Union([
          Type.Object({
            algorithm: Type.Literal('ssdeep'),
            score: Type.Integer({ minimum: 0, maximum: 100, description: '100 for the same hash, 0 for no match (or block sizes that cannot be compared)' }),
            similar: Type.Boolean({ description: 'score ≥ threshold' }),
            threshold: Type.Integer({ minimum: 0, maximum: 100 }),
          }),
          Type.Object({
            algorithm: Type.Literal('pdq'),
            distance: Type.Integer({ minimum: 0, maximum: 256, description: 'How many of the 256 bits differ (Hamming distance): 0 for the same hash' }),
            similar: Type.Boolean({ description: 'distance ≤ threshold' }),
            threshold: Type.Integer({ minimum: 0, maximum: 256 }),
          }),
          Type.Object({
            algorithm: Type.Literal('tlsh'),
            distance: Type.Integer({ minimum: 0, description: '0 for the same hash, growing without a fixed top' }),
            similar: Type.Boolean({ description: 'distance ≤ threshold' }),
            threshold: Type.Integer({ minimum: 0 }),
            lengthTerm: Type.Boolean({ description: 'Whether the distance includes the length term' }),
          }),
        ]),
        ...errorResponsesWith({ 400: 'a or b not a hash of the algorithm\'s form (naming the field); an unknown algorithm; a threshold out of the algorithm\'s range; lengthTerm with ssdeep', 422: 'a and b of two kinds (similarity-mismatch)' }),
      },
    },
  }, async (request) => compareHashes(request.body))
}
