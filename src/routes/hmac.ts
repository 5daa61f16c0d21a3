import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Config } from '../config.js'
import { checkHmacBatchTop, flushKeyCounts, hmac, IN_BATCH, verifyHmac, type KeyContext, type HmacRequest, type HmacResult, type HmacVerifyRequest, type HmacVerifyResult } from '../domain/hmac.js'
import type { Engine } from '../domain/engine.js'
import type { AuditEvent } from '../audit/index.js'
import { auditKeyed } from '../plugins/audit.js'
import { BATCH_DESCRIPTION, batchableBody, batchableResponse, batchBodyLimit, batchOrSingle, type JsonOut } from './batch.js'
import { AlgorithmName, CanonicalAlgorithm, encodedFieldRule, errorResponsesWith, InputEncoding, OutputEncoding, ProcessingTime } from './schemas.js'

/** The 503 an audited operation adds (plugins/audit.ts). */
const AUDIT_503 = 'with keyName, AUDIT_FAIL=closed and the audit log cannot be written (urn:hashd:problem:audit-unavailable)'

/** Whether a request (or any item of a batch) names a key the server holds: only those are audited. */
function namesServerKey(body: { keyName?: unknown, items?: unknown[] }): boolean {
  return body.keyName !== undefined || (body.items?.some((item) => typeof item === 'object' && item !== null && 'keyName' in item) ?? false)
}

/** What the audit log keeps of a request: the message as its HMAC under the audit key; of a batch, the number of items. */
function auditInputs(body: { message?: unknown, items?: unknown[] }): Pick<AuditEvent, 'inputs' | 'details'> {
  return body.items !== undefined
    ? { details: { items: body.items.length } }
    : { inputs: typeof body.message === 'string' ? { message: body.message } : {} }
}

/**
 * Items of a batch under a key in a PKCS#11 token that may be in flight at once: the token makes
 * the HMACs of the items asked for together in one call on one session (keys/pkcs11/hmac.ts), so
 * items are handed to it a window at a time rather than one call per item: four groups of
 * GROUP_MAX, one per session of the default PKCS11_SESSIONS, so that the sessions work at once.
 * Other batches: 1.
 */
const TOKEN_BATCH_IN_FLIGHT = 1024
function tokenBatchInFlight(top: Partial<HmacRequest>, context: KeyContext): number {
  const key = top.keyName === undefined ? undefined : context.hmacKeys?.get(top.keyName)
  return key?.ring.versions.some((version) => !version.material.inMemory) ? TOKEN_BATCH_IN_FLIGHT : 1
}

const KeyName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$', description: 'A key this server holds for HMACs (HMAC_KEYS_FILE, purpose=hmac; GET /api/keys lists them), instead of `key`: the caller never holds the secret' })
const KeyVersion = Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'With keyName: a version other than the current one (any that still verifies: staged, current or previous)' })
const Key = Type.String({ minLength: 1, description: 'Your own secret key, instead of `keyName`; never logged' })

const KEY_RULES = 'Exactly one of `key` and `keyName` (both, or neither, is 400 with the pointers at fault); `keyVersion` goes with `keyName` only (400 with key); `keyEncoding` applies to `key` (ignored with keyName). '
  + 'A named key outside the API key\'s hmac-keys= is 403 insufficient-scope (scope hmac-keys, never the name); a name the server does not hold is 422 unknown-key; '
  + 'a key written purpose=webhooks (kept for /api/webhooks/*) is 422 key-purpose, the name not echoed; '
  + 'an algorithm the key does not allow (its algorithms=, default sha256) is 422 algorithm-not-allowed-for-key; without HMAC_KEYS_FILE a keyName is 422 no-hmac-keys.'

/** How a batch's key fields reach its items, and which of their mistakes are the whole batch's (domain/hmac.ts `checkHmacBatchTop`). */
const BATCH_KEY_RULES = ' An item that gives `key` or `keyName` takes none of `key`, `keyName`, `keyVersion` and `keyEncoding` from the top: its own key replaces the batch\'s. '
  + 'A key chosen at the top that no item could use is the whole batch\'s 4xx, before any item runs: key and keyName both, or keyVersion without keyName (400; the body\'s batch branch states them), '
  + 'a keyName outside the API key\'s hmac-keys= (403), unknown or on a server without HMAC keys (422), a keyVersion the key does not have (422). '
  + 'An algorithm or format at the top that the key does not allow is each item\'s problem, since an item may give its own.'

