/**
 * The application as a plugin tree (cf. fastify/demo): external plugins, then hashd's own
 * cross-cutting plugins (body parsing, rate limits, errors, OpenAPI), then the routes.
 */
import { randomBytes } from 'node:crypto'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import { Engine } from './domain/engine.js'
import { lingerOnClose } from './lingering-close.js'
import { describeTls, MIN_TLS_VERSION, plaintextWarning, readTlsMaterial, reloadTls, tlsServerOptions } from './tls.js'
import { problems } from './problem.js'
import auditPlugin from './plugins/audit.js'
import authPlugin from './plugins/auth.js'
import banksPlugin from './plugins/banks.js'
import batchedWritesPlugin from './plugins/batched-writes.js'
import bodyPlugin from './plugins/body.js'
import errorsPlugin, { clientErrorHandler } from './plugins/errors.js'
import keysPlugin from './plugins/keys.js'
import { accessLogHook, lazyChildLoggerFactory, loggerOptions } from './plugins/logging.js'
import metricsPlugin from './plugins/metrics.js'
import openapiPlugin from './plugins/openapi.js'
import passwordsPlugin from './plugins/passwords.js'
import rateLimitPlugin from './plugins/rate-limit.js'
import screeningPlugin from './plugins/screening.js'
import webPlugin from './plugins/web.js'
import { auditRoute } from './routes/audit.js'
import { calibrateRoute } from './routes/calibrate.js'
import { checksumsRoute } from './routes/checksums.js'
import { fileHashRoute } from './routes/filehash.js'
import { fileVerifyRoute } from './routes/filehash-verify.js'
import { hashRoute } from './routes/hash.js'
import { hmacRoute } from './routes/hmac.js'
import { keysRoute } from './routes/keys.js'
import { identifyRoute } from './routes/identify.js'
import { metaRoutes } from './routes/meta.js'
import { similarityRoutes } from './routes/similarity.js'
import { matchFileRoute, matchRoute } from './routes/similarity-match.js'
import { passwordPolicyRoute } from './routes/password-policy.js'
import { passwordsCheckRoute } from './routes/passwords-check.js'
import { pepperRoute } from './routes/pepper.js'
import { rangeRoute } from './routes/range.js'
import { verifyRoute } from './routes/verify.js'
import { webhooksRoute } from './routes/webhooks.js'
import { sharedCompilers } from './schema-compilers.js'

/** How long a plugin may take to open before the start fails (avvio's default is 10 s). */
export const PLUGIN_TIMEOUT_MS = 600_000

export interface BuildOptions {
  /** Where logs go (tests capture them); defaults to stdout. */
  logStream?: NodeJS.WritableStream
}

/**
 * Request ids unique across restarts and cheap per request: a random prefix per process and a
 * counter, rather than a UUID generated per request.
 */
