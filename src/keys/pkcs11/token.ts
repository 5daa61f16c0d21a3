/**
 * The PKCS#11 module of PKCS11_MODULE as hashd uses it: loaded and initialised once, with one pool
 * of sessions per token that the keys' URIs name (pool.ts), each logged in with its own PIN.
 *
 * - **Tokens:** a URI's `token=` (label) or `serial=` names its token (RFC 7512 §2.3); URIs naming
 *   a token the same way share its pool. A URI naming neither uses the module's only initialised token.
 * - **PINs:** a URI's `pin-source=file:/path` (RFC 7512 §2.3; read as p11-kit and OpenSSL's pkcs11
 *   provider read it: the PIN is the file's contents, one trailing newline dropped) names the file
 *   holding its token's user PIN; without it, PKCS11_PIN_FILE does. A token has one PIN file: URIs
 *   naming one token with two different pin-source are refused when the keys file is read.
 * - **Sessions:** PKCS11_SESSIONS and PKCS11_QUEUE_MAX are per token, so one token's backlog never
 *   refuses another's calls; the sessions open at most are PKCS11_SESSIONS times the tokens named.
 * - **Fail closed per token:** a token that is missing, refuses its PIN or loses its device makes
 *   its keys' calls answer 503; the other tokens' keys go on. A module that cannot be loaded or
 *   initialised makes every token's keys answer 503. GET /api/health shows each token.
 * - **Initialising afresh:** SoftHSM2 (and modules like it) read their tokens at C_Initialize, so a
 *   token put back shows only after C_Finalize and C_Initialize, which end every token's sessions.
 *   While a token is missing, that is done at growing intervals (1 s, doubling to 30 s): calls
 *   arriving meanwhile wait, the calls in flight finish first, and the other tokens log in again
 *   at once with the PINs in their files (a wrong one still tried once only).
 */
import { Pkcs11Error, Pkcs11Module } from './binding.js'
import { Pkcs11Unavailable, RETRY_MS, TokenPool, tokenName, type PoolOwner, type PoolState, type UnavailableReason } from './pool.js'
import { Pkcs11UriError, type Pkcs11Uri } from './uri.js'

export { Pkcs11Unavailable, type PoolState, type UnavailableReason } from './pool.js'

export interface TokenOptions {
  modulePath: string
  /** The user PIN of every token whose URIs give no pin-source. */
  pinFile: string
  /** Sessions open at most in each token (each serves one call at a time). */
  sessions: number
  /** Calls that may wait for a session of a token before more are refused. */
  queueMax: number
  /** A line for the process log when a state changes (names, never the PIN). */
  log?: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void
}

export interface TokenState {
  /** "degraded" while the module or any token named cannot serve. */
  state: 'ready' | 'degraded' | 'idle'
  /** While degraded: the module's reason, or the first degraded token's (named in `detail`). */
  reason?: UnavailableReason
  detail?: string
  /** Sums over the tokens. */
  sessions: { open: number, busy: number, waiting: number, max: number }
  logins: number
  tokens: PoolState[]
}

/** The longest wait between two initialisations of the module while a token is missing. */
const REINIT_MAX_MS = 30_000

export class Pkcs11Token implements PoolOwner {
  readonly options: TokenOptions
  readonly refusedPins = new Map<string, string>()
  readonly #pools = new Map<string, TokenPool>()
  #module: Pkcs11Module | null = null
  #generation = 0
  #opening: Promise<Pkcs11Module> | null = null
  #failure: { error: Pkcs11Unavailable, at: number } | null = null
  /** Calls holding the module now (pool.ts `enter`/`leave`). */
  #active = 0
  /** Set while the module is initialised afresh: `enter` waits for it. */
  #gate: Promise<void> | null = null
  /** Resolved when no call holds the module (before C_Finalize). */
  #idle: (() => void)[] = []
  #reinitTimer: NodeJS.Timeout | null = null
  #reinitDelay = RETRY_MS
  #lastReinit = 0
  #closed = false

  constructor(options: TokenOptions) {
    this.options = options
  }

