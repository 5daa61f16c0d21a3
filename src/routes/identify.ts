import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { identify, identifyMany } from '../identify/engine.js'
import { problems } from '../problem.js'
import { errorResponsesWith } from './schemas.js'

/** Inputs longer than this are 413: no hash format is anywhere near it. */
export const MAX_IDENTIFY_BYTES = 64 * 1024
/** The batch form answers at most this many strings per request. */
export const MAX_IDENTIFY_BATCH = 1000

const Match = Type.Object({
  algorithm: Type.String({ description: 'Canonical name; the registry name where /api/verify accepts the format' }),
  displayName: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1, description: 'Probability in [0, 1]; a response\'s confidences sum to at most 1' }),
  hashcat: Type.Union([Type.Integer(), Type.Null()], { description: 'hashcat mode (-m)' }),
  john: Type.Union([Type.String(), Type.Null()], { description: 'John the Ripper --format' }),
  category: Type.String(),
  description: Type.String(),
  params: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String()]), { description: 'Parameters the string carries: cost, memory, rounds, salt…' })),
  verifiable: Type.Boolean({ description: 'True where POST /api/verify accepts this string' }),
  variants: Type.Optional(Type.Array(Type.Object({ hashcat: Type.Integer(), displayName: Type.String() }), {
    description: 'Other hashcat modes that read exactly this syntax, which the string cannot tell apart from `hashcat`: '
      + 'VeraCrypt\'s PRF and XTS size, or the md5($salt.$pass), HMAC-MD5, PostgreSQL… modes beside md5($pass.$salt) '
      + '(all `32 hex:salt`). The match stands for all of them; `hashcat` is the commonest, and the others are worth trying too',
  })),
  format: Type.Optional(Type.String({
    description: 'The text form or wrapper around the digest named by `algorithm`, where the string is not its bare hex: '
      + '`base64` (base64 or base64url, padded or not), `colon-hex` (X.509 and legacy SSH fingerprints), `sri` (Subresource Integrity, npm/yarn `integrity`, Nix SRI), '
      + '`oci-digest` (OCI/Docker `sha256:` + hex), `nix-base32`, `openssh-fingerprint` (`SHA256:` base64, `MD5:` colon hex), `go-sum-h1`, `git-object-id`, `s3-multipart-etag`. '
      + 'Where `verifiable` is true, POST /api/verify takes the string as it is and checks the digest of the input against the one it holds',
  })),
  problem: Type.Optional(Type.String({
    description: 'Present on a near miss: the string almost has this format but is not valid as it stands (typically truncated), '
      + 'e.g. "checksum has 40 characters; sha512-crypt has 86". Such a match has a low confidence and is never verifiable',
  })),
}, {
  description: 'One candidate format. Where several hashcat modes share one syntax they are one match: `hashcat` names the commonest and `variants` lists the rest',
})

const Identification = Type.Object({
  length: Type.Integer({ description: 'Length of the trimmed input' }),
  matches: Type.Array(Match, { description: 'Most likely first; ties break the same way every time' }),
})

const HashText = Type.String({ minLength: 1, pattern: '\\S', description: `Not empty or only white space (either is 400). A hash, a user:hash / shadow / htpasswd line, or a 0x-prefixed hex string; at most ${MAX_IDENTIFY_BYTES} bytes` })

const HashList = Type.Array(HashText, { minItems: 1, maxItems: MAX_IDENTIFY_BATCH })

function checkSize(hash: string, pointer: string): void {
  if (hash.length * 3 > MAX_IDENTIFY_BYTES && Buffer.byteLength(hash) > MAX_IDENTIFY_BYTES) {
    throw problems.tooLarge(`${pointer} is longer than ${MAX_IDENTIFY_BYTES} bytes; no hash format is that long`)
  }
}

export const identifyRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/identify', {
    config: { accepts: 'application/json' },
    schema: {
      tags: ['identify'],
      summary: 'The likely formats of a hash string, ranked by confidence',
      description: `Send exactly one of \`hash\` (one string) or \`hashes\` (up to ${MAX_IDENTIFY_BATCH} strings, answered in order as \`results\`). A string longer than ${MAX_IDENTIFY_BYTES} bytes is 413.`,
      // Exactly one of the two: oneOf of two `required`s beside the properties, which JSON Schema
      // can state and a generated client can type.
      body: Type.Object({
        hash: Type.Optional(HashText),
        hashes: Type.Optional(HashList),
      }, { additionalProperties: false, oneOf: [{ properties: { hash: HashText }, required: ['hash'] }, { properties: { hashes: HashList }, required: ['hashes'] }] }),
      response: {
        200: Type.Union([Identification, Type.Object({ results: Type.Array(Identification) })]),
        ...errorResponsesWith({ 400: 'neither or both of hash and hashes; an empty or white-space-only string' }),
      },
    },
    preValidation: async (request) => {
      const body = request.body as { hash?: unknown, hashes?: unknown } | undefined
      if (typeof body?.hash === 'string') checkSize(body.hash, 'hash')
      if (Array.isArray(body?.hashes)) {
        body.hashes.forEach((hash, index) => { if (typeof hash === 'string') checkSize(hash, `hashes[${index}]`) })
      }
    },
  }, async (request) => {
    const { hash, hashes } = request.body
    if ((hash === undefined) === (hashes === undefined)) {
      throw problems.validation('send exactly one of hash or hashes', [{ pointer: '/body', message: 'exactly one of hash, hashes' }])
    }
    return hashes === undefined ? identify(hash!) : { results: identifyMany(hashes) }
  })
}
