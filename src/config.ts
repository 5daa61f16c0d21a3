/**
 * Configuration: read once from the environment, typed, validated, documented.
 * Every variable here is listed with its default in the README's configuration table.
 */
import { isIP } from 'node:net'
import { availableParallelism, totalmem } from 'node:os'

export interface CostCaps {
  /** bcrypt: log2 rounds. */
  bcryptCost: number
  /** argon2: KiB, passes, lanes (RFC 9106 §3.1 m, t, p). */
  argon2MemoryKiB: number
  argon2TimeCost: number
  argon2Parallelism: number
  /** scrypt (RFC 7914), also yescrypt and `$7$`: 128·N·r bytes, and p. */
  scryptMemoryBytes: number
  scryptParallelism: number
  pbkdf2Iterations: number
  /** SHA-crypt (Drepper) rounds; also bounds other iteration-count schemes (phpass, bsdi). */
  shaCryptRounds: number
}

export interface Config {
  host: string
  port: number
  logLevel: string
  /** Largest JSON body, bytes. */
  bodyLimit: number
  /** Largest uploaded file, bytes. */
  maxFileSize: number
  /** PDQ's images (similarity/pdq): the most bytes collected (MAX_IMAGE_SIZE) and pixels decoded (MAX_IMAGE_PIXELS). */
  images: { maxBytes: number, maxPixels: number }
  /** Requests per window per client; 0 disables rate limiting. */
  rateLimitMax: number
  /** Batch items per window per client (a budget beside the requests'); 0 counts a batch as one request. */
  rateLimitItemsMax: number
  rateLimitWindowMs: number
  /** With REDIS_URL: the lease each call to Redis takes beyond what it needs, percent of the budget (rate-limit-windows.ts). */
  rateLimitLeasePercent: number
  /** true: trust every hop of X-Forwarded-For; a list: trust only these proxy addresses/CIDR ranges. */
  trustProxy: boolean | string[]
  /** Threads that run password hashing and large digests. */
  workerThreads: number
  /** Tasks that may wait for a worker before new ones get 503. */
  workQueueMax: number
  /** Inputs at least this long are digested in the worker pool rather than inline. */
  inlineDigestMaxBytes: number
  /** Slow-client protection (slowloris): time to receive headers / a whole request, counted from its first byte. */
  headersTimeoutMs: number
  requestTimeoutMs: number
  /** How long an idle keep-alive connection stays open for its next request (above a load balancer's idle timeout). */
  keepAliveTimeoutMs: number
  /** Longest a graceful shutdown waits for in-flight requests. */
  shutdownTimeoutMs: number
  /** PID_FILE (pid-file.ts): the file naming this process, written once listening and removed at shutdown; null for none. */
  pidFile: string | null
  caps: CostCaps
  /** Shared rate-limit counters: a redis:// or rediss:// URL, or undefined for in-memory counters. */
  redisUrl: string | undefined
  /** Prefix of every rate-limit key, so several deployments can share one Redis. */
  redisPrefix: string
  /** Longest a rate-limit call to Redis may take before the instance decides on its own count. */
  redisCommandTimeoutMs: number
  /** Memory the running pool tasks may declare together (argon2 m KiB, scrypt 128·N·r, ...). */
  maxWorkMemoryBytes: number
  /** API keys (keys/api-keys.ts): the file of `<name> <sha256 hex> [<max>] [scopes=…] [hmac-keys=…]` lines, or null for no keys. */
  apiKeysFile: string | null
  /** Prometheus metrics (plugins/metrics.ts): on unless METRICS=off. */
  metrics: boolean
  /** Serve /metrics on this port of metricsHost instead of the main port; null keeps it on the main port. */
  metricsPort: number | null
  metricsHost: string
  /** Pepper keys (keys/pepper.ts): the file of `<key id> <base64 secret> [state=…]` lines, or null for no pepper. */
  pepperKeysFile: string | null
  /** Named HMAC keys (keys/hmac.ts): the file of `<name> <version> <base64 secret> [options]` lines, or null for none. */
  hmacKeysFile: string | null
  /** Batches (domain/batch.ts): the most items one request may carry, and the largest body of the routes that take them. */
  batch: { maxItems: number, maxBodyBytes: number }
  /** The password policy new hashes and verify-and-upgrade use (domain/password-policy.ts checks it at start). */
  passwordPolicy: { algorithm: string, options: Record<string, number>, /** PASSWORD_ALGORITHM or PASSWORD_OPTIONS was set. */ explicit: boolean }
  /** POST /api/calibrate: runs per window, server-wide, and the longest one may take. */
  calibrateRateLimitMax: number
  calibrateRateLimitWindowMs: number
  calibrateTimeoutMs: number
  /** POST /api/checksums (src/checksums/): the list's bytes and lines, file parts per request, the whole body. */
  checksums: ChecksumLimits
  /** glibc malloc settings and quiet-time trimming (memory-tuning.ts): on unless MEMORY_TUNING=off. */
  memoryTuning: boolean
  /** Password screening (src/screening/): the policy, the lists and the breached-password stores. */
  screening: ScreeningConfig
  /** Webhooks remembered for replay protection in this process's memory (without REDIS_URL); when it is full, new ones get 503. */
  webhookReplayMemoryMax: number
  /** The most webhooks one caller (API key or client address) may have remembered at once, in memory or in Redis; 0: no share. */
  webhookReplayCallerMax: number
  /** How far behind now a remembered webhook's receivedAt may be; every remembered webhook is kept this much longer. */
  webhookReceivedAtMaxAgeSeconds: number
  /** The period of the poll that backs up the watch of reloadable files (file-reload.ts); 0: watch only. */
  fileReloadPollMs: number
  /** SIMILARITY_BANKS_DIR: the folder of similarity banks (`*.bank` files, src/similarity/bank-folder.ts), or null for none. */
  similarityBanksDir: string | null
  /** HTTPS on the main port (src/tls.ts), or null for plain HTTP. */
  tls: TlsConfig | null
  /** The pages for people, the web page at / and the API browser at /docs: on unless WEB_UI=off. */
  webUi: boolean
  /**
   * The variables set that name files of secrets hashd holds (PEPPER_KEYS_FILE, HMAC_KEYS_FILE):
   * with any of them, a listener beyond loopback without TLS is warned about at start (src/tls.ts).
   */
  secretKeyFiles: string[]
  /** The audit log (src/audit/), or null without AUDIT_LOG. */
  audit: AuditConfig | null
  /** Keys in a PKCS#11 token (src/keys/pkcs11/), or null without PKCS11_MODULE. */
  pkcs11: Pkcs11Config | null
}

