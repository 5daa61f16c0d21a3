/**
 * One token of PKCS11_MODULE as hashd uses it: its slot, its logged-in user, a bounded pool of
 * sessions and the handles of the keys found in it. The module (token.ts) holds one pool per token
 * the keys' URIs name, so a token that fails fails alone.
 *
 * - **Sessions:** a PKCS#11 session serves one operation at a time, so each call takes a session
 *   from the pool (at most PKCS11_SESSIONS open in this token) and gives it back; calls beyond that
 *   wait in a queue of at most PKCS11_QUEUE_MAX, and a call that finds the queue full is a 503 at once.
 * - **Login:** once per token, on its first session (PKCS#11 v2.40 §5.6: a login is the
 *   application's, every session of the token shares it), with the PIN read at that moment from the
 *   token's PIN file (the `pin-source` of its URIs, else PKCS11_PIN_FILE) and not kept in memory.
 *   **A wrong PIN is never tried twice on a token:** the SHA-256 of a PIN the token refused is
 *   remembered (here, and by the token's serial number in token.ts), and no login is tried while
 *   the file holds the same PIN, so a token that locks after N failures is never locked by hashd.
 * - **Fail closed, alone:** while this token is missing, its PIN refused or its device gone, every
 *   call for its keys throws `Pkcs11Unavailable` (a 503) at once; the other tokens' keys go on.
 *   It tries again at most once a second, on the next call or on its own timer.
 * - **Recovery:** CKR_SESSION_HANDLE_INVALID or CKR_SESSION_CLOSED drop the session and the call
 *   is tried once more on another; CKR_OBJECT_HANDLE_INVALID or CKR_KEY_HANDLE_INVALID forget the
 *   key's handle and find it again; CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT and their kin close
 *   this token's sessions and look for the token again among the module's slots. A token that is
 *   not there any more asks token.ts to initialise the module afresh (SoftHSM2 and modules like it
 *   list their tokens at C_Initialize only, so a token put back shows after a new one).
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { CKA, CKF_TOKEN_INITIALIZED, CKO_SECRET_KEY, CKR, Pkcs11Error, type Pkcs11Module, rvName, type Attribute, type TokenInfo } from './binding.js'
import type { Pkcs11Uri } from './uri.js'

/** Why a token cannot serve: the caller answers 503 with this reason's code. */
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

export interface PoolState {
  /** The token as the URIs name it: `token=LABEL`, `serial=…`, or `the module's only token`. */
  token: string
  state: 'ready' | 'degraded' | 'idle'
  /** While degraded: which way and why, in words. */
  reason?: UnavailableReason
  detail?: string
  sessions: { open: number, busy: number, waiting: number, max: number }
  /** C_Login calls made on this token since start (a wrong PIN is tried once). */
  logins: number
}

/** What a pool needs of the module that holds it (token.ts). */
export interface PoolOwner {
  readonly sessions: number
  readonly queueMax: number
  /** The module, initialised; waits while it is being initialised afresh. Pair with `leave`. */
  enter(): Promise<{ module: Pkcs11Module, generation: number }>
  leave(): void
  /** The initialisation of the module now in force (a session of an earlier one is gone). */
  readonly generation: number
  /** This token is not among the module's slots: a fresh C_Initialize may show it again. */
  requestReinit(urgent: boolean): void
  /** SHA-256 of a PIN each token refused, by the token's serial number (shared by pools naming one token two ways). */
  readonly refusedPins: Map<string, string>
  log?: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void
}

/** Errors that say the session is gone: another session serves. */
const SESSION_GONE: ReadonlySet<number> = new Set([CKR.SESSION_HANDLE_INVALID, CKR.SESSION_CLOSED])
/** Errors that say the key's handle is stale: find it again. */
const HANDLE_GONE: ReadonlySet<number> = new Set([CKR.OBJECT_HANDLE_INVALID, CKR.KEY_HANDLE_INVALID])
/** Errors that say the token or its device is gone: close its sessions and find it again. */
const DEVICE_GONE: ReadonlySet<number> = new Set([
  CKR.DEVICE_REMOVED, CKR.TOKEN_NOT_PRESENT, CKR.TOKEN_NOT_RECOGNIZED, CKR.DEVICE_ERROR, CKR.DEVICE_MEMORY,
  CKR.CRYPTOKI_NOT_INITIALIZED, CKR.USER_NOT_LOGGED_IN, CKR.GENERAL_ERROR,
])
/** C_Login answers that mean this PIN must not be tried again. */
const PIN_REFUSED: ReadonlySet<number> = new Set([CKR.PIN_INCORRECT, CKR.PIN_LOCKED, CKR.PIN_EXPIRED, CKR.PIN_LEN_RANGE, CKR.USER_PIN_NOT_INITIALIZED])

