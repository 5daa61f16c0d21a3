/**
 * GET /api/algorithms, GET /api/health (liveness) and GET /api/ready (readiness), with the meaning
 * Kubernetes gives its probes: liveness says "the process works, do not restart it"; readiness says
 * "send this instance traffic". Readiness turns false while draining, Redis does not enter it.
 *
 * Health answers anyone what a load balancer needs (status, degraded, the two store states: words
 * from fixed sets, no paths or reasons); the details (the pool's load, the files with their last
 * errors, screening) only a request whose API key has a detail scope (src/keys/scopes.ts), so an
 * instance without API_KEYS_FILE never serves them over HTTP: the log and the metrics hold them.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import { problems } from '../problem.js'
import { Problem } from './schemas.js'
import type { Config } from '../config.js'
import { algorithms, operationsFor } from '../algorithms/registry.js'
import type { Algorithm, OptionSpec } from '../algorithms/types.js'
import { digestOptionSpecs } from '../domain/options.js'
import type { Engine } from '../domain/engine.js'
import { reloadStatuses } from '../file-reload.js'
import { HEALTH_DETAIL_SCOPES } from '../keys/scopes.js'
import { storesInForce } from '../screening/status.js'

function describeOptions(specs: Record<string, OptionSpec>, config: Config) {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, {
    default: spec.default, min: spec.min, max: Math.min(spec.max, spec.cap?.(config.caps) ?? spec.max), description: spec.description,
  }]))
}

function describe(algorithm: Algorithm, config: Config) {
  const common = {
    name: algorithm.name, displayName: algorithm.displayName, aliases: algorithm.aliases, kind: algorithm.kind,
    operations: operationsFor(algorithm), reference: algorithm.reference, implementation: algorithm.implementation,
  }
  if (algorithm.kind === 'password') {
    return { ...common, family: algorithm.family, outputBits: null, reads: algorithm.reads, writes: algorithm.writes, options: describeOptions(algorithm.options, config) }
  }
  return { ...common, outputBits: algorithm.kind === 'similarity' ? null : algorithm.outputBytes * 8, options: describeOptions(digestOptionSpecs(algorithm.outputBytes, algorithm.outputLength), config) }
}

const Option = Type.Object({ default: Type.Number(), min: Type.Number(), max: Type.Number(), description: Type.String() })
const AlgorithmInfo = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  aliases: Type.Array(Type.String()),
  kind: Type.Union([Type.Literal('digest'), Type.Literal('xof'), Type.Literal('checksum'), Type.Literal('similarity'), Type.Literal('password')]),
  family: Type.Optional(Type.String()),
  outputBits: Type.Union([Type.Integer(), Type.Null()], { description: 'Output size (for XOFs, the default); null for password hashes and similarity hashes, whose text forms are their output' }),
  operations: Type.Array(Type.String(), { description: 'The operations that accept it: hash, verify, filehash, hmac' }),
  reads: Type.Optional(Type.Array(Type.String())),
  writes: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  options: Type.Record(Type.String(), Option, { description: 'Options of /api/hash with their defaults and bounds (max includes the server cap)' }),
  reference: Type.String(),
  implementation: Type.String(),
})

/**
 * The rate-limit store's state: its schema and which states count as degraded, in one place (the
 * summary that anyone may read carries it).
 */
const RateLimitStore = Type.Union([Type.Literal('memory'), Type.Literal('redis'), Type.Literal('degraded'), Type.Literal('off')], {
  description: 'Where rate-limit counters live: "memory" (this process; no REDIS_URL), "redis" (shared by every instance), ' +
    '"degraded" (REDIS_URL is set but Redis is unreachable or slow: each instance counts alone, with the same budgets, until it returns; ' +
    'the service itself is healthy, so the status stays 200), "off" (RATE_LIMIT_MAX=0)',
})
const rateLimitStoreDegraded = (state: Static<typeof RateLimitStore>): boolean => state === 'degraded'

const ReplayStore = Type.Union([Type.Literal('memory'), Type.Literal('redis'), Type.Literal('degraded')], {
  description: 'Where verified webhooks are remembered for replay protection: "memory" (this process; no REDIS_URL), "redis" (shared by every instance, ' +
    'also when RATE_LIMIT_MAX=0), "degraded" (REDIS_URL is set but Redis is unreachable: a webhook whose signature is valid gets 503 until it returns; the status stays 200)',
})