export interface Pkcs11Config {
  /** PKCS11_MODULE: the path of the module (a shared library: SoftHSM2, YubiHSM 2, Luna, CloudHSM…). */
  modulePath: string
  /** PKCS11_PIN_FILE: the file holding the user PIN of each token whose URIs give no pin-source (read at each login, never logged). */
  pinFile: string
  /** PKCS11_SESSIONS: sessions open at most in each token; each serves one call at a time. */
  sessions: number
  /** PKCS11_QUEUE_MAX: calls that may wait for a session of a token before more are answered 503. */
  queueMax: number
}

export interface AuditConfig {
  /** AUDIT_LOG: `file:PATH` or `stdout`. */
  sink: { kind: 'file', path: string } | { kind: 'stdout' }
  /** AUDIT_KEY: a file holding the audit key in base64, or a `pkcs11:` URI of a key in the token (src/audit/key.ts). */
  key: string
  /** AUDIT_FAIL: closed, keyed operations answer 503 while a line cannot be written; open, they go on. */
  fail: 'closed' | 'open'
  /** AUDIT_QUEUE_MAX: lines waiting to be written before keyed requests wait too. */
  queueMax: number
  /** AUDIT_CHECKPOINT_LINES / AUDIT_CHECKPOINT_SECONDS: a checkpoint after this many lines, or this long after a line. */
  checkpointLines: number
  checkpointSeconds: number
}

export interface ScreeningConfig {
  /** PASSWORD_SCREENING: what hashing a password does with an unacceptable one. */
  mode: 'off' | 'warn' | 'reject'
  /** PASSWORD_SCREENING_FAIL: what happens when the breached-password store cannot be read. */
  fail: 'open' | 'closed'
  /** PASSWORD_MIN_LENGTH / PASSWORD_MAX_LENGTH, in code points after NFKC. */
  minLength: number
  maxLength: number
  /** PASSWORD_NORMALIZATION: the form passwords are hashed in. */
  normalization: 'nfkc' | 'none'
  blocklistFile: string | null
  pwnedStore: string | null
  pwnedNtlmStore: string | null
}

/** The longest password a request may carry (characters); PASSWORD_MAX_LENGTH is at most this. */
export const PASSWORD_REQUEST_MAX = 4096

