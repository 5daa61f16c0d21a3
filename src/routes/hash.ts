import { clientGone } from './client-gone.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { algorithms, refusal } from '../algorithms/registry.js'
import { contentHashes, findContentHash, type ParameterSpec } from '../content-hashes/index.js'
import type { CostCaps } from '../config.js'
import type { Config } from '../config.js'
import { checkHashBatchTop, hash, type HashRequest, type HashResult } from '../domain/hash.js'
import { auditIfPeppered } from '../plugins/audit.js'
import { BATCH_DESCRIPTION, batchableBody, batchableResponse, batchBodyLimit, batchOrSingle } from './batch.js'
import { describeOptionBounds, digestOptionSpecs } from '../domain/options.js'
import { AlgorithmName, CanonicalAlgorithm, ContextWords, errorResponsesWith, InputEncoding, OutputEncoding, passwordNamesFor, ProcessingTime, Screened, encodedFieldRule } from './schemas.js'

/**
 * Every algorithm's options with this server's bounds, grouped where they are the same: the schema
 * cannot tie options to the algorithm named beside them, so the description states it.
 */
function optionBounds(caps: CostCaps): string {
  const groups = new Map<string, string[]>()
  for (const algorithm of algorithms) {
    if (refusal(algorithm, 'hash') !== null) continue
    const specs = algorithm.kind === 'password' ? algorithm.options : digestOptionSpecs(algorithm.outputBytes, algorithm.outputLength)
    const bounds = describeOptionBounds(specs, caps)
    if (bounds === '') continue
    groups.set(bounds, [...groups.get(bounds) ?? [], algorithm.name])
  }
  return [...groups].map(([bounds, names]) => `${names.join(', ')}: ${bounds}`).join('; ')
}

/**
 * The same bounds as JSON Schema, for the document only: one `anyOf` with a branch per group of
 * algorithms with the same options, so that a client or fuzzer reading the document knows each
 * algorithm's options, their ranges with this server's caps, and that the others take none. The
 * branch of the algorithms that take no options does not require `algorithm`, so that it also
 * covers a body without one (sha256). An `anyOf` of plain branches rather than an if/then per
 * group: generators that canonicalize the schema (Schemathesis) give up on the product of many
 * if/then pairs (each an `anyOf` of a `not`) beside the pepper and encoding rules. The server checks
 * the options itself (domain/options.ts), with messages that name the algorithm: 400 outside the
 * format's range, 422 above a cap.
 */
function optionSchemas(caps: CostCaps): unknown {
  const groups = new Map<string, { names: string[], properties: Record<string, unknown> }>()
  for (const algorithm of algorithms) {
    if (refusal(algorithm, 'hash') !== null) continue
    const specs = algorithm.kind === 'password' ? algorithm.options : digestOptionSpecs(algorithm.outputBytes, algorithm.outputLength)
    const properties = Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, {
      type: 'integer', minimum: spec.min, maximum: Math.min(spec.max, spec.cap?.(caps) ?? spec.max), default: spec.default, description: spec.description,
    }]))
    const key = JSON.stringify(properties)
    const group = groups.get(key) ?? { names: [], properties }
    group.names.push(algorithm.name)
    groups.set(key, group)
  }
  const none = { type: 'object', maxProperties: 0 }
  return {
    anyOf: [
      ...[...groups.values()].map(({ names, properties }) => Object.keys(properties).length === 0
        // No algorithm is sha256, which takes no options: this branch holds without `algorithm` too.
        ? { properties: { algorithm: { enum: names }, options: none } }
        : { required: ['algorithm'], properties: { algorithm: { enum: names }, options: { type: 'object', properties, additionalProperties: false } } }),
      ...contentHashOptionSchemas(),
    ],
  }
}

/** A content hash's parameter as JSON Schema: a byte size is an integer or text with a unit (`8MiB`), a choice its values, text its length. */
function contentParameterSchema(spec: ParameterSpec): Record<string, unknown> {
  switch (spec.kind) {
    case 'bytes': return {
      anyOf: [{ type: 'integer', minimum: spec.min, maximum: spec.max }, { type: 'string', pattern: '^\\s*\\d{1,16}\\s?(?:[bB]|[kKmMgG][iI][bB])?\\s*$' }],
      description: `${spec.description}: bytes, or with KiB, MiB or GiB${spec.default !== undefined ? `; default ${spec.default}` : ''}`,
    }
    case 'choice': return { type: 'string', enum: [...spec.values], default: spec.default, description: spec.description }
    case 'text': return { type: 'string', minLength: spec.minBytes, maxLength: spec.maxBytes, description: `${spec.description} (${spec.minBytes} to ${spec.maxBytes} bytes of UTF-8)` }
  }
}

/**
 * One branch per content hash, for the document: its parameters in `options`, by the same names as
 * /api/filehash's query. `size` is left out: here it is the input's length. Required text (btih's
 * and magnet's `name`) is required.
 */