const HsmReason = Type.Unsafe<string>({ type: 'string', enum: ['module', 'token-missing', 'pin', 'device', 'busy', 'key-missing'], description: 'While degraded: which way' })

/** Present only for an API key with a detail scope (src/keys/scopes.ts HEALTH_DETAIL_SCOPES). */
const detailOnly = ' Only for an API key with the health or metrics scope.'

const Health = Type.Object({
  status: Type.Literal('ok'),
  degraded: Type.Boolean({
    description: 'true while the rate-limit store or the replay store is degraded, the audit log cannot be written, the last reload of a watched file failed, or a similarity bank file was refused (the old version stays ' +
      'in force). The instance still serves, so the status stays 200: an alert, not a reason to stop sending traffic',
  }),
  rateLimitStore: RateLimitStore,
  replayStore: ReplayStore,
  auditLog: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('failing')], {
    description: 'With AUDIT_LOG: "failing" while a line cannot be written (with AUDIT_FAIL=closed, keyed operations answer 503 audit-unavailable until one can; ' +
      'the status stays 200); absent without an audit log',
  })),
  keySource: Type.Optional(Type.Union([Type.Literal('hsm'), Type.Literal('degraded')], {
    description: 'With PKCS11_MODULE: "hsm" while the module and every token the keys name serve, "degraded" while the module or any token cannot (module not loadable, token missing, PIN refused, device gone): ' +
      'operations needing a key in a token that cannot serve answer 503 key-source-unavailable until it is back, keys in other tokens and other operations keep working; the status stays 200 ' +
      '(hsm.tokens says which token). Absent without PKCS11_MODULE',
  })),
  hsm: Type.Optional(Type.Object({
    reason: Type.Optional(HsmReason),
    detail: Type.Optional(Type.String({ description: 'While degraded: what failed (the module, or the first token that cannot serve, named), naming variables and PKCS#11 return values, never the PIN' })),
    sessionsOpen: Type.Integer({ description: 'PKCS#11 sessions open, all tokens together' }),
    sessionsBusy: Type.Integer({ description: 'Sessions serving a call now, all tokens together' }),
    waiting: Type.Integer({ description: 'Calls waiting for a session, all tokens together' }),
    sessionsMax: Type.Integer({ description: 'PKCS11_SESSIONS times the tokens named' }),
    logins: Type.Integer({ description: 'C_Login calls since start, all tokens together (a PIN a token refused is not tried again until its PIN file changes)' }),
    tokens: Type.Array(Type.Object({
      token: Type.String({ description: 'The token as the keys\' URIs name it: token=LABEL, serial=SERIAL (or both), or "the module\'s only token"' }),
      state: Type.Union([Type.Literal('ready'), Type.Literal('degraded'), Type.Literal('idle')], {
        description: '"ready": logged in and serving; "degraded": its keys answer 503 (reason, detail); "idle": not opened yet',
      }),
      reason: Type.Optional(HsmReason),
      detail: Type.Optional(Type.String({ description: 'While degraded: what failed, never the PIN' })),
      sessionsOpen: Type.Integer({ description: 'Sessions open in this token' }),
      sessionsBusy: Type.Integer({ description: 'Sessions serving a call now' }),
      waiting: Type.Integer({ description: 'Calls waiting for a session of this token' }),
      sessionsMax: Type.Integer({ description: 'PKCS11_SESSIONS' }),
      logins: Type.Integer({ description: 'C_Login calls on this token since start' }),
    }), { description: 'Each token the keys name, in the order first named' }),
  }, { description: `The PKCS#11 module (PKCS11_MODULE) and its tokens.${detailOnly}` })),
  work: Type.Optional(Type.Object({
    threads: Type.Integer({ description: 'Worker threads (WORKER_THREADS)' }),
    running: Type.Integer({ description: 'Tasks running on the threads now' }),
    queued: Type.Integer({ description: 'Tasks waiting for a thread or for memory, in arrival order' }),
    memoryBudgetBytes: Type.Integer({ description: 'MAX_WORK_MEMORY_BYTES: the memory running tasks may declare together' }),
    memoryInUseBytes: Type.Integer({ description: 'Memory the running tasks declare (argon2 m KiB, scrypt and yescrypt 128·N·r, others 1 MiB)' }),
    started: Type.Integer({ description: 'Tasks handed to a thread since start' }),
  }, { description: `The worker pool that runs password hashing and large digests.${detailOnly}` })),
  files: Type.Optional(Type.Array(Type.Object({
    source: Type.String({ description: 'What the file holds: api-keys, pepper-keys, …' }),
    loadedAt: Type.String({ format: 'date-time', description: 'When the version in force was loaded' }),
    loads: Type.Integer({ description: 'Successful loads since start, the first one included' }),
    failures: Type.Integer({ description: 'Failed reloads since start' }),
    lastError: Type.Optional(Type.Object({
      at: Type.String({ format: 'date-time' }),
      reason: Type.String({ description: 'The variable, file and line at fault; never a field\'s contents' }),
    }, { description: 'Present while the last reload failed: the version loaded at loadedAt stays in force' })),
  }), {
    description: 'Files read again when they change and on SIGHUP (keys files, certificates, stores). A failed reload keeps the ' +
      `version in force and does not make the instance unhealthy: the status stays 200, degraded turns true, lastError says what to fix.${detailOnly}`,
  })),
  screening: Type.Optional(Type.Object({
    mode: Type.Unsafe<string>({ type: 'string', enum: ['off', 'warn', 'reject'], description: 'PASSWORD_SCREENING' }),
    fail: Type.Unsafe<string>({ type: 'string', enum: ['open', 'closed'], description: 'PASSWORD_SCREENING_FAIL' }),
    commonPasswords: Type.Integer({ description: 'Entries of the built-in common-password list' }),
    blocklist: Type.Union([Type.Integer(), Type.Null()], { description: 'Entries of PASSWORD_BLOCKLIST_FILE, or null without it' }),
    stores: Type.Array(Type.Object({
      kind: Type.Unsafe<string>({ type: 'string', enum: ['sha1', 'ntlm'], description: 'sha1 (PWNED_STORE) or ntlm (PWNED_NTLM_STORE)' }),
      hashes: Type.Integer({ description: 'Hashes in the store in force' }),
      occurrences: Type.Integer({ description: 'The sum of their counts' }),
      bytes: Type.Integer({ description: 'The store file\'s size' }),
      dataDate: Type.String({ format: 'date-time', description: 'When the imported data was downloaded (the newest input file\'s modification time)' }),
      importedAt: Type.String({ format: 'date-time', description: 'When npm run pwned:import made the store' }),
      id: Type.String({ description: 'The first 16 hex digits of the data\'s SHA-256 (part of /range ETags)' }),
    }), { description: 'The breached-password stores in force; their loads and reload failures are under files (pwned-store, pwned-ntlm-store)' }),
  }, { description: `Password screening (docs/passwords.md).${detailOnly}` })),
  similarity: Type.Optional(Type.Object({
    banks: Type.Array(Type.Object({
      name: Type.String({ description: 'The bank\'s name: its file\'s name in SIMILARITY_BANKS_DIR without .bank' }),
      state: Type.Union([Type.Literal('serving'), Type.Literal('refused')], { description: '"serving": a version of the bank is in force; "refused": its file did not open and no version is in force' }),
      type: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['pdq', 'tlsh', 'ssdeep', 'md5', 'sha1', 'sha256'], description: 'What the bank holds' })),
      count: Type.Optional(Type.Integer({ description: 'Entries in the version in force' })),
      dataSha256: Type.Optional(Type.String({ description: 'The SHA-256 of the bank\'s data, as npm run bank:import printed it' })),
      bytes: Type.Optional(Type.Integer({ description: 'The bank file\'s size' })),
      loadedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the version in force was opened' })),
      lastError: Type.Optional(Type.Object({
        at: Type.String({ format: 'date-time' }),
        reason: Type.String({ description: 'The file and what is wrong with it (damaged, truncated, another format version)' }),
      }, { description: 'Present while the bank\'s file on disk was refused: the version loaded at loadedAt, if any, stays in force' })),
    })),
  }, { description: `The similarity banks of SIMILARITY_BANKS_DIR (docs/similarity.md), absent without it; a refused file makes degraded true.${detailOnly}` })),
}, {
  description: 'Liveness. Anyone gets status, degraded and the two store states (no key is needed: probes carry none); work, files, screening and the similarity banks '
    + 'only a request whose API key has the health or metrics scope, so without API_KEYS_FILE they are never served (they are in the log and the metrics)',
})