function readChoice<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (!(choices as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${env[name]?.slice(0, 40)}"`)
  return raw as T
}

/**
 * Screening: NIST SP 800-63B-4 §3.1.1.2 sets the length bounds (at least 8 characters, 15 for a
 * password used alone; at least 64 allowed); docs/passwords.md gives the reasons for the defaults.
 */
function readScreening(env: NodeJS.ProcessEnv): ScreeningConfig {
  const minLength = readInt(env, 'PASSWORD_MIN_LENGTH', 15, 8, 64)
  const maxLength = readInt(env, 'PASSWORD_MAX_LENGTH', 256, 64, PASSWORD_REQUEST_MAX)
  return {
    mode: readChoice(env, 'PASSWORD_SCREENING', ['off', 'warn', 'reject'] as const, 'warn'),
    fail: readChoice(env, 'PASSWORD_SCREENING_FAIL', ['open', 'closed'] as const, 'open'),
    minLength,
    maxLength,
    normalization: readChoice(env, 'PASSWORD_NORMALIZATION', ['nfkc', 'none'] as const, 'nfkc'),
    blocklistFile: env.PASSWORD_BLOCKLIST_FILE?.trim() || null,
    pwnedStore: env.PWNED_STORE?.trim() || null,
    pwnedNtlmStore: env.PWNED_NTLM_STORE?.trim() || null,
  }
}

export interface TlsConfig {
  /** TLS_CERT_FILE: the certificate, then any intermediates, in PEM. */
  certFile: string
  /** TLS_KEY_FILE: its private key, in PEM. */
  keyFile: string
  /** TLS_CLIENT_CA_FILE: the CA certificates (PEM) client certificates must chain to; null: no client certificates (no mTLS). */
  clientCaFile: string | null
}

export interface ChecksumLimits {
  maxListBytes: number
  maxLines: number
  maxFiles: number
  maxBodyBytes: number
}

const MiB = 1024 * 1024

export class ConfigError extends Error {}

function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`)
  const value = Number(raw.trim())
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`)
  return value
}

function readBool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase()
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true
  if (['0', 'false', 'no', 'off'].includes(raw)) return false
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`)
}

/**
 * REDIS_URL must be a URL ioredis reads as a single server: redis:// (or rediss:// for TLS) with a
 * host, an optional port, password and database number. The value is not echoed in the error: it
 * may carry a password.
 */
function readRedisUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.REDIS_URL?.trim()
  if (raw === undefined || raw === '') return undefined
  const expected = 'REDIS_URL must look like redis://[:password@]host[:port][/db] (or rediss:// for TLS)'
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`${expected}; it is not a URL`)
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(`${expected}; its scheme is ${url.protocol}`)
  if (url.hostname === '') throw new ConfigError(`${expected}; it names no host`)
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,5}$/.test(url.pathname)) {
    throw new ConfigError(`${expected}; the path must be a database number`)
  }
  return raw
}

/**
 * MAX_WORK_MEMORY_BYTES: by default the smaller of 1 GiB and a quarter of the machine's memory. A task
 * at the largest allowed cost must fit the budget on its own, or it could never start; an explicit
 * budget below that is an error, while the default grows to it on a small machine.
 */
function readWorkMemoryBudget(env: NodeJS.ProcessEnv, caps: CostCaps): number {
  const argon2Bytes = caps.argon2MemoryKiB * 1024
  const largestTaskBytes = Math.max(argon2Bytes, caps.scryptMemoryBytes)
  const largestCap = argon2Bytes >= caps.scryptMemoryBytes ? 'MAX_ARGON2_MEMORY_KIB' : 'MAX_SCRYPT_MEMORY_BYTES'
  const fallback = Math.max(Math.min(1024 * MiB, Math.floor(totalmem() / 4)), largestTaskBytes)
  const budget = readInt(env, 'MAX_WORK_MEMORY_BYTES', fallback, 1)
  if (budget < largestTaskBytes) {
    throw new ConfigError(`MAX_WORK_MEMORY_BYTES (${budget}) is below the largest single task ${largestCap} allows ` +
      `(${largestTaskBytes} bytes); raise MAX_WORK_MEMORY_BYTES or lower ${largestCap}`)
  }
  return budget
}

/**
 * TRUST_PROXY: on/off, or the proxies to trust as a comma-separated list of addresses and CIDR
 * ranges. With a list, the client is the nearest address in X-Forwarded-For that is not one of them,
 * so a client cannot pick its own rate-limit bucket by sending the header itself.
 */
function readTrustProxy(env: NodeJS.ProcessEnv): boolean | string[] {
  const raw = env.TRUST_PROXY?.trim() ?? ''
  if (raw === '' || /^(1|0|true|false|yes|no|on|off)$/i.test(raw)) return readBool(env, 'TRUST_PROXY', false)
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '')
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/')
    const family = isIP(address)
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32))
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(`TRUST_PROXY must be true, false, or a comma-separated list of proxy addresses or CIDR ranges (10.0.0.0/8), got "${entry}"`)
    }
  }
  return entries
}

/**
 * PASSWORD_OPTIONS: `name=value` pairs separated by commas (`memoryCost=65536,timeCost=3`), whole
 * numbers; which names the algorithm takes, and their bounds, are checked at start against it.
 */
function readPasswordOptions(env: NodeJS.ProcessEnv): Record<string, number> {
  const raw = env.PASSWORD_OPTIONS?.trim() ?? ''
  const options: Record<string, number> = {}
  if (raw === '') return options
  for (const part of raw.split(',')) {
    const match = /^\s*([A-Za-z][A-Za-z0-9]{0,31})\s*=\s*(\d{1,10})\s*$/.exec(part)
    if (!match) throw new ConfigError(`PASSWORD_OPTIONS must be name=value pairs separated by commas (memoryCost=65536,timeCost=3), got "${part.trim().slice(0, 40)}"`)
    const [, name, value] = match as unknown as [string, string, string]
    if (Object.hasOwn(options, name)) throw new ConfigError(`PASSWORD_OPTIONS names ${name} twice`)
    options[name] = Number(value)
  }
  return options
}

/** TLS_CERT_FILE and TLS_KEY_FILE together, or neither; TLS_CLIENT_CA_FILE only with them. */
function readTls(env: NodeJS.ProcessEnv): TlsConfig | null {
  const certFile = env.TLS_CERT_FILE?.trim() || null
  const keyFile = env.TLS_KEY_FILE?.trim() || null
  const clientCaFile = env.TLS_CLIENT_CA_FILE?.trim() || null
  if (certFile === null && keyFile === null) {
    if (clientCaFile !== null) throw new ConfigError('TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates are asked for over TLS')
    return null
  }
  if (certFile === null || keyFile === null) throw new ConfigError(`${certFile === null ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} is set without ${certFile === null ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'}: set both for HTTPS, or neither`)
  return { certFile, keyFile, clientCaFile }
}