/** The key rules JSON Schema can state of a batch's own fields, for the document (checkHmacBatchTop checks them). */
const batchKeyRules = [
  { not: { required: ['key', 'keyName'] } },
  { anyOf: [{ required: ['keyName'] }, { properties: { keyVersion: false } }] },
]

/**
 * The key rules JSON Schema can state, for the document (a single request's branch; a batch item
 * that breaks one fails alone): exactly one of key and keyName; keyVersion (and, for /api/hmac,
 * format "tagged") only with keyName. The server checks them itself (domain/hmac.ts), naming the
 * fields at fault.
 */
const keyRules = (withFormat: boolean) => [
  { oneOf: [{ required: ['key'] }, { required: ['keyName'] }] },
  { anyOf: [{ required: ['keyName'] }, { properties: { keyVersion: false, ...(withFormat ? { format: { const: 'raw' } } : {}) } }] },
]

/** The encoded fields a batch's own fields are checked for (routes/batch.ts). */
const HMAC_ENCODED = [['message', 'inputEncoding'], ['key', 'keyEncoding']] as const
/** Which key an item uses: an item that gives `key` or `keyName` takes none of these from the top of its batch (domain/batch.ts). */
const KEY_CHOICE = { chosenBy: ['key', 'keyName'], fields: ['key', 'keyName', 'keyVersion', 'keyEncoding'] } as const
/** JSON strings of the few server-made names an HMAC answer repeats (algorithms, encodings, key names), made once each. */
const quotedNames = new Map<string, string>()
function quotedName(name: string): string {
  let quoted = quotedNames.get(name)
  if (quoted === undefined) {
    quoted = JSON.stringify(name)
    if (quotedNames.size < 1024) quotedNames.set(name, quoted)
  }
  return quoted
}

/**
 * A batch item's HMAC answer as JSON, written by hand: a batch of 1,000 spends more on its answer
 * than on its HMACs, and the compiled serializer checks every string for characters to escape.
 * Here only `reference` (the caller's) is escaped; `hmac` is hex, base64, base64url or a tag
 * (`hashd:v<digits>:<base64>`), written by the server in characters JSON never escapes, and the
 * names come from the server's registry and key file (quoted once each). Fields in the schema's
 * order, absent ones left out, as fast-json-stringify writes them, and no processingTimeMs (a batch
 * item has none: routes/batch.ts). Written in pieces, so that no string is made per item.
 */
export function writeHmacAnswer(result: HmacResult & { reference?: string }, out: JsonOut): boolean {
  if (result.reference === undefined) out.pushBytes(HMAC_OPENING)
  else {
    out.push('{"reference":')
    out.push(JSON.stringify(result.reference))
    out.push(',"hmac":"')
  }
  out.push(result.hmac)
  out.pushBytes(restOf(result))
  return true
}

const HMAC_OPENING = Buffer.from('{"hmac":"')

/** The fields after `hmac`, to the closing brace, the same item after item in a batch: made and encoded once while they stay the same. */
let lastRest = { algorithm: '', encoding: '', format: undefined as string | undefined, keyName: undefined as string | undefined, keyVersion: undefined as number | undefined, bytes: Buffer.alloc(0) }
function restOf(result: HmacResult): Buffer {
  const last = lastRest
  if (result.algorithm === last.algorithm && result.encoding === last.encoding && result.format === last.format && result.keyName === last.keyName && result.keyVersion === last.keyVersion) return last.bytes
  let text = `","algorithm":${quotedName(result.algorithm)},"encoding":${quotedName(result.encoding)}`
  if (result.format !== undefined) text += `,"format":${quotedName(result.format)}`
  if (result.keyName !== undefined) text += `,"keyName":${quotedName(result.keyName)}`
  if (result.keyVersion !== undefined) text += `,"keyVersion":${result.keyVersion}`
  text += '}'
  const bytes = Buffer.from(text)
  lastRest = { algorithm: result.algorithm, encoding: result.encoding, format: result.format, keyName: result.keyName, keyVersion: result.keyVersion, bytes }
  return bytes
}