function requestIds(): () => string {
  const prefix = randomBytes(6).toString('base64url')
  let counter = 0
  return () => `${prefix}-${(counter++).toString(36)}`
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  // Slow clients cannot hold connections open (slowloris): headers and whole requests are timed.
  // Node checks these deadlines only every connectionsCheckingInterval (30 s by default), which
  // would let a client hold a connection far past a short HEADERS_TIMEOUT_MS; check at a quarter of it.
  const serverOptions = {
    headersTimeout: config.headersTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(config.headersTimeoutMs / 4))),
  }
  // HTTPS (tls.ts): a bad certificate or key stops the start here, with a ConfigError. Fastify makes
  // an https server of `https` alone, so the server options go there too.
  const tlsMaterial = config.tls === null ? null : readTlsMaterial(config.tls)
  const app = Fastify({
    ...(tlsMaterial === null ? {} : { https: { ...serverOptions, ...tlsServerOptions(tlsMaterial) } }),
    logger: loggerOptions(config, options.logStream),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    genReqId: requestIds(),
    requestIdHeader: false,
    // Fastify's own per-request lines are off: the onResponse hook below writes the one access line.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made when first used, not for every request (see plugins/logging.ts).
    childLoggerFactory: lazyChildLoggerFactory,
    connectionTimeout: config.requestTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    http: serverOptions,
    // Errors Node raises before a request exists (timeouts, malformed HTTP) also leave as problem+json.
    clientErrorHandler,
    // An idle connection waits this long for its next request (advertised as Keep-Alive: timeout=N;
    // Node closes it a second later, so a client that keeps to N never sends on a closing socket).
    // The header and request deadlines count from a request's first byte, not from the idle time
    // before it (so since Node 12.19, nodejs/node#32329): they need not exceed this one.
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // During a graceful shutdown, requests that still arrive on open keep-alive connections get a
    // problem+json 503 with Retry-After from the hook below, not Fastify's own JSON 503.
    return503OnClosing: false,
    // Plugins that open stores do work in proportion to their size before the server listens: a
    // 10 M-hash PDQ bank builds its slice tables in 10–25 s on a loaded 2-core machine, past avvio's
    // default of 10 s, and the server refused to start (bench:banks-http at 10 M). The limit is a
    // backstop against a plugin that never settles, not a deadline for work; the orchestrator's
    // startup probe is the deadline (docs/deployment.md, "Similarity banks on Kubernetes").
    pluginTimeout: PLUGIN_TIMEOUT_MS,
    // maxParamLength: above every path parameter's maxLength, so that a long one is the route's 400
    // problem rather than find-my-way's plain-JSON 414 (the request line is bounded by Node anyway).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
    // Validators and serializers compiled once per process, however many apps it builds (schema-compilers.ts).
    schemaController: { compilersFactory: sharedCompilers },
    ajv: {
      // No coercion ("input": 123 is 400, not "123") and no silent removal of unknown keys.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: true, strict: true },
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  // A refusal sent before its body has arrived reaches the client instead of a reset (lingering-close.ts).
  const lingering = lingerOnClose(app.server)
  if (config.tls !== null && tlsMaterial !== null) {
    app.log.info({ ...describeTls(tlsMaterial), clientCertificates: config.tls.clientCaFile !== null, minVersion: MIN_TLS_VERSION }, 'TLS on')
    reloadTls(app, config.tls, config.fileReloadPollMs)
  }
  const plaintext = plaintextWarning(config)
  if (plaintext !== null) app.log.warn({ host: config.host, secretKeyFiles: config.secretKeyFiles }, plaintext)

  // Callback-style hooks: no promise per hook on every request.
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
    lingering.stop()
    // The listener closes the connections idle now; one whose request is still in flight goes idle
    // later, and would then be kept KEEP_ALIVE_TIMEOUT_MS, holding the drain open that long. From
    // here on an idle connection is closed after Node's own grace of a second, in which a request
    // that still arrives on it is answered 503 (onRequest below) with Connection: close.
    app.server.keepAliveTimeout = 1
  })
  app.addHook('onRequest', (request, reply, done) => {
    if (closing) {
      done(problems.shuttingDown())
      return
    }
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    // Hash results depend on secrets; no cache should keep them.
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store')
    done()
  })

  const engine = new Engine(config)
  app.addHook('onClose', async () => { await engine.close() })
  // The access line is written at info; at a quieter level the hook is not registered at all.
  if (['info', 'debug', 'trace'].includes(config.logLevel)) app.addHook('onResponse', accessLogHook(app.log))

  // Every reply, the refusals and errors of the plugins below included, leaves at the end of its turn.
  await app.register(batchedWritesPlugin)
  await app.register(bodyPlugin, { engine })
  // Every secret from its keys file (src/keys/): API keys, the pepper, named HMAC keys.
  await app.register(keysPlugin, { config })
  // The audit log (AUDIT_LOG): keyed routes record their work in it before they answer.
  await app.register(auditPlugin, { config })
  // Before the rate limit: a request with a key is limited per key (see plugins/auth.ts).
  await app.register(authPlugin)
  await app.register(rateLimitPlugin, { config })
  await app.register(errorsPlugin)
  await app.register(openapiPlugin, { ui: config.webUi })
  await app.register(metricsPlugin, { config, engine })
  await app.register(passwordsPlugin, { config })
  await app.register(screeningPlugin, { config })
  await app.register(banksPlugin, { config })

  await app.register(hashRoute, { engine, config })
  await app.register(verifyRoute, { engine, config })
  await app.register(hmacRoute, { engine, config })
  await app.register(fileHashRoute, { config, engine })
  await app.register(fileVerifyRoute, { config })
  await app.register(checksumsRoute, { config })
  await app.register(identifyRoute, { config })
  await app.register(similarityRoutes)
  await app.register(matchRoute, { config })
  await app.register(matchFileRoute, { config, engine })
  await app.register(metaRoutes, { config, engine })
  await app.register(passwordPolicyRoute)
  await app.register(calibrateRoute, { engine })
  await app.register(pepperRoute)
  await app.register(keysRoute)
  await app.register(auditRoute)
  await app.register(passwordsCheckRoute)
  // HIBP's range API, outside /api at the public API's path (routes/range.ts).
  await app.register(rangeRoute)
  await app.register(webhooksRoute, { engine, config })
  // The page at / (built from web/ into dist/web); it speaks only the public API above. WEB_UI=off
  // leaves it out, and the API browser at /docs with it: an instance that serves machines only.
  if (config.webUi) await app.register(webPlugin)
  else app.log.info({ webUi: false }, 'no pages for people: the web page and /docs are off (WEB_UI=off)')
  return app
}