/** How long a failed open is trusted before the next try. */
export const RETRY_MS = 1000

/** How a URI names its token: the key of its pool. */
export function tokenName(uri: Pick<Pkcs11Uri, 'token' | 'serial'>): string {
  if (uri.serial !== undefined) return uri.token === undefined ? `serial=${uri.serial}` : `token=${uri.token};serial=${uri.serial}`
  return uri.token === undefined ? 'the module\'s only token' : `token=${uri.token}`
}

interface Opened {
  generation: number
  module: Pkcs11Module
  slot: number
  serial: string
  /** Sessions not in use, and how many are open in all. */
  idle: number[]
  open: number
  /** Key handles by URI text. */
  handles: Map<string, number>
}

type Waiter = { resolve: (session: number) => void, reject: (error: Error) => void }

export class TokenPool {
  readonly name: string
  readonly selector: Pick<Pkcs11Uri, 'token' | 'serial'>
  /** The file holding this token's user PIN. */
  readonly pinFile: string
  /** The variable or attribute that names `pinFile`, for messages. */
  readonly pinFrom: string
  readonly #owner: PoolOwner
  #opened: Opened | null = null
  #opening: Promise<Opened> | null = null
  #failure: { error: Pkcs11Unavailable, at: number } | null = null
  #refusedPin: string | null = null
  /** URIs of keys the token did not have while it was present; health is degraded while any is. */
  readonly #missing = new Set<string>()
  #busy = 0
  #logins = 0
  readonly #waiting: Waiter[] = []
  #timer: NodeJS.Timeout | null = null
  #closed = false

  constructor(owner: PoolOwner, selector: Pick<Pkcs11Uri, 'token' | 'serial'>, pinFile: string, pinFrom: string) {
    this.#owner = owner
    this.selector = { ...(selector.token === undefined ? {} : { token: selector.token }), ...(selector.serial === undefined ? {} : { serial: selector.serial }) }
    this.name = tokenName(selector)
    this.pinFile = pinFile
    this.pinFrom = pinFrom
  }