export const hmacRoute: FastifyPluginAsyncTypebox<{ engine: Engine, config: Config }> = async (app, { engine, config }) => {
  const HmacAnswer = Type.Object({
    hmac: Type.String({ description: 'The HMAC in `encoding`, or with format "tagged" `hashd:v<version>:<base64>`' }),
    algorithm: CanonicalAlgorithm,
    encoding: OutputEncoding,
    format: Type.Optional(Type.Literal('tagged', { description: 'Present when the HMAC is tagged with its key version' })),
    keyName: Type.Optional(Type.String({ description: 'The named key used' })),
    keyVersion: Type.Optional(Type.Integer({ description: 'The version of the named key used' })),
    processingTimeMs: ProcessingTime,
  })

  app.post('/api/hmac', {
    config: { accepts: 'application/json' },
    bodyLimit: batchBodyLimit(config),
    schema: {
      tags: ['hashing'],
      summary: 'HMAC (RFC 2104) of a message, under your key or a key the server holds',
      description: 'Any digest with a defined HMAC; XOFs, checksums and password hashes are 400 urn:hashd:problem:algorithm-not-allowed. '
        + 'With `keyName` the server uses its own key (the current version, or `keyVersion`) and names the key and version in the answer; '
        + '`format: "tagged"` writes `hashd:v<version>:<base64>` so that POST /api/hmac/verify needs no version. '
        + `Rules the schema cannot state: ${KEY_RULES} `
        + 'A `keyVersion` the key does not have is 422 unknown-key-version; a retired one (or below min-verify-version) 422 key-version-retired. '
        + 'format "tagged" needs keyName (400 with key); its payload is always base64, whatever `encoding` says. '
        + 'A `key` or `message` not valid in its encoding (keyEncoding, inputEncoding; the body\'s `allOf` states the pattern for hex and base64) '
        + 'is 400 with the pointer /body/key or /body/message; a key that decodes to no bytes is 400 too.'
        + BATCH_DESCRIPTION('HMAC', config.batch) + BATCH_KEY_RULES,
      body: batchableBody({
        message: Type.String(),
        key: Type.Optional(Key),
        keyName: Type.Optional(KeyName),
        keyVersion: Type.Optional(KeyVersion),
        algorithm: Type.Optional(AlgorithmName('hmac', undefined, 'Hash function of the HMAC: with `key`, sha256 by default; with `keyName`, the key\'s first algorithm by default, and one of its algorithms.')),
        encoding: Type.Optional(OutputEncoding),
        format: Type.Optional(Type.Unsafe<'raw' | 'tagged'>({ type: 'string', enum: ['raw', 'tagged'], default: 'raw', description: 'raw: the HMAC in `encoding`; tagged: `hashd:v<version>:<base64>` (named keys only)' })),
        keyEncoding: Type.Optional(InputEncoding('key')),
        inputEncoding: Type.Optional(InputEncoding('message')),
      }, config.batch, { single: keyRules(true), shared: [encodedFieldRule('message', 'inputEncoding'), encodedFieldRule('key', 'keyEncoding')], batch: batchKeyRules }),
      response: {
        200: batchableResponse<HmacResult>(HmacAnswer, writeHmacAnswer),
        ...errorResponsesWith({
          503: AUDIT_503,
          400: 'both key and keyName, or neither; keyVersion or format tagged without keyName; a key or message not valid in its encoding, or a key of no bytes (/body/key, /body/message)',
          422: 'keyName without HMAC keys (no-hmac-keys), unknown (unknown-key), kept for webhooks (key-purpose), or with an algorithm it does not allow (algorithm-not-allowed-for-key); a keyVersion it does not have (unknown-key-version) or that is retired (key-version-retired); in a batch, per item, or for the whole batch when the field at fault is at the top',
        }),
      },
    },
  }, (request, reply) => {
    const context = app.keyContext(request)
    const body = request.body as HmacRequest & { items?: unknown[] }
    // The common case, one short HMAC: answered on this tick, no batch glue, no promise (as /api/hash).
    const single = body.items === undefined && request.bodyBytes <= config.bodyLimit
    const answer = (): HmacResult | Promise<HmacResult> | Promise<unknown> => {
      if (single) {
        const result = hmac(engine, body, context)
        if (result instanceof Promise) return result.finally(() => flushKeyCounts(context))
        flushKeyCounts(context)
        return result
      }
      return batchOrSingle<HmacRequest, HmacResult>(app, config, request, reply, (item) => hmac(engine, item, context, body.items === undefined ? {} : IN_BATCH), 'hmac',
        { encodedFields: HMAC_ENCODED, together: [KEY_CHOICE], checkTop: (top) => checkHmacBatchTop(top, context, 'hmac'), inFlight: (top) => tokenBatchInFlight(top, context) })
        .finally(() => flushKeyCounts(context))
    }
    // With a server key and an audit log, the answer waits for its line (plugins/audit.ts), by the same paths.
    if (app.audit !== null && namesServerKey(body)) {
      return auditKeyed(app, request, { operation: body.items === undefined ? 'hmac' : 'hmac.batch', ...auditInputs(body) }, answer)
    }
    return answer()
  })

  const VerifyAnswer = Type.Object({
    valid: Type.Boolean({ description: 'The HMAC is right for the message under the key (and version), and that version still verifies' }),
    algorithm: CanonicalAlgorithm,
    keyName: Type.Optional(Type.String({ description: 'The named key checked' })),
    keyVersion: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'The version checked: the tag\'s, keyVersion, or the one that matched; null when no version matched' })),
    rotateRecommended: Type.Boolean({ description: 'Valid under a version older than the key\'s current one: make the HMAC again (POST /api/hmac with keyName) and store the new one' }),
    reason: Type.Optional(Type.String({ description: 'Why it is not valid (a mismatch, a retired version, a version below min-verify-version), or which version it is valid under when rotateRecommended' })),
    processingTimeMs: ProcessingTime,
  })

  app.post('/api/hmac/verify', {
    config: { accepts: 'application/json' },
    bodyLimit: batchBodyLimit(config),
    schema: {
      tags: ['hashing'],
      summary: 'Check an HMAC of a message, under your key or a key the server holds',
      description: 'The comparison is constant-time. With `keyName`, a tagged HMAC (`hashd:v<version>:<base64>`, as POST /api/hmac makes with format "tagged") is checked '
        + 'under its version; an untagged one (hex, base64 or base64url) under `keyVersion`, or else under each version that verifies, newest first. '
        + '`rotateRecommended` is true when it is valid under a version older than the current one. Under a retired version, or one below the key\'s '
        + 'min-verify-version, it is `valid: false` with a `reason`; a version the key no longer has is 422 unknown-key-version. '
        + `Rules the schema cannot state: ${KEY_RULES} A tagged HMAC with \`key\`, a keyVersion that disagrees with the tag, or an hmac that is neither hex, base64 nor a tag is 400.`
        + BATCH_DESCRIPTION('check', config.batch) + BATCH_KEY_RULES,
      body: batchableBody({
        message: Type.String(),
        hmac: Type.String({ minLength: 1, maxLength: 2048, description: 'hex, base64 or base64url, or `hashd:v<version>:<base64>` from format "tagged"' }),
        key: Type.Optional(Key),
        keyName: Type.Optional(KeyName),
        keyVersion: Type.Optional(KeyVersion),
        algorithm: Type.Optional(AlgorithmName('hmac', undefined, 'Hash function of the HMAC: with `key`, sha256 by default; with `keyName`, the key\'s first algorithm by default.')),
        keyEncoding: Type.Optional(InputEncoding('key')),
        inputEncoding: Type.Optional(InputEncoding('message')),
      }, config.batch, { single: keyRules(false), shared: [encodedFieldRule('message', 'inputEncoding'), encodedFieldRule('key', 'keyEncoding')], batch: batchKeyRules }),
      response: {
        200: batchableResponse(VerifyAnswer),
        ...errorResponsesWith({
          503: AUDIT_503,
          400: 'both key and keyName, or neither; keyVersion without keyName or disagreeing with the tag; a tagged hmac with key; an hmac that is not hex, base64 or a well-formed tag (/body/hmac); a key or message not valid in its encoding',
          422: 'keyName without HMAC keys (no-hmac-keys), unknown (unknown-key), kept for webhooks (key-purpose), or with an algorithm it does not allow (algorithm-not-allowed-for-key); a version the key does not have (unknown-key-version); in a batch, per item, or for the whole batch when the field at fault is at the top',
        }),
      },
    },
  }, async (request, reply) => {
    const context = app.keyContext(request)
    const body = request.body as HmacVerifyRequest & { items?: unknown[] }
    const run = () => batchOrSingle<HmacVerifyRequest, HmacVerifyResult>(app, config, request, reply, (item) => verifyHmac(engine, item, context), 'hmac',
      { encodedFields: HMAC_ENCODED, together: [KEY_CHOICE], checkTop: (top) => checkHmacBatchTop(top, context, 'verify') })
    if (app.audit === null || !namesServerKey(body)) return run()
    return auditKeyed(app, request, { operation: body.items === undefined ? 'hmac.verify' : 'hmac.verify.batch', ...auditInputs(body) }, run,
      (result) => 'valid' in result ? (result.valid ? 'valid' : 'invalid') : 'ok')
  })
}