  get sessions(): number { return this.options.sessions }
  get queueMax(): number { return this.options.queueMax }
  get generation(): number { return this.#generation }
  get log(): TokenOptions['log'] { return this.options.log }

  get state(): TokenState {
    const tokens = [...this.#pools.values()].map((pool) => pool.state)
    const sessions = { open: 0, busy: 0, waiting: 0, max: 0 }
    let logins = 0
    for (const token of tokens) {
      sessions.open += token.sessions.open
      sessions.busy += token.sessions.busy
      sessions.waiting += token.sessions.waiting
      sessions.max += token.sessions.max
      logins += token.logins
    }
    const base = { sessions, logins, tokens }
    if (this.#failure) return { ...base, state: 'degraded', reason: this.#failure.error.reason, detail: this.#failure.error.message }
    const degraded = tokens.find((token) => token.state === 'degraded')
    if (degraded) return { ...base, state: 'degraded', reason: degraded.reason!, detail: `${degraded.token}: ${degraded.detail ?? ''}` }
    return { ...base, state: tokens.some((token) => token.state === 'ready') ? 'ready' : 'idle' }
  }

  /**
   * The pool of the token `uri` names, made on first mention: called when a keys file is read, so
   * that a conflicting pin-source is refused on its line (Pkcs11UriError).
   */
  register(uri: Pick<Pkcs11Uri, 'token' | 'serial' | 'pinSource'>): TokenPool {
    const name = tokenName(uri)
    const pinFile = uri.pinSource ?? this.options.pinFile
    const known = this.#pools.get(name)
    if (known !== undefined) {
      if (known.pinFile !== pinFile) throw new Pkcs11UriError(`another URI names ${name} with ${known.pinFrom} as its PIN file; a token has one PIN file (change it with a restart)`)
      return known
    }
    const pool = new TokenPool(this, uri, pinFile, uri.pinSource === undefined ? 'PKCS11_PIN_FILE' : 'pin-source')
    this.#pools.set(name, pool)
    if (this.#module !== null && !this.#closed) void pool.start()
    return pool
  }

  /** Opens the module and logs in on each token named so far (at start): a failure is the degraded state, not an error. */
  async start(): Promise<void> {
    try {
      await this.#ensureModule()
    } catch {
      // The degraded state says why.
    }
    await Promise.all([...this.#pools.values()].map((pool) => pool.start()))
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#reinitTimer) clearTimeout(this.#reinitTimer)
    for (const pool of this.#pools.values()) pool.close()
    // Unloading the library under a call in flight (a login at start, a C_Sign) would crash the process.
    await this.#whenIdle()
    await this.#opening?.catch(() => {})
    const module = this.#module
    this.#module = null
    if (module) await module.close().catch(() => {})
  }

  /** Runs `operation` with a session of the key's token and the key's handle (pool.ts). */
  withKey<T>(uri: Pkcs11Uri, operation: (module: Pkcs11Module, session: number, key: number) => Promise<T>): Promise<T> {
    return this.register(uri).withKey(uri, operation)
  }

  /** Runs `operation` with a logged-in session of the token `uri` names (keys:generate). */
  withSession<T>(uri: Pick<Pkcs11Uri, 'token' | 'serial'>, operation: (module: Pkcs11Module, session: number) => Promise<T>): Promise<T> {
    return this.register(uri).withSession(operation)
  }

  async enter(): Promise<{ module: Pkcs11Module, generation: number }> {
    for (;;) {
      while (this.#gate) await this.#gate
      const module = await this.#ensureModule()
      if (this.#closed) throw new Pkcs11Unavailable('device', 'the PKCS#11 module is closed')
      if (this.#gate) continue
      this.#active++
      return { module, generation: this.#generation }
    }
  }

  leave(): void {
    this.#active--
    if (this.#active === 0) for (const resolve of this.#idle.splice(0)) resolve()
  }

  #whenIdle(): Promise<void> {
    return this.#active === 0 ? Promise.resolve() : new Promise((resolve) => { this.#idle.push(resolve) })
  }

  /**
   * A token is not among the module's slots (or the module lost its state: `urgent`): initialise
   * the module afresh, at once when urgent, else no sooner than the growing interval allows.
   */
  requestReinit(urgent: boolean): void {
    if (this.#closed || this.#reinitTimer !== null || this.#gate !== null || this.#module === null) return
    const delay = urgent ? 0 : Math.max(0, this.#lastReinit + this.#reinitDelay - Date.now())
    this.#reinitTimer = setTimeout(() => {
      this.#reinitTimer = null
      void this.#reinitialise(urgent)
    }, delay)
    this.#reinitTimer.unref()
  }

  async #reinitialise(urgent: boolean): Promise<void> {
    if (this.#closed || this.#module === null) return
    // Nothing to look for any more (the token came back some other way): no reason to disturb the others.
    const missing = [...this.#pools.values()].filter((pool) => pool.tokenMissing).map((pool) => pool.name)
    if (!urgent && missing.length === 0) {
      this.#reinitDelay = RETRY_MS
      return
    }
    let open: () => void = () => {}
    this.#gate = new Promise((resolve) => { open = resolve })
    try {
      // C_Finalize with a call in flight would pull its session from under it: the calls in flight finish first.
      await this.#whenIdle()
      if (this.#closed) return
      this.options.log?.('info', { module: this.options.modulePath, ...(missing.length > 0 ? { missing } : {}) }, 'PKCS#11 module initialised afresh to find tokens that came back')
      for (const pool of this.#pools.values()) pool.forget()
      const module = this.#module
      this.#module = null
      await module?.close().catch(() => {})
      this.#generation++
      this.#lastReinit = Date.now()
      this.#reinitDelay = Math.min(this.#reinitDelay * 2, REINIT_MAX_MS)
      await this.#ensureModule().catch(() => {})
    } finally {
      this.#gate = null
      open()
    }
    // Every token logs in again now, so that health and the first calls find them ready.
    await Promise.all([...this.#pools.values()].map((pool) => pool.start()))
    if (![...this.#pools.values()].some((pool) => pool.tokenMissing)) this.#reinitDelay = RETRY_MS
  }

  async #ensureModule(): Promise<Pkcs11Module> {
    if (this.#module) return this.#module
    if (this.#closed) throw new Pkcs11Unavailable('device', 'the PKCS#11 module is closed')
    if (this.#failure && Date.now() - this.#failure.at < RETRY_MS) throw this.#failure.error
    this.#opening ??= this.#openModule().finally(() => { this.#opening = null })
    return this.#opening
  }

  async #openModule(): Promise<Pkcs11Module> {
    try {
      // One thread per session of a token makes HMACs (binding.ts signMany), shared by the tokens.
      const module = await Pkcs11Module.open(this.options.modulePath, this.options.sessions)
      if (this.#closed) {
        await module.close().catch(() => {})
        throw new Pkcs11Unavailable('device', 'the PKCS#11 module is closed')
      }
      const recovered = this.#failure !== null
      this.#failure = null
      this.#module = module
      if (recovered) this.options.log?.('info', { module: this.options.modulePath }, 'PKCS#11 module available again')
      return module
    } catch (error) {
      // dlopen failed: the module; C_Initialize failed: the module loads, its token store or device does not answer.
      const failure = error instanceof Pkcs11Error
        ? new Pkcs11Unavailable('device', `the PKCS#11 module PKCS11_MODULE does not start: ${(error as Error).message}`)
        : new Pkcs11Unavailable('module', 'the PKCS#11 module PKCS11_MODULE cannot be loaded')
      const first = this.#failure === null || this.#failure.error.message !== failure.message
      this.#failure = { error: failure, at: Date.now() }
      if (first) this.options.log?.('error', { module: this.options.modulePath, reason: failure.reason, detail: failure.message }, 'PKCS#11 module unavailable: operations with keys in its tokens answer 503')
      // Each token's pool tries again on its own timer, and with it the module.
      for (const pool of this.#pools.values()) pool.fail(failure)
      throw failure
    }
  }
}
