/**
 * The shapes every registry entry has. Routes, the OpenAPI document, /api/algorithms and the
 * identify engine are all driven by entries of these types (see registry.ts), in the manner of
 * RHash's `rhash_hash_info_default[]` table.
 */
import type { CostCaps } from '../config.js'

export type AlgorithmKind = 'digest' | 'xof' | 'checksum' | 'similarity' | 'password'
export type Operation = 'hash' | 'verify' | 'filehash' | 'hmac'

/** One streaming interface for every digest, XOF and checksum (cf. noble-hashes' `Hash<T>`). */
export interface Hasher {
  update(data: Uint8Array): void
  /** Finishes the computation; the hasher must not be used afterwards. */
  digest(): Uint8Array
}

interface AlgorithmBase {
  /** Canonical name: lowercase, what responses echo. */
  name: string
  displayName: string
  /** Other spellings; matching is case-insensitive and ignores `-`, `_`, `/`, `.` and spaces. */
  aliases: string[]
  /** The specification, cited for users and reviewers. */
  reference: string
  /** Which code computes it (OpenSSL via node:crypto, a package, or a module here). */
  implementation: string
}

export interface DigestAlgorithm extends AlgorithmBase {
  /** `similarity`: ssdeep and TLSH, compared by score or distance rather than for equality. */
  kind: 'digest' | 'xof' | 'checksum' | 'similarity'
  /** Output size in bytes (for XOFs, the default). */
  outputBytes: number
  /** Bounds of `options.outputLength` (bytes) for XOFs and variable-length digests. */
  outputLength?: { min: number, max: number }
  /** HMAC block size B in bytes (RFC 2104 §2); absent where HMAC is not defined. */
  blockBytes?: number
  /** The OpenSSL name, where node:crypto implements it (used for its HMAC too). */
  opensslName?: string
  /** A fresh streaming hasher producing `outputBytes` bytes. */
  create(outputBytes: number): Hasher | Promise<Hasher>
  /**
   * A standard text form that replaces the `encoding` choice (mysql41's `*HEX`, say). Verify
   * accepts this form; it does not accept hex/base64 of the raw bytes for such entries.
   */
  format?: (digest: Uint8Array) => string
  /** What a hash in that standard text form looks like, for verification without `algorithm`. */
  formatPattern?: RegExp
  /**
   * Other spellings of the standard text form that verify accepts when the caller names this
   * algorithm (mysql41 without its leading `*`): the standard form, or null when it is none.
   */
  namedForm?: (hash: string) => string | null
  /**
   * A password scheme whose format also carries this digest (FreeBSD's `$3$$` nthash crypt holds
   * the NT hash): verify named with this digest hands hashes that scheme claims to the scheme.
   */
  passwordForm?: string
  /** Legacy/weak algorithms: verify reports `rehashRecommended` when such a hash matches. */
  weak?: string
  /**
   * The same digest split by data over the upload's hash threads (upload/threads.ts), where it is
   * slow and its state is additive over the bytes (TLSH's bucket counts): absent for the others.
   */
  split?: DigestSplit
}

/**
 * A digest split by data: share `index` of `count` sees every byte and does its part; its `digest()`
 * is an intermediate state, which `combine` turns, with every other share's (in share order), into
 * the digest `create` gives.
 */
export interface DigestSplit {
  share(index: number, count: number): Hasher
  combine(states: readonly Uint8Array[]): Uint8Array
}

/** The cost parameters read from a password hash or chosen by options (all numbers). */
export type CostParams = Record<string, number>

export interface OptionSpec {
  default: number
  min: number
  max: number
  description: string
  /** The configured cap for this option, where the server bounds it below `max`. */
  cap?: (caps: CostCaps) => number
}

export interface ParsedPasswordHash {
  /** The registry name of the exact variant found (e.g. `argon2i`, `sha512-crypt`). */
  scheme: string
  /** The cost parameters, checked against the caps before any work. */
  params: CostParams
  /** Human-readable name of the format variant, e.g. `$2y$` or `Django`. */
  format: string
}

export interface PasswordScheme extends AlgorithmBase {
  kind: 'password'
  /** Family groups variants (`argon2` for argon2id/i/d). */
  family: string
  /** Formats this scheme reads, as users know them (`$2a$`, `$2b$`, `$2y$`). */
  reads: string[]
  /** Format it writes, or null for verify-only legacy schemes. */
  writes: string | null
  /** Options for generating hashes, with defaults at or above OWASP's current minimums. */
  options: Record<string, OptionSpec>
  /** New hashes refuse inputs longer than this (bcrypt's 72 bytes). */
  maxInputBytes?: number
  /** Cheap test: does this string claim to be one of this scheme's formats (prefix, shape)? */
  claims(hash: string): boolean
  /** Full structural validation; throws `problems.malformedHash`. Cheap: runs on the event loop. */
  parse(hash: string): ParsedPasswordHash
  /** Throws `problems.costAboveCap` when any parameter exceeds the server's caps. */
  checkCaps(params: CostParams, caps: CostCaps): void
  /** Why a matching hash should be replaced (weak scheme or parameters below OWASP), or null. */
  rehashReason(parsed: ParsedPasswordHash): string | null
  /** Warnings worth telling the caller about a verification (e.g. bcrypt's 72-byte rule). */
  verifyWarnings?(input: Uint8Array, parsed: ParsedPasswordHash): string[]
  /**
   * Whether hash and verify of this input compute on the calling thread. Absent means always, and
   * the pool runs them on a worker thread. False: they only wait for native code running on
   * libuv's thread pool, so the pool runs them from the event loop (workers/pool.ts).
   */
  blocksCaller?(input: Uint8Array): boolean
  /** Runs in a worker thread (unless `blocksCaller` says otherwise): may block. `options` are already validated and capped. */
  hash(input: Uint8Array, options: CostParams): string | Promise<string>
  /** As `hash`. The hash was parsed and cap-checked first. */
  verify(input: Uint8Array, hash: string): boolean | Promise<boolean>
}

export type Algorithm = DigestAlgorithm | PasswordScheme

export function isPassword(algorithm: Algorithm): algorithm is PasswordScheme {
  return algorithm.kind === 'password'
}