/**
 * AUDIT_LOG (`file:PATH` or `stdout`, or `off`) with AUDIT_KEY: a file, or a `pkcs11:` URI of a
 * key in the token of PKCS11_MODULE (refused here without PKCS11_MODULE, never read as a file name).
 */
function readAudit(env: NodeJS.ProcessEnv): AuditConfig | null {
  const raw = env.AUDIT_LOG?.trim() ?? ''
  const key = env.AUDIT_KEY?.trim() ?? ''
  // Without AUDIT_LOG the other AUDIT_* are not read: AUDIT_KEY alone is what the audit tools read.
  if (raw === '' || raw.toLowerCase() === 'off') return null
  let sink: AuditConfig['sink']
  if (raw === 'stdout') sink = { kind: 'stdout' }
  else if (raw.startsWith('file:') && raw.length > 'file:'.length) sink = { kind: 'file', path: raw.slice('file:'.length) }
  else throw new ConfigError(`AUDIT_LOG must be file:PATH or stdout, got "${raw.slice(0, 60)}"`)
  if (key === '') throw new ConfigError('AUDIT_LOG is set without AUDIT_KEY: name the file holding the audit key (openssl rand -base64 32 > audit.key)')
  if (/^pkcs11:/i.test(key) && !env.PKCS11_MODULE?.trim()) {
    throw new ConfigError('AUDIT_KEY names a key in a PKCS#11 token (pkcs11:…): set PKCS11_MODULE and PKCS11_PIN_FILE too')
  }
  return {
    sink,
    key,
    fail: readChoice(env, 'AUDIT_FAIL', ['closed', 'open'] as const, 'closed'),
    queueMax: readInt(env, 'AUDIT_QUEUE_MAX', 1024, 1, 1_000_000),
    checkpointLines: readInt(env, 'AUDIT_CHECKPOINT_LINES', 1000, 1, 10_000_000),
    checkpointSeconds: readInt(env, 'AUDIT_CHECKPOINT_SECONDS', 60, 1, 86_400),
  }
}

