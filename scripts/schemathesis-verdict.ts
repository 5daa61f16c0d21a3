/**
 * The verdict on one Schemathesis pass (scripts/schemathesis.sh): reads its NDJSON report and the
 * document it was run against, prints every failure, and exits 1 unless each one is excused.
 *
 * `node dist/scripts/schemathesis-verdict.js REPORT.ndjson OPENAPI.json [ST_EXIT_STATUS]`
 *
 * Only `positive_data_acceptance` can be excused (a request the document allows, answered 4xx), and
 * only by a rule in RUN_TIME_RULES: the operation, the status, the problem type and, for a
 * validation problem, the field it points at; and only while the operation's description (or the
 * description of that status) in the served document states the rule, so an excuse cannot outlive
 * its documentation. Every other failed check, and every error of Schemathesis's engine (a
 * connection reset, a timeout, an internal error), fails the pass.
 */
import { createReadStream, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

/** A rule the server checks at run time and the schema cannot state; its description says so. */
interface RunTimeRule {
  operation: string
  status: number
  /** The problem's type: `urn:hashd:problem:` and this kind. */
  kind: string
  /** For a validation problem: the pointer of every field at fault. */
  pointer?: string
  /** For a validation problem without a field: how its detail begins. */
  detail?: string
  /** Text the operation's description (or its status's) must contain: where the document states the rule. */
  stated: string
  why: string
}

const hash = (kind: string, why: string): RunTimeRule => ({ operation: 'POST /api/hash', status: 422, kind, stated: kind, why })
const verify = (kind: string, why: string): RunTimeRule => ({ operation: 'POST /api/verify', status: 422, kind, stated: `(${kind}`, why })
const checksums = (kind: string, stated: string, why: string): RunTimeRule => ({ operation: 'POST /api/checksums', status: 422, kind, stated, why })
const expected: Array<Omit<RunTimeRule, 'operation'>> = [
  { status: 400, kind: 'validation', pointer: '/querystring/expected', stated: 'an `expected` that is not a digest or checksum line', why: 'a digest or one checksum line, read by the checksum-list parser' },
  { status: 400, kind: 'validation', pointer: '/body/expected', stated: 'an `expected` that is not a digest or checksum line', why: 'a digest or one checksum line, read by the checksum-list parser' },
]

const RUN_TIME_RULES: readonly RunTimeRule[] = [
  hash('no-pepper-keys', 'the server has no PEPPER_KEYS_FILE'),
  {
    operation: 'POST /api/hash', status: 400, kind: 'validation', pointer: '/body/options/N',
    stated: 'scrypt\'s N must be a power of two below 2^(16·r)', why: 'scrypt\'s N against r (RFC 7914 §2)',
  },
  {
    operation: 'POST /api/hash', status: 400, kind: 'validation', pointer: '/body/options/memoryCost',
    stated: 'argon2\'s memoryCost at least 8·parallelism', why: 'argon2\'s m against p (RFC 9106 §3.1)',
  },
  hash('input-too-long', 'bcrypt\'s 72 bytes and crypt(3)\'s limits count bytes, not the characters JSON Schema counts'),
  hash('input-not-representable', 'a NUL byte in the bytes a crypt(3) scheme is given'),
  hash('tlsh-input', 'TLSH of too few bytes, or of bytes too uniform (the reference prints TNULL)'),
  hash('invalid-parameter', 'a content hash\'s parameters in options, read by its registry entry'),
  hash('not-text', 'bytes (hex, base64) that are not UTF-8 to a scheme defined on text'),
  verify('malformed-hash', 'each format\'s syntax, read by its parser'),
  verify('unrecognized-hash', 'a hash of no known form'),
  verify('cost-above-cap', 'costs inside the hash string above the caps'),
  verify('verify-not-supported', 'wrappers no single input verifies'),
  verify('unknown-pepper-key', 'a $pepper$ key the server does not have'),
  verify('pepper-key-mismatch', 'a $pepper$ string that does not open'),
  verify('input-not-representable', 'a NUL byte in the bytes a crypt(3) scheme is given'),
  verify('input-too-long', 'crypt(3) limits count bytes'),
  verify('not-text', 'bytes that are not UTF-8 to a scheme defined on text'),
  {
    operation: 'POST /api/verify', status: 422, kind: 'password-in-batch', stated: 'upgrade is 422 password-in-batch',
    why: 'a batch whose own upgrade (or algorithm) makes every item password work',
  },
  ...['POST /api/hmac', 'POST /api/hmac/verify'].flatMap((operation) => [
    { operation, status: 422, kind: 'no-hmac-keys', stated: 'without HMAC_KEYS_FILE a keyName is 422 no-hmac-keys', why: 'the server has no HMAC_KEYS_FILE' },
    { operation, status: 422, kind: 'unknown-key', stated: 'a name the server does not hold is 422 unknown-key', why: 'the names in HMAC_KEYS_FILE' },
    { operation, status: 422, kind: 'key-purpose', stated: 'kept for webhooks (key-purpose)', why: 'each key\'s purpose= in HMAC_KEYS_FILE' },
  ]),
  ...['POST /api/webhooks/verify', 'POST /api/webhooks/sign'].flatMap((operation) => [
    { operation, status: 422, kind: 'unknown-key', stated: 'a keyName no key has (urn:hashd:problem:unknown-key)', why: 'the names in HMAC_KEYS_FILE' },
    { operation, status: 422, kind: 'no-hmac-keys', stated: 'a keyName without HMAC keys (no-hmac-keys)', why: 'the server has no HMAC_KEYS_FILE' },
    { operation, status: 422, kind: 'key-purpose', stated: 'of a key not written purpose=webhooks (key-purpose', why: 'each key\'s purpose= in HMAC_KEYS_FILE' },
  ]),
  // The secret's form depends on the profile (whsec_ and base64 for Standard Webhooks, any text for
  // GitHub and Stripe), and only Standard Webhooks takes a public key: read by each profile's module.
  {
    operation: 'POST /api/webhooks/verify', status: 400, kind: 'validation', pointer: '/body/secret',
    stated: 'a secret not in the provider\'s form', why: 'the secret\'s form, read by the profile\'s module (whsec_ and base64 for Standard Webhooks)',
  },
  {
    operation: 'POST /api/webhooks/verify', status: 400, kind: 'validation', pointer: '/body/publicKey',
    stated: 'a publicKey that is not an Ed25519 key or given to a profile without one', why: 'the profile (only Standard Webhooks takes a public key) and the key\'s bytes',
  },
  {
    operation: 'POST /api/webhooks/sign', status: 400, kind: 'validation', pointer: '/body/secret',
    stated: 'a secret that is not whsec_ and base64', why: 'the secret\'s form, whsec_ and base64, read by the Standard Webhooks module',
  },
  {
    operation: 'POST /api/hmac/verify', status: 400, kind: 'validation', pointer: '/body/hmac',
    stated: 'an hmac that is neither hex, base64 nor a tag is 400', why: 'the hmac\'s form, hex, base64(url) or a tag, read by its parser',
  },
  {
    operation: 'POST /api/pepper/rewrap', status: 422, kind: 'not-a-password-hash', stated: 'not a password hash in a format hashd reads (not-a-password-hash)',
    why: 'the hash\'s format, read by its parser',
  },
  { operation: 'POST /api/pepper/rewrap', status: 422, kind: 'no-pepper-keys', stated: '422 without pepper keys', why: 'the server has no PEPPER_KEYS_FILE' },
  ...expected.map((rule) => ({ ...rule, operation: 'POST /api/filehash' })),
  ...expected.map((rule) => ({ ...rule, operation: 'PUT /api/filehash' })),
  {
    operation: 'POST /api/filehash', status: 400, kind: 'validation', detail: 'Send the "expected" field before the file part',
    stated: 'text fields must precede the file part', why: 'the order of multipart parts',
  },
  // The metadata says what to compute, so it must come before the file; JSON Schema cannot order parts.
  {
    operation: 'POST /api/filehash/verify', status: 400, kind: 'validation', detail: 'Send the "metadata" part before the file part',
    stated: 'no metadata part, or one after the file (pointer /body/metadata)', why: 'the order of multipart parts',
  },
  {
    operation: 'POST /api/filehash/verify', status: 422, kind: 'unknown-metadata', stated: 'urn:hashd:problem:unknown-metadata for metadata of no known shape',
    why: 'the metadata\'s shape, read by the store readers (src/content-hashes/metadata)',
  },
  {
    operation: 'POST /api/filehash/verify', status: 422, kind: 'invalid-metadata', stated: 'urn:hashd:problem:invalid-metadata naming the field',
    why: 'the fields of a known shape, read by its store\'s reader',
  },
  ...['POST /api/filehash', 'PUT /api/filehash'].map((operation) => ({
    operation, status: 422, kind: 'tlsh-input', stated: 'urn:hashd:problem:tlsh-input for an upload under 50 bytes',
    why: 'TLSH of too few bytes, or of bytes too uniform (the reference prints TNULL)',
  })),
  ...['POST /api/filehash', 'PUT /api/filehash'].map((operation) => ({
    operation, status: 422, kind: 'invalid-parameter', stated: 'urn:hashd:problem:invalid-parameter for a content-hash parameter',
    why: 'each content hash\'s parameters, read by its registry entry (src/content-hashes/parameters.ts): bounds, and the hashes that take them',
  })),
  ...(['/body/a', '/body/b'] as const).map((pointer) => ({
    operation: 'POST /api/similarity/compare', status: 400, kind: 'validation', pointer,
    stated: 'a or b not a hash of the algorithm\'s form (naming the field)', why: 'each similarity hash\'s form, read by its parser (src/similarity/)',
  })),
  // POST /api/similarity/match: the hash's form is read by its bank type's parser, the thresholds
  // against the algorithm, and the banks are those of SIMILARITY_BANKS_DIR (none in a bare server).
  ...[
    ['/body/algorithm', '`algorithm` is required'],
    ['/body/hash', 'a hash not of the algorithm\'s form is 400 naming the field'],
    ['/body/maxDistance', 'maxDistance or minScore out of the algorithm\'s range'],
    ['/body/minScore', 'maxDistance or minScore out of the algorithm\'s range'],
    ['/body/lengthTerm', 'lengthTerm with anything but tlsh'],
    ['/body/dihedral', 'dihedral with anything but pdq'],
  ].map(([pointer, stated]) => ({
    operation: 'POST /api/similarity/match', status: 400, kind: 'validation', pointer: pointer!, stated: stated!,
    why: 'each bank type\'s hash form and thresholds, read by src/similarity/match.ts',
  })),
  { operation: 'POST /api/similarity/match', status: 422, kind: 'no-banks', stated: 'urn:hashd:problem:no-banks', why: 'the banks of SIMILARITY_BANKS_DIR (none without it)' },
  { operation: 'POST /api/similarity/match', status: 422, kind: 'bank-type-mismatch', stated: 'urn:hashd:problem:bank-type-mismatch', why: 'each bank\'s type, read from its file' },
  { operation: 'POST /api/similarity/match', status: 404, kind: 'unknown-bank', stated: 'urn:hashd:problem:unknown-bank', why: 'the banks of SIMILARITY_BANKS_DIR' },
  ...([['no-banks', 'urn:hashd:problem:no-banks', 'the banks of SIMILARITY_BANKS_DIR (none without it)'], ['bank-type-mismatch', 'urn:hashd:problem:bank-type-mismatch', 'each bank\'s type, read from its file'],
    ['tlsh-input', 'urn:hashd:problem:tlsh-input', 'TLSH of too few bytes, or of bytes too uniform (the reference prints TNULL)'], ['not-an-image', 'urn:hashd:problem:not-an-image', 'the upload\'s bytes, sniffed'],
    ['undecodable-image', 'urn:hashd:problem:undecodable-image', 'the image\'s bytes, read by the decoder']] as const).map(([kind, stated, why]) => ({
    operation: 'POST /api/similarity/match/file', status: 422, kind, stated, why,
  })),
  { operation: 'POST /api/similarity/match/file', status: 404, kind: 'unknown-bank', stated: 'urn:hashd:problem:unknown-bank', why: 'the banks of SIMILARITY_BANKS_DIR' },
  ...['/querystring/algorithms', '/body/algorithms'].map((pointer) => ({
    operation: 'POST /api/similarity/match/file', status: 400, kind: 'validation', pointer, stated: '`algorithms` naming anything but ssdeep, tlsh and pdq', why: 'the names of the three similarity hashes',
  })),
  {
    operation: 'POST /api/similarity/match/file', status: 400, kind: 'validation', detail: 'Send the "dihedral" field before the file part',
    stated: '`algorithms` and `dihedral` before the file part', why: 'the order of multipart parts',
  },
  {
    operation: 'POST /api/similarity/match/file', status: 400, kind: 'validation', detail: 'Send the "algorithms" field before the file part',
    stated: '`algorithms` and `dihedral` before the file part', why: 'the order of multipart parts',
  },
  checksums('no-checksum-lines', 'A list with no usable line', 'the lines of the uploaded list'),
  checksums('malformed-signature', 'a bad or malformed signature', 'the signature file\'s syntax'),
  checksums('bad-signature', 'a bad or malformed signature', 'a signature that does not verify'),
  checksums('wrong-key', 'a signature by another key', 'a signature by another key'),
  checksums('unsupported-signature', 'an unsupported signature scheme', 'a signature scheme hashd does not verify'),
]

interface Check { name: string, status: string, failure_info?: { failure?: { type?: string, message?: string } } }
interface Body { $base64?: string, string?: string }
interface Interaction {
  request?: { method?: string, uri?: string, body?: Body | null }
  response?: { status_code?: number, content?: Body | null } | null
}
interface Recorder { label?: string, checks?: Record<string, Check[]>, interactions?: Record<string, Interaction> }
interface ProblemBody { type?: unknown, detail?: unknown, errors?: Array<{ pointer?: unknown }> }

interface Finding { key: string, text: string, excusedBy?: RunTimeRule }

function decode(body: Body | null | undefined): string {
  if (!body) return ''
  if (typeof body.$base64 === 'string') return Buffer.from(body.$base64, 'base64').toString('utf8')
  return typeof body.string === 'string' ? body.string : ''
}

function parseProblem(text: string): ProblemBody | undefined {
  try {
    const parsed = JSON.parse(text) as unknown
    return parsed !== null && typeof parsed === 'object' ? parsed as ProblemBody : undefined
  } catch {
    return undefined
  }
}

type Operations = Map<string, string>

/** `POST /api/hash` → the operation's description and its responses' descriptions, as one text. */
function operationTexts(document: { paths?: Record<string, Record<string, { description?: string, summary?: string, responses?: Record<string, { description?: string }> }>> }): Operations {
  const texts: Operations = new Map()
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      const responses = Object.entries(operation.responses ?? {}).map(([status, response]) => `${status}: ${response.description ?? ''}`)
      texts.set(`${method.toUpperCase()} ${path}`, [operation.summary ?? '', operation.description ?? '', ...responses].join('\n'))
    }
  }
  return texts
}

