/**
 * What the domain code tells monitoring, as a few named functions. The metrics plugin
 * (plugins/metrics.ts, the only module that imports prom-client) installs the implementation;
 * until then, and with METRICS=off, every call is an empty function call.
 *
 * Every argument is a label value, so callers pass only values from fixed sets: registry names
 * (canonical algorithm and scheme names), the operation names below, the outcomes below. Never
 * anything the client typed.
 */

export type Operation = 'hash' | 'verify' | 'hmac' | 'filehash'
export type PasswordOutcome = 'ok' | 'match' | 'mismatch' | 'error'

/** What a key of the key ring was used for: HMACs made and checked, webhooks signed and verified, pepper seals, opens and rewraps. */
export type KeyOperation = 'hmac' | 'verify' | 'webhook-sign' | 'webhook-verify' | 'seal' | 'open' | 'rewrap'

export interface Observer {
  /** `bytes` of input went through `algorithm` (a canonical digest name) for `operation`. */
  hashedBytes(operation: Operation, algorithm: string, bytes: number): void
  /** One password hash or verification (canonical scheme name) ended with `outcome`. */
  passwordOperation(operation: 'hash' | 'verify', scheme: string, outcome: PasswordOutcome): void
  /**
   * A key of the ring was used: `ring` names the file (hmac, pepper), `key` and `version` come from
   * that file (never from the request: a name the file lacks is refused before this is called), or
   * `any` for a verify that named no version and matched none.
   */
  /** `uses` of a key version at once (a batch's HMACs are counted together). */
  keyUse(ring: 'hmac' | 'pepper', key: string, version: string, operation: KeyOperation, uses: number): void
}

const silent: Observer = { hashedBytes() {}, passwordOperation() {}, keyUse() {} }
let current: Observer = silent

export function countHashedBytes(operation: Operation, algorithm: string, bytes: number): void {
  current.hashedBytes(operation, algorithm, bytes)
}

export function countPasswordOperation(operation: 'hash' | 'verify', scheme: string, outcome: PasswordOutcome): void {
  current.passwordOperation(operation, scheme, outcome)
}

export function countKeyUse(ring: 'hmac' | 'pepper', key: string, version: string, operation: KeyOperation, uses = 1): void {
  current.keyUse(ring, key, version, operation, uses)
}

/**
 * Makes `observer` the one that receives the counts, and returns the function that puts the
 * previous one back. One process runs one server, so one observer is enough; tests that start
 * several servers in one process see the domain counts in the last one started.
 */
export function installObserver(observer: Observer): () => void {
  const previous = current
  current = observer
  return () => { if (current === observer) current = previous }
}
