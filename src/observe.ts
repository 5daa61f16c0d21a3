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

export interface Observer {
  /** `bytes` of input went through `algorithm` (a canonical digest name) for `operation`. */
  hashedBytes(operation: Operation, algorithm: string, bytes: number): void
  /** One password hash or verification (canonical scheme name) ended with `outcome`. */
  passwordOperation(operation: 'hash' | 'verify', scheme: string, outcome: PasswordOutcome): void
}

const silent: Observer = { hashedBytes() {}, passwordOperation() {} }
let current: Observer = silent

export function countHashedBytes(operation: Operation, algorithm: string, bytes: number): void {
  current.hashedBytes(operation, algorithm, bytes)
}

export function countPasswordOperation(operation: 'hash' | 'verify', scheme: string, outcome: PasswordOutcome): void {
  current.passwordOperation(operation, scheme, outcome)
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