/** The rule that excuses this rejected positive case, if any. */
function excuse(operation: string, status: number | undefined, body: string, operations: Operations, rules = RUN_TIME_RULES): RunTimeRule | undefined {
  const problem = parseProblem(body)
  if (status === undefined || problem === undefined || typeof problem.type !== 'string') return undefined
  const pointers = (problem.errors ?? []).map((error) => String(error.pointer))
  const detail = typeof problem.detail === 'string' ? problem.detail : ''
  return rules.find((rule) => rule.operation === operation && rule.status === status && `urn:hashd:problem:${rule.kind}` === problem.type
    && (rule.pointer === undefined || (pointers.length > 0 && pointers.every((pointer) => pointer === rule.pointer)))
    && (rule.detail === undefined || detail.startsWith(rule.detail))
    && (rule.kind !== 'validation' || rule.pointer !== undefined || rule.detail !== undefined)
    && (operations.get(operation) ?? '').includes(rule.stated))
}

async function main(): Promise<number> {
  const [reportPath, documentPath, stStatusText = '0'] = process.argv.slice(2)
  if (reportPath === undefined || documentPath === undefined) {
    process.stderr.write('usage: schemathesis-verdict REPORT.ndjson OPENAPI.json [ST_EXIT_STATUS]\n')
    return 2
  }
  const operations = operationTexts(JSON.parse(readFileSync(documentPath, 'utf8')) as Parameters<typeof operationTexts>[0])
  const findings = new Map<string, Finding>()
  const add = (finding: Finding) => { if (!findings.has(finding.key)) findings.set(finding.key, finding) }
  let finished = false
  let seed: unknown

  const lines = createInterface({ input: createReadStream(reportPath, 'utf8'), crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    const event = JSON.parse(line) as Record<string, Record<string, unknown>>
    const [kind = '', value = {}] = Object.entries(event)[0] ?? []
    if (kind === 'Initialize') seed = value.seed
    if (kind === 'ScenarioFinished' || kind === 'FuzzScenarioFinished') {
      const recorder = value.recorder as Recorder | undefined
      for (const [caseId, checks] of Object.entries(recorder?.checks ?? {})) {
        for (const check of checks) {
          if (check.status === 'success' || check.status === 'skip') continue
          const interaction = recorder?.interactions?.[caseId]
          const label = recorder?.label ?? `${interaction?.request?.method ?? '?'} ${interaction?.request?.uri ?? '?'}`
          const status = interaction?.response?.status_code
          const body = decode(interaction?.response?.content)
          const problem = parseProblem(body)
          const pointers = (problem?.errors ?? []).map((error) => String(error.pointer)).join(',')
          const excusedBy = check.name === 'positive_data_acceptance' ? excuse(label, status, body, operations) : undefined
          const message = check.failure_info?.failure?.message?.split('\n')[0] ?? check.status
          const request = decode(interaction?.request?.body).slice(0, 300).replace(/\s+/g, ' ')
          add({
            key: `${check.name} ${label} ${status} ${String(problem?.type)} ${pointers}`,
            text: `${check.name} on ${label}: ${message}; ${status ?? 'no response'} ${body.slice(0, 300)}`
              + `\n      request (case ${caseId}): ${interaction?.request?.uri ?? ''} ${request}`,
            excusedBy,
          })
        }
      }
    }
    if (kind === 'NonFatalError') {
      const info = (value.value ?? value.info) as unknown
      add({ key: `error ${String(value.label)} ${JSON.stringify(info).slice(0, 200)}`, text: `engine error on ${String(value.label)} (${String(value.phase)}): ${JSON.stringify(info).slice(0, 600)}` })
    }
    if (kind === 'FatalError') add({ key: `fatal ${line.slice(0, 200)}`, text: `fatal error: ${line.slice(0, 600)}` })
    if (kind === 'Interrupted') add({ key: 'interrupted', text: `interrupted in phase ${String(value.phase)}` })
    if (kind === 'EngineFinished') {
      finished = true
      for (const failure of (value.failures as unknown[] | undefined) ?? []) add({ key: `after_run ${JSON.stringify(failure).slice(0, 200)}`, text: `failure after the run: ${JSON.stringify(failure).slice(0, 600)}` })
    }
  }
  if (!finished) add({ key: 'unfinished', text: 'the report ends before EngineFinished: Schemathesis did not finish' })

  const excused = [...findings.values()].filter((finding) => finding.excusedBy)
  const failures = [...findings.values()].filter((finding) => !finding.excusedBy)
  const stStatus = Number(stStatusText)
  if (failures.length === 0 && excused.length === 0 && stStatus !== 0) {
    failures.push({ key: 'status', text: `Schemathesis exited ${stStatus} with no failure in its report` })
  }
  const byRule = new Map<RunTimeRule, number>()
  for (const finding of excused) byRule.set(finding.excusedBy as RunTimeRule, (byRule.get(finding.excusedBy as RunTimeRule) ?? 0) + 1)
  for (const [rule, count] of byRule) {
    process.stdout.write(`verdict: excused ${count}× positive_data_acceptance on ${rule.operation}: ${rule.status} ${rule.kind}${rule.pointer ? ` at ${rule.pointer}` : ''} (${rule.why}; stated: "${rule.stated}")\n`)
  }
  for (const finding of failures) process.stdout.write(`verdict: FAILURE ${finding.text}\n`)
  process.stdout.write(`verdict: seed ${String(seed)}: ${failures.length} failure(s), ${excused.length} rejection(s) excused by run-time rules\n`)
  return failures.length === 0 ? 0 : 1
}

process.exitCode = await main()
