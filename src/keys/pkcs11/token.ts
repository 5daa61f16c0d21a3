/**
 * One PKCS#11 token as hashd uses it: the module loaded once, one logged-in user, a bounded pool
 * of sessions and the handles of the keys found in it.
 *
 * - **Sessions:** a PKCS#11 session serves one operation at a time, so each call takes a session
 *   from the pool (at most PKCS11_SESSIONS open) and gives it back; calls beyond that wait in a
 *   queue of at most PKCS11_QUEUE_MAX, and a call that finds the queue full is a 503 at once.
 * - **Login:** once, on the first session (PKCS#11 §5.6: a login is the application's, every session
 *   of the token shares it), and kept: the PIN is read from PKCS11_PIN_FILE at that moment and not
 *   kept in memory. **A wrong PIN is never tried twice:** the SHA-256 of a PIN the token refused
 *   is remembered, and no login is tried while the file holds the same PIN, so a token that locks
 *   after N failures is never locked by hashd.
 * - **Fail closed:** while the module cannot be loaded, the token is missing, the PIN is refused or
 *   the device is gone, every call throws `Pkcs11Unavailable` (a 503 for the caller) at once; the
 *   state says why (GET /api/health). It tries again at most once a second, on the next call or
 *   on its own timer, and recovers with no restart.
 * - **Recovery:** CKR_SESSION_HANDLE_INVALID or CKR_SESSION_CLOSED drop the session and the call
 *   is tried once more on another; CKR_OBJECT_HANDLE_INVALID or CKR_KEY_HANDLE_INVALID forget the
 *   key's handle and find it again; CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT and their kin close
 *   everything (C_Finalize, unload) and start over, the token's objects found again.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { CKA, CKF_TOKEN_INITIALIZED, CKO_SECRET_KEY, CKR, Pkcs11Error, Pkcs11Module, rvName, type Attribute } from './binding.js'
import type { Pkcs11Uri } from './uri.js'

export interface TokenOptions {
  modulePath: string
  pinFile: string
  /** Sessions open at most (each serves one call at a time). */
  sessions: number
  /** Calls that may wait for a session before more are refused. */
  queueMax: number
  /** A line for the process log when the state changes (names, never the PIN). */
  log?: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void
}

/** Why the token cannot serve: the caller answers 503 with this reason's code. */
export type UnavailableReason = 'module' | 'token-missing' | 'pin' | 'device' | 'busy' | 'key-missing'

/** The token cannot serve this call now (503); `reason` says which way, `detail` in words (no PIN, no key value). */
export class Pkcs11Unavailable extends Error {
  readonly reason: UnavailableReason
  constructor(reason: UnavailableReason, detail: string) {
    super(detail)
    this.name = 'Pkcs11Unavailable'
    this.reason = reason
  }
}

export interface TokenState {
  state: 'ready' | 'degraded' | 'idle'
  /** While degraded: which way and why, in words. */
  reason?: UnavailableReason
  detail?: string
  sessions: { open: number, busy: number, waiting: number, max: number }
  /** C_Login calls made since start (a wrong PIN is tried once). */
  logins: number
}

/** Errors that say the session is gone: another session serves. */
const SESSION_GONE: ReadonlySet<number> = new Set([CKR.SESSION_HANDLE_INVALID, CKR.SESSION_CLOSED])
/** Errors that say the key's handle is stale: find it again. */
const HANDLE_GONE: ReadonlySet<number> = new Set([CKR.OBJECT_HANDLE_INVALID, CKR.KEY_HANDLE_INVALID])
/** Errors that say the device or token is gone: start over. */
const DEVICE_GONE: ReadonlySet<number> = new Set([
  CKR.DEVICE_REMOVED, CKR.TOKEN_NOT_PRESENT, CKR.TOKEN_NOT_RECOGNIZED, CKR.DEVICE_ERROR, CKR.DEVICE_MEMORY,
  CKR.CRYPTOKI_NOT_INITIALIZED, CKR.USER_NOT_LOGGED_IN, CKR.GENERAL_ERROR,
])
/** C_Login answers that mean this PIN must not be tried again. */
const PIN_REFUSED: ReadonlySet<number> = new Set([CKR.PIN_INCORRECT, CKR.PIN_LOCKED, CKR.PIN_EXPIRED, CKR.PIN_LEN_RANGE, CKR.USER_PIN_NOT_INITIALIZED])

/** How long a failed open is trusted before the next try. */
const RETRY_MS = 1000