const Ready = Type.Object({ status: Type.Literal('ready') })

export const metaRoutes: FastifyPluginAsyncTypebox<{ config: Config, engine: Engine }> = async (app, { config, engine }) => {
  // Readiness: false until the server listens, and again from the moment a shutdown starts (SIGTERM
  // calls app.close(), which runs preClose before the listener closes), so a load balancer stops
  // sending traffic while the requests in flight finish. Nothing else enters it: an instance whose
  // Redis is down still serves (each instance counts its limits alone), and one whose pool is busy answers 503 per request.
  let state: 'starting' | 'ready' | 'draining' = 'starting'
  app.addHook('onListen', (done) => {
    if (state === 'starting') state = 'ready'
    done()
  })
  app.addHook('preClose', (done) => {
    state = 'draining'
    done()
  })

  // Built once: the registry and the caps do not change while the server runs.
  const catalogue = { algorithms: algorithms.map((algorithm) => describe(algorithm, config)) }
  app.get('/api/algorithms', {
    schema: { tags: ['meta'], summary: 'Every algorithm and password-hash format, with aliases, kind, operations and option bounds', response: { 200: Type.Object({ algorithms: Type.Array(AlgorithmInfo) }) } },
  }, async () => catalogue)

  app.get('/api/health', {
    config: { rateLimit: false },
    schema: { tags: ['meta'], summary: 'Liveness and whether anything is degraded; with a key holding health or metrics, the worker pool, files and screening', response: { 200: Health } },
  }, async (request) => {
    const rateLimitStore = app.hasDecorator('rateLimitStoreState') ? app.rateLimitStoreState() : 'off' as const
    const replayStore = app.replayStore.state()
    const files = reloadStatuses()
    const banks = app.banks?.value.statuses() ?? null
    const auditFailing = app.audit?.failing ?? false
    const token = app.keyRing.pkcs11?.state ?? null
    const tokenDegraded = token?.state === 'degraded'
    const summary = {
      status: 'ok' as const,
      degraded: rateLimitStoreDegraded(rateLimitStore) || replayStore === 'degraded' || auditFailing || tokenDegraded || files.some((file) => file.lastError !== undefined)
        || (banks?.some((bank) => bank.lastError !== undefined) ?? false),
      rateLimitStore,
      replayStore,
      ...(app.audit === null ? {} : { auditLog: auditFailing ? 'failing' as const : 'ok' as const }),
      ...(token === null ? {} : { keySource: tokenDegraded ? 'degraded' as const : 'hsm' as const }),
    }
    const key = request.apiKey
    if (key === null || !HEALTH_DETAIL_SCOPES.some((scope) => key.scopes.has(scope))) return summary
    return {
      ...summary,
      work: engine.stats(),
      ...(token === null ? {} : {
        hsm: {
          ...(token.reason === undefined ? {} : { reason: token.reason }), ...(token.detail === undefined ? {} : { detail: token.detail }),
          sessionsOpen: token.sessions.open, sessionsBusy: token.sessions.busy, waiting: token.sessions.waiting, sessionsMax: token.sessions.max, logins: token.logins,
          tokens: token.tokens.map((each) => ({
            token: each.token, state: each.state,
            ...(each.reason === undefined ? {} : { reason: each.reason }), ...(each.detail === undefined ? {} : { detail: each.detail }),
            sessionsOpen: each.sessions.open, sessionsBusy: each.sessions.busy, waiting: each.sessions.waiting, sessionsMax: each.sessions.max, logins: each.logins,
          })),
        },
      }),
      files,
      screening: {
        mode: app.screening.policy.mode, fail: app.screening.policy.fail, commonPasswords: app.screening.commonPasswords, blocklist: app.screening.blocklistEntries,
        stores: storesInForce().map(({ file: _file, ...facts }) => facts),
      },
      ...(banks === null ? {} : { similarity: { banks } }),
    }
  })

  app.get('/api/ready', {
    config: { rateLimit: false },
    schema: {
      tags: ['meta'],
      summary: 'Readiness: whether this instance should get traffic (503 while starting or shutting down; Redis does not enter it)',
      response: { 200: Ready, 503: { ...Problem, description: 'Not ready: starting, or draining after SIGTERM; see Retry-After' } },
    },
  }, async () => {
    if (state !== 'ready') throw problems.notReady(state)
    return { status: 'ready' as const }
  })
}
