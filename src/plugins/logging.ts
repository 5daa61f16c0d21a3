/**
 * Logging and redaction, in one place. Logs are Pino JSON lines; the access line per request
 * (request id, method, route, status, latency) is written by app.ts's onResponse hook.
 *
 * Never a body and never a header value, at any level: hashd's inputs are passwords and keys.
 * Our own code logs only named fields, but dependencies log what they like at debug and trace
 * (a plugin may log a request's headers or options holding them; Node's client errors carry
 * `rawPacket`, the bytes the client sent). So every line passes through `scrub`, which drops
 * fields whose names say they hold request content, whatever their depth.
 */
import { hostname } from 'node:os'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest, FastifyServerOptions, onResponseHookHandler } from 'fastify'
import { pino, type Logger } from 'pino'
import type { Config } from '../config.js'

/** Field names whose values are, or contain, what a client sent. Compared lowercase. */
const CONTENT_FIELDS = new Set([
  'headers', 'rawheaders', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key',
  'body', 'rawbody', 'payload', 'rawpacket', 'query', 'querystring', 'params',
  'input', 'message', 'key', 'hash', 'password', 'file', 'filename', 'files', 'fields',
  'secret', 'payloadbase64', 'publickey',
])

const MAX_DEPTH = 6

/**
 * A copy of a log object without content fields. Only plain objects and arrays are walked: class
 * instances (Fastify's request and reply, errors) are left to the serializers below, which pick
 * the few fields they keep, and binary data is reduced to its length.
 */
export function scrub(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`
  if (depth >= MAX_DEPTH) return '[nested]'
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1))
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  if (isFlatAndClean(value)) return value
  const clean: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(value)) {
    if (!CONTENT_FIELDS.has(name.toLowerCase())) clean[name] = scrub(field, depth + 1)
  }
  return clean
}

/**
 * The common case, the access line: no content field and only primitive values, so the object
 * can be logged as it is, without a copy per request.
 */
function isFlatAndClean(object: object): boolean {
  for (const name in object) {
    const field = (object as Record<string, unknown>)[name]
    if ((field !== null && typeof field === 'object') || CONTENT_FIELDS.has(name.toLowerCase())) return false
  }
  return true
}

/**
 * An error as a log line may show it: where it happened, never its message, since messages may
 * quote values (V8's JSON.parse, Node's argument checks) and a value here may be a password.
 */
export function serializeError(error: unknown): { type: string, message: string, stack: string, [field: string]: unknown } {
  if (!(error instanceof Error)) return { type: typeof error, message: '(not an Error)', stack: '' }
  const { code, statusCode } = error as Error & { code?: unknown, statusCode?: unknown }
  return {
    type: error.name,
    message: '(omitted: it may quote the input)',
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof statusCode === 'number' ? { statusCode } : {}),
    stack: (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 20).join('\n'),
  }
}

/**
 * Stdout: pino's asynchronous destination (sonic-boom), which gathers the lines logged while a
 * write(2) is under way into the next one, with the access lines of one turn of the event loop
 * handed to it as one string. sonic-boom takes the byte length of the text it holds on each write
 * (`Buffer.byteLength` of its pending string, which flattens the string every time), so lines
 * written one by one cost more the more are pending, as they do while a write waits for the thread
 * pool under load: `npm run bench:log-lines` measured 2.8 µs a line written on its own against 1.1
 * gathered, at 50 lines a turn (docs/benchmarks.md). Any other line first writes out
 * the access lines gathered before it, so lines keep their order; at exit, what is gathered is
 * written out synchronously.
 */
export class StdoutLog {
  readonly #destination: ReturnType<typeof pino.destination>
  #gathered: string[] = []
  readonly #writeGathered = (): void => {
    if (this.#gathered.length === 0) return
    const text = this.#gathered.join('')
    this.#gathered = []
    this.#destination.write(text)
  }

  /** `fd`: stdout, or another descriptor (bench/log-lines.ts writes to a file). */
  constructor(fd = 1) {
    this.#destination = pino.destination({ dest: fd, sync: false })
    process.once('exit', () => {
      this.#writeGathered()
      try {
        this.#destination.flushSync()
      } catch {
        // stdout is gone (EPIPE) or was never writable: there is nowhere to write to.
      }
    })
  }

  /** A line from pino. */
  write(line: string): boolean {
    this.#writeGathered()
    return this.#destination.write(line)
  }

  /** An access line: written with the others of this turn of the event loop. Bound, for the hook to keep. */
  readonly writeAccessLine = (line: string): void => {
    if (this.#gathered.push(line) === 1) setImmediate(this.#writeGathered)
  }

  /**
   * Calls back once every line handed over so far has reached the descriptor. sonic-boom's own
   * flush(callback) calls back at once when its minLength is 0 (as here) even while a write is on
   * the thread pool, and its flushSync at exit then writes what came later straight away, while
   * that write is still in flight: the lines could land out of order (the shutdown's first line
   * after its last). The server waits on this before it exits.
   */
  flush(callback?: (error?: Error) => void): void {
    this.#writeGathered()
    if (callback === undefined) return
    // `_writing`: sonic-boom's own state, true from the start of a write(2) until nothing is pending.
    if (!(this.#destination as unknown as { _writing: boolean })._writing) {
      process.nextTick(callback)
      return
    }
    const onDrain = (): void => { this.#destination.off('error', onError); callback() }
    const onError = (error: Error): void => { this.#destination.off('drain', onDrain); callback(error) }
    this.#destination.once('drain', onDrain)
    this.#destination.once('error', onError)
  }

  flushSync(): void {
    this.#writeGathered()
    this.#destination.flushSync()
  }
}

/** Tests pass their own stream; the server logs to stdout. */
export function loggerOptions(config: Config, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    stream: stream ?? new StdoutLog(),
    formatters: { log: (object) => scrub(object) as Record<string, unknown> },
    serializers: {
      req: (request) => ({ method: request.method, url: request.url.split('?')[0], route: request.routeOptions?.url, remoteAddress: request.ip }),
      res: (reply) => ({ statusCode: reply.statusCode }),
      err: serializeError,
    },
  }
}

/**
 * The access line, one per request, as pino would write it through the request's child logger
 * (`{"level":30,"time":…,"pid":…,"hostname":…,"reqId":…,…,"msg":"request completed"}`), but
 * written straight to the logger's destination. Its fields are fixed, flat and hold no request
 * content (the path only, without the query), so pino's generic work per line (a child logger's
 * bindings, the scrub formatter, serializing an object of unknown shape) buys nothing here; the
 * CPU profile under load showed it as the largest share of hashd's own cost per request.
 * Strings a client chooses (the path) go through JSON.stringify; the rest are numbers or
 * strings hashd makes.
 */
export function accessLogHook(fastifyLogger: FastifyBaseLogger): onResponseHookHandler {
  const logger = fastifyLogger as unknown as Logger
  const destination = (logger as unknown as Record<symbol, { write(line: string): unknown } | undefined>)[pino.symbols.streamSym]
  const writeLine = destination instanceof StdoutLog ? destination.writeAccessLine : destination?.write.bind(destination)
  const head = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":"`
  return function accessLine(request, reply, done) {
    if (!logger.isLevelEnabled('info')) {
      done()
      return
    }
    if (writeLine === undefined) {
      logAccessLine(request, reply)
      done()
      return
    }
    const url = request.url
    const query = url.indexOf('?')
    const path = query === -1 ? url : url.slice(0, query)
    const route = JSON.stringify(request.routeOptions.url ?? null)
    writeLine(`{"level":30,"time":${Date.now()}${head}${request.id}","method":"${request.method}","route":${route},` +
      `"url":${JSON.stringify(path)},"statusCode":${reply.statusCode},"responseTime":${reply.elapsedTime},` +
      `"remoteAddress":${JSON.stringify(request.ip ?? null)},` +
      // The API key's name from API_KEYS_FILE (never the key); absent without one.
      (request.apiKey ? `"apiKey":${JSON.stringify(request.apiKey.name)},` : '') +
      // The key ring's keys and versions used (names and ids from the keys files; never a message or secret).
      (request.keyUses ? `"keys":${JSON.stringify(request.keyUses)},` : '') + '"msg":"request completed"}\n')
    done()
  }
}