function contentHashOptionSchemas(): unknown[] {
  return contentHashes.map((entry) => {
    const parameters = Object.entries(entry.parameters).filter(([name]) => name !== 'size')
    const required = parameters.filter(([, spec]) => spec.kind === 'text' && spec.minBytes > 0 && spec.default === undefined).map(([name]) => name)
    const options = {
      type: 'object', additionalProperties: false,
      properties: Object.fromEntries(parameters.map(([name, spec]) => [name, contentParameterSchema(spec)])),
      ...(required.length > 0 ? { required } : {}),
    }
    return { required: ['algorithm', ...(required.length > 0 ? ['options'] : [])], properties: { algorithm: { const: entry.name }, options } }
  })
}

/**
 * `"pepper": true` and `context` name a password hash (domain/hash.ts answers a digest with 400
 * algorithm-not-allowed, and no algorithm is sha256): for the document only. An `anyOf` (pepper is
 * absent or false and context absent, or the algorithm is a password hash) rather than an if/then,
 * for the same reason.
 */
const pepperRule = {
  anyOf: [
    { properties: { pepper: { const: false }, context: false } },
    { required: ['algorithm'], properties: { algorithm: { enum: passwordNamesFor('hash') } } },
  ],
}

/**
 * Password work asked for at the top of a batch (a password algorithm, pepper true, context) is 422
 * password-in-batch for the whole batch (domain/hash.ts `checkHashBatchTop`): for the document only,
 * on the batch's branch.
 */
const passwordWorkAtTop = { properties: { algorithm: { not: { enum: passwordNamesFor('hash') } }, pepper: { const: false }, context: false } }

/** Every content hash that takes parameters here, with their names. */
const CONTENT_OPTIONS = contentHashes
  .map((entry) => [entry.name, Object.keys(entry.parameters).filter((name) => name !== 'size')] as const)
  .filter(([, names]) => names.length > 0)
  .map(([name, names]) => `${name}: ${names.join(', ')}`).join('; ')