  get state(): PoolState {
    const sessions = { open: this.#opened?.open ?? 0, busy: this.#busy, waiting: this.#waiting.length, max: this.#owner.sessions }
    const base = { token: this.name, sessions, logins: this.#logins }
    if (this.#failure) return { ...base, state: 'degraded', reason: this.#failure.error.reason, detail: this.#failure.error.message }
    if (this.#missing.size > 0) {
      return { ...base, state: 'degraded', reason: 'key-missing', detail: `${this.#missing.size} key(s) named in a keys file are not in ${this.name}` }
    }
    return { ...base, state: this.#opened ? 'ready' : 'idle' }
  }

  /** Whether this pool waits for its token to show among the module's slots again. */
  get tokenMissing(): boolean {
    return this.#failure?.error.reason === 'token-missing'
  }

  /** Finds the token and logs in now: a failure is the degraded state, not an error. */
  async start(): Promise<void> {
    if (this.#closed) return
    let entered = false
    try {
      const lease = await this.#owner.enter()
      entered = true
      await this.#ensureOpen(lease)
    } catch {
      // The degraded state says why.
    } finally {
      if (entered) this.#owner.leave()
    }
  }

  close(): void {
    this.#closed = true
    if (this.#timer) clearTimeout(this.#timer)
    for (const waiter of this.#waiting.splice(0)) waiter.reject(new Pkcs11Unavailable('device', 'the PKCS#11 module is closing'))
    this.#opened = null
  }

  /**
   * The module is about to be finalised (token.ts, with no call in flight): this token's sessions
   * and handles end with it, and the next call logs in afresh.
   */
  forget(): void {
    this.#opened = null
  }

  /**
   * Runs `operation` with a session of this token and the handle of the key `uri` names,
   * recovering once from a stale session, a stale handle or a token that went away and came back.
   */
  async withKey<T>(uri: Pkcs11Uri, operation: (module: Pkcs11Module, session: number, key: number) => Promise<T>): Promise<T> {
    const lease = await this.#owner.enter()
    try {
      for (let attempt = 0; ; attempt++) {
        const opened = await this.#ensureOpen(lease)
        const session = await this.#acquire(opened)
        let broken = false
        try {
          const key = await this.#handle(opened, session, uri)
          const result = await operation(opened.module, session, key)
          this.#missing.delete(uri.text)
          return result
        } catch (error) {
          if (error instanceof Pkcs11Unavailable && error.reason === 'key-missing') {
            // A key not found is missing for real only while its token still answers as itself:
            // SoftHSM2 finds no objects in a token whose directory went away, with no error.
            if (await this.#stillThere(opened)) {
              this.#missing.add(uri.text)
              throw error
            }
            broken = true
            this.#lost(opened, null)
            if (attempt >= 1) {
              this.#owner.requestReinit(false)
              throw this.#fail(new Pkcs11Unavailable('token-missing', `${this.name} does not answer as itself any more`))
            }
            continue
          }
          if (!(error instanceof Pkcs11Error)) throw error
          if (SESSION_GONE.has(error.rv)) broken = true
          else if (HANDLE_GONE.has(error.rv)) opened.handles.delete(uri.text)
          else if (DEVICE_GONE.has(error.rv)) {
            broken = true
            this.#lost(opened, error)
            // The module itself lost its state: every token needs it initialised afresh.
            if (error.rv === CKR.CRYPTOKI_NOT_INITIALIZED) this.#owner.requestReinit(true)
          } else throw error
          if (attempt >= 1) throw this.#fail(new Pkcs11Unavailable('device', `${this.name} failed: ${error.fn} returned ${rvName(error.rv)}`))
        } finally {
          this.#release(opened, session, broken)
        }
      }
    } finally {
      this.#owner.leave()
    }
  }

  /** Runs `operation` with a logged-in session of this token (keys:generate). */
  async withSession<T>(operation: (module: Pkcs11Module, session: number) => Promise<T>): Promise<T> {
    const lease = await this.#owner.enter()
    try {
      const opened = await this.#ensureOpen(lease)
      const session = await this.#acquire(opened)
      try {
        return await operation(opened.module, session)
      } finally {
        this.#release(opened, session, false)
      }
    } finally {
      this.#owner.leave()
    }
  }

  /** Marks the pool degraded (logged once per distinct detail) and schedules a try. */
  fail(error: Pkcs11Unavailable): Pkcs11Unavailable {
    return this.#fail(error)
  }

  #fail(error: Pkcs11Unavailable): Pkcs11Unavailable {
    const first = this.#failure === null || this.#failure.error.message !== error.message
    this.#failure = { error, at: Date.now() }
    if (first) this.#owner.log?.('error', { token: this.name, reason: error.reason, detail: error.message }, 'PKCS#11 token unavailable: operations with its keys answer 503')
    this.#schedule()
    return error
  }

  /** While degraded, a try on a timer too, so health turns back without waiting for a request. */
  #schedule(): void {
    if (this.#timer || this.#closed) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      if (this.#failure && !this.#closed) void this.start()
    }, RETRY_MS)
    this.#timer.unref()
  }

  async #ensureOpen(lease: { module: Pkcs11Module, generation: number }): Promise<Opened> {
    if (this.#opened && this.#opened.generation === lease.generation) return this.#opened
    // Sessions of an earlier initialisation of the module ended with its C_Finalize.
    if (this.#opened) this.#opened = null
    if (this.#closed) throw new Pkcs11Unavailable('device', 'the PKCS#11 module is closed')
    if (this.#failure && Date.now() - this.#failure.at < RETRY_MS) throw this.#failure.error
    this.#opening ??= this.#open(lease).finally(() => { this.#opening = null })
    return this.#opening
  }

  async #open({ module, generation }: { module: Pkcs11Module, generation: number }): Promise<Opened> {
    // The PIN first: a PIN this token refused is not tried again while the file holds it.
    const pin = this.#readPin()
    try {
      const { slot, info } = await this.#find(module)
      const digest = createHash('sha256').update(pin).digest('hex')
      if (this.#owner.refusedPins.get(info.serialNumber) === digest) {
        this.#refusedPin = digest
        throw new Pkcs11Unavailable('pin', `${this.name} refused the PIN in ${this.pinFrom}; it is not tried again until the file changes`)
      }
      const opened: Opened = { generation, module, slot, serial: info.serialNumber, idle: [], open: 0, handles: new Map() }
      await this.#login(opened, pin, digest)
      const recovered = this.#failure !== null
      this.#failure = null
      this.#opened = opened
      this.#owner.log?.('info', { token: this.name, sessions: this.#owner.sessions }, recovered ? 'PKCS#11 token available again' : 'PKCS#11 token opened')
      return opened
    } catch (error) {
      throw this.#fail(error instanceof Pkcs11Unavailable ? error : new Pkcs11Unavailable('device', `${this.name} failed: ${(error as Error).message}`))
    } finally {
      pin.fill(0)
    }
  }

  /**
   * The slot holding this token. A slot whose token does not answer C_GetTokenInfo is passed over
   * (SoftHSM2 answers CKR_GENERAL_ERROR for a token whose directory went away): it is not this
   * token's failure when this token is elsewhere.
   */
  async #find(module: Pkcs11Module): Promise<{ slot: number, info: TokenInfo }> {
    const matches: { slot: number, info: TokenInfo }[] = []
    for (const slot of await module.slots()) {
      let info: TokenInfo
      try {
        info = await module.tokenInfo(slot)
      } catch {
        continue
      }
      // Initialised tokens only (SoftHSM2 always shows one more, empty, slot for a new token).
      if ((info.flags & CKF_TOKEN_INITIALIZED) === 0) continue
      if (this.#matches(info)) matches.push({ slot, info })
    }
    if (matches.length === 0) {
      this.#owner.requestReinit(false)
      throw new Pkcs11Unavailable('token-missing', `no token of the module is ${this.name}`)
    }
    if (matches.length > 1) {
      throw new Pkcs11Unavailable('token-missing', this.selector.token === undefined && this.selector.serial === undefined
        ? 'the module has several initialised tokens: name one with token= or serial= (keys:generate: --token)'
        : `several tokens of the module match ${this.name}: name one with serial=`)
    }
    return matches[0]!
  }

  #matches(info: TokenInfo): boolean {
    return (this.selector.token === undefined || info.label === this.selector.token) && (this.selector.serial === undefined || info.serialNumber === this.selector.serial)
  }

  /** Whether the token in the session's slot still answers, as the same token. */
  async #stillThere(opened: Opened): Promise<boolean> {
    try {
      const info = await opened.module.tokenInfo(opened.slot)
      return info.serialNumber === opened.serial && this.#matches(info)
    } catch {
      return false
    }
  }

  #readPin(): Buffer {
    let text: string
    try {
      text = readFileSync(this.pinFile, 'utf8')
    } catch (error) {
      throw this.#fail(new Pkcs11Unavailable('pin', `the PIN file of ${this.name} (${this.pinFrom}) cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`))
    }
    const pin = Buffer.from(text.replace(/\r?\n$/, ''), 'utf8')
    // An empty file (one being written in place, read between its truncation and its write) is no
    // PIN: nothing is sent to the token, and the next call reads the file again.
    if (pin.length === 0) throw this.#fail(new Pkcs11Unavailable('pin', `the PIN file of ${this.name} (${this.pinFrom}) is empty`))
    const digest = createHash('sha256').update(pin).digest('hex')
    if (this.#refusedPin === digest) {
      pin.fill(0)
      throw this.#fail(new Pkcs11Unavailable('pin', `${this.name} refused the PIN in ${this.pinFrom}; it is not tried again until the file changes`))
    }
    return pin
  }

  /** C_Login on a first session of the token (the login then holds for every session of it). */
  async #login(opened: Opened, pin: Buffer, digest: string): Promise<void> {
    const handle = await opened.module.openSession(opened.slot)
    try {
      this.#logins++
      await opened.module.login(handle, pin)
    } catch (error) {
      if (error instanceof Pkcs11Error && error.rv === CKR.USER_ALREADY_LOGGED_IN) {
        // Logged in already (another pool naming this token another way, or this one before its sessions were reset): fine.
      } else {
        await opened.module.closeSession(handle).catch(() => {})
        if (error instanceof Pkcs11Error && PIN_REFUSED.has(error.rv)) {
          this.#refusedPin = digest
          this.#owner.refusedPins.set(opened.serial, digest)
          throw new Pkcs11Unavailable('pin', `${this.name} refused the PIN in ${this.pinFrom} (${rvName(error.rv)}); it is not tried again until the file changes`)
        }
        throw error
      }
    }
    opened.open++
    opened.idle.push(handle)
  }

  async #acquire(opened: Opened): Promise<number> {
    const idle = opened.idle.pop()
    if (idle !== undefined) {
      this.#busy++
      return idle
    }
    if (opened.open < this.#owner.sessions) {
      opened.open++
      this.#busy++
      try {
        return await opened.module.openSession(opened.slot)
      } catch (error) {
        opened.open--
        this.#busy--
        throw error
      }
    }
    if (this.#waiting.length >= this.#owner.queueMax) {
      throw new Pkcs11Unavailable('busy', `every session of ${this.name} is in use and ${this.#owner.queueMax} calls wait (PKCS11_SESSIONS, PKCS11_QUEUE_MAX)`)
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }))
  }

  #release(opened: Opened, session: number, broken: boolean): void {
    const current = this.#opened === opened
    if (broken || !current) {
      // A session of the module's present initialisation is closed; one of an earlier one ended with it.
      if (opened.generation === this.#owner.generation) void opened.module.closeSession(session).catch(() => {})
      opened.open--
      this.#busy--
      const waiter = this.#waiting.shift()
      if (waiter === undefined) return
      if (!current) {
        waiter.reject(new Pkcs11Unavailable('device', `the sessions of ${this.name} were reset: try again`))
        return
      }
      // The waiter gets a session opened afresh in its place.
      opened.open++
      this.#busy++
      opened.module.openSession(opened.slot).then(waiter.resolve, (error: unknown) => {
        opened.open--
        this.#busy--
        waiter.reject(error as Error)
      })
      return
    }
    const waiter = this.#waiting.shift()
    if (waiter) waiter.resolve(session) // stays busy: handed on
    else {
      this.#busy--
      opened.idle.push(session)
    }
  }

  /** The key's handle in this opening of the token, found on first use (its URI's label, id, class). */
  async #handle(opened: Opened, session: number, uri: Pkcs11Uri): Promise<number> {
    const known = opened.handles.get(uri.text)
    if (known !== undefined) return known
    const template: Attribute[] = [{ type: CKA.CLASS, value: CKO_SECRET_KEY }]
    if (uri.object !== undefined) template.push({ type: CKA.LABEL, value: Buffer.from(uri.object, 'utf8') })
    if (uri.id !== undefined) template.push({ type: CKA.ID, value: uri.id })
    const found = await opened.module.findObjects(session, template, 2)
    if (found.length !== 1) {
      throw new Pkcs11Unavailable('key-missing', found.length === 0
        ? `${this.name} has no secret key with the object= or id= of the key's URI`
        : `${this.name} has several secret keys with the object= or id= of the key's URI: add id= to tell them apart`)
    }
    opened.handles.set(uri.text, found[0]!)
    return found[0]!
  }

  /** The token went away (or a key did): close its sessions; the next call looks for it again. */
  #lost(opened: Opened, error: Pkcs11Error | null): void {
    if (this.#opened !== opened) return
    this.#owner.log?.('warn', { token: this.name, ...(error ? { fn: error.fn, rv: rvName(error.rv) } : { why: 'a key was not found and the token does not answer as itself' }) }, 'PKCS#11 token lost: looking for it again')
    this.#opened = null
    if (opened.generation === this.#owner.generation) {
      for (const session of opened.idle.splice(0)) void opened.module.closeSession(session).catch(() => {})
    }
  }
}