/** PKCS11_MODULE with PKCS11_PIN_FILE, or neither (src/keys/pkcs11/token.ts). The PIN itself is never in the environment. */
function readPkcs11(env: NodeJS.ProcessEnv): Pkcs11Config | null {
  const modulePath = env.PKCS11_MODULE?.trim() || null
  const pinFile = env.PKCS11_PIN_FILE?.trim() || null
  if (env.PKCS11_PIN !== undefined) throw new ConfigError('PKCS11_PIN is not read: a PIN in the environment shows in every dump of it; write it to a file and name the file in PKCS11_PIN_FILE')
  if (modulePath === null) {
    if (pinFile !== null) throw new ConfigError('PKCS11_PIN_FILE is set without PKCS11_MODULE: name the PKCS#11 module (for example /usr/lib/softhsm/libsofthsm2.so)')
    return null
  }
  if (pinFile === null) throw new ConfigError('PKCS11_MODULE is set without PKCS11_PIN_FILE: name the file holding the token\'s user PIN')
  return {
    modulePath,
    pinFile,
    sessions: readInt(env, 'PKCS11_SESSIONS', 4, 1, 256),
    queueMax: readInt(env, 'PKCS11_QUEUE_MAX', 1024, 0, 1_000_000),
  }
}

/** Variables naming files of secrets hashd holds; HMAC_KEYS_FILE belongs to the key ring (src/keys/). */
const SECRET_KEY_FILES = ['PEPPER_KEYS_FILE', 'HMAC_KEYS_FILE'] as const

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = (env.LOG_LEVEL ?? 'info').trim().toLowerCase()
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`)
  const requestTimeoutMs = readInt(env, 'REQUEST_TIMEOUT_MS', 300_000, 100)
  // Node refuses a headersTimeout longer than requestTimeout (the headers are part of the request),
  // so a short REQUEST_TIMEOUT_MS also shortens the headers deadline rather than failing to start.
  const headersTimeoutMs = Math.min(readInt(env, 'HEADERS_TIMEOUT_MS', 10_000, 100), requestTimeoutMs)
  const bodyLimit = readInt(env, 'BODY_LIMIT', 1 * MiB, 1024)
  const webhookReplayMemoryMax = readInt(env, 'WEBHOOK_REPLAY_MEMORY_MAX', 100_000, 1, 10_000_000)
  const config: Omit<Config, 'maxWorkMemoryBytes'> = {
    host: env.HOST?.trim() || '127.0.0.1',
    port: readInt(env, 'PORT', 3000, 0, 65535),
    logLevel,
    bodyLimit,
    maxFileSize: readInt(env, 'MAX_FILE_SIZE', 1024 * MiB, 1),
    // 50 megapixels: the largest phone and most camera sensors (48–50 MP), 150 MB decoded (docs/configuration.md).
    images: { maxBytes: readInt(env, 'MAX_IMAGE_SIZE', 64 * MiB, 1024, 1024 * MiB), maxPixels: readInt(env, 'MAX_IMAGE_PIXELS', 50_000_000, 25, 1_000_000_000) },
    rateLimitMax: readInt(env, 'RATE_LIMIT_MAX', 600, 0),
    rateLimitItemsMax: readInt(env, 'RATE_LIMIT_ITEMS_MAX', 100_000, 0),
    rateLimitWindowMs: readInt(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1),
    rateLimitLeasePercent: readInt(env, 'RATE_LIMIT_LEASE_PERCENT', 1, 0, 10),
    trustProxy: readTrustProxy(env),
    workerThreads: readInt(env, 'WORKER_THREADS', Math.max(1, availableParallelism()), 1, 256),
    workQueueMax: readInt(env, 'WORK_QUEUE_MAX', 512, 0),
    inlineDigestMaxBytes: readInt(env, 'INLINE_DIGEST_MAX_BYTES', 64 * 1024, 0),
    headersTimeoutMs,
    requestTimeoutMs,
    // Above the idle timeout of the load balancers that pool connections to hashd (AWS ALB and
    // nginx's upstream keepalive_timeout: 60 s), so that they, not hashd, close an idle connection:
    // one closed by hashd as a balancer reuses it is a 502 (docs/deployment.md, "Keep-alive").
    keepAliveTimeoutMs: readInt(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 100, 3_600_000),
    shutdownTimeoutMs: readInt(env, 'SHUTDOWN_TIMEOUT_MS', 30_000, 0),
    pidFile: env.PID_FILE?.trim() || null,
    caps: {
      bcryptCost: readInt(env, 'MAX_BCRYPT_COST', 14, 4, 31),
      argon2MemoryKiB: readInt(env, 'MAX_ARGON2_MEMORY_KIB', 262_144, 8),
      argon2TimeCost: readInt(env, 'MAX_ARGON2_TIME_COST', 10, 1),
      argon2Parallelism: readInt(env, 'MAX_ARGON2_PARALLELISM', 16, 1),
      scryptMemoryBytes: readInt(env, 'MAX_SCRYPT_MEMORY_BYTES', 256 * MiB, 1024),
      scryptParallelism: readInt(env, 'MAX_SCRYPT_PARALLELISM', 16, 1),
      pbkdf2Iterations: readInt(env, 'MAX_PBKDF2_ITERATIONS', 2_000_000, 1),
      shaCryptRounds: readInt(env, 'MAX_SHA_CRYPT_ROUNDS', 10_000_000, 1000),
    },
    redisUrl: readRedisUrl(env),
    redisPrefix: env.REDIS_PREFIX ?? 'hashd:rl:',
    redisCommandTimeoutMs: readInt(env, 'REDIS_COMMAND_TIMEOUT_MS', 50, 1, 60_000),
    apiKeysFile: env.API_KEYS_FILE?.trim() || null,
    metrics: readBool(env, 'METRICS', true),
    metricsPort: env.METRICS_PORT?.trim() ? readInt(env, 'METRICS_PORT', 0, 0, 65535) : null,
    metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1',
    pepperKeysFile: env.PEPPER_KEYS_FILE?.trim() || null,
    hmacKeysFile: env.HMAC_KEYS_FILE?.trim() || null,
    batch: {
      maxItems: readInt(env, 'MAX_BATCH_ITEMS', 10_000, 1, 1_000_000),
      // By default batches get BODY_LIMIT too, so a request over it is refused as soon as its
      // Content-Length says so; a higher value lets these routes read larger bodies first.
      maxBodyBytes: readInt(env, 'MAX_BATCH_BODY_BYTES', bodyLimit, 1024, 256 * MiB),
    },
    passwordPolicy: {
      algorithm: env.PASSWORD_ALGORITHM?.trim() || 'argon2id',
      options: readPasswordOptions(env),
      explicit: Boolean(env.PASSWORD_ALGORITHM?.trim() || env.PASSWORD_OPTIONS?.trim()),
    },
    calibrateRateLimitMax: readInt(env, 'CALIBRATE_RATE_LIMIT_MAX', 10, 0),
    calibrateRateLimitWindowMs: readInt(env, 'CALIBRATE_RATE_LIMIT_WINDOW_MS', 600_000, 1000),
    calibrateTimeoutMs: readInt(env, 'CALIBRATE_TIMEOUT_MS', 30_000, 1000, 600_000),
    checksums: {
      maxListBytes: readInt(env, 'MAX_CHECKSUM_LIST_BYTES', 1 * MiB, 1024, 64 * MiB),
      maxLines: readInt(env, 'MAX_CHECKSUM_LINES', 20_000, 1),
      maxFiles: readInt(env, 'MAX_CHECKSUM_FILES', 64, 1, 10_000),
      maxBodyBytes: readInt(env, 'MAX_CHECKSUM_BODY_BYTES', 4096 * MiB, 1024),
    },
    memoryTuning: readBool(env, 'MEMORY_TUNING', true),
    screening: readScreening(env),
    webhookReplayMemoryMax,
    // A quarter each by default: a caller cannot fill the store, and four at their share can.
    webhookReplayCallerMax: readInt(env, 'WEBHOOK_REPLAY_CALLER_MAX', Math.ceil(webhookReplayMemoryMax / 4), 0, 10_000_000),
    webhookReceivedAtMaxAgeSeconds: readInt(env, 'WEBHOOK_RECEIVED_AT_MAX_AGE_SECONDS', 300, 0, 30 * 86_400),
    fileReloadPollMs: readInt(env, 'FILE_RELOAD_POLL_MS', 5_000, 0, 3_600_000),
    similarityBanksDir: env.SIMILARITY_BANKS_DIR?.trim() || null,
    tls: readTls(env),
    webUi: readBool(env, 'WEB_UI', true),
    secretKeyFiles: SECRET_KEY_FILES.filter((name) => (env[name]?.trim() ?? '') !== ''),
    audit: readAudit(env),
    pkcs11: readPkcs11(env),
  }
  return { ...config, maxWorkMemoryBytes: readWorkMemoryBudget(env, config.caps) }
}