export const hashRoute: FastifyPluginAsyncTypebox<{ engine: import('../domain/engine.js').Engine, config: Config }> = async (app, { engine, config }) => {
  const HashAnswer = Type.Object({
    hash: Type.String(),
    length: Type.Integer({ description: 'hash.length' }),
    processingTimeMs: ProcessingTime,
    algorithm: Type.Unsafe<string>({ ...CanonicalAlgorithm, enum: [...(CanonicalAlgorithm.enum as string[]), ...contentHashes.map((entry) => entry.name)], description: 'Canonical algorithm name, or the content hash\'s' }),
    encoding: Type.Union([OutputEncoding, Type.Literal('standard')], { description: 'hex, base64, base64url, or standard for formats with their own text form (password hashes, content hashes)' }),
    pepperKey: Type.Optional(Type.String({ description: 'The id of the pepper key the hash is encrypted under (peppered password hashes only)', examples: ['k2'] })),
    screening: Type.Optional({ ...Screened, description: 'Password hashes of text input, with PASSWORD_SCREENING=warn (the default) or reject: what screening found (POST /api/passwords/check\'s answer)' }),
  })
  app.post('/api/hash', {
    config: { accepts: 'application/json' },
    bodyLimit: batchBodyLimit(config),
    schema: {
      tags: ['hashing'],
      summary: 'Digest or password hash of an input',
      description: 'Digests honour `encoding`; password hashes (bcrypt, argon2, scrypt, pbkdf2, …) return their standard string with a fresh random salt. '
        + 'When the server has pepper keys (PEPPER_KEYS_FILE), password hashes are peppered with the current key by default: the finished hash is encrypted '
        + '(AES-256-GCM) into a `$pepper$v=1,k=<key id>,s=<scheme>$<nonce>$<ciphertext>` string, and `pepperKey` names the key; `"pepper": false` opts out '
        + '(`"pepper": true` on a server without keys is 422 no-pepper-keys). bcrypt refuses inputs over 72 bytes (422 input-too-long); bcrypt-sha256 takes any length. '
        + 'Rules the schema cannot state: `options` are per algorithm (below); an option the algorithm does not take, or options to an algorithm that takes none, '
        + 'or a value outside its range is 400 with the pointer /body/options/<name>, and so are values that break a relation between options: '
        + 'scrypt\'s N must be a power of two below 2^(16·r) (RFC 7914 §2), argon2\'s memoryCost at least 8·parallelism KiB (RFC 9106 §3.1); '
        + 'a value within the format\'s range but above this server\'s cap is 422 '
        + 'urn:hashd:problem:cost-above-cap; an input longer than bcrypt\'s 72 bytes is 422 urn:hashd:problem:input-too-long; a NUL byte in the input of a crypt(3) scheme is 422 urn:hashd:problem:input-not-representable; '
        + 'and rules the body\'s `allOf` states: an `input` not valid in its `inputEncoding` (the pattern for hex and base64) is 400 with the pointer /body/input; '
        + '`"pepper": true` with a digest is 400 urn:hashd:problem:algorithm-not-allowed. '
        + 'Password hashes of text input are made from its NFKC form (PASSWORD_NORMALIZATION) and screened first (PASSWORD_SCREENING): with `warn` (the default) the answer carries `screening`; '
        + 'with `reject` an unacceptable password is 422 urn:hashd:problem:password-rejected with `reasons`, and no hash is made. `context` on a digest is 400 algorithm-not-allowed.'
        + BATCH_DESCRIPTION('hash', config.batch) + ' Digests only: a password algorithm is 422 password-in-batch for its item; at the top, a password algorithm, `"pepper": true` or `context` '
        + 'is 422 password-in-batch for the whole batch (the body\'s batch branch states it). `options` are read against each item\'s algorithm, so a wrong one is the item\'s problem. '
        + 'Content hashes (s3-etag, s3-crc32c…, gcs-*, azure-md5, dropbox, quickxor, git-blob-*, tth, aich, btih, bt2-root, ipfs-cid, magnet: docs/content-hashes.md) of the input bytes, each printed as its store shows it (`encoding` is `standard`, whatever was asked); '
        + 'their parameters go in `options`, and one out of its bounds, or one the content hash does not take, is 422 urn:hashd:problem:invalid-parameter with the pointer /body/options/<name>, as in /api/filehash; btih and magnet need `options.name`.',
      body: batchableBody({
        input: Type.String({ description: 'The text (or, with inputEncoding, binary data) to hash' }),
        algorithm: Type.Optional(AlgorithmName('hash', 'sha256', 'Algorithm to use: a digest, a password scheme, or a content hash (s3-etag, tth, git-blob-sha1…, canonical names only).', contentHashes.map((entry) => entry.name))),
        encoding: Type.Optional(OutputEncoding),
        inputEncoding: Type.Optional(InputEncoding('input')),
        options: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 32 }), Type.Union([Type.Integer(), Type.String({ maxLength: 255 })]), {
          maxProperties: 8,
          description: `Per-algorithm parameters, each an integer within the bounds this server takes (caps applied): ${optionBounds(engine.config.caps)}. `
            + 'Algorithms not listed take no options. GET /api/algorithms gives each option\'s default and bounds too. '
            + `A content hash takes its parameters here, by the names and bounds of /api/filehash's query (${CONTENT_OPTIONS}); a byte size may be text with KiB, MiB or GiB; \`size\` is the input's length.`,
        })),
        pepper: Type.Optional(Type.Boolean({
          description: 'Password hashes only: true with a digest (or no algorithm, which is sha256) is 400 algorithm-not-allowed. Default: true when the server has pepper keys, false otherwise. true on a server without keys is 422 no-pepper-keys.',
        })),
        context: Type.Optional({ ...ContextWords, description: `Password hashes only: ${ContextWords.description} (screening; see PASSWORD_SCREENING)` }),
      }, config.batch, { single: [optionSchemas(engine.config.caps), pepperRule], shared: [encodedFieldRule('input', 'inputEncoding')], batch: [passwordWorkAtTop] }),
      response: {
        200: batchableResponse(HashAnswer),
        ...errorResponsesWith({
          503: 'a password hash sealed under a pepper key, AUDIT_FAIL=closed and the audit log cannot be written (urn:hashd:problem:audit-unavailable)',
          400: 'an option the algorithm does not take (or any option to one that takes none) or outside its range (/body/options/<name>); an input not valid in its inputEncoding (/body/input)',
          501: 'a crypt(3) format whose libxcrypt method is missing on this machine',
          422: 'TLSH of an input under 50 bytes or too uniform (tlsh-input, as the reference\'s TNULL); a content hash\'s parameter out of its bounds, missing (btih\'s and magnet\'s name) or not taken (invalid-parameter, /body/options/<name>); a password PASSWORD_SCREENING=reject refuses (password-rejected, with reasons); an option above this server\'s cap (cost-above-cap); an input too long for the algorithm (input-too-long: bcrypt\'s 72 bytes, crypt(3)\'s limit); an input with a NUL byte to a crypt(3) scheme (input-not-representable); pepper asked for on a server without pepper keys (no-pepper-keys); bytes that are not UTF-8 to an algorithm defined on text (not-text); a batch whose top asks for password work (password-in-batch: a password algorithm, pepper true or context)',
        }),
      },
    },
  }, (request, reply) => {
    const body = request.body as HashRequest & { items?: unknown[] }
    // The common case, one short digest: no batch glue, no key context.
    if (body.items === undefined && request.bodyBytes <= config.bodyLimit) {
      const run = () => hash(engine, body, () => clientGone(reply), app.passwords, app.screening, { keys: { used: (...use) => app.keyContext(request).used(...use) } })
      // A password hash sealed under a pepper key is a keyed operation: the audit log records it.
      return app.audit === null ? run() : auditIfPeppered(app, request, 'password.hash', run)
    }
    return batchOrSingle<HashRequest, HashResult>(app, config, request, reply, (item) => hash(engine, item, undefined, app.passwords, app.screening, { batch: true }), 'hash',
      { encodedFields: [['input', 'inputEncoding']], checkTop: checkHashBatchTop, otherAlgorithm: (name) => findContentHash(name) !== undefined })
  })
}
