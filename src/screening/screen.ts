/**
 * Password screening, one seam for every list: `screen(password, context)` compares a password,
 * whole, with the built-in common passwords, the organization's blocklist (PASSWORD_BLOCKLIST_FILE),
 * the words of its context (user name, e-mail, service name) and the breached-password store
 * (PWNED_STORE, or PWNED_NTLM_STORE when only that is set); `check` adds the length policy. POST
 * /api/passwords/check answers with `check`, and hashing screens with it under PASSWORD_SCREENING.
 *
 * The policy is NIST SP 800-63B-4 §3.1.1.2's:
 * - at least PASSWORD_MIN_LENGTH characters (15 by default: the minimum for a password used alone;
 *   8, NIST's floor, is allowed where the password is one factor of several), at most
 *   PASSWORD_MAX_LENGTH (256 by default; NIST asks that at least 64 be allowed), counted in code
 *   points after NFKC normalization (normalize.ts);
 * - no composition rules;
 * - the whole password is compared with each list ("not substrings or words that might be
 *   contained therein"). Lists are compared in any case, and an entry also matches with digits or
 *   symbols added at either end (`Password2024!` is `password`), the derivatives NIST names for
 *   context words. A passphrase that merely contains a listed word is not refused.
 * - the breached-password store is looked up by the SHA-1 (or NTLM) of the NFKC form and, when it
 *   differs, of the password as given: the breach data holds whatever bytes were leaked.
 *
 * Nothing here returns or logs the password or a part of it.
 */
import { hash as oneShot } from 'node:crypto'
import { createMD4, type IHasher } from 'hash-wasm'
import { Problem } from '../problem.js'
import { codePointLength, comparisonKey, lettersCore } from './normalize.js'
import type { PwnedStore } from './store.js'
import type { WordList } from './word-list.js'

export type ReasonCode = 'too-short' | 'too-long' | 'common' | 'breached' | 'context'
export const REASON_CODES: readonly ReasonCode[] = ['too-short', 'too-long', 'common', 'breached', 'context']

export interface Reason { code: ReasonCode, message: string }

/** What a screening found, and which comparisons it could make. */
export interface Screened {
  acceptable: boolean
  reasons: Reason[]
  /** Times the password appears in the breached-password data; present when the store was read. */
  breachCount?: number
  /** The comparisons made: length, common, blocklist, context, breached. */
  checked: string[]
  /** What could not be checked, and why (a store that could not be read, with PASSWORD_SCREENING_FAIL=open). */
  warnings: string[]
}

export type ScreeningMode = 'off' | 'warn' | 'reject'
export type ScreeningFail = 'open' | 'closed'

export interface ScreeningPolicy {
  minLength: number
  maxLength: number
  mode: ScreeningMode
  fail: ScreeningFail
}

/** Holders of values reloaded while running (file-reload.ts): read `.value` at each use. */
interface Current<T> { readonly value: T }

export interface ScreeningSources {
  common: WordList
  blocklist: Current<WordList> | null
  sha1: Current<PwnedStore> | null
  ntlm: Current<PwnedStore> | null
  /** Told when the store cannot be read (logged by the plugin, without the password). */
  onStoreError?: (error: unknown) => void
}

/** Most context words a request may give, and their longest. */
export const MAX_CONTEXT_WORDS = 16
export const MAX_CONTEXT_LENGTH = 256
/** Context words and their parts shorter than this are not compared (a two-letter name would refuse nothing useful). */
const MIN_CONTEXT_KEY = 3

let md4: IHasher | undefined

/** NTLM: MD4 of the UTF-16LE text (MS-NLMP §3.3.1). */
async function ntlm(text: string): Promise<Uint8Array> {
  md4 ??= await createMD4()
  md4.init()
  md4.update(Buffer.from(text, 'utf16le'))
  return md4.digest('binary')
}

/**
 * The derivatives of the context words a password is compared with: each word whole, an
 * e-mail's local part and domain name, the word's letter-and-digit runs (`john.smith` → `john`,
 * `smith`) and those runs joined (`johnsmith`).
 */
export function contextKeys(context: readonly string[]): Set<string> {
  const keys = new Set<string>()
  const add = (key: string) => { if ([...key].length >= MIN_CONTEXT_KEY) keys.add(key) }
  for (const word of context) {
    const key = comparisonKey(word).trim()
    add(key)
    const at = key.lastIndexOf('@')
    const parts = at > 0 ? [key.slice(0, at), key.slice(at + 1).split('.')[0] ?? ''] : [key]
    for (const part of parts) {
      add(part)
      const runs = letterDigitRuns(part)
      for (const run of runs) add(run)
      add(runs.join(''))
    }
  }
  return keys
}

/** The runs of letters and digits in a key (a loop: no regular expression sees the input). */
function letterDigitRuns(key: string): string[] {
  const runs: string[] = []
  let run = ''
  for (const character of key) {
    if (/^[\p{L}\p{N}]$/u.test(character)) run += character
    else if (run !== '') { runs.push(run); run = '' }
  }
  if (run !== '') runs.push(run)
  return runs
}

/** Whether a key, or its letters without digits and symbols at the ends, is in `has`. */
function listed(key: string, core: string, has: (key: string) => boolean): boolean {
  return has(key) || (core !== '' && core !== key && has(core))
}