interface Opened {
  module: Pkcs11Module
  /** Slot of each token label or serial asked for (`label:hashd`, `serial:…`, `any`). */
  slots: Map<string, number>
  /** Sessions not in use, and how many are open in all. */
  idle: { slot: number, handle: number }[]
  open: number
  loggedIn: Set<number>
  /** Key handles by URI text. */
  handles: Map<string, number>
}

type Waiter = { resolve: (session: { slot: number, handle: number }) => void, reject: (error: Error) => void }

export class Pkcs11Token {
  readonly options: TokenOptions
  #opened: Opened | null = null
  #opening: Promise<Opened> | null = null
  #failure: { error: Pkcs11Unavailable, at: number } | null = null
  #refusedPin: string | null = null
  /** URIs of keys the token did not have, even after a fresh open; health is degraded while any is. */
  readonly #missing = new Set<string>()
  #busy = 0
  #logins = 0
  readonly #waiting: Waiter[] = []
  #timer: NodeJS.Timeout | null = null
  #closed = false

  constructor(options: TokenOptions) {
    this.options = options
  }

  get state(): TokenState {
    const sessions = { open: this.#opened?.open ?? 0, busy: this.#busy, waiting: this.#waiting.length, max: this.options.sessions }
    if (this.#failure) return { state: 'degraded', reason: this.#failure.error.reason, detail: this.#failure.error.message, sessions, logins: this.#logins }
    if (this.#missing.size > 0) {
      return { state: 'degraded', reason: 'key-missing', detail: `${this.#missing.size} key(s) named in a keys file are not in the token`, sessions, logins: this.#logins }
    }
    return { state: this.#opened ? 'ready' : 'idle', sessions, logins: this.#logins }
  }

  /** Opens the module now (at start): a failure is the degraded state, not an error. */
  async start(): Promise<void> {
    await this.#ensureOpen().catch(() => {})
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#timer) clearTimeout(this.#timer)
    for (const waiter of this.#waiting.splice(0)) waiter.reject(new Pkcs11Unavailable('device', 'the PKCS#11 token is closing'))
    await this.#teardown()
  }

  /**
   * Runs `operation` with a session and the handle of the key `uri` names, recovering once from
   * a stale session, a stale handle or a device that went away and came back.
   */
  async withKey<T>(uri: Pkcs11Uri, operation: (module: Pkcs11Module, session: number, key: number) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const opened = await this.#ensureOpen()
      const session = await this.#acquire(opened)
      let broken = false
      try {
        const key = await this.#handle(opened, session, uri)
        const result = await operation(opened.module, session.handle, key)
        this.#missing.delete(uri.text)
        return result
      } catch (error) {
        if (error instanceof Pkcs11Unavailable && error.reason === 'key-missing') {
          // A key that is not found may be one the module lost sight of (a token taken away and
          // put back): the module is opened afresh once, then the key is missing for real.
          if (attempt >= 1) {
            this.#missing.add(uri.text)
            throw error
          }
          broken = true
          await this.#lost(opened, null)
          continue
        }
        if (!(error instanceof Pkcs11Error)) throw error
        if (SESSION_GONE.has(error.rv)) broken = true
        else if (HANDLE_GONE.has(error.rv)) opened.handles.delete(uri.text)
        else if (DEVICE_GONE.has(error.rv)) {
          broken = true
          await this.#lost(opened, error)
        } else throw error
        if (attempt >= 1) throw this.#fail(new Pkcs11Unavailable('device', `the PKCS#11 token failed: ${error.fn} returned ${rvName(error.rv)}`))
      } finally {
        this.#release(opened, session, broken)
      }
    }
  }

  /** Runs `operation` with a logged-in session of the token `uri` names (keys:generate). */
  async withSession<T>(uri: Pick<Pkcs11Uri, 'token' | 'serial'>, operation: (module: Pkcs11Module, session: number) => Promise<T>): Promise<T> {
    const opened = await this.#ensureOpen()
    const slot = await this.#slotOf(opened, uri)
    const session = await this.#acquire(opened, slot)
    try {
      return await operation(opened.module, session.handle)
    } finally {
      this.#release(opened, session, false)
    }
  }

  #fail(error: Pkcs11Unavailable): Pkcs11Unavailable {
    const first = this.#failure === null || this.#failure.error.message !== error.message
    this.#failure = { error, at: Date.now() }
    if (first) this.options.log?.('error', { module: this.options.modulePath, reason: error.reason, detail: error.message }, 'PKCS#11 token unavailable: keyed operations answer 503')
    this.#schedule()
    return error
  }

  /** While degraded, a try on a timer too, so health turns back without waiting for a request. */
  #schedule(): void {
    if (this.#timer || this.#closed) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      if (this.#failure && !this.#closed) void this.#ensureOpen().catch(() => {})
    }, RETRY_MS)
    this.#timer.unref()
  }

  async #ensureOpen(): Promise<Opened> {
    if (this.#opened) return this.#opened
    if (this.#closed) throw new Pkcs11Unavailable('device', 'the PKCS#11 token is closed')
    if (this.#failure && Date.now() - this.#failure.at < RETRY_MS) throw this.#failure.error
    this.#opening ??= this.#open().finally(() => { this.#opening = null })
    return this.#opening
  }

  async #open(): Promise<Opened> {
    // The PIN first: a PIN the token refused is not tried again while the file holds it.
    const pin = this.#readPin()
    let module: Pkcs11Module
    try {
      module = await Pkcs11Module.open(this.options.modulePath, this.options.sessions)
    } catch (error) {
      pin.fill(0)
      // dlopen failed: the module; C_Initialize failed: the module loads, its token store or device does not answer.
      throw this.#fail(error instanceof Pkcs11Error
        ? new Pkcs11Unavailable('device', `the PKCS#11 module PKCS11_MODULE does not start: ${error.message}`)
        : new Pkcs11Unavailable('module', 'the PKCS#11 module PKCS11_MODULE cannot be loaded'))
    }
    const opened: Opened = { module, slots: new Map(), idle: [], open: 0, loggedIn: new Set(), handles: new Map() }
    try {
      // Initialised tokens only (SoftHSM2 always shows one more, empty, slot for a new token).
      const slots: number[] = []
      for (const slot of await module.slots()) {
        const info = await module.tokenInfo(slot)
        if ((info.flags & CKF_TOKEN_INITIALIZED) !== 0) slots.push(slot)
      }
      if (slots.length === 0) throw new Pkcs11Unavailable('token-missing', 'the PKCS#11 module has no initialised token present')
      this.#opened = opened
      // Log in on every token now, so that a refused PIN shows at start, not at the first request.
      for (const slot of slots) await this.#login(opened, slot, pin)
    } catch (error) {
      this.#opened = null
      await module.close().catch(() => {})
      throw this.#fail(error instanceof Pkcs11Unavailable ? error : new Pkcs11Unavailable('device', `the PKCS#11 token failed: ${(error as Error).message}`))
    } finally {
      pin.fill(0)
    }
    const recovered = this.#failure !== null
    this.#failure = null
    this.options.log?.('info', { module: this.options.modulePath, sessions: this.options.sessions }, recovered ? 'PKCS#11 token available again' : 'PKCS#11 token opened')
    return opened
  }

  #readPin(): Buffer {
    let text: string
    try {
      text = readFileSync(this.options.pinFile, 'utf8')
    } catch (error) {
      throw this.#fail(new Pkcs11Unavailable('pin', `PKCS11_PIN_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`))
    }
    const pin = Buffer.from(text.replace(/\r?\n$/, ''), 'utf8')
    // An empty file (one being written in place, read between its truncation and its write) is no
    // PIN: nothing is sent to the token, and the next call reads the file again.
    if (pin.length === 0) throw new Pkcs11Unavailable('pin', 'PKCS11_PIN_FILE is empty')
    const digest = createHash('sha256').update(pin).digest('hex')
    if (this.#refusedPin === digest) {
      pin.fill(0)
      throw this.#fail(new Pkcs11Unavailable('pin', 'the token refused the PIN in PKCS11_PIN_FILE; it is not tried again until the file changes'))
    }
    return pin
  }