/** The same line through pino, where the logger has no destination of its own to write to. */
function logAccessLine(request: FastifyRequest, reply: FastifyReply): void {
  request.log.info({
    method: request.method, route: request.routeOptions.url ?? null, url: request.url.split('?')[0],
    statusCode: reply.statusCode, responseTime: reply.elapsedTime, remoteAddress: request.ip, apiKey: request.apiKey?.name,
    ...(request.keyUses ? { keys: request.keyUses } : {}),
  }, 'request completed')
}

type LogMethod = (...args: unknown[]) => void
type Bindings = Record<string, unknown>

/**
 * A request's logger (`request.log`) that makes pino's child logger only when something is logged
 * through it. Fastify makes a child per request by default, and pino's `child` serializes the
 * bindings (the request id) each time: the CPU profile under load showed it costing more than the
 * access line, for a logger most requests never use (the access line is written by the hook
 * above; request.log speaks on refusals and errors). Lines logged through it are those of the
 * child it stands for, `reqId` and all.
 */
class LazyChildLogger {
  #parent: Logger
  #bindings: Bindings
  #options: object
  #child: Logger | undefined
  constructor(parent: Logger, bindings: Bindings, options: object) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  #logger(): Logger {
    return this.#child ??= this.#parent.child(this.#bindings, this.#options)
  }

  get level(): string { return this.#child?.level ?? (this.#options as { level?: string }).level ?? this.#parent.level }
  set level(level: string) { this.#logger().level = level }
  isLevelEnabled(level: string): boolean { return this.#child ? this.#child.isLevelEnabled(level) : this.#parent.isLevelEnabled(level) }
  bindings(): Bindings { return this.#logger().bindings() }
  child(bindings: Bindings, options?: object): Logger { return this.#logger().child(bindings, options) }
  fatal(...args: unknown[]): void { (this.#logger().fatal as LogMethod)(...args) }
  error(...args: unknown[]): void { (this.#logger().error as LogMethod)(...args) }
  warn(...args: unknown[]): void { (this.#logger().warn as LogMethod)(...args) }
  info(...args: unknown[]): void { (this.#logger().info as LogMethod)(...args) }
  debug(...args: unknown[]): void { (this.#logger().debug as LogMethod)(...args) }
  trace(...args: unknown[]): void { (this.#logger().trace as LogMethod)(...args) }
  silent(): void {}
}

/** Fastify's `childLoggerFactory`: the lazy request logger above. */
export function lazyChildLoggerFactory(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: object): FastifyBaseLogger {
  return new LazyChildLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger
}