/**
 * A count with thousands separators, as `toLocaleString('en')` writes it, without it: that call
 * loads ICU's number-formatting data from Node's binary, some 5 MB of pages that then stay in the
 * process's memory at rest for the sake of one comma.
 */
export function count(value: number): string {
  const digits = String(Math.trunc(value))
  let grouped = ''
  for (let end = digits.length; end > 0; end -= 3) grouped = digits.slice(Math.max(0, end - 3), end) + (grouped === '' ? '' : `,${grouped}`)
  return grouped
}

export class Screening {
  readonly policy: ScreeningPolicy
  readonly #sources: ScreeningSources

  constructor(policy: ScreeningPolicy, sources: ScreeningSources) {
    this.policy = policy
    this.#sources = sources
  }

  /** The store screening reads: SHA-1 when set, else NTLM; null without either. */
  get store(): PwnedStore | null {
    return this.#sources.sha1?.value ?? this.#sources.ntlm?.value ?? null
  }

  /** The store of a kind, for /range. */
  storeOf(kind: 'sha1' | 'ntlm'): PwnedStore | null {
    return (kind === 'sha1' ? this.#sources.sha1 : this.#sources.ntlm)?.value ?? null
  }

  get commonPasswords(): number { return this.#sources.common.size }
  get blocklistEntries(): number | null { return this.#sources.blocklist?.value.size ?? null }

  /**
   * The seam: the lists and the store, without the length policy. Rejects with a 503 problem only
   * when the store cannot be read and PASSWORD_SCREENING_FAIL is closed.
   */
  async screen(password: string, context: readonly string[] = []): Promise<Screened> {
    const reasons: Reason[] = []
    const checked = ['common']
    const warnings: string[] = []
    const key = comparisonKey(password)
    const core = lettersCore(key)
    if (listed(key, core, (each) => this.#sources.common.has(each))) {
      reasons.push({ code: 'common', message: 'This is one of the most common passwords (or one with digits or symbols added); attackers try these first. Choose something less predictable, such as a few unrelated words.' })
    }
    const blocklist = this.#sources.blocklist?.value
    if (blocklist) {
      checked.push('blocklist')
      if (listed(key, core, (each) => blocklist.has(each))) {
        reasons.push({ code: 'context', message: 'This password is (or is built from) a word this organization asks you not to use, such as its name or products.' })
      }
    }
    if (context.length > 0) {
      checked.push('context')
      const keys = contextKeys(context)
      if (listed(key, core, (each) => keys.has(each))) {
        reasons.push({ code: 'context', message: 'This password is (or is built from) your user name, e-mail address or the name of this service; choose one that has nothing to do with them.' })
      }
    }
    let breachCount: number | undefined
    const store = this.store
    if (store) {
      try {
        breachCount = await this.#breachCount(store, password)
        checked.push('breached')
        if (breachCount > 0) {
          reasons.push({ code: 'breached', message: `This password has appeared ${count(breachCount)} time${breachCount === 1 ? '' : 's'} in data breaches (Pwned Passwords), so attackers have it in their lists; choose another.` })
        }
      } catch (error) {
        this.#sources.onStoreError?.(error)
        if (this.policy.fail === 'closed') throw storeUnavailable()
        warnings.push('the breached-password store could not be read, so the password was not compared with it (PASSWORD_SCREENING_FAIL=open)')
      }
    }
    return { acceptable: reasons.length === 0, reasons, ...(breachCount === undefined ? {} : { breachCount }), checked, warnings }
  }

  /** The length policy, then the lists: what POST /api/passwords/check answers. */
  async check(password: string, context: readonly string[] = []): Promise<Screened> {
    const length = codePointLength(password.normalize('NFKC'))
    const reasons: Reason[] = []
    if (length < this.policy.minLength) {
      reasons.push({ code: 'too-short', message: `Use at least ${this.policy.minLength} characters; this password has ${length}. A few unrelated words make a long password that is easy to remember.` })
    }
    if (length > this.policy.maxLength) {
      reasons.push({ code: 'too-long', message: `Use at most ${this.policy.maxLength} characters; this password has ${length}.` })
    }
    const screened = await this.screen(password, context)
    const all = [...reasons, ...screened.reasons]
    return { ...screened, acceptable: all.length === 0, reasons: all, checked: ['length', ...screened.checked] }
  }

  async #breachCount(store: PwnedStore, password: string): Promise<number> {
    const forms = [...new Set([password.normalize('NFKC'), password])]
    let found = 0
    for (const form of forms) {
      const digest = store.header.kind.kind === 'sha1' ? oneShot('sha1', Buffer.from(form, 'utf8'), 'buffer') : await ntlm(form)
      found = Math.max(found, await store.count(digest))
    }
    return found
  }
}

/** 503: the store cannot be read and screening fails closed. */
export function storeUnavailable(): Problem {
  return new Problem(503, 'urn:hashd:problem:screening-unavailable', 'Service Unavailable',
    'The breached-password store could not be read, and this server refuses to screen without it (PASSWORD_SCREENING_FAIL=closed); retry shortly',
    { headers: { 'retry-after': '5' } })
}
