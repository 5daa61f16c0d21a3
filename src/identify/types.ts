/** The shapes of the identify table (formats.ts) and of the engine's answers. */
import type { Algorithm } from '../algorithms/types.js'

export type Params = Record<string, number | string>

/**
 * Validates a string the pattern already matched and returns the parameters it carries, or
 * null when the string is not really this format (a bcrypt cost of 99, an argon2 `m` below
 * 8·p, a JWT header that is not JSON…). Groups named in the pattern arrive as `groups`.
 */
export type FormatParser = (hash: string, groups: Record<string, string | undefined>) => Params | null

export type Category =
  | 'Raw hash'
  | 'Raw hash, salted or iterated'
  | 'Raw hash, authenticated (HMAC)'
  | 'Checksum'
  | 'Password hash (crypt/PHC)'
  | 'Operating system'
  | 'Database server'
  | 'Network protocol'
  | 'Web framework'
  | 'Forum, CMS, e-commerce'
  | 'LDAP and directory server'
  | 'FTP, HTTP, SMTP, LDAP server'
  | 'Enterprise application'
  | 'Generic KDF'
  | 'Full-disk encryption'
  | 'File-based encryption'
  | 'Archive'
  | 'Document'
  | 'Password manager'
  | 'Cryptocurrency wallet'
  | 'Private key'
  | 'Instant messaging'
  | 'Raw cipher, known plaintext'
  | 'One-time password'
  | 'Token'
  | 'Encoded digest'
  | 'Similarity hash'

/** One row of the format table, as written in formats.ts. */
export interface FormatSpec {
  /** Canonical name: the hashd registry name where /api/verify reads this syntax, else kebab-case. */
  name: string
  displayName: string
  category: Category
  /** hashcat `-m` mode, where hashcat has one. */
  hashcat: number | null
  /** John the Ripper `--format`, where John has one. */
  john: string | null
  /** Regex source without anchors; quantifiers must be bounded (checked at load). */
  pattern: string
  /**
   * How common the format is in practice, on a log-like scale: 1000 for the digests everyone
   * meets (md5, sha1, sha256, bcrypt…), 100 for widespread formats, 10 for niche but current
   * ones, 1 for rarities. Only ratios matter.
   */
  prior: number
  description: string
  /**
   * True when the string carries a signature that random data or other formats practically
   * never have (a `$id$` prefix, `{SCHEME}`, fixed field structure). Defaults to a literal prefix
   * of at least three characters, or one opening with `$` or `{`.
   */
  signature?: boolean
  /** Tools print this format in uppercase hex (LM, NTLM from pwdump): uppercase input is a clue. */
  upperHex?: boolean
  /**
   * What the application's own output nearly always looks like, where the syntax admits more (a
   * salt of the default size, a standard initial value): a matched string that lacks it is weighed
   * by `otherwise`, a likelihood ratio below 1. The comment beside each use cites the source.
   */
  typical?: TypicalShape
  parse?: FormatParser
  /**
   * Other hashcat modes that read exactly this syntax as parameter variants of the same format
   * (VeraCrypt's PRF and XTS key size, which the string does not reveal): one match lists them
   * instead of a dozen near-identical matches.
   */
  variants?: HashcatVariant[]
  /**
   * The text form or wrapper around the digest named by `name`, where the string is not the
   * digest's bare hex: `base64`, `sri`, `oci-digest`, `openssh-fingerprint`, `colon-hex`… The
   * match then names the inner digest as its algorithm and this as its format.
   */
  format?: string
  /**
   * Why /api/verify cannot check this form even though `name` is a registry digest (a go.sum
   * `h1:` hash is the digest of a file listing, not of one input). Absent: verifiable when the
   * registry has `name`.
   */
  unverifiable?: string
  /**
   * The registry name /api/verify reads this syntax under, where it is not `name`: a bare 40-hex
   * MySQL 4.1 hash (`mysql41-bare`) is verified as `mysql41`.
   */
  verifyAs?: string
  /**
   * The string is sealed under one of the server's own keys (`pepper`: `$pepper$…`, encrypted
   * under a PEPPER_KEYS_FILE key). The row's parser returns the key's id as `params.key` and the
   * scheme inside as `params.scheme`; /api/verify reads such a string, as that scheme, only on a
   * server that holds the key (IdentifyOptions.verifier), so a match is verifiable only there.
   */
  sealedWith?: 'pepper'
  /**
   * An example for GET /api/identify/formats, where one generated from the pattern would not pass
   * the row's parser (a JWT's JSON header); otherwise catalog.ts derives it.
   */
  example?: string
}

export interface TypicalShape {
  /** Regex source, anchored like `pattern`, with bounded quantifiers only. */
  pattern: string
  /** Factor on the weight of a string that does not match `pattern` (0 < otherwise < 1). */
  otherwise: number
}

export interface HashcatVariant {
  hashcat: number
  displayName: string
}

/** A table row compiled for matching. */
export interface HashFormat extends FormatSpec {
  regex: RegExp
  prefix: string
  minLength: number
  maxLength: number
  signature: boolean
  verifiable: boolean
  /** The registry entry of the same name, resolved once at load. */
  registered: Algorithm | undefined
  /** The pattern admits characters beyond hex digits (base64, crypt64, free text). */
  wideAlphabet: boolean
  /** The pattern's alphabet is letters only, both cases, no digits or symbols (OpenEdge ENCODE). */
  lettersOnlyAlphabet: boolean
  /** `typical.pattern`, compiled and anchored. */
  typicalRegex: RegExp | undefined
}