  /** C_Login on a session of `slot` (the login then holds for every session of the token). */
  async #login(opened: Opened, slot: number, pin: Buffer): Promise<void> {
    const handle = await opened.module.openSession(slot)
    opened.open++
    try {
      this.#logins++
      await opened.module.login(handle, pin)
    } catch (error) {
      if (error instanceof Pkcs11Error && error.rv === CKR.USER_ALREADY_LOGGED_IN) {
        // Logged in already (by this process before a restart of the module's state): fine.
      } else {
        await opened.module.closeSession(handle).catch(() => {})
        opened.open--
        if (error instanceof Pkcs11Error && PIN_REFUSED.has(error.rv)) {
          this.#refusedPin = createHash('sha256').update(pin).digest('hex')
          throw new Pkcs11Unavailable('pin', `the token refused the PIN in PKCS11_PIN_FILE (${rvName(error.rv)}); it is not tried again until the file changes`)
        }
        throw error
      }
    }
    opened.loggedIn.add(slot)
    opened.idle.push({ slot, handle })
  }

  async #slotOf(opened: Opened, uri: Pick<Pkcs11Uri, 'token' | 'serial'>): Promise<number> {
    const key = uri.serial !== undefined ? `serial:${uri.serial}` : uri.token !== undefined ? `label:${uri.token}` : 'any'
    const known = opened.slots.get(key)
    if (known !== undefined) return known
    const matches: number[] = []
    for (const slot of opened.loggedIn) {
      const info = await opened.module.tokenInfo(slot)
      if ((uri.token === undefined || info.label === uri.token) && (uri.serial === undefined || info.serialNumber === uri.serial)) matches.push(slot)
    }
    if (matches.length === 0) throw new Pkcs11Unavailable('token-missing', 'no token of the module matches the key\'s URI (token=, serial=)')
    if (matches.length > 1) throw new Pkcs11Unavailable('token-missing', 'several tokens match the key\'s URI: name one with token= or serial=')
    opened.slots.set(key, matches[0]!)
    return matches[0]!
  }

  async #acquire(opened: Opened, slot?: number): Promise<{ slot: number, handle: number }> {
    const index = slot === undefined ? opened.idle.length - 1 : opened.idle.findLastIndex((each) => each.slot === slot)
    if (index >= 0) {
      this.#busy++
      return opened.idle.splice(index, 1)[0]!
    }
    if (opened.open < this.options.sessions) {
      opened.open++
      this.#busy++
      const target = slot ?? opened.loggedIn.values().next().value!
      try {
        return { slot: target, handle: await opened.module.openSession(target) }
      } catch (error) {
        opened.open--
        this.#busy--
        throw error
      }
    }
    if (this.#waiting.length >= this.options.queueMax) {
      throw new Pkcs11Unavailable('busy', `every PKCS#11 session is in use and ${this.options.queueMax} calls wait (PKCS11_SESSIONS, PKCS11_QUEUE_MAX)`)
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }))
  }

  #release(opened: Opened, session: { slot: number, handle: number }, broken: boolean): void {
    if (broken || this.#opened !== opened) {
      if (this.#opened === opened) void opened.module.closeSession(session.handle).catch(() => {})
      opened.open--
      this.#busy--
      // A waiter gets a session opened afresh (or the failure) through the normal path.
      const waiter = this.#waiting.shift()
      if (waiter) {
        this.#ensureOpen().then((fresh) => this.#acquire(fresh)).then(waiter.resolve, waiter.reject)
      }
      return
    }
    const waiter = this.#waiting.shift()
    if (waiter) waiter.resolve(session) // stays busy: handed on
    else {
      this.#busy--
      opened.idle.push(session)
    }
  }

  /** The key's handle in this opening of the module, found on first use (its URI's token, label, id, class). */
  async #handle(opened: Opened, session: { slot: number, handle: number }, uri: Pkcs11Uri): Promise<number> {
    const known = opened.handles.get(uri.text)
    if (known !== undefined) return known
    const slot = await this.#slotOf(opened, uri)
    if (slot !== session.slot) throw new Pkcs11Unavailable('token-missing', 'the key is in another token than the first; hashd uses keys of one token')
    const template: Attribute[] = [{ type: CKA.CLASS, value: CKO_SECRET_KEY }]
    if (uri.object !== undefined) template.push({ type: CKA.LABEL, value: Buffer.from(uri.object, 'utf8') })
    if (uri.id !== undefined) template.push({ type: CKA.ID, value: uri.id })
    const found = await opened.module.findObjects(session.handle, template, 2)
    if (found.length !== 1) {
      throw new Pkcs11Unavailable('key-missing', found.length === 0
        ? 'the token has no secret key with the object= or id= of the key\'s URI'
        : 'the token has several secret keys with the object= or id= of the key\'s URI: add id= to tell them apart')
    }
    opened.handles.set(uri.text, found[0]!)
    return found[0]!
  }

  /** The device went away (or a key did): close everything; the next call opens the module afresh. */
  async #lost(opened: Opened, error: Pkcs11Error | null): Promise<void> {
    if (this.#opened !== opened) return
    this.options.log?.('warn', { module: this.options.modulePath, ...(error ? { fn: error.fn, rv: rvName(error.rv) } : { why: 'a key was not found' }) }, 'PKCS#11 token lost: reopening the module')
    await this.#teardown()
  }

  async #teardown(): Promise<void> {
    const opened = this.#opened
    this.#opened = null
    if (opened) await opened.module.close().catch(() => {})
  }
}
