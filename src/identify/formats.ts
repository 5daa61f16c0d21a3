/**
 * The identify table: every hash syntax hashd recognises, as data (cf. haiti's prototypes.json
 * and Name-That-Hash). One row per hashcat mode whose hash is a text string (the syntax of each
 * module's `module_hash_decode`, hashcat src/modules/module_NNNNN.c), plus the formats hashcat
 * lacks: yescrypt, gost-yescrypt, passlib/Django/Werkzeug variants, LDAP schemes, checksums,
 * base64 digests.
 *
 * `name` is the hashd registry name where /api/verify reads that exact syntax; otherwise a
 * descriptive kebab-case name. Patterns are regex sources without anchors, with bounded
 * quantifiers only (pattern.ts refuses anything else at load). Priors are relative popularity
 * (see types.ts); they, not any benchmark, decide the order of formats that share a syntax.
 */
import {
  decodedLength, groupParams, parseArgon2, parsePepperSeal, parseBcrypt, parseBsdiCrypt, parseIterated, parseJwt,
  parsePasslibScrypt, parsePortableCost, parseScrypt7, parseShaCrypt, parseYescrypt,
} from './parsers.js'
import { canonicalBase64, colonHexPattern, encodedDigestRows } from './encoded.js'
import type { Category, FormatSpec, HashcatVariant } from './types.js'

const R = String.raw

const count = (min: number, max?: number): string => `{${max === undefined ? min : `${min},${max}`}}`
/** Hex digits, either case. */
const hex = (min: number, max?: number): string => `[0-9a-fA-F]${count(min, max)}`
/** Uppercase hex digits. */
const HEX = (min: number, max?: number): string => `[0-9A-F]${count(min, max)}`
/** Lowercase hex digits. */
const lhex = (min: number, max?: number): string => `[0-9a-f]${count(min, max)}`
/** Standard base64 characters (RFC 4648 §4), no padding. */
const b64 = (min: number, max?: number): string => `[A-Za-z0-9+/]${count(min, max)}`
/** Standard base64 with optional padding. */
const b64p = (min: number, max?: number): string => `${b64(min, max)}={0,2}`
/** URL-safe base64 (RFC 4648 §5). */
const b64u = (min: number, max?: number): string => `[A-Za-z0-9_-]${count(min, max)}`
/** The crypt(3) alphabet `./0-9A-Za-z`. */
const c64 = (min: number, max?: number): string => `[./0-9A-Za-z]${count(min, max)}`
/** passlib's adapted base64 (`.` for `+`). */
const ab64 = (min: number, max?: number): string => `[./A-Za-z0-9]${count(min, max)}`
const digits = (min: number, max?: number): string => `\\d${count(min, max)}`
/** A field of printable characters up to the next `$`, `*` or `:` delimiter. */
const field = (max = 128, min = 1): string => `[^$*:\\s]${count(min, max)}`
/**
 * The rest of a long structured hash whose signature already decided the format. Only at the end
 * of a pattern, or before a separator it cannot hold: two fields that can both hold the separator
 * between them meet at every place it occurs, and a backtracking engine tries each (see KEEPASS_FIELDS).
 */
const rest = (min: number, max: number): string => `[!-~]${count(min, max)}`
/** A salt after `hash:`, as hashcat's salted modes take it (any characters, up to 256). */
const SALT = '(?<salt>[^:\\n]{0,256})'

/** A standard CRC's initial value, as hashcat's CRC32/CRC32C modes write it (see their rows). */
const STANDARD_CRC_INIT = { pattern: `${hex(8)}:0{8}`, otherwise: 0.1 }
/**
 * A library's default salt size is what nearly every stored hash has: one in ten, say, is made
 * with a salt size set by hand.
 */
const NON_DEFAULT_SALT_SIZE = 0.1
/** The same for a derived key longer or shorter than the digest (hashd's PBKDF2 keyLength option). */
const NON_DEFAULT_KEY_LENGTH = 0.1
/** hashd's PBKDF2 keys: 16 to 1024 bytes, in unpadded adapted base64. */
const PBKDF2_KEY_CHARS = 1366

/** How many `0`s `text` ends with. */
function trailingZeros(text: string): number {
  let count = 0
  while (text[text.length - 1 - count] === '0') count += 1
  return count
}

/** Rejects a hash whose last `zeros` hex digits are all 0 (the RFC_READ_TABLE form: see the SAP rows). */
const unlessZeroTail = (zeros: number): FormatSpec['parse'] => (hash) => trailingZeros(hash) >= zeros ? null : {}

/** Nix's base32 alphabet (libutil hash.cc base32Chars): digits and letters without e, o, t, u. */
const nix32 = (min: number, max?: number): string => `[0-9a-df-np-sv-z]${count(min, max)}`

/** The `payload` group (SRI, OpenSSH, go.sum): canonical base64 of exactly `bytes` bytes. */
const base64Payload = (bytes: number): FormatSpec['parse'] => {
  const canonical = canonicalBase64(bytes)
  return (hash, groups) => (canonical!(groups.payload ?? '', groups) === null ? null : {})
}

/**
 * A digest inside a wrapper (SRI, OCI, OpenSSH, Nix, go.sum…): the row is named by the inner
 * digest, so /api/verify reads it where it can, and `format` names the wrapper.
 */
function envelope(name: string, displayName: string, format: string, pattern: string, prior: number, description: string, extra: { parse?: FormatSpec['parse'], unverifiable?: string, signature?: boolean } = {}): FormatSpec {
  return {
    name, displayName, category: ENCODED, hashcat: null, john: null, pattern, prior, description, format,
    ...(extra.parse ? { parse: extra.parse } : {}),
    ...(extra.unverifiable ? { unverifiable: extra.unverifiable } : {}),
    ...(extra.signature === undefined ? {} : { signature: extra.signature }),
  }
}

/** hashcat modes that read one syntax as parameter variants (see FormatSpec.variants). */
const variant = (hashcat: number, displayName: string): HashcatVariant => ({ hashcat, displayName })

const RAW: Category = 'Raw hash'
const SALTED: Category = 'Raw hash, salted or iterated'
const HMAC: Category = 'Raw hash, authenticated (HMAC)'
const CHECKSUM: Category = 'Checksum'
const CRYPT: Category = 'Password hash (crypt/PHC)'
const OS: Category = 'Operating system'
const DB: Category = 'Database server'
const NET: Category = 'Network protocol'
const FRAMEWORK: Category = 'Web framework'
const CMS: Category = 'Forum, CMS, e-commerce'
const LDAP: Category = 'LDAP and directory server'
const SERVER: Category = 'FTP, HTTP, SMTP, LDAP server'
const EAS: Category = 'Enterprise application'
const KDF: Category = 'Generic KDF'
const FDE: Category = 'Full-disk encryption'
const FBE: Category = 'File-based encryption'
const ARCHIVE: Category = 'Archive'
const DOC: Category = 'Document'
const PWM: Category = 'Password manager'
const WALLET: Category = 'Cryptocurrency wallet'
const KEY: Category = 'Private key'
const IM: Category = 'Instant messaging'
const CIPHER: Category = 'Raw cipher, known plaintext'
const OTP: Category = 'One-time password'
const TOKEN: Category = 'Token'
const ENCODED: Category = 'Encoded digest'
const SIMILARITY: Category = 'Similarity hash'

/**
 * KeePass's seeds, IV and hashes before the `*1*` of inline data or a key file (hashcat
 * module_13400 hash_decode): four hex fields (KeePass 1: 32, 64, 32, 64 digits) or five (KeePass
 * 2: 64, 64, 32, 64, 64). A field cannot hold `*`, nor be the `1`, so the fields and the `*1*`
 * meet at one place; `[!-~]{64,16384}\*1\*[!-~]{2,16384}` met at every `*1*` of the string, a
 * quadratic search on a string of many.
 */
const KEEPASS_FIELDS = `(?:${hex(32, 64)}\\*){3,4}${hex(32, 64)}`

/**
 * The checksum-only entries of a PKZIP multi-file hash, after the first one's `1*0*<type>*`
 * (hashcat module_17220 hash_decode, zip2john): data length, the CRC checksum, the time checksum
 * (`$pkzip2$` only), the data; then up to six more `*1*…` entries. No field holds `*`, and the data
 * (12 bytes at least) is longer than a 4-digit checksum, so each field ends at one place and the
 * entries meet the `*2*0*` of the full entry after them at one place.
 */
const PKZIP_ENTRY_TAIL = `${hex(1, 8)}\\*${hex(1, 4)}\\*(?:${hex(1, 4)}\\*)?${hex(5, 16384)}`
const PKZIP_CHECKSUM_ENTRIES = `${PKZIP_ENTRY_TAIL}(?:\\*1\\*\\d{1,3}\\*\\d{1,2}\\*${PKZIP_ENTRY_TAIL}){0,6}`

interface Extra {
  john?: string
  description?: string
  signature?: boolean
  upperHex?: boolean
  parse?: FormatSpec['parse']
  variants?: FormatSpec['variants']
  typical?: FormatSpec['typical']
  verifyAs?: string
  example?: string
}

/** A row for a hashcat mode. */
function hc(hashcat: number, name: string, displayName: string, category: Category, pattern: string, prior: number, extra: Extra = {}): FormatSpec {
  return {
    name, displayName, category, hashcat, john: extra.john ?? null, pattern, prior,
    description: extra.description ?? `${displayName} (hashcat -m ${hashcat})`,
    ...(extra.signature === undefined ? {} : { signature: extra.signature }),
    ...(extra.upperHex ? { upperHex: true } : {}),
    ...(extra.parse ? { parse: extra.parse } : {}),
    ...(extra.variants ? { variants: extra.variants } : {}),
    ...(extra.typical ? { typical: extra.typical } : {}),
    ...(extra.verifyAs ? { verifyAs: extra.verifyAs } : {}),
    ...(extra.example ? { example: extra.example } : {}),
  }
}

/** A row for a format hashcat has no mode for. */
function other(name: string, displayName: string, category: Category, pattern: string, prior: number, extra: Extra & { description: string }): FormatSpec {
  return {
    name, displayName, category, hashcat: null, john: extra.john ?? null, pattern, prior, description: extra.description,
    ...(extra.signature === undefined ? {} : { signature: extra.signature }),
    ...(extra.upperHex ? { upperHex: true } : {}),
    ...(extra.parse ? { parse: extra.parse } : {}),
  }
}

/**
 * hashcat modes that read exactly one syntax (same digest length and alphabet, same separator,
 * same salt length range and alphabet in their module_hash_decode) as different constructions:
 * md5($pass.$salt), md5($salt.$pass), HMAC-MD5 and a dozen more all take `32 hex:salt`. Nothing
 * in the string tells them apart, so they are one row: the commonest is the match and the others
 * are its `variants`, as hashcat's own example list groups them. The row's prior is the sum of
 * theirs (the string is evidence for the whole group). Patterns must be identical, checked here,
 * so a mode with a real clue of its own (vBulletin's 30-character salt, Oracle's 20 hex) stays a
 * row of its own.
 *
 * The variants come in the order of their priors, which is the order a hashcat user should try
 * them. The priors within a group follow one rule of thumb, not the benchmark file: the raw digest
 * first; then the two generic salted constructions ($pass.$salt, $salt.$pass, hashcat's own first
 * modes 10/20, 110/120…); then HMAC with the password as key, then with the salt as key; then the
 * applications that store the digest:salt form as it is (PostgreSQL, SMF); then nested digests of
 * the same family (md5(md5()), sha1($salt.sha1())); then UTF-16LE variants (Windows-derived
 * code); then cross-family nesting (md5(sha1())) and the exotic HMACs (Streebog, BLAKE2s).
 */
function sameSyntax(rows: FormatSpec[]): FormatSpec {
  const modeOf = (row: FormatSpec): number => {
    if (row.hashcat === null) throw new Error(`identify table: ${row.name} has no hashcat mode to list as a variant`)
    return row.hashcat
  }
  const ordered = [...rows].sort((a, b) => b.prior - a.prior || modeOf(a) - modeOf(b))
  const [primary, ...others] = ordered
  if (primary === undefined || others.length === 0) throw new Error('identify table: sameSyntax needs two rows or more')
  for (const row of others) {
    if (row.pattern !== primary.pattern) throw new Error(`identify table: ${row.name} and ${primary.name} do not share one syntax`)
  }
  const variants = [
    ...(primary.variants ?? []),
    ...others.flatMap((row) => [variant(modeOf(row), row.displayName), ...(row.variants ?? [])]),
  ]
  return {
    ...primary,
    prior: ordered.reduce((sum, row) => sum + row.prior, 0),
    description: `${primary.description}; ${others.length} other hashcat mode${others.length > 1 ? 's read' : ' reads'} the same syntax (see variants)`,
    variants,
  }
}

/** hashcat's many `digest:salt` modes share one syntax; only the prior tells them apart. */
const salted = (hashcat: number, name: string, displayName: string, hexLength: number, prior: number, extra: Extra = {}, saltPattern = SALT): FormatSpec =>
  hc(hashcat, name, displayName, displayName.startsWith('HMAC') ? HMAC : SALTED, `${hex(hexLength)}:${saltPattern}`, prior, {
    description: extra.description ?? `${displayName}, written as hex digest:salt (hashcat -m ${hashcat})`, ...extra,
  })

const BCRYPT = R`\$(?<variant>2[abxy])\$(?<cost>\d{2})\$(?<salt>${c64(22)})${c64(31)}`
const ARGON2 = (variant: string): string =>
  R`\$(?<variant>${variant})(?:\$v=(?<version>\d{1,3}))?\$m=(?<m>\d{1,10}),t=(?<t>\d{1,10}),p=(?<p>\d{1,8})(?:,keyid=[A-Za-z0-9+/]{0,64})?(?:,data=[A-Za-z0-9+/]{0,64})?\$(?<salt>${b64(11, 128)})\$(?<digest>${b64(6, 2048)})`
const SHA_CRYPT = (id: string, length: number): string => R`\$${id}\$(?:rounds=(?<rounds>\d{1,9})\$)?(?<salt>[^$:\s]{0,16})\$${c64(length)}`
const MD5_CRYPT = (magic: string): string => R`${magic}(?<salt>[^$:\s]{0,8})\$${c64(22)}`

export const formatSpecs: FormatSpec[] = [
  // ---- Raw digests, hex (hashcat "Raw Hash") ----
  sameSyntax([
    hc(0, 'md5', 'MD5', RAW, hex(32), 1000, { john: 'raw-md5', description: 'MD5 digest (RFC 1321), hex' }),
    hc(2600, 'md5-md5-pass', 'md5(md5($pass))', SALTED, hex(32), 30, { john: 'dynamic_2' }),
    hc(70, 'md5-utf16le-pass', 'md5(utf16le($pass))', RAW, hex(32), 8),
    hc(3500, 'md5-md5-md5-pass', 'md5(md5(md5($pass)))', SALTED, hex(32), 6, { john: 'dynamic_3' }),
    hc(4400, 'md5-sha1-pass', 'md5(sha1($pass))', SALTED, hex(32), 6, { john: 'dynamic_26' }),
    hc(4300, 'md5-strtoupper-md5-pass', 'md5(strtoupper(md5($pass)))', SALTED, hex(32), 3, { john: 'dynamic_4' }),
    hc(20900, 'md5-sha1-md5-sha1', 'md5(sha1($pass).md5($pass).sha1($pass))', SALTED, hex(32), 1),
  ]),
  hc(1000, 'ntlm', 'NTLM', OS, hex(32), 300, { john: 'nt', upperHex: true, description: 'Windows NT hash: MD4 of the UTF-16LE password, hex' }),
  hc(900, 'md4', 'MD4', RAW, hex(32), 60, { john: 'raw-md4', description: 'MD4 digest (RFC 1320), hex' }),
  other('ed2k', 'eD2k (eDonkey2000, eMule)', RAW, hex(32), 1, { description: 'eDonkey2000 file hash: the MD4 of the MD4s of each 9,728,000-byte chunk (the MD4 itself for one chunk), hex' }),
  other('lm', 'LM', OS, hex(32), 40, { john: 'lm', upperHex: true, description: 'LAN Manager hash: two DES halves of the uppercased password, hex (hashcat -m 3000 cracks each 16-hex half)' }),
  hc(8600, 'lotus-notes-5', 'Lotus Notes/Domino 5', EAS, hex(32), 4, { john: 'lotus5', upperHex: true }),
  hc(9900, 'radmin2', 'Radmin2', EAS, hex(32), 2, { john: 'radmin' }),
  other('xxh128', 'XXH128', CHECKSUM, lhex(32), 2, { description: 'xxHash XXH3 128-bit checksum, hex (xxhsum -H2)' }),
  other('md2', 'MD2', RAW, hex(32), 1, { john: 'md2', description: 'MD2 digest (RFC 1319), hex' }),
  other('ripemd128', 'RIPEMD-128', RAW, hex(32), 0.5, { description: 'RIPEMD-128 digest, hex' }),

  sameSyntax([
    hc(100, 'sha1', 'SHA1', RAW, hex(40), 1000, { john: 'raw-sha1', description: 'SHA-1 digest (FIPS 180-4), hex' }),
    hc(4500, 'sha1-sha1-pass', 'sha1(sha1($pass))', SALTED, hex(40), 10),
    hc(4700, 'sha1-md5-pass', 'sha1(md5($pass))', SALTED, hex(40), 8),
    hc(170, 'sha1-utf16le-pass', 'sha1(utf16le($pass))', RAW, hex(40), 4),
    hc(18500, 'sha1-md5-md5-pass', 'sha1(md5(md5($pass)))', SALTED, hex(40), 2),
  ]),
  hc(6000, 'ripemd160', 'RIPEMD-160', RAW, hex(40), 40, { john: 'ripemd-160', description: 'RIPEMD-160 digest, hex' }),
  hc(300, 'mysql41-bare', 'MySQL4.1/MySQL5', DB, hex(40), 30, { john: 'mysql-sha1', upperHex: true, verifyAs: 'mysql41', description: 'MySQL 4.1+ PASSWORD() without its leading *: sha1(sha1_bin($pass)), hex; /api/verify reads it as mysql41' }),
  other('has160', 'HAS-160', RAW, hex(40), 1, { description: 'HAS-160 digest (TTAS.KO-12.0011), hex' }),
  // hashd's own tagged HMAC (POST /api/hmac with keyName and format "tagged"): 16 to 64 bytes of HMAC in padded base64.
  other('hashd-tagged-hmac', 'hashd tagged HMAC', HMAC, R`hashd:v(?<version>[1-9]\d{0,8}):${b64(22, 88)}={0,2}`, 2, {
    description: 'An HMAC made by hashd with a named key (POST /api/hmac, format "tagged"): hashd:v<key version>:<base64>; check it with POST /api/hmac/verify and the key\'s name, not /api/verify',
  }),
  other('tiger160', 'Tiger/160', RAW, hex(40), 0.5, { description: 'Tiger truncated to 160 bits, hex' }),

  hc(1300, 'sha224', 'SHA2-224', RAW, hex(56), 300, { john: 'raw-sha224', description: 'SHA-224 digest (FIPS 180-4), hex' }),
  hc(17300, 'sha3-224', 'SHA3-224', RAW, hex(56), 30, { john: 'raw-sha3', description: 'SHA3-224 digest (FIPS 202), hex' }),
  hc(17700, 'keccak-224', 'Keccak-224', RAW, hex(56), 10, { john: 'raw-keccak', description: 'Keccak-224 (original padding), hex' }),
  hc(30420, 'dane-sha2-256-28', 'DANE RFC7929/RFC8162 SHA2-256', NET, hex(56), 2, { description: 'DANE OPENPGPKEY/SMIMEA owner name: SHA2-256 of the e-mail local part truncated to 28 octets (RFC 7929 §3, RFC 8162 §3), 56 hex' }),
  other('sha512-224', 'SHA-512/224', RAW, hex(56), 5, { description: 'SHA-512/224 digest (FIPS 180-4), hex' }),

  sameSyntax([
    hc(1400, 'sha256', 'SHA2-256', RAW, hex(64), 1000, { john: 'raw-sha256', description: 'SHA-256 digest (FIPS 180-4), hex' }),
    hc(21400, 'sha256-sha256-bin-pass', 'sha256(sha256_bin($pass))', SALTED, hex(64), 8),
    hc(20800, 'sha256-md5-pass', 'sha256(md5($pass))', SALTED, hex(64), 7.5),
    hc(1470, 'sha256-utf16le-pass', 'sha256(utf16le($pass))', RAW, hex(64), 7),
  ]),
  hc(17400, 'sha3-256', 'SHA3-256', RAW, hex(64), 60, { john: 'raw-sha3', description: 'SHA3-256 digest (FIPS 202), hex' }),
  hc(17800, 'keccak-256', 'Keccak-256', RAW, hex(64), 40, { john: 'raw-keccak-256', description: 'Keccak-256 (Ethereum\'s hash), hex' }),
  other('blake3', 'BLAKE3', RAW, hex(64), 12, { description: 'BLAKE3 digest (256-bit default), hex' }),
  other('blake2s-256', 'BLAKE2s-256', RAW, hex(64), 9, { description: 'BLAKE2s-256 digest (RFC 7693), hex' }),
  hc(6900, 'gost94', 'GOST R 34.11-94', RAW, hex(64), 8, { john: 'gost', description: 'GOST R 34.11-94 digest, hex' }),
  other('gost94-cryptopro', 'GOST R 34.11-94 (CryptoPro parameters)', RAW, hex(64), 2, { description: 'GOST R 34.11-94 with the CryptoPro S-boxes (RFC 4357), hex; John reads it as $gost-cp$ + hex' }),
  hc(11700, 'streebog-256', 'GOST R 34.11-2012 (Streebog) 256-bit, big-endian', RAW, hex(64), 8, { john: 'streebog256', description: 'Streebog-256 (GOST R 34.11-2012), hex' }),
  hc(31100, 'sm3', 'SM3', RAW, hex(64), 8, { description: 'SM3 digest (GB/T 32905-2016), hex' }),
  other('sha512-256', 'SHA-512/256', RAW, hex(64), 8, { description: 'SHA-512/256 digest (FIPS 180-4), hex' }),
  other('blake2b-256', 'BLAKE2b-256', RAW, hex(64), 5, { description: 'BLAKE2b with a 256-bit output (RFC 7693), hex' }),
  other('shake128', 'SHAKE128 (256-bit output)', RAW, hex(64), 2, { description: 'SHAKE128 XOF, 256 bits of output (FIPS 202), hex' }),
  other('ripemd256', 'RIPEMD-256', RAW, hex(64), 0.5, { description: 'RIPEMD-256 digest, hex' }),

  sameSyntax([
    hc(10800, 'sha384', 'SHA2-384', RAW, hex(96), 500, { john: 'raw-sha384', description: 'SHA-384 digest (FIPS 180-4), hex' }),
    hc(10870, 'sha384-utf16le-pass', 'sha384(utf16le($pass))', RAW, hex(96), 3),
  ]),
  hc(17500, 'sha3-384', 'SHA3-384', RAW, hex(96), 30, { john: 'raw-sha3', description: 'SHA3-384 digest (FIPS 202), hex' }),
  hc(17900, 'keccak-384', 'Keccak-384', RAW, hex(96), 10, { john: 'raw-keccak', description: 'Keccak-384 (original padding), hex' }),
  other('blake2b-384', 'BLAKE2b-384', RAW, hex(96), 3, { description: 'BLAKE2b with a 384-bit output (RFC 7693), hex' }),

  sameSyntax([
    hc(1700, 'sha512', 'SHA2-512', RAW, hex(128), 1000, { john: 'raw-sha512', description: 'SHA-512 digest (FIPS 180-4), hex' }),
    hc(1770, 'sha512-utf16le-pass', 'sha512(utf16le($pass))', RAW, hex(128), 5),
    hc(21000, 'bitshares-sha512-sha512-bin', 'BitShares v0.x - sha512(sha512_bin(pass))', WALLET, hex(128), 3),
  ]),
  hc(17600, 'sha3-512', 'SHA3-512', RAW, hex(128), 60, { john: 'raw-sha3', description: 'SHA3-512 digest (FIPS 202), hex' }),
  other('blake2b-512', 'BLAKE2b-512', RAW, hex(128), 40, { john: 'raw-blake2', description: 'BLAKE2b-512 digest (RFC 7693), hex (hashcat -m 600 wants it as $BLAKE2$hex)' }),
  hc(6100, 'whirlpool', 'Whirlpool', RAW, hex(128), 25, { john: 'whirlpool', description: 'Whirlpool digest (ISO/IEC 10118-3), hex' }),
  hc(18000, 'keccak-512', 'Keccak-512', RAW, hex(128), 15, { john: 'raw-keccak', description: 'Keccak-512 (original padding), hex' }),
  hc(11800, 'streebog-512', 'GOST R 34.11-2012 (Streebog) 512-bit, big-endian', RAW, hex(128), 8, { john: 'streebog512', description: 'Streebog-512 (GOST R 34.11-2012), hex' }),
  other('shake256', 'SHAKE256 (512-bit output)', RAW, hex(128), 2, { description: 'SHAKE256 XOF, 512 bits of output (FIPS 202), hex' }),

  hc(33600, 'ripemd320', 'RIPEMD-320', RAW, hex(80), 5, { description: 'RIPEMD-320 digest, hex' }),
  other('tiger', 'Tiger', RAW, hex(48), 5, { john: 'tiger', description: 'Tiger/192 digest, hex' }),
  other('tiger2', 'Tiger2', RAW, hex(48), 0.5, { description: 'Tiger2/192 digest (Tiger with MD4-style padding, 0x80), hex' }),
  hc(122, 'macos-10-4', 'macOS v10.4, macOS v10.5, macOS v10.6', OS, hex(48), 6, { john: 'xsha', upperHex: true, description: 'Mac OS X 10.4–10.6: 8 hex of salt then SHA-1(salt.pass)' }),
  hc(125, 'arubaos', 'ArubaOS', OS, hex(50), 4, { description: 'ArubaOS: 10 hex of salt then SHA-1, hex' }),
  hc(1722, 'macos-10-7', 'macOS v10.7', OS, hex(136), 5, { john: 'xsha512', description: 'Mac OS X 10.7: 8 hex of salt then SHA-512(salt.pass)' }),
  hc(8100, 'citrix-netscaler-sha1', 'Citrix NetScaler (SHA1)', OS, R`1${hex(48)}`, 4, { john: 'citrix_ns10' }),
  hc(22200, 'citrix-netscaler-sha512', 'Citrix NetScaler (SHA512)', OS, R`2${hex(136)}`, 4),
  hc(1421, 'hmailserver', 'hMailServer', SERVER, hex(70), 4, { john: 'hmailserver', description: 'hMailServer: 6 hex of salt then SHA-256(salt.pass)' }),
  hc(12300, 'oracle-t', 'Oracle T: Type (Oracle 12+)', DB, HEX(160), 8, { upperHex: true, description: 'Oracle 12c T: PBKDF2-SHA512 based, 160 uppercase hex (digest + salt)' }),
  hc(12900, 'android-fde-samsung', 'Android FDE (Samsung DEK)', FDE, lhex(160), 2),
  hc(3000, 'lm-half', 'LM', OS, hex(16), 30, { john: 'lm', upperHex: true, description: 'One 16-hex half of a LAN Manager hash (hashcat -m 3000 cracks halves)' }),
  // OLD_PASSWORD() masks both 32-bit words to 31 bits before printing them as %08lx%08lx (MySQL
  // 4.0 sql/password.c hash_password), so each 8-hex half starts with 0-7.
  hc(200, 'mysql323', 'MySQL323', DB, R`[0-7]${hex(7)}[0-7]${hex(7)}`, 40, { john: 'mysql', description: 'MySQL before 4.1 OLD_PASSWORD(), 16 hex (two 31-bit words)' }),
  hc(5100, 'half-md5', 'Half MD5', RAW, hex(16), 10, { description: 'One half (8 bytes) of an MD5 digest, 16 hex' }),
  // xxhsum prints lowercase, but the same value pasted from a tool or a log that uppercases is still XXH64.
  other('xxh64', 'XXH64', CHECKSUM, hex(16), 20, { description: 'xxHash XXH64 checksum, hex (xxhsum -H1), either case' }),
  other('xxh3', 'XXH3-64', CHECKSUM, lhex(16), 10, { description: 'xxHash XXH3 64-bit checksum, hex (xxhsum -H3)' }),
  other('crc64', 'CRC-64', CHECKSUM, hex(16), 8, { description: 'CRC-64 checksum, hex' }),
  // ---- similarity hashes (src/similarity): compared by score or distance, not verified ----
  other('ssdeep', 'ssdeep', SIMILARITY, R`[1-9]\d{0,10}:${b64(1, 64)}:${b64(0, 64)}`, 40, { signature: true, description: 'ssdeep (CTPH) as ssdeep and libfuzzy print it: block size, then two base64 piece hashes; POST /api/similarity/compare scores two' }),
  other('tlsh', 'TLSH', SIMILARITY, R`T1${hex(70)}`, 40, { signature: true, description: 'TLSH 4 (Trend Micro) as its reference prints it: T1 and 70 hex digits; POST /api/similarity/compare gives the distance of two' }),
  other('tlsh-3', 'TLSH (before version 4)', SIMILARITY, hex(70), 3, { upperHex: true, description: 'TLSH in the form before version 4: 70 hex digits without T1' }),
  // PDQ has SHA-256's form (64 hex) and every 256-bit digest's. Outside media moderation (Meta's
  // ThreatExchange and HMA) it is rare, so its prior is that of the rarer 256-bit digests
  // (BLAKE2b-256): a bare 64-hex string is a SHA-256 digest far more often than an image hash.
  other('pdq', 'PDQ', SIMILARITY, hex(64), 5, { description: 'PDQ (Meta\'s perceptual image hash) as its reference prints it and /api/filehash gives it (hashes.pdq.hash): 64 hex digits, 256 bits; the form of a SHA-256 digest too. Not verified but compared: POST /api/similarity/compare gives the Hamming distance of two (a match at 31 or less)' }),
  other('crc32', 'CRC-32', CHECKSUM, hex(8), 100, { description: 'CRC-32 (ISO-HDLC, as zlib/zip/PNG use it), hex' }),
  other('adler32', 'Adler-32', CHECKSUM, hex(8), 20, { description: 'Adler-32 checksum (RFC 1950), hex' }),
  other('crc32c', 'CRC-32C', CHECKSUM, hex(8), 15, { description: 'CRC-32C (Castagnoli) checksum, hex' }),
  other('xxh32', 'XXH32', CHECKSUM, lhex(8), 15, { description: 'xxHash XXH32 checksum, hex (xxhsum -H0)' }),
  hc(18700, 'java-hashcode', 'Java Object hashCode()', RAW, hex(8), 5),
  hc(24700, 'stuffit5', 'Stuffit5', ARCHIVE, hex(10), 2),
  hc(20500, 'pkzip-master-key', 'PKZIP Master Key', ARCHIVE, hex(24), 2),

  // ---- checksums hashcat cracks as checksum:salt ----
  // hashcat's CRC32 and CRC32C read `checksum:initial value`; the standard checksums (zlib's
  // CRC-32, iSCSI's CRC-32C) are the ones with initial value 00000000 (Python's zlib.crc32 of
  // "hashcat" is module_11500's example c762de4a:00000000). A non-zero initial value is a custom
  // CRC, rarely met: such a string is more likely a seeded MurmurHash or a Skip32 plaintext.
  sameSyntax([
    hc(11500, 'crc32-hashcat', 'CRC32', CHECKSUM, R`${hex(8)}:${hex(8)}`, 10, { description: 'CRC-32 as hashcat writes it: checksum:initial value, hex', typical: STANDARD_CRC_INIT }),
    hc(27900, 'crc32c-hashcat', 'CRC32C', CHECKSUM, R`${hex(8)}:${hex(8)}`, 5, { description: 'CRC-32C as hashcat writes it: checksum:initial value, hex', typical: STANDARD_CRC_INIT }),
  ]),
  sameSyntax([
    hc(25700, 'murmurhash', 'MurmurHash', CHECKSUM, R`${hex(8)}:${hex(8)}`, 3),
    hc(27800, 'murmurhash3', 'MurmurHash3', CHECKSUM, R`${hex(8)}:${hex(8)}`, 3),
    hc(14900, 'skip32', 'Skip32 (PT = $salt, key = $pass)', CIPHER, R`${hex(8)}:${hex(8)}`, 2),
  ]),
  sameSyntax([
    hc(28000, 'crc64-jones', 'CRC64Jones', CHECKSUM, R`${hex(16)}:${hex(16)}`, 4),
    hc(14000, 'des-pt-salt', 'DES (PT = $salt, key = $pass)', CIPHER, R`${hex(16)}:${hex(16)}`, 4),
    hc(14100, '3des-pt-salt', '3DES (PT = $salt, key = $pass)', CIPHER, R`${hex(16)}:${hex(16)}`, 3),
  ]),
  sameSyntax([
    hc(26401, 'aes-128-ecb-pt-salt', 'AES-128-ECB NOKDF (PT = $salt, key = $pass)', CIPHER, R`${hex(32)}:${hex(32)}`, 2),
    hc(26402, 'aes-192-ecb-pt-salt', 'AES-192-ECB NOKDF (PT = $salt, key = $pass)', CIPHER, R`${hex(32)}:${hex(32)}`, 1),
    hc(26403, 'aes-256-ecb-pt-salt', 'AES-256-ECB NOKDF (PT = $salt, key = $pass)', CIPHER, R`${hex(32)}:${hex(32)}`, 1.5),
  ]),

  // ---- digest:salt families (the salt is free text, so only priors order them) ----
  sameSyntax([
    salted(10, 'md5-pass-salt', 'md5($pass.$salt)', 32, 60, { john: 'dynamic_1' }),
    salted(20, 'md5-salt-pass', 'md5($salt.$pass)', 32, 50, { john: 'dynamic_4' }),
    salted(50, 'hmac-md5-key-pass', 'HMAC-MD5 (key = $pass)', 32, 15, { john: 'hmac-md5' }),
    salted(60, 'hmac-md5-key-salt', 'HMAC-MD5 (key = $salt)', 32, 12, { john: 'hmac-md5' }),
    salted(3800, 'md5-salt-pass-salt', 'md5($salt.$pass.$salt)', 32, 10),
    salted(3710, 'md5-salt-md5-pass', 'md5($salt.md5($pass))', 32, 10),
    salted(3610, 'md5-md5-md5-pass-salt', 'md5(md5(md5($pass)).$salt)', 32, 3),
    salted(2630, 'md5-md5-pass-salt', 'md5(md5($pass.$salt))', 32, 4),
    salted(3910, 'md5-md5-pass-md5-salt', 'md5(md5($pass).md5($salt))', 32, 6),
    salted(4010, 'md5-salt-md5-salt-pass', 'md5($salt.md5($salt.$pass))', 32, 3),
    salted(4110, 'md5-salt-md5-pass-salt', 'md5($salt.md5($pass.$salt))', 32, 3),
    salted(30, 'md5-utf16le-pass-salt', 'md5(utf16le($pass).$salt)', 32, 3),
    salted(40, 'md5-salt-utf16le-pass', 'md5($salt.utf16le($pass))', 32, 3),
    salted(4410, 'md5-sha1-pass-salt', 'md5(sha1($pass).$salt)', 32, 2),
    salted(4420, 'md5-sha1-pass-salt-inner', 'md5(sha1($pass.$salt))', 32, 2),
    salted(4430, 'md5-sha1-salt-pass', 'md5(sha1($salt.$pass))', 32, 2),
    salted(21200, 'md5-sha1-salt-md5-pass', 'md5(sha1($salt).md5($pass))', 32, 1.5),
    salted(21300, 'md5-salt-sha1-salt-pass', 'md5($salt.sha1($salt.$pass))', 32, 1.5),
    salted(30500, 'md5-md5-salt-md5-md5-pass', 'md5(md5($salt).md5(md5($pass)))', 32, 1.5),
    salted(12, 'postgres-md5-hashcat', 'PostgreSQL', 32, 10, { john: 'postgres', description: 'PostgreSQL md5(pass.user) as hashcat writes it: hex:username' }),
    salted(23, 'skype', 'Skype', 32, 3, { description: 'Skype: md5(user\\nskyper\\npass), hex:username' }),
  ]),
  salted(1100, 'mscash', 'Domain Cached Credentials (DCC), MS Cache', 32, 20, { john: 'mscash', description: 'Windows DCC1 / MS Cache: hex digest:username (hashcat -m 1100)' }, '(?<user>[^:]{1,64})'),
  salted(11, 'joomla-md5', 'Joomla < 2.5.18', 32, 12, { description: 'Joomla < 2.5.18: md5(pass.salt), hex:salt with a 32-character salt' }, '(?<salt>[A-Za-z0-9]{32})'),
  // vBulletin's fetch_user_salt() draws chr(rand(33, 126)): printable ASCII, 3 characters before
  // 3.8.5 and 30 since (hashcat -m 2611 / 2711 fix the same lengths).
  salted(2611, 'vbulletin-old', 'vBulletin < v3.8.5', 32, 8, { description: 'vBulletin < 3.8.5: md5(md5(pass).salt) with a 3-character salt' }, '(?<salt>[!-~]{3})'),
  salted(2711, 'vbulletin', 'vBulletin >= v3.8.5', 32, 8, { description: 'vBulletin ≥ 3.8.5: md5(md5(pass).salt) with a 30-character salt' }, '(?<salt>[!-~]{30})'),
  // hashcat -m 2811 reads both; the applications differ in salt: IPB's generatePasswordSalt(5)
  // draws 5 printable ASCII characters, MyBB's random_str(8) 8 letters and digits.
  salted(2811, 'ipb', 'IPB2+ (Invision Power Board)', 32, 8, { description: 'IPB 2+ (Invision Power Board): md5(md5(salt).md5(pass)) with 5 printable characters of salt' }, '(?<salt>[!-~]{5})'),
  salted(2811, 'mybb', 'MyBB 1.2+', 32, 8, { description: 'MyBB 1.2+: md5(md5(salt).md5(pass)) with 8 letters and digits of salt' }, '(?<salt>[A-Za-z0-9]{8})'),
  sameSyntax([
    salted(21, 'oscommerce', 'osCommerce, xt:Commerce', 32, 6, { description: 'osCommerce / xt:Commerce: md5(salt.pass) with a 2-character salt' }, '(?<salt>.{2})'),
    salted(24, 'solarwinds-serv-u', 'SolarWinds Serv-U', 32, 2, { description: 'SolarWinds Serv-U: md5(salt.pass), 2-character salt' }, '(?<salt>.{2})'),
  ]),
  salted(11000, 'prestashop', 'PrestaShop', 32, 4, { description: 'PrestaShop: md5(cookie key.pass), 56-character key' }, '(?<salt>[A-Za-z0-9]{56})'),
  salted(7350, 'ipmi2-rakp-hmac-md5', 'IPMI2 RAKP HMAC-MD5', 32, 2, {}, `(?<salt>${hex(100, 1024)})`),
  hc(4800, 'iscsi-chap', 'iSCSI CHAP authentication, MD5(CHAP)', NET, R`${hex(32)}:${hex(32)}:${hex(2)}`, 3, { john: 'chap' }),
  sameSyntax([
    salted(3730, 'md5-salt1-strtoupper-md5-salt2-pass', 'md5($salt1.strtoupper(md5($salt2.$pass)))', 32, 1, {}, '(?<salt>[^:]{0,256}:[^:]{0,256})'),
    salted(21310, 'md5-salt1-sha1-salt2-pass', 'md5($salt1.sha1($salt2.$pass))', 32, 1, {}, '(?<salt>[^:]{0,256}:[^:]{0,256})'),
    salted(31700, 'md5-md5-md5-pass-salt1-salt2', 'md5(md5(md5($pass).$salt1).$salt2)', 32, 1, {}, '(?<salt>[^:]{0,256}:[^:]{0,256})'),
  ]),
  hc(32300, 'empire-cms', 'Empire CMS (Admin password)', CMS, R`${hex(32)}:${hex(30, 34)}:${hex(30, 34)}`, 2),
  hc(6800, 'lastpass', 'LastPass + LastPass sniffed', PWM, R`${hex(32)}:${digits(1, 10)}:[^:\s]{1,256}:${hex(32)}`, 3, { john: 'lp' }),

  sameSyntax([
    salted(110, 'sha1-pass-salt', 'sha1($pass.$salt)', 40, 40, { john: 'dynamic_25' }),
    salted(120, 'sha1-salt-pass', 'sha1($salt.$pass)', 40, 35, { john: 'dynamic_24' }),
    salted(150, 'hmac-sha1-key-pass', 'HMAC-SHA1 (key = $pass)', 40, 12, { john: 'hmac-sha1' }),
    salted(160, 'hmac-sha1-key-salt', 'HMAC-SHA1 (key = $salt)', 40, 10, { john: 'hmac-sha1' }),
    salted(4900, 'sha1-salt-pass-salt', 'sha1($salt.$pass.$salt)', 40, 5),
    salted(4520, 'sha1-salt-sha1-pass', 'sha1($salt.sha1($pass))', 40, 5),
    salted(4510, 'sha1-sha1-pass-salt', 'sha1(sha1($pass).$salt)', 40, 4),
    salted(4710, 'sha1-md5-pass-salt', 'sha1(md5($pass).$salt)', 40, 3),
    salted(4711, 'huawei-sha1-md5-pass-salt', 'Huawei sha1(md5($pass).$salt)', 40, 2),
    salted(130, 'sha1-utf16le-pass-salt', 'sha1(utf16le($pass).$salt)', 40, 3),
    salted(140, 'sha1-salt-utf16le-pass', 'sha1($salt.utf16le($pass))', 40, 3),
    salted(5000, 'sha1-sha1-salt-pass-salt', 'sha1(sha1($salt.$pass.$salt))', 40, 2),
    salted(21100, 'sha1-md5-pass-salt-inner', 'sha1(md5($pass.$salt))', 40, 2),
    salted(24300, 'sha1-salt-sha1-pass-salt', 'sha1($salt.sha1($pass.$salt))', 40, 1.5),
    salted(6050, 'hmac-ripemd160-key-pass', 'HMAC-RIPEMD160 (key = $pass)', 40, 2),
    salted(6060, 'hmac-ripemd160-key-salt', 'HMAC-RIPEMD160 (key = $salt)', 40, 2),
    salted(121, 'smf', 'SMF (Simple Machines Forum) > v1.1', 40, 6, { description: 'SMF > 1.1: sha1(lowercase username.pass), hex:username' }),
  ]),
  salted(112, 'oracle11', 'Oracle S: Type (Oracle 11+)', 40, 15, { john: 'oracle11', upperHex: true, description: 'Oracle 11g S: sha1(pass.salt), hex:20 hex of salt (Oracle stores both in uppercase)' }, `(?<salt>${hex(20)})`),
  salted(4521, 'redmine', 'Redmine', 40, 4, { description: 'Redmine: sha1(salt.sha1(pass)), 32 hex of salt' }, `(?<salt>${hex(32)})`),
  salted(4522, 'punbb', 'PunBB', 40, 3, { description: 'PunBB: sha1(salt.sha1(pass)), 12-character salt' }, '(?<salt>.{12})'),
  salted(5800, 'samsung-android-pin', 'Samsung Android Password/PIN', 40, 3, {}, `(?<salt>${hex(16)})`),
  sameSyntax([
    salted(8400, 'wbb3', 'WBB3 (Woltlab Burning Board)', 40, 3, { john: 'wbb3' }, `(?<salt>${hex(40)})`),
    salted(27200, 'ruby-on-rails-one-round', 'Ruby on Rails Restful Auth (one round, no sitekey)', 40, 2, {}, `(?<salt>${hex(40)})`),
  ]),
  salted(13900, 'opencart', 'OpenCart', 40, 4, { description: 'OpenCart: sha1(salt.sha1(salt.sha1(pass))), 9-character salt' }, '(?<salt>.{9})'),
  salted(14400, 'sha1-cx', 'sha1(CX)', 40, 1.5, {}, '(?<salt>.{20})'),
  salted(13500, 'peoplesoft-ps-token', 'PeopleSoft PS_TOKEN', 40, 2, {}, `(?<salt>${hex(100, 2048)})`),
  hc(19500, 'ruby-on-rails-restful-auth', 'Ruby on Rails Restful-Authentication', FRAMEWORK, R`${hex(40)}:[^:]{1,256}:[^:]{1,256}`, 2),
  hc(19300, 'sha1-salt1-pass-salt2', 'sha1($salt1.$pass.$salt2)', SALTED, R`${hex(40)}:[^:]{0,256}:[^:]{0,256}`, 1),
  hc(29000, 'sha1-salt-sha1-utf16le-username', 'sha1($salt.sha1(utf16le($username).\':\'.utf16le($pass)))', SALTED, R`${hex(40)}:${hex(64)}:${hex(16)}`, 1),

  sameSyntax([
    salted(1410, 'sha256-pass-salt', 'sha256($pass.$salt)', 64, 30, { john: 'dynamic_61' }),
    salted(1420, 'sha256-salt-pass', 'sha256($salt.$pass)', 64, 25, { john: 'dynamic_62' }),
    salted(1450, 'hmac-sha256-key-pass', 'HMAC-SHA256 (key = $pass)', 64, 12, { john: 'hmac-sha256' }),
    salted(1460, 'hmac-sha256-key-salt', 'HMAC-SHA256 (key = $salt)', 64, 10, { john: 'hmac-sha256' }),
    salted(20710, 'sha256-sha256-pass-salt', 'sha256(sha256($pass).$salt)', 64, 4),
    salted(20720, 'sha256-salt-sha256-pass', 'sha256($salt.sha256($pass))', 64, 4),
    salted(22300, 'sha256-salt-pass-salt', 'sha256($salt.$pass.$salt)', 64, 3),
    salted(1430, 'sha256-utf16le-pass-salt', 'sha256(utf16le($pass).$salt)', 64, 2),
    salted(1440, 'sha256-salt-utf16le-pass', 'sha256($salt.utf16le($pass))', 64, 2),
    salted(20730, 'sha256-sha256-pass-salt-inner', 'sha256(sha256($pass.$salt))', 64, 2),
    salted(21420, 'sha256-salt-sha256-bin-pass', 'sha256($salt.sha256_bin($pass))', 64, 2),
    salted(33300, 'hmac-blake2s-key-pass', 'HMAC-BLAKE2S (key = $pass)', 64, 1.5),
    salted(11750, 'hmac-streebog256-key-pass', 'HMAC-Streebog-256 (key = $pass), big-endian', 64, 1),
    salted(11760, 'hmac-streebog256-key-salt', 'HMAC-Streebog-256 (key = $salt), big-endian', 64, 1),
  ]),
  salted(12600, 'coldfusion-10', 'ColdFusion 10+', 64, 3, {}, `(?<salt>${hex(64)})`),
  salted(13800, 'windows-phone-8-pin', 'Windows Phone 8+ PIN/password', 64, 2, {}, `(?<salt>${hex(256)})`),
  hc(20712, 'rsa-netwitness-sha256', 'RSA Security Analytics / NetWitness (sha256)', EAS, R`${HEX(64)}:(?<salt>${b64p(4, 128)})`, 2, { upperHex: true, description: 'RSA Security Analytics / NetWitness: uppercase hex SHA-256, then its base64 salt (hashcat -m 20712)' }),
  hc(30700, 'anope-enc-sha256', 'Anope IRC Services (enc_sha256)', IM, R`sha256:${hex(64)}:${hex(64)}`, 2),

  sameSyntax([
    salted(10810, 'sha384-pass-salt', 'sha384($pass.$salt)', 96, 5),
    salted(10820, 'sha384-salt-pass', 'sha384($salt.$pass)', 96, 5),
    salted(10830, 'sha384-utf16le-pass-salt', 'sha384(utf16le($pass).$salt)', 96, 1),
    salted(10840, 'sha384-salt-utf16le-pass', 'sha384($salt.utf16le($pass))', 96, 1),
  ]),

  sameSyntax([
    salted(1710, 'sha512-pass-salt', 'sha512($pass.$salt)', 128, 30, { john: 'dynamic_81' }),
    salted(1720, 'sha512-salt-pass', 'sha512($salt.$pass)', 128, 25, { john: 'dynamic_82' }),
    salted(1750, 'hmac-sha512-key-pass', 'HMAC-SHA512 (key = $pass)', 128, 10, { john: 'hmac-sha512' }),
    salted(1760, 'hmac-sha512-key-salt', 'HMAC-SHA512 (key = $salt)', 128, 8, { john: 'hmac-sha512' }),
    salted(32410, 'sha512-sha512-pass-salt', 'sha512(sha512($pass).$salt)', 128, 3),
    salted(32420, 'sha512-sha512-bin-pass-salt', 'sha512(sha512_bin($pass).$salt)', 128, 2),
    salted(1730, 'sha512-utf16le-pass-salt', 'sha512(utf16le($pass).$salt)', 128, 2),
    salted(1740, 'sha512-salt-utf16le-pass', 'sha512($salt.utf16le($pass))', 128, 2),
    salted(32600, 'cubecart', 'CubeCart (whirlpool($salt.$pass.$salt))', 128, 2),
    salted(11850, 'hmac-streebog512-key-pass', 'HMAC-Streebog-512 (key = $pass), big-endian', 128, 1),
    salted(11860, 'hmac-streebog512-key-salt', 'HMAC-Streebog-512 (key = $salt), big-endian', 128, 1),
  ]),
  salted(15000, 'filezilla-server', 'FileZilla Server >= 0.9.55', 128, 3, {}, `(?<salt>${hex(64)})`),
  sameSyntax([
    salted(33650, 'hmac-ripemd320-key-pass', 'HMAC-RIPEMD320 (key = $pass)', 80, 1),
    salted(33660, 'hmac-ripemd320-key-salt', 'HMAC-RIPEMD320 (key = $salt)', 80, 1),
  ]),

  // ---- Unix crypt(3), PHC and modular-crypt formats ----
  sameSyntax([
    hc(3200, 'bcrypt', 'bcrypt $2*$, Blowfish (Unix)', CRYPT, BCRYPT, 1000, { john: 'bcrypt', parse: parseBcrypt, description: 'bcrypt (OpenBSD): $2a$/$2b$/$2y$, cost, 22 salt + 31 hash characters' }),
    hc(25600, 'bcrypt-md5', 'bcrypt(md5($pass)) / bcryptmd5', CRYPT, BCRYPT, 8, { parse: parseBcrypt }),
    hc(25800, 'bcrypt-sha1', 'bcrypt(sha1($pass)) / bcryptsha1', CRYPT, BCRYPT, 6, { parse: parseBcrypt }),
    hc(30600, 'bcrypt-sha256-hex', 'bcrypt(sha256($pass)) / bcryptsha256', CRYPT, BCRYPT, 6, { parse: parseBcrypt }),
    hc(28400, 'bcrypt-sha512', 'bcrypt(sha512($pass)) / bcryptsha512', CRYPT, BCRYPT, 3, { parse: parseBcrypt }),
    hc(33800, 'wbb4-bcrypt', 'WBB4 (Woltlab Burning Board) Plugin [bcrypt(bcrypt($pass))]', CMS, BCRYPT, 2, { parse: parseBcrypt }),
  ]),
  hc(34000, 'argon2id', 'Argon2', CRYPT, ARGON2('argon2id'), 1000, { john: 'argon2', parse: parseArgon2, description: 'Argon2id PHC string (RFC 9106)' }),
  other('argon2i', 'Argon2i', CRYPT, ARGON2('argon2i'), 300, { john: 'argon2', parse: parseArgon2, description: 'Argon2i PHC string (RFC 9106; hashcat -m 34000 reads Argon2 generally)' }),
  other('argon2d', 'Argon2d', CRYPT, ARGON2('argon2d'), 100, { john: 'argon2', parse: parseArgon2, description: 'Argon2d PHC string (RFC 9106)' }),
  hc(500, 'md5-crypt', 'md5crypt, MD5 (Unix), Cisco-IOS $1$ (MD5)', CRYPT, MD5_CRYPT(R`\$1\$`), 800, { john: 'md5crypt', parse: groupParams, description: 'md5crypt (Poul-Henning Kamp, FreeBSD): $1$salt$hash' }),
  hc(1600, 'apr1', 'Apache $apr1$ MD5, md5apr1, MD5 (APR)', SERVER, MD5_CRYPT(R`\$apr1\$`), 500, { john: 'md5crypt', parse: groupParams, description: 'Apache APR1 MD5 (htpasswd -m): $apr1$salt$hash' }),
  hc(7400, 'sha256-crypt', 'sha256crypt $5$, SHA256 (Unix)', CRYPT, SHA_CRYPT('5', 43), 500, { john: 'sha256crypt', parse: parseShaCrypt, description: 'SHA-256 crypt (Drepper): $5$[rounds=N$]salt$hash' }),
  hc(1800, 'sha512-crypt', 'sha512crypt $6$, SHA512 (Unix)', CRYPT, SHA_CRYPT('6', 86), 1000, { john: 'sha512crypt', parse: parseShaCrypt, description: 'SHA-512 crypt (Drepper): $6$[rounds=N$]salt$hash, the glibc default before yescrypt' }),
  other('yescrypt', 'yescrypt', CRYPT, R`\$y\$(?<params>${c64(3, 32)})\$(?<salt>${c64(1, 86)})\$${c64(43)}`, 1000, { john: 'crypt', parse: parseYescrypt, description: 'yescrypt (libxcrypt): $y$params$salt$hash, the default of current Debian, Fedora and Ubuntu' }),
  other('gost-yescrypt', 'GOST yescrypt', CRYPT, R`\$gy\$(?<params>${c64(3, 32)})\$(?<salt>${c64(1, 86)})\$${c64(43)}`, 50, { john: 'crypt', parse: parseYescrypt, description: 'gost-yescrypt (libxcrypt): yescrypt wrapped in GOST R 34.11-2012 HMAC' }),
  other('scrypt', 'scrypt ($7$)', CRYPT, R`\$7\$(?<params>${c64(11)})(?<salt>${c64(1, 64)})\$${c64(43)}`, 100, { john: 'scrypt', parse: parseScrypt7, description: 'scrypt in Colin Percival\'s $7$ crypt format (libxcrypt)' }),
  other('scrypt', 'scrypt (passlib)', CRYPT, R`\$scrypt\$ln=(?<ln>\d{1,2}),r=(?<r>\d{1,4}),p=(?<p>\d{1,4})\$(?<salt>${b64(0, 256)})\$${b64(16, 256)}`, 200, { parse: parsePasslibScrypt, description: 'scrypt in passlib\'s $scrypt$ln=…,r=…,p=…$salt$hash format' }),
  hc(1500, 'des-crypt', 'descrypt, DES (Unix), Traditional DES', CRYPT, R`(?<salt>${c64(2)})${c64(10)}[.26AEIMQUYcgkosw]`, 60, { john: 'descrypt', description: 'Traditional DES crypt(3): 2 salt + 11 hash characters' }),
  hc(12400, 'bsdi-crypt', 'BSDi Crypt, Extended DES', CRYPT, R`_(?<rounds>${c64(4)})(?<salt>${c64(4)})${c64(11)}`, 20, { john: 'bsdicrypt', signature: true, parse: parseBsdiCrypt, description: 'BSDi extended DES crypt: _ rounds(4) salt(4) hash(11)' }),
  hc(1000, 'nt-crypt', 'NTLM in crypt(3) form ($3$$, nthash)', CRYPT, R`\$3\$\$${hex(32)}`, 20, { john: 'nt', description: 'FreeBSD and libxcrypt "nthash" crypt: $3$$ + the NT hash in hex (hashcat -m 1000 and John\'s nt take the hex)' }),
  hc(400, 'phpass', 'phpass', CMS, R`\$[PH]\$(?<cost>[./0-9A-Za-z])(?<salt>${c64(8)})${c64(22)}`, 400, { john: 'phpass', parse: parsePortableCost, description: 'phpass portable hash ($P$/$H$: WordPress, phpBB3, Joomla ≥ 2.5.18)' }),
  hc(7900, 'drupal7', 'Drupal7', CMS, R`\$S\$(?<cost>[./0-9A-Za-z])(?<salt>${c64(8)})${c64(43)}`, 150, { john: 'drupal7', parse: parsePortableCost, description: 'Drupal 7: phpass-style SHA-512, $S$ cost salt hash' }),
  other('drupal7-phpass-md5', 'Drupal 7 (imported phpass MD5)', CMS, R`U\$[PH]\$(?<cost>[./0-9A-Za-z])(?<salt>${c64(8)})${c64(22)}`, 10, { parse: parsePortableCost, description: 'Drupal 7 upgraded-from-6 hash: U$ + phpass over md5(pass)' }),
  hc(15100, 'sha1-crypt', 'Juniper/NetBSD sha1crypt', CRYPT, R`\$sha1\$(?<rounds>\d{1,10})\$(?<salt>${c64(1, 64)})\$${c64(28)}`, 20, { john: 'sha1crypt', parse: parseIterated }),
  other('sun-md5-crypt', 'Sun MD5 crypt', CRYPT, R`\$md5(?:,rounds=(?<rounds>\d{1,9}))?\$(?<salt>${c64(0, 8)})\$\$?${c64(22)}`, 5, { john: 'sunmd5', parse: groupParams, description: 'Solaris SunMD5 crypt: $md5[,rounds=N]$salt$$hash' }),
  hc(6300, 'aix-smd5', 'AIX {smd5}', OS, R`\{smd5\}(?<salt>${c64(8, 16)})\$${c64(22)}`, 5, { john: 'aix-smd5' }),
  hc(6700, 'aix-ssha1', 'AIX {ssha1}', OS, R`\{ssha1\}(?<rounds>\d{2})\$(?<salt>${c64(8, 48)})\$${c64(27)}`, 5, { john: 'aix-ssha1', parse: groupParams }),
  hc(6400, 'aix-ssha256', 'AIX {ssha256}', OS, R`\{ssha256\}(?<rounds>\d{2})\$(?<salt>${c64(8, 48)})\$${c64(43)}`, 5, { john: 'aix-ssha256', parse: groupParams }),
  hc(6500, 'aix-ssha512', 'AIX {ssha512}', OS, R`\{ssha512\}(?<rounds>\d{2})\$(?<salt>${c64(8, 48)})\$${c64(86)}`, 5, { john: 'aix-ssha512', parse: groupParams }),
  hc(2612, 'phps', 'PHPS', CMS, R`\$PHPS\$(?<salt>${hex(2, 64)})\$${hex(32)}`, 3, { john: 'phps' }),
  hc(3711, 'mediawiki-b', 'MediaWiki B type', CMS, R`\$B\$(?<salt>${hex(1, 64)})\$${hex(32)}`, 8, { john: 'mediawiki' }),
  other('mediawiki-a', 'MediaWiki A type', CMS, R`:A:${hex(32)}`, 3, { description: 'MediaWiki A type: :A:md5(pass)' }),
  hc(20711, 'authme-sha256', 'AuthMe sha256', CMS, R`\$SHA\$(?<salt>${hex(16)})\$${hex(64)}`, 4),
  hc(19000, 'qnx-md5', 'QNX /etc/shadow (MD5)', OS, R`@m@${hex(32)}@(?<salt>${hex(16)})`, 2),
  hc(19100, 'qnx-sha256', 'QNX /etc/shadow (SHA256)', OS, R`@s@${hex(64)}@(?<salt>${hex(16)})`, 2),
  hc(19200, 'qnx-sha512', 'QNX /etc/shadow (SHA512)', OS, R`@S@${hex(128)}@(?<salt>${hex(16)})`, 2),
  hc(19210, 'qnx7-sha512', 'QNX 7 /etc/shadow (SHA512)', OS, R`@S@${b64p(86, 88)}@${b64p(20, 64)}`, 2),
  hc(2100, 'mscash2', 'Domain Cached Credentials 2 (DCC2), MS Cache 2', OS, R`\$DCC2\$(?<rounds>\d{1,7})#(?<user>[^#]{1,64})#${hex(32)}`, 30, { john: 'mscash2', parse: groupParams }),

  // ---- PBKDF2 and scrypt strings (passlib, Django, Werkzeug, hashcat's own forms) ----
  hc(20400, 'pbkdf2-sha1', 'Python passlib pbkdf2-sha1', FRAMEWORK, R`\$pbkdf2\$(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(22, PBKDF2_KEY_CHARS)}`, 60, {
    john: 'pbkdf2-hmac-sha1', parse: parseIterated, description: 'passlib pbkdf2_sha1: $pbkdf2$rounds$salt$hash',
    typical: { pattern: R`\$pbkdf2\$\d{1,10}\$${ab64(0, 128)}\$${ab64(27)}`, otherwise: NON_DEFAULT_KEY_LENGTH },
  }),
  // passlib's pbkdf2_sha256 draws default_salt_size = 16 bytes (passlib/handlers/pbkdf2.py), 22
  // characters of adapted base64; other sizes need an explicit salt_size. hashd writes these three
  // forms with any keyLength from 16 to 1024 bytes (algorithms/password/pbkdf2.ts), the digest's
  // own size by default, which is what passlib and hashcat write. NetIQ SSPR writes the
  // same syntax with a 32-byte salt (43 characters), so a 43-character salt points there.
  hc(20300, 'pbkdf2-sha256', 'Python passlib pbkdf2-sha256', FRAMEWORK, R`\$pbkdf2-sha256\$(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(22, PBKDF2_KEY_CHARS)}`, 100, {
    john: 'pbkdf2-hmac-sha256', parse: parseIterated, description: 'passlib pbkdf2_sha256: $pbkdf2-sha256$rounds$salt$hash',
    typical: { pattern: R`\$pbkdf2-sha256\$\d{1,10}\$${ab64(22)}\$${ab64(43)}`, otherwise: NON_DEFAULT_SALT_SIZE },
  }),
  hc(32060, 'netiq-sspr-pbkdf2-sha256', 'NetIQ SSPR (PBKDF2WithHmacSHA256)', EAS, R`\$pbkdf2-sha256\$(?<rounds>\d{1,10})\$(?<salt>${ab64(43)})\$${ab64(43)}`, 3, { parse: parseIterated }),
  hc(20200, 'pbkdf2-sha512', 'Python passlib pbkdf2-sha512', FRAMEWORK, R`\$pbkdf2-sha512\$(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(22, PBKDF2_KEY_CHARS)}`, 80, {
    john: 'pbkdf2-hmac-sha512', parse: parseIterated, description: 'passlib pbkdf2_sha512: $pbkdf2-sha512$rounds$salt$hash',
    typical: { pattern: R`\$pbkdf2-sha512\$\d{1,10}\$${ab64(0, 128)}\$${ab64(86)}`, otherwise: NON_DEFAULT_KEY_LENGTH },
  }),
  hc(10000, 'pbkdf2-sha256', 'Django (PBKDF2-SHA256)', FRAMEWORK, R`pbkdf2_sha256\$(?<rounds>\d{1,10})\$(?<salt>[^$\s]{1,128})\$${b64p(43)}`, 300, { john: 'django', parse: parseIterated, description: 'Django\'s default hasher: pbkdf2_sha256$iterations$salt$base64' }),
  other('pbkdf2-sha1', 'Django (PBKDF2-SHA1)', FRAMEWORK, R`pbkdf2_sha1\$(?<rounds>\d{1,10})\$(?<salt>[^$\s]{1,128})\$${b64p(27)}`, 40, { parse: parseIterated, description: 'Django PBKDF2PasswordHasher with SHA-1: pbkdf2_sha1$iterations$salt$base64' }),
  other('pbkdf2-sha256', 'Werkzeug (PBKDF2-SHA256)', FRAMEWORK, R`pbkdf2:sha256(?::(?<rounds>\d{1,10}))?\$(?<salt>[^$\s]{1,128})\$${lhex(64)}`, 200, { parse: groupParams, description: 'Werkzeug generate_password_hash: pbkdf2:sha256:iterations$salt$hex' }),
  other('pbkdf2-sha512', 'Werkzeug (PBKDF2-SHA512)', FRAMEWORK, R`pbkdf2:sha512(?::(?<rounds>\d{1,10}))?\$(?<salt>[^$\s]{1,128})\$${lhex(128)}`, 40, { parse: groupParams, description: 'Werkzeug generate_password_hash: pbkdf2:sha512:iterations$salt$hex' }),
  other('pbkdf2-sha1', 'Werkzeug (PBKDF2-SHA1)', FRAMEWORK, R`pbkdf2:sha1(?::(?<rounds>\d{1,10}))?\$(?<salt>[^$\s]{1,128})\$${lhex(40)}`, 20, { parse: groupParams, description: 'Werkzeug (old default): pbkdf2:sha1:iterations$salt$hex' }),
  other('werkzeug-scrypt', 'Werkzeug (scrypt)', FRAMEWORK, R`scrypt:(?<N>\d{1,8}):(?<r>\d{1,4}):(?<p>\d{1,4})\$(?<salt>[^$\s]{1,128})\$${lhex(128)}`, 150, { parse: groupParams, description: 'Werkzeug ≥ 3 default: scrypt:N:r:p$salt$hex' }),
  hc(30000, 'werkzeug-md5', 'Python Werkzeug MD5 (HMAC-MD5 (key = $salt))', FRAMEWORK, R`md5\$(?<salt>[^$\s]{1,128})\$${lhex(32)}`, 10, { description: 'Werkzeug < 2.3 / Django salted MD5: md5$salt$hex' }),
  other('django-salted-md5', 'Django (salted MD5)', FRAMEWORK, R`md5\$(?<salt>[^$\s]{1,128})\$${lhex(32)}`, 8, { john: 'django', description: 'Django SaltedMD5PasswordHasher: md5$salt$md5(salt.pass)' }),
  hc(30120, 'werkzeug-sha256', 'Python Werkzeug SHA256 (HMAC-SHA256 (key = $salt))', FRAMEWORK, R`sha256\$(?<salt>[^$\s]{1,128})\$${lhex(64)}`, 8),
  hc(124, 'django-sha1', 'Django (SHA-1)', FRAMEWORK, R`sha1\$(?<salt>[^$\s]{1,128})\$${lhex(40)}`, 20, { john: 'django', description: 'Django SHA1PasswordHasher: sha1$salt$sha1(salt.pass)' }),
  other('django-bcrypt-sha256', 'Django (bcrypt-SHA256)', FRAMEWORK, R`bcrypt_sha256\$\$(?<variant>2[abxy])\$(?<cost>\d{2})\$(?<salt>${c64(22)})${c64(31)}`, 40, { parse: parseBcrypt, description: 'Django BCryptSHA256PasswordHasher: bcrypt_sha256$ + bcrypt of the hex SHA-256' }),
  other('django-bcrypt', 'Django (bcrypt)', FRAMEWORK, R`bcrypt\$\$(?<variant>2[abxy])\$(?<cost>\d{2})\$(?<salt>${c64(22)})${c64(31)}`, 10, { parse: parseBcrypt, description: 'Django BCryptPasswordHasher: bcrypt$ + bcrypt string' }),
  other('django-argon2', 'Django (Argon2)', FRAMEWORK, R`argon2${ARGON2('argon2id|argon2i|argon2d')}`, 60, { parse: parseArgon2, description: 'Django Argon2PasswordHasher: argon2$ + Argon2 PHC string' }),
  other('django-scrypt', 'Django (scrypt)', FRAMEWORK, R`scrypt\$(?<N>\d{1,8})\$(?<salt>[^$\s]{1,128})\$(?<r>\d{1,4})\$(?<p>\d{1,4})\$${b64p(43, 88)}`, 20, { parse: groupParams, description: 'Django ScryptPasswordHasher: scrypt$N$salt$r$p$base64' }),
  // hashd writes v2 (passlib ≥ 1.7.3) and reads v1 (`$bcrypt-sha256$2b,12$…`): the registry's name.
  other('bcrypt-sha256', 'bcrypt-SHA256 (passlib bcrypt_sha256, hashd)', CRYPT, R`\$bcrypt-sha256\$(?:v=2,)?t?=?(?<variant>2[abxy]),(?:r=)?(?<cost>\d{1,2})\$(?<salt>${c64(22)})\$${c64(31)}`, 20, { parse: groupParams, description: 'passlib bcrypt_sha256, as hashd writes it: bcrypt over base64(HMAC-SHA256(salt, password)), so passwords past 72 bytes count' }),
  // hashd's peppered password hash (src/algorithms/password/pepper.ts, docs/passwords.md): a
  // password hash of `s=` sealed with AES-256-GCM under pepper key `k=`. Only hashd writes it.
  {
    name: 'peppered', displayName: 'hashd peppered password hash ($pepper$)', category: CRYPT, hashcat: null, john: null,
    pattern: R`\$pepper\$v=(?<version>\d{1,3}),k=[A-Za-z0-9][A-Za-z0-9._-]{0,63},s=[a-z0-9-]{1,32}\$[A-Za-z0-9+/]{16}\$[A-Za-z0-9+/]{22,8192}`,
    prior: 20, parse: parsePepperSeal, sealedWith: 'pepper',
    description: 'hashd\'s peppered password hash: the hash of scheme s= encrypted (AES-256-GCM) under pepper key k=; '
      + '/api/verify opens it on a server that holds that key. Without the key it is ciphertext: nothing to crack',
  },
  hc(7200, 'grub2', 'GRUB 2', OS, R`grub\.pbkdf2\.sha512\.(?<rounds>\d{1,10})\.${hex(16, 256)}\.${hex(128)}`, 12, { john: 'pbkdf2-hmac-sha512', parse: parseIterated, description: 'GRUB 2 grub.pbkdf2.sha512.rounds.salt.hash (grub-mkpasswd-pbkdf2, passlib grub_pbkdf2_sha512)' }),
  hc(12001, 'atlassian-pbkdf2-sha1', 'Atlassian (PBKDF2-HMAC-SHA1)', EAS, R`\{PKCS5S2\}(?<payload>${b64p(64)})`, 20, { john: 'atlassian', parse: decodedLength('payload', 32, [16, 16]) }),
  other('cta-pbkdf2-sha1', 'passlib cta_pbkdf2_sha1', FRAMEWORK, R`\$p5k2\$(?<rounds>[0-9a-f]{1,8})\$(?<salt>${b64u(0, 64)}=?=?)\$${b64u(27, 28)}=?`, 2, { parse: groupParams, description: 'Cryptacular\'s PBKDF2-SHA1 ($p5k2$), as passlib reads it' }),
  hc(10900, 'pbkdf2-sha256-hashcat', 'PBKDF2-HMAC-SHA256', KDF, R`sha256:(?<rounds>\d{1,10}):(?<salt>${b64p(0, 256)}):${b64p(8, 512)}`, 15, { john: 'pbkdf2-hmac-sha256', parse: parseIterated, description: 'PBKDF2-HMAC-SHA256 in hashcat\'s sha256:rounds:salt:hash form' }),
  hc(11900, 'pbkdf2-md5-hashcat', 'PBKDF2-HMAC-MD5', KDF, R`md5:(?<rounds>\d{1,10}):(?<salt>${b64p(0, 256)}):${b64p(8, 512)}`, 5, { john: 'pbkdf2-hmac-md5', parse: parseIterated }),
  hc(12000, 'pbkdf2-sha1-hashcat', 'PBKDF2-HMAC-SHA1', KDF, R`sha1:(?<rounds>\d{1,10}):(?<salt>${b64p(0, 256)}):${b64p(8, 512)}`, 10, { john: 'pbkdf2-hmac-sha1', parse: parseIterated }),
  hc(12100, 'pbkdf2-sha512-hashcat', 'PBKDF2-HMAC-SHA512', KDF, R`sha512:(?<rounds>\d{1,10}):(?<salt>${b64p(0, 256)}):${b64p(8, 512)}`, 8, { john: 'pbkdf2-hmac-sha512', parse: parseIterated }),
  hc(20600, 'otm-sha256', 'Oracle Transportation Management (SHA256)', EAS, R`otm_sha256:(?<rounds>\d{1,10}):(?<salt>[^:\s]{1,256}):${b64p(43)}`, 2, { parse: parseIterated }),
  hc(8900, 'scrypt-hashcat', 'scrypt', KDF, R`SCRYPT:(?<N>\d{1,10}):(?<r>\d{1,4}):(?<p>\d{1,4}):(?<salt>${b64p(0, 256)}):${b64p(8, 512)}`, 20, { john: 'scrypt', parse: groupParams, description: 'scrypt in hashcat\'s SCRYPT:N:r:p:salt:hash form' }),
  hc(21600, 'web2py-pbkdf2-sha512', 'Web2py pbkdf2-sha512', FRAMEWORK, R`pbkdf2\((?<rounds>\d{1,10}),\d{1,3},sha512\)\$(?<salt>[^$\s]{1,128})\$${hex(40, 128)}`, 3, { parse: parseIterated }),
  hc(12800, 'ms-azuresync-pbkdf2', 'MS-AzureSync PBKDF2-HMAC-SHA256', OS, R`v1;PPH1_MD4,(?<salt>${hex(20)}),(?<rounds>\d{1,10}),${hex(64)}`, 3, { parse: parseIterated }),
  hc(10901, 'redhat-389-ds-pbkdf2', 'RedHat 389-DS LDAP (PBKDF2-HMAC-SHA256)', LDAP, R`\{PBKDF2_SHA256\}${b64p(100, 600)}`, 8),
  other('ldap-pbkdf2-sha256', 'LDAP {PBKDF2-SHA256} (passlib)', LDAP, R`\{PBKDF2-SHA256\}(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(43)}`, 10, { parse: parseIterated, description: 'passlib ldap_pbkdf2_sha256: {PBKDF2-SHA256}rounds$salt$hash' }),
  other('ldap-pbkdf2-sha512', 'LDAP {PBKDF2-SHA512} (passlib)', LDAP, R`\{PBKDF2-SHA512\}(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(86)}`, 8, { parse: parseIterated, description: 'passlib ldap_pbkdf2_sha512' }),
  other('ldap-pbkdf2-sha1', 'LDAP {PBKDF2} (passlib)', LDAP, R`\{PBKDF2\}(?<rounds>\d{1,10})\$(?<salt>${ab64(0, 128)})\$${ab64(27)}`, 8, { parse: parseIterated, description: 'passlib ldap_pbkdf2_sha1' }),

  // ---- LDAP userPassword schemes (RFC 2307 and the salted variants of OpenLDAP's slappasswd) ----
  hc(101, 'ldap-sha', 'nsldap, SHA-1(Base64), Netscape LDAP SHA', LDAP, R`\{SHA\}(?<payload>${b64p(27, 28)})`, 300, { john: 'nsldap', parse: decodedLength('payload', 20), description: 'LDAP {SHA}: base64 SHA-1 (RFC 2307; htpasswd -s)' }),
  hc(111, 'ldap-ssha', 'nsldaps, SSHA-1(Base64), Netscape LDAP SSHA', LDAP, R`\{SSHA\}(?<payload>${b64p(28, 400)})`, 300, { john: 'salted-sha1', parse: decodedLength('payload', 20, [1, 256]), description: 'LDAP {SSHA}: base64 of SHA-1(pass.salt).salt (OpenLDAP slappasswd default)' }),
  hc(1411, 'ldap-ssha256', 'SSHA-256(Base64), LDAP {SSHA256}', LDAP, R`\{SSHA256\}(?<payload>${b64p(44, 400)})`, 60, { john: 'salted-sha256', parse: decodedLength('payload', 32, [1, 256]) }),
  hc(1711, 'ldap-ssha512', 'SSHA-512(Base64), LDAP {SSHA512}', LDAP, R`\{SSHA512\}(?<payload>${b64p(88, 500)})`, 60, { john: 'salted-sha512', parse: decodedLength('payload', 64, [1, 256]) }),
  other('ldap-md5', 'LDAP {MD5}', LDAP, R`\{MD5\}(?<payload>${b64p(22, 24)})`, 80, { parse: decodedLength('payload', 16), description: 'LDAP {MD5}: base64 MD5 (RFC 2307)' }),
  other('ldap-smd5', 'LDAP {SMD5}', LDAP, R`\{SMD5\}(?<payload>${b64p(23, 400)})`, 50, { parse: decodedLength('payload', 16, [1, 256]), description: 'LDAP {SMD5}: base64 of MD5(pass.salt).salt' }),
  other('ldap-sha256', 'LDAP {SHA256}', LDAP, R`\{SHA256\}(?<payload>${b64p(43, 44)})`, 30, { parse: decodedLength('payload', 32), description: 'LDAP {SHA256}: base64 SHA-256' }),
  other('ldap-sha512', 'LDAP {SHA512}', LDAP, R`\{SHA512\}(?<payload>${b64p(86, 88)})`, 30, { parse: decodedLength('payload', 64), description: 'LDAP {SHA512}: base64 SHA-512' }),
  other('ldap-hex-md5', 'LDAP {MD5} (hex)', LDAP, R`\{MD5\}${hex(32)}`, 5, { description: 'passlib ldap_hex_md5: {MD5} with a hex digest' }),
  other('ldap-hex-sha1', 'LDAP {SHA} (hex)', LDAP, R`\{SHA\}${hex(40)}`, 5, { description: 'passlib ldap_hex_sha1: {SHA} with a hex digest' }),
  other('ldap-crypt', 'LDAP {CRYPT}', LDAP, R`\{CRYPT\}(?<crypt>[!-~]{13,256})`, 100, { parse: (_hash, groups) => ({ scheme: cryptSchemeOf(groups.crypt ?? '') }), description: 'LDAP {CRYPT}: a crypt(3) string (RFC 2307)' }),
  other('ldap-cleartext', 'LDAP {CLEARTEXT}', LDAP, R`\{CLEARTEXT\}.{0,256}`, 3, { description: 'LDAP {CLEARTEXT}: the password itself, not a hash' }),
  hc(10300, 'sap-codvn-h', 'SAP CODVN H (PWDSALTEDHASH) iSSHA-1', EAS, R`\{x-issha, ?(?<rounds>\d{1,8})\}${b64p(24, 400)}`, 5, { john: 'saph', parse: groupParams }),
  other('sap-codvn-h-sha256', 'SAP CODVN H iSSHA-256', EAS, R`\{x-isSHA(?:256|384|512), ?(?<rounds>\d{1,8})\}${b64p(36, 400)}`, 2, { john: 'saph', parse: groupParams, description: 'SAP PWDSALTEDHASH with SHA-256/384/512' }),
  hc(16400, 'cram-md5-dovecot', 'CRAM-MD5 Dovecot', SERVER, R`\{CRAM-MD5\}${hex(64)}`, 5),
  other('dovecot-scheme', 'Dovecot {SCHEME} string', SERVER, R`\{(?:SHA512-CRYPT|SHA256-CRYPT|MD5-CRYPT|BLF-CRYPT|ARGON2ID|ARGON2I|PBKDF2|SSHA|SHA256|SHA512|PLAIN-MD5|LDAP-MD5)\}[!-~]{10,512}`, 20, { description: 'Dovecot password with a {SCHEME} prefix (doveadm pw)' }),
  other('fshp', 'FSHP', CRYPT, R`\{FSHP(?<variant>[0-3])\|(?<saltBytes>\d{1,4})\|(?<rounds>\d{1,10})\}${b64p(24, 400)}`, 2, { parse: groupParams, description: 'Fairly Secure Hashed Password (passlib fshp)' }),

  // ---- Database servers ----
  other('mysql41', 'MySQL 4.1+ PASSWORD()', DB, R`\*${HEX(40)}`, 200, { john: 'mysql-sha1', signature: true, description: 'MySQL 4.1+ mysql_native_password: * and 40 uppercase hex (hashcat -m 300 without the *)' }),
  other('mysql41-lower', 'MySQL 4.1+ PASSWORD() (lowercase)', DB, R`\*${lhex(40)}`, 20, { john: 'mysql-sha1', signature: true, description: 'MySQL 4.1+ PASSWORD() written in lowercase' }),
  other('postgres-md5', 'PostgreSQL MD5', DB, R`md5${lhex(32)}`, 150, { john: 'postgres', description: 'PostgreSQL md5 password: "md5" + md5(pass.username) (hashcat -m 12 takes hex:username)' }),
  hc(28600, 'postgres-scram-sha256', 'PostgreSQL SCRAM-SHA-256', DB, R`SCRAM-SHA-256\$(?<rounds>\d{1,8}):(?<salt>${b64p(8, 64)})\$${b64p(43, 44)}:${b64p(43, 44)}`, 100, { parse: parseIterated, description: 'PostgreSQL ≥ 10 SCRAM-SHA-256 verifier' }),
  hc(131, 'mssql-2000', 'MSSQL (2000)', DB, R`0x0100(?<salt>${hex(8)})${hex(80)}`, 20, { john: 'mssql', description: 'MS SQL Server 2000: 0x0100, salt, SHA-1 of the case-sensitive and uppercased password' }),
  hc(132, 'mssql-2005', 'MSSQL (2005)', DB, R`0x0100(?<salt>${hex(8)})${hex(40)}`, 30, { john: 'mssql05', description: 'MS SQL Server 2005–2008: 0x0100, salt, SHA-1' }),
  hc(1731, 'mssql-2012', 'MSSQL (2012, 2014)', DB, R`0x0200(?<salt>${hex(8)})${hex(128)}`, 40, { john: 'mssql12', description: 'MS SQL Server 2012+: 0x0200, salt, SHA-512' }),
  hc(8000, 'sybase-ase', 'Sybase ASE', DB, R`0xc007(?<salt>${hex(16)})${hex(64)}`, 4, { john: 'sybasease' }),
  hc(3100, 'oracle-h', 'Oracle H: Type (Oracle 7+)', DB, R`${hex(16)}:(?<user>[^:]{1,30})`, 8, { john: 'oracle', upperHex: true, description: 'Oracle 7–10g DES-based hash, hex:username' }),
  other('oracle11-s', 'Oracle 11g (S: form)', DB, R`S:${HEX(60)}`, 20, { john: 'oracle11', signature: true, description: 'Oracle 11g spare4 S: field, SHA-1 digest + salt (hashcat -m 112 takes hex:salt)' }),
  other('oracle12-t', 'Oracle 12c (T: form)', DB, R`T:${HEX(160)}`, 10, { signature: true, description: 'Oracle 12c spare4 T: field (hashcat -m 12300)' }),
  hc(7401, 'mysql-sha256-crypt', 'MySQL $A$ (sha256crypt)', DB, R`\$mysql\$A\$(?<rounds>\d{3})\*${hex(40)}\*${hex(86)}`, 10),
  hc(11100, 'postgres-cram-md5', 'PostgreSQL CRAM (MD5)', DB, R`\$postgres\$${field(64)}\*${hex(8)}\*${hex(32)}`, 3, { john: 'postgres' }),
  hc(11200, 'mysql-cram-sha1', 'MySQL CRAM (SHA1)', DB, R`\$mysqlna\$${hex(40)}\*${hex(40)}`, 3, { john: 'mysqlna' }),
  hc(24100, 'mongodb-scram-sha1', 'MongoDB ServerKey SCRAM-SHA-1', DB, R`\$mongodb-scram\$\*0\*${b64p(1, 128)}\*(?<rounds>\d{1,8})\*${b64p(8, 64)}\*${b64p(27, 28)}`, 5, { parse: parseIterated }),
  hc(24200, 'mongodb-scram-sha256', 'MongoDB ServerKey SCRAM-SHA-256', DB, R`\$mongodb-scram\$\*1\*${b64p(1, 128)}\*(?<rounds>\d{1,8})\*${b64p(8, 64)}\*${b64p(43, 44)}`, 5, { parse: parseIterated }),
  hc(24600, 'sqlcipher', 'SQLCipher', DB, R`SQLCIPHER\*[0-9]\*(?<rounds>\d{1,8})\*${hex(32)}\*${hex(32)}\*${hex(32)}`, 3, { parse: parseIterated }),

  // ---- Network protocols ----
  hc(5500, 'netntlmv1', 'NetNTLMv1 / NetNTLMv1+ESS', NET, R`(?<user>[^:\s]{0,64})::[^:\s]{0,64}:${hex(48)}:${hex(48)}:${hex(16)}`, 60, { john: 'netntlm', signature: true, description: 'NetNTLMv1 challenge-response as Responder writes it: user::domain:lm:nt:challenge' }),
  hc(5600, 'netntlmv2', 'NetNTLMv2', NET, R`(?<user>[^:\s]{0,64})::[^:\s]{0,64}:${hex(16)}:${hex(32)}:${hex(64, 4096)}`, 80, { john: 'netntlmv2', signature: true, description: 'NetNTLMv2 challenge-response as Responder writes it: user::domain:challenge:ntproofstr:blob' }),
  hc(5300, 'ike-psk-md5', 'IKE-PSK MD5', NET, R`${hex(2, 1024)}:${hex(2, 1024)}:${hex(16)}:${hex(16)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(32)}`, 4, { john: 'ike', signature: true }),
  hc(5400, 'ike-psk-sha1', 'IKE-PSK SHA1', NET, R`${hex(2, 1024)}:${hex(2, 1024)}:${hex(16)}:${hex(16)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(2, 1024)}:${hex(40)}`, 4, { john: 'ike', signature: true }),
  hc(7300, 'ipmi2-rakp-hmac-sha1', 'IPMI2 RAKP HMAC-SHA1', NET, R`(?<salt>${hex(100, 1024)}):${hex(40)}`, 4, { john: 'rakp' }),
  hc(7500, 'krb5pa-23', 'Kerberos 5, etype 23, AS-REQ Pre-Auth', NET, R`\$krb5pa\$23\$${field(128, 0)}\$${field(128, 0)}\$${field(128, 0)}\$${hex(104)}`, 10, { john: 'krb5pa-md5' }),
  hc(13100, 'krb5tgs-23', 'Kerberos 5, etype 23, TGS-REP', NET, R`\$krb5tgs\$23\$(?:\*[^*]{1,512}\*\$)?${hex(32)}\$${hex(64, 16384)}`, 60, { john: 'krb5tgs', description: 'Kerberoasting: RC4-HMAC TGS-REP ticket ($krb5tgs$23$)' }),
  hc(19600, 'krb5tgs-17', 'Kerberos 5, etype 17, TGS-REP', NET, R`\$krb5tgs\$17\$${field(128)}\$${field(128)}\$(?:\*[^*]{1,512}\*\$)?${hex(24)}\$${hex(64, 16384)}`, 10, { john: 'krb5tgs-sha1' }),
  hc(19700, 'krb5tgs-18', 'Kerberos 5, etype 18, TGS-REP', NET, R`\$krb5tgs\$18\$${field(128)}\$${field(128)}\$(?:\*[^*]{1,512}\*\$)?${hex(24)}\$${hex(64, 16384)}`, 15, { john: 'krb5tgs-sha1' }),
  hc(18200, 'krb5asrep-23', 'Kerberos 5, etype 23, AS-REP', NET, R`\$krb5asrep\$23\$(?<user>[^:$\s]{1,256}):${hex(32)}\$${hex(64, 16384)}`, 40, { john: 'krb5asrep', description: 'AS-REP roasting: RC4-HMAC AS-REP ($krb5asrep$23$)' }),
  hc(32100, 'krb5asrep-17', 'Kerberos 5, etype 17, AS-REP', NET, R`\$krb5asrep\$17\$${field(128)}\$${field(128)}\$${hex(24)}\$${hex(64, 16384)}`, 5, { john: 'krb5asrep' }),
  hc(32200, 'krb5asrep-18', 'Kerberos 5, etype 18, AS-REP', NET, R`\$krb5asrep\$18\$${field(128)}\$${field(128)}\$${hex(24)}\$${hex(64, 16384)}`, 6, { john: 'krb5asrep' }),
  hc(19800, 'krb5pa-17', 'Kerberos 5, etype 17, Pre-Auth', NET, R`\$krb5pa\$17\$${field(128)}\$${field(128)}\$(?:${field(128)}\$)?${hex(104, 112)}`, 5, { john: 'krb5pa-sha1' }),
  hc(19900, 'krb5pa-18', 'Kerberos 5, etype 18, Pre-Auth', NET, R`\$krb5pa\$18\$${field(128)}\$${field(128)}\$(?:${field(128)}\$)?${hex(104, 112)}`, 6, { john: 'krb5pa-sha1' }),
  hc(28800, 'krb5db-17', 'Kerberos 5, etype 17, DB', NET, R`\$krb5db\$17\$${field(128)}\$${field(128)}\$${hex(32)}`, 3),
  hc(28900, 'krb5db-18', 'Kerberos 5, etype 18, DB', NET, R`\$krb5db\$18\$${field(128)}\$${field(128)}\$${hex(64)}`, 3),
  hc(22000, 'wpa-pbkdf2-pmkid-eapol', 'WPA-PBKDF2-PMKID+EAPOL', NET, R`WPA\*0[12]\*${hex(32)}\*${hex(12)}\*${hex(12)}\*${hex(0, 64)}\*${hex(0, 64)}\*${hex(0, 1024)}\*${hex(0, 2)}`, 60, { john: 'wpapsk', description: 'WPA/WPA2 PMKID or EAPOL handshake (hcxpcapngtool 22000 format)' }),
  hc(10200, 'cram-md5', 'CRAM-MD5', NET, R`\$cram_md5\$${b64p(0, 256)}\$${b64p(8, 256)}`, 4),
  hc(11400, 'sip-digest', 'SIP digest authentication (MD5)', NET, R`\$sip\$\*[^\n]{10,1024}\*MD5\*${hex(32)}`, 5, { john: 'sip' }),
  hc(8300, 'dnssec-nsec3', 'DNSSEC (NSEC3)', NET, R`[0-9a-v]{32}:[^:\s]{0,256}:${hex(0, 512)}:\d{1,5}`, 3, { signature: true }),
  hc(16100, 'tacacs-plus', 'TACACS+', NET, R`\$tacacs-plus\$0\$${hex(8)}\$${hex(12, 512)}\$${hex(4)}`, 3, { john: 'tacacs-plus' }),
  hc(23200, 'xmpp-scram-sha1', 'XMPP SCRAM PBKDF2-SHA1', NET, R`\$xmpp-scram\$0\$(?<rounds>\d{1,8})\$\d{1,4}\$${hex(2, 512)}\$${hex(40)}`, 3, { john: 'xmpp-scram', parse: parseIterated }),
  hc(25000, 'snmpv3-hmac-md5-sha1-96', 'SNMPv3 HMAC-MD5-96/HMAC-SHA1-96', NET, R`\$SNMPv3\$0\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(24)}`, 3),
  hc(25100, 'snmpv3-hmac-md5-96', 'SNMPv3 HMAC-MD5-96', NET, R`\$SNMPv3\$1\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(24)}`, 3),
  hc(25200, 'snmpv3-hmac-sha1-96', 'SNMPv3 HMAC-SHA1-96', NET, R`\$SNMPv3\$2\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(24)}`, 3),
  hc(26700, 'snmpv3-hmac-sha224-128', 'SNMPv3 HMAC-SHA224-128', NET, R`\$SNMPv3\$3\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(32)}`, 2),
  hc(26800, 'snmpv3-hmac-sha256-192', 'SNMPv3 HMAC-SHA256-192', NET, R`\$SNMPv3\$4\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(48)}`, 2),
  hc(26900, 'snmpv3-hmac-sha384-256', 'SNMPv3 HMAC-SHA384-256', NET, R`\$SNMPv3\$5\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(64)}`, 2),
  hc(27300, 'snmpv3-hmac-sha512-384', 'SNMPv3 HMAC-SHA512-384', NET, R`\$SNMPv3\$6\$\d{1,10}\$${hex(2, 4096)}\$${hex(2, 128)}\$${hex(96)}`, 2),
  hc(28700, 'aws4-hmac-sha256', 'Amazon AWS4-HMAC-SHA256', NET, R`\$AWS-Sig-v4\$0\$\d{8}T\d{6}Z\$${field(64)}\$${field(64)}\$${hex(64)}\$${hex(64)}`, 3),
  hc(31300, 'ms-sntp', 'MS SNTP', NET, R`\$sntp-ms\$${hex(32)}\$${hex(96)}`, 3),
  hc(25900, 'knx-ip-secure', 'KNX IP Secure - Device Authentication Code', NET, R`\$knx-ip-secure-device-authentication-code\$\*${hex(4)}\*${hex(64)}\*${hex(32)}`, 1),

  // ---- Operating systems, network devices ----
  hc(22, 'juniper-netscreen', 'Juniper NetScreen/SSG (ScreenOS)', OS, R`n${b64(5)}r${b64(5)}c${b64(4)}s${b64(5)}t${b64(5)}n:(?<user>[^:]{1,64})`, 5, { john: 'md5ns', signature: true }),
  hc(501, 'juniper-ive', 'Juniper IVE', OS, R`3u\+UR6n8AgABAAAA${b64(80, 96)}={0,2}`, 2, { signature: true }),
  hc(2400, 'cisco-pix-md5', 'Cisco-PIX MD5', OS, c64(16), 8, { john: 'pix-md5', description: 'Cisco PIX MD5: 16 characters of crypt base64' }),
  hc(2410, 'cisco-asa-md5', 'Cisco-ASA MD5', OS, R`${c64(16)}:(?<user>[^:]{1,64})`, 6, { john: 'asa-md5' }),
  hc(5700, 'cisco-ios-type4', 'Cisco-IOS type 4 (SHA256)', OS, c64(43), 8, { john: 'cisco4', description: 'Cisco IOS type 4: SHA-256 in 43 characters of crypt base64' }),
  hc(9200, 'cisco-ios-type8', 'Cisco-IOS $8$ (PBKDF2-SHA256)', OS, R`\$8\$(?<salt>${c64(14)})\$${c64(43)}`, 15, { john: 'cisco8' }),
  hc(9300, 'cisco-ios-type9', 'Cisco-IOS $9$ (scrypt)', OS, R`\$9\$(?<salt>${c64(14)})\$${c64(43)}`, 15, { john: 'cisco9' }),
  other('cisco-type7', 'Cisco type 7', OS, R`(?:0[0-9]|1[0-5])(?:${hex(4)}){1,32}`, 0.5, { description: 'Cisco type 7 password obfuscation (reversible, not a hash)' }),
  hc(7000, 'fortigate', 'FortiGate (FortiOS)', OS, R`AK1${b64(43)}=`, 5, { john: 'fortigate', signature: true }),
  hc(26300, 'fortigate256', 'FortiGate256 (FortiOS256)', OS, R`SH2${b64(59)}=`, 4, { john: 'fortigate256', signature: true }),
  hc(15300, 'dpapi-masterkey-v1', 'DPAPI masterkey file v1 (context 1 and 2)', OS, R`\$DPAPImk\$1\*[12]\*S-[0-9-]{5,128}\*des3\*sha1\*(?<rounds>\d{1,8})\*${hex(32)}\*\d{1,5}\*${hex(16, 1024)}`, 5, { john: 'DPAPImk', parse: parseIterated }),
  hc(15310, 'dpapi-masterkey-v1-context3', 'DPAPI masterkey file v1 (context 3)', OS, R`\$DPAPImk\$1\*3\*S-[0-9-]{5,128}\*des3\*sha1\*(?<rounds>\d{1,8})\*${hex(32)}\*\d{1,5}\*${hex(16, 1024)}`, 2, { parse: parseIterated }),
  hc(15900, 'dpapi-masterkey-v2', 'DPAPI masterkey file v2 (context 1 and 2)', OS, R`\$DPAPImk\$2\*[12]\*S-[0-9-]{5,128}\*aes256\*sha512\*(?<rounds>\d{1,8})\*${hex(32)}\*\d{1,5}\*${hex(16, 1024)}`, 5, { john: 'DPAPImk', parse: parseIterated }),
  hc(15910, 'dpapi-masterkey-v2-context3', 'DPAPI masterkey file v2 (context 3)', OS, R`\$DPAPImk\$2\*3\*S-[0-9-]{5,128}\*aes256\*sha512\*(?<rounds>\d{1,8})\*${hex(32)}\*\d{1,5}\*${hex(16, 1024)}`, 2, { parse: parseIterated }),
  hc(7100, 'macos-pbkdf2-sha512', 'macOS v10.8+ (PBKDF2-SHA512)', OS, R`\$ml\$(?<rounds>\d{1,8})\$(?<salt>${hex(64)})\$${hex(128, 256)}`, 10, { john: 'xsha512', parse: parseIterated }),
  hc(8500, 'racf', 'RACF', OS, R`\$racf\$\*[^*]{1,8}\*${HEX(16)}`, 3, { john: 'racf' }),
  hc(28100, 'windows-hello', 'Windows Hello PIN/Password', OS, R`\$WINHELLO\$\*SHA512\*(?<rounds>\d{1,8})\*${rest(100, 8192)}`, 2, { parse: parseIterated }),
  hc(12200, 'ecryptfs', 'eCryptfs', FBE, R`\$ecryptfs\$0\$[12]\$${hex(16)}\$${hex(16)}`, 3, { john: 'ecryptfs' }),
  hc(14500, 'linux-cryptoapi', 'Linux Kernel Crypto API (2.4)', FDE, R`\$cryptoapi\$\d\$\d\$${hex(32)}\$${hex(32)}\$${hex(32)}`, 1),
  hc(8800, 'android-fde', 'Android FDE <= 4.3', FDE, R`\$fde\$16\$${hex(32)}\$16\$${hex(32)}\$${hex(64, 4096)}`, 2, { john: 'fde' }),
  hc(26500, 'iphone-passcode', 'iPhone passcode (UID key + System Keybag)', OS, R`\$uido\$${hex(32)}\$${hex(40)}\$(?<rounds>\d{1,8})\$${hex(80)}`, 2, { parse: parseIterated }),
  hc(33700, 'ms-online-account', 'Microsoft Online Account (PBKDF2-HMAC-SHA256 + AES256)', OS, R`\$MSONLINEACCOUNT\$0\$(?<rounds>\d{1,8})\$${hex(64, 4096)}`, 2, { parse: parseIterated }),

  // ---- Forums, CMS, servers, enterprise apps, frameworks ----
  hc(141, 'episerver-6-sha1', 'Episerver 6.x < .NET 4', SERVER, R`\$episerver\$\*0\*${b64p(4, 64)}\*${b64p(27, 28)}`, 3, { john: 'episerver' }),
  hc(1441, 'episerver-6-sha256', 'Episerver 6.x >= .NET 4', SERVER, R`\$episerver\$\*1\*${b64p(4, 64)}\*${b64p(43, 44)}`, 3, { john: 'episerver' }),
  sameSyntax([
    hc(133, 'peoplesoft', 'PeopleSoft', EAS, R`(?<payload>${b64(27)}=)`, 6, { parse: decodedLength('payload', 20), description: 'PeopleSoft: base64 SHA-1 of the UTF-16LE password' }),
    hc(24800, 'umbraco-hmac-sha1', 'Umbraco HMAC-SHA1', CMS, R`(?<payload>${b64(27)}=)`, 4, { parse: decodedLength('payload', 20), description: 'Umbraco: base64 HMAC-SHA1' }),
  ]),
  hc(8700, 'lotus-notes-6', 'Lotus Notes/Domino 6', EAS, R`\(G${b64(19)}\)`, 3, { john: 'dominosec', signature: true }),
  hc(9100, 'lotus-notes-8', 'Lotus Notes/Domino 8', EAS, R`\(H${b64(48)}\)`, 3, { john: 'dominosec8', signature: true }),
  // SAP hashes read through RFC_READ_TABLE keep only the start of the hash and come back
  // zero-filled: hashcat -m 7701 compares the first 4 bytes of the BCODE and -m 7801 the first 10
  // of the PASSCODE (OpenCL/m07701_a0-optimized.cl, m07801_a0-optimized.cl; the modules' examples
  // end in 00000000 and in 20 zeros). A full hash ends that way one time in 16^8 (or 16^20), and
  // -m 7701/7801 crack it too, so the two forms are separate rows with disjoint syntaxes.
  hc(7700, 'sap-codvn-b', 'SAP CODVN B (BCODE)', EAS, R`(?<user>[^$:\s]{1,40})\$${HEX(16)}`, 4, { john: 'sapb', parse: unlessZeroTail(8) }),
  hc(7701, 'sap-codvn-b-rfc-read-table', 'SAP CODVN B (BCODE) from RFC_READ_TABLE', EAS, R`(?<user>[^$:\s]{1,40})\$${HEX(8)}0{8}`, 2, { john: 'sapb' }),
  hc(7800, 'sap-codvn-f-g', 'SAP CODVN F/G (PASSCODE)', EAS, R`(?<user>[^$:\s]{1,40})\$${hex(40)}`, 4, { john: 'sapg', parse: unlessZeroTail(20) }),
  hc(7801, 'sap-codvn-f-g-rfc-read-table', 'SAP CODVN F/G (PASSCODE) from RFC_READ_TABLE', EAS, R`(?<user>[^$:\s]{1,40})\$${hex(20)}0{20}`, 2, { john: 'sapg' }),
  hc(16000, 'tripcode', 'Tripcode', IM, c64(10), 3, { john: 'tripcode' }),
  hc(24900, 'dahua-md5', 'Dahua Authentication MD5', OS, R`[A-Za-z0-9]{8}`, 2),
  hc(26200, 'openedge-encode', 'OpenEdge Progress Encode', DB, R`[a-zA-Z]{16}`, 2),
  hc(29100, 'flask-session', 'Flask Session Cookie ($salt.$salt.$pass)', FRAMEWORK, R`\.?eyJ${b64u(1, 4096)}\.${b64u(4, 8)}\.${b64u(27)}`, 10, { signature: true }),
  hc(16500, 'jwt', 'JWT (JSON Web Token)', TOKEN, R`(?<header>eyJ${b64u(8, 1024)})\.${b64u(0, 8192)}\.${b64u(0, 1024)}`, 200, { john: 'HMAC-SHA256', signature: true, parse: parseJwt, description: 'JSON Web Token (RFC 7519); hashcat -m 16500 cracks HS256/384/512 secrets',
    // RFC 7519 §3.1's example (HS256); a generated string would not carry a JSON header.
    example: 'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' }),
  hc(31400, 'securecrt-v2', 'SecureCRT MasterPassphrase v2', EAS, R`S:"Config Passphrase"=02:${hex(64, 512)}`, 2),
  hc(12500, 'rar3-hp', 'RAR3-hp', ARCHIVE, R`\$RAR3\$\*0\*${hex(16)}\*${hex(32)}`, 10, { john: 'rar' }),
  hc(23700, 'rar3-p-uncompressed', 'RAR3-p (Uncompressed)', ARCHIVE, R`\$RAR3\$\*1\*${hex(16)}\*${hex(8)}\*\d{1,10}\*\d{1,10}\*1\*${hex(2, 16384)}\*30`, 4, { john: 'rar' }),
  hc(23800, 'rar3-p-compressed', 'RAR3-p (Compressed)', ARCHIVE, R`\$RAR3\$\*1\*${hex(16)}\*${hex(8)}\*\d{1,10}\*\d{1,10}\*1\*${hex(2, 16384)}\*3[1-5]`, 4, { john: 'rar' }),
  hc(13000, 'rar5', 'RAR5', ARCHIVE, R`\$rar5\$16\$${hex(32)}\$(?<rounds>\d{1,2})\$${hex(32)}\$8\$${hex(16)}`, 15, { john: 'rar5', parse: groupParams }),
  hc(11600, '7-zip', '7-Zip', ARCHIVE, R`\$7z\$[0-9]\$\d{1,2}\$[0-9]\$[^$]{0,64}\$\d{1,2}\$${hex(32)}\$\d{1,10}\$\d{1,10}\$\d{1,10}\$${rest(2, 16384)}`, 15, { john: '7z' }),
  hc(13600, 'winzip', 'WinZip', ARCHIVE, R`\$zip2\$\*0\*[1-3]\*[01]\*${hex(16, 32)}\*${hex(4)}\*${hex(1, 8)}\*${hex(0, 16384)}\*${hex(20)}\*\$/zip2\$`, 10, { john: 'zip' }),
  hc(17200, 'pkzip-compressed', 'PKZIP (Compressed)', ARCHIVE, R`\$pkzip2?\$1\*[12]\*2\*0\*${hex(1, 8)}\*${hex(1, 8)}\*${hex(8)}\*${hex(1, 8)}\*${hex(1, 4)}\*8\*${rest(8, 16384)}`, 8, { john: 'pkzip' }),
  hc(17210, 'pkzip-uncompressed', 'PKZIP (Uncompressed)', ARCHIVE, R`\$pkzip2?\$1\*[12]\*2\*0\*${hex(1, 8)}\*${hex(1, 8)}\*${hex(8)}\*${hex(1, 8)}\*${hex(1, 4)}\*0\*${rest(8, 16384)}`, 6, { john: 'pkzip' }),
  hc(17220, 'pkzip-compressed-multi-file', 'PKZIP (Compressed Multi-File)', ARCHIVE, R`\$pkzip2?\$[2-8]\*[12]\*1\*0\*8\*${PKZIP_CHECKSUM_ENTRIES}\*2\*0\*${rest(8, 16384)}`, 4, { john: 'pkzip' }),
  hc(17225, 'pkzip-mixed-multi-file', 'PKZIP (Mixed Multi-File)', ARCHIVE, R`\$pkzip2?\$[2-8]\*[12]\*1\*0\*0\*${PKZIP_CHECKSUM_ENTRIES}\*2\*0\*${rest(8, 16384)}`, 3, { john: 'pkzip' }),
  hc(17230, 'pkzip-mixed-multi-file-checksum-only', 'PKZIP (Mixed Multi-File Checksum-Only)', ARCHIVE, R`\$pkzip2?\$[2-8]\*[12]\*1\*0\*[08]\*${rest(8, 16384)}`, 2, { john: 'pkzip' }),
  hc(23001, 'securezip-aes128', 'SecureZIP AES-128', ARCHIVE, R`\$zip3\$\*0\*1\*128\*0\*${hex(24, 32)}\*${hex(2, 1024)}\*0\*0\*0\*[^*\n]{0,256}`, 2),
  hc(23002, 'securezip-aes192', 'SecureZIP AES-192', ARCHIVE, R`\$zip3\$\*0\*1\*192\*0\*${hex(24, 32)}\*${hex(2, 1024)}\*0\*0\*0\*[^*\n]{0,256}`, 1),
  hc(23003, 'securezip-aes256', 'SecureZIP AES-256', ARCHIVE, R`\$zip3\$\*0\*1\*256\*0\*${hex(24, 32)}\*${hex(2, 1024)}\*0\*0\*0\*[^*\n]{0,256}`, 2),

  // ---- Documents ----
  hc(9400, 'office-2007', 'MS Office 2007', DOC, R`\$office\$\*2007\*\d{1,3}\*\d{1,3}\*\d{1,3}\*${hex(32)}\*${hex(32)}\*${hex(40)}`, 10, { john: 'office' }),
  hc(9500, 'office-2010', 'MS Office 2010', DOC, R`\$office\$\*2010\*(?<rounds>\d{1,8})\*\d{1,3}\*\d{1,3}\*${hex(32)}\*${hex(32)}\*${hex(64)}`, 10, { john: 'office', parse: parseIterated }),
  hc(9600, 'office-2013', 'MS Office 2013', DOC, R`\$office\$\*2013\*(?<rounds>\d{1,8})\*\d{1,3}\*\d{1,3}\*${hex(32)}\*${hex(32)}\*${hex(64)}`, 15, { john: 'office', parse: parseIterated }),
  hc(25300, 'office-2016-sheet-protection', 'MS Office 2016 - SheetProtection', DOC, R`\$office\$2016\$[0-9]\$(?<rounds>\d{1,8})\$${b64p(22, 24)}\$${b64p(86, 88)}`, 2, { parse: parseIterated }),
  hc(9700, 'oldoffice-md5-rc4', 'MS Office <= 2003 $0/$1, MD5 + RC4', DOC, R`\$oldoffice\$[01]\*${hex(32)}\*${hex(32)}\*${hex(32)}`, 6, { john: 'oldoffice' }),
  hc(9800, 'oldoffice-sha1-rc4', 'MS Office <= 2003 $3/$4, SHA1 + RC4', DOC, R`\$oldoffice\$[34]\*${hex(32)}\*${hex(32)}\*${hex(40)}`, 6, { john: 'oldoffice' }),
  hc(10400, 'pdf-1-1', 'PDF 1.1 - 1.3 (Acrobat 2 - 4)', DOC, R`\$pdf\$1\*2\*40\*-?\d{1,10}\*[01]\*\d{1,2}\*${hex(32)}\*\d{1,2}\*${hex(64)}\*\d{1,2}\*${hex(64)}`, 4, { john: 'pdf' }),
  hc(10500, 'pdf-1-4', 'PDF 1.4 - 1.6 (Acrobat 5 - 8)', DOC, R`\$pdf\$[24]\*[34]\*128\*-?\d{1,10}\*[01]\*\d{1,2}\*${hex(32)}\*\d{1,2}\*${hex(64)}\*\d{1,2}\*${hex(64)}`, 6, { john: 'pdf' }),
  hc(10600, 'pdf-1-7-level3', 'PDF 1.7 Level 3 (Acrobat 9)', DOC, R`\$pdf\$5\*5\*256\*-?\d{1,10}\*[01]\*\d{1,3}\*${rest(32, 2048)}`, 4, { john: 'pdf' }),
  hc(10700, 'pdf-1-7-level8', 'PDF 1.7 Level 8 (Acrobat 10 - 11)', DOC, R`\$pdf\$5\*6\*256\*-?\d{1,10}\*[01]\*\d{1,3}\*${rest(32, 2048)}`, 6, { john: 'pdf' }),
  hc(18400, 'odf-1-2', 'Open Document Format (ODF) 1.2 (SHA-256, AES)', DOC, R`\$odf\$\*1\*1\*(?<rounds>\d{1,8})\*32\*${hex(64)}\*16\*${hex(32)}\*16\*${hex(32)}\*0\*${hex(2, 16384)}`, 4, { john: 'odf', parse: parseIterated }),
  hc(18600, 'odf-1-1', 'Open Document Format (ODF) 1.1 (SHA-1, Blowfish)', DOC, R`\$odf\$\*0\*0\*(?<rounds>\d{1,8})\*16\*${hex(40)}\*8\*${hex(16)}\*16\*${hex(32)}\*0\*${hex(2, 16384)}`, 3, { john: 'odf', parse: parseIterated }),
  hc(23300, 'apple-iwork', 'Apple iWork', DOC, R`\$iwork\$2\$1\$1\$(?<rounds>\d{1,8})\$${hex(16, 64)}\$${hex(32)}\$${hex(64, 256)}`, 2, { parse: parseIterated }),

  // ---- Password managers ----
  hc(6600, '1password-agilekeychain', '1Password, agilekeychain', PWM, R`(?<rounds>\d{1,8}):${hex(16)}:${hex(64, 4096)}`, 3, { john: 'agilekeychain', signature: true, parse: parseIterated }),
  hc(8200, '1password-cloudkeychain', '1Password, cloudkeychain', PWM, R`${hex(64)}:${hex(32)}:(?<rounds>\d{1,8}):${hex(64, 4096)}`, 3, { john: 'cloudkeychain', signature: true, parse: parseIterated }),
  hc(31800, '1password-mobilekeychain', '1Password, mobilekeychain (1Password 8)', PWM, R`\$mobilekeychain\$[^$\s]{1,256}\$${hex(64)}\$${hex(64)}\$(?<rounds>\d{1,8})\$${hex(32)}\$${hex(32, 4096)}\$${hex(32)}`, 2, { parse: parseIterated }),
  hc(13400, 'keepass', 'KeePass 1 (AES/Twofish) and KeePass 2 (AES)', PWM, R`\$keepass\$\*[12]\*(?<rounds>\d{1,10})\*[0-9]\*${KEEPASS_FIELDS}\*1\*${rest(2, 16384)}`, 15, { john: 'keepass', parse: parseIterated }),
  hc(29700, 'keepass-no-keyfile', 'KeePass 1 (AES/Twofish) and KeePass 2 (AES) - keyfile only mode', PWM, R`\$keepass\$\*[12]\*(?<rounds>\d{1,10})\*[0-9]\*${hex(64)}\*${hex(64)}\*${hex(32)}\*${hex(64)}\*${hex(2, 16384)}`, 14, { john: 'keepass', parse: parseIterated }),
  hc(16200, 'apple-secure-notes', 'Apple Secure Notes', PWM, R`\$ASN\$\*\d{1,10}\*(?<rounds>\d{1,8})\*${hex(32)}\*${hex(48)}`, 2, { parse: parseIterated }),
  hc(23100, 'apple-keychain', 'Apple Keychain', PWM, R`\$keychain\$\*${hex(40)}\*${hex(16)}\*${hex(96)}`, 3, { john: 'keychain' }),
  hc(23400, 'bitwarden', 'Bitwarden', PWM, R`\$bitwarden\$[12]\*(?<rounds>\d{1,8})\*[0-9]\*${b64p(1, 256)}\*${b64p(43, 44)}`, 5, { parse: parseIterated }),
  hc(26000, 'mozilla-key3', 'Mozilla key3.db', PWM, R`\$mozilla\$\*3DES\*${hex(40)}\*${hex(40)}\*${hex(32)}`, 2, { john: 'mozilla' }),
  hc(26100, 'mozilla-key4', 'Mozilla key4.db', PWM, R`\$mozilla\$\*AES\*${hex(40)}\*${hex(64)}\*(?<rounds>\d{1,8})\*${hex(32)}\*${hex(32)}`, 3, { john: 'mozilla', parse: parseIterated }),
  hc(29910, 'encdv-pbkdf2-no-keychain', 'ENCsecurity Datavault (PBKDF2/no keychain)', PWM, R`\$encdv-pbkdf2\$1\$1\$${hex(16)}\$${hex(16)}\$32\$${hex(64)}\$(?<rounds>\d{1,8})`, 1, { parse: parseIterated }),
  hc(29920, 'encdv-pbkdf2-keychain', 'ENCsecurity Datavault (PBKDF2/keychain)', PWM, R`\$encdv-pbkdf2\$3\$1\$${hex(16)}\$${hex(16)}\$32\$${hex(64)}\$(?<rounds>\d{1,8})\$${hex(256)}`, 1, { parse: parseIterated }),
  hc(29930, 'encdv-md5-no-keychain', 'ENCsecurity Datavault (MD5/no keychain)', PWM, R`\$encdv\$1\$1\$${hex(16)}\$${hex(16)}`, 1),
  hc(29940, 'encdv-md5-keychain', 'ENCsecurity Datavault (MD5/keychain)', PWM, R`\$encdv\$3\$1\$${hex(16)}\$${hex(16)}\$${hex(256)}`, 1),

  // ---- Full-disk and file encryption ----
  hc(16700, 'filevault2', 'FileVault 2', FDE, R`\$fvde\$1\$16\$${hex(32)}\$(?<rounds>\d{1,8})\$${hex(48)}`, 5, { john: 'FVDE', parse: parseIterated }),
  hc(18300, 'apfs', 'Apple File System (APFS)', FDE, R`\$fvde\$2\$16\$${hex(32)}\$(?<rounds>\d{1,8})\$${hex(80)}`, 5, { parse: parseIterated }),
  hc(22100, 'bitlocker', 'BitLocker', FDE, R`\$bitlocker\$[0-3]\$16\$${hex(32)}\$(?<rounds>\d{1,8})\$12\$${hex(24)}\$60\$${hex(120)}`, 10, { john: 'bitlocker', parse: parseIterated }),
  hc(23900, 'bestcrypt-v3', 'BestCrypt v3 Volume Encryption', FDE, R`\$bcve\$3\$\d{2}\$${hex(16, 64)}\$${hex(64, 1024)}`, 1),
  hc(24000, 'bestcrypt-v4', 'BestCrypt v4 Volume Encryption', FDE, R`\$bcve\$4\$\d{2}\$${hex(16, 64)}\$${hex(64, 1024)}`, 1),
  hc(27400, 'vmware-vmx', 'VMware VMX (PBKDF2-HMAC-SHA1 + AES-256-CBC)', FDE, R`\$vmx\$0\$(?<rounds>\d{1,8})\$${hex(32)}\$${hex(64)}`, 2, { parse: parseIterated }),
  hc(27500, 'virtualbox-aes128', 'VirtualBox (PBKDF2-HMAC-SHA256 & AES-128-XTS)', FDE, R`\$vbox\$0\$(?<rounds>\d{1,8})\$${hex(64)}\$8\$${hex(64)}\$\d{1,8}\$${hex(64)}\$${hex(64)}`, 2, { parse: parseIterated }),
  hc(27600, 'virtualbox-aes256', 'VirtualBox (PBKDF2-HMAC-SHA256 & AES-256-XTS)', FDE, R`\$vbox\$0\$(?<rounds>\d{1,8})\$${hex(64)}\$16\$${hex(128)}\$\d{1,8}\$${hex(64)}\$${hex(64)}`, 2, { parse: parseIterated }),
  hc(16900, 'ansible-vault', 'Ansible Vault', FBE, R`\$ansible\$0\*0\*${hex(64)}\*${hex(32)}\*${hex(64)}`, 5, { john: 'ansible' }),
  hc(13200, 'axcrypt1', 'AxCrypt 1', FBE, R`\$axcrypt\$\*1\*(?<rounds>\d{1,8})\*${hex(32)}\*${hex(48)}`, 2, { john: 'axcrypt', parse: parseIterated }),
  hc(13300, 'axcrypt1-sha1', 'AxCrypt 1 in-memory SHA1', FBE, R`\$axcrypt_sha1\$${hex(32, 40)}`, 1),
  hc(23600, 'axcrypt2', 'AxCrypt 2 AES-256', FBE, R`\$axcrypt\$\*2\*(?<rounds>\d{1,8})\*${hex(128)}\*${hex(288)}\*\d{1,8}\*${hex(64)}`, 1.5, { parse: parseIterated, variants: [variant(23500, 'AxCrypt 2 AES-128')] }),
  hc(22400, 'aes-crypt', 'AES Crypt (SHA256)', FBE, R`\$aescrypt\$1\*${hex(32)}\*${hex(32)}\*${hex(64)}\*${hex(64)}`, 2),
  hc(31200, 'veeam-vbk', 'Veeam VBK', FBE, R`\$vbk\$\*${hex(128)}\*(?<rounds>\d{1,8})\*${hex(32)}`, 2, { parse: parseIterated }),
  hc(17010, 'gpg-aes-sha1', 'GPG (AES-128/AES-256 (SHA-1($pass)))', FBE, R`\$gpg\$\*1\*\d{1,5}\*\d{1,5}\*${hex(64, 16384)}\*[0-9]\*254\*2\*[7-9]\*16\*${rest(16, 1024)}`, 5, { john: 'gpg' }),
  hc(17020, 'gpg-aes-sha512', 'GPG (AES-128/AES-256 (SHA-512($pass)))', FBE, R`\$gpg\$\*1\*\d{1,5}\*\d{1,5}\*${hex(64, 16384)}\*[0-9]\*254\*10\*[7-9]\*16\*${rest(16, 1024)}`, 4, { john: 'gpg' }),
  hc(17030, 'gpg-aes-sha256', 'GPG (AES-128/AES-256 (SHA-256($pass)))', FBE, R`\$gpg\$\*1\*\d{1,5}\*\d{1,5}\*${hex(64, 16384)}\*[0-9]\*254\*8\*[7-9]\*16\*${rest(16, 1024)}`, 4, { john: 'gpg' }),
  hc(17040, 'gpg-cast5-sha1', 'GPG (CAST5 (SHA-1($pass)))', FBE, R`\$gpg\$\*1\*\d{1,5}\*\d{1,5}\*${hex(64, 16384)}\*[0-9]\*254\*2\*3\*8\*${rest(16, 1024)}`, 3, { john: 'gpg' }),

  // ---- Private keys ----
  hc(22911, 'ssh-private-key-0', 'RSA/DSA/EC/OpenSSH Private Keys ($0$)', KEY, R`\$sshng\$0\$8\$${hex(16)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'ssh' }),
  hc(22921, 'ssh-private-key-6', 'RSA/DSA/EC/OpenSSH Private Keys ($6$)', KEY, R`\$sshng\$6\$8\$${hex(16)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'ssh' }),
  hc(22931, 'ssh-private-key-1-3', 'RSA/DSA/EC/OpenSSH Private Keys ($1, $3$)', KEY, R`\$sshng\$[13]\$16\$${hex(32)}\$\d{1,6}\$${hex(64, 16384)}`, 5, { john: 'ssh' }),
  hc(22941, 'ssh-private-key-4', 'RSA/DSA/EC/OpenSSH Private Keys ($4$)', KEY, R`\$sshng\$4\$16\$${hex(32)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'ssh' }),
  hc(22951, 'ssh-private-key-5', 'RSA/DSA/EC/OpenSSH Private Keys ($5$)', KEY, R`\$sshng\$5\$16\$${hex(32)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'ssh' }),
  hc(24410, 'pkcs8-pbkdf2-sha1', 'PKCS#8 Private Keys (PBKDF2-HMAC-SHA1 + 3DES/AES)', KEY, R`\$PEM\$1\$[1-4]\$${hex(16, 32)}\$(?<rounds>\d{1,8})\$${hex(16, 32)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { parse: parseIterated }),
  hc(24420, 'pkcs8-pbkdf2-sha256', 'PKCS#8 Private Keys (PBKDF2-HMAC-SHA256 + 3DES/AES)', KEY, R`\$PEM\$2\$[1-4]\$${hex(16, 32)}\$(?<rounds>\d{1,8})\$${hex(16, 32)}\$\d{1,6}\$${hex(64, 16384)}`, 3, { parse: parseIterated }),
  hc(15500, 'jks-private-key', 'JKS Java Key Store Private Keys (SHA1)', KEY, R`\$jksprivk\$\*${hex(40)}\*${hex(40)}\*${rest(64, 16384)}`, 3, { john: 'keystore' }),

  // ---- Cryptocurrency wallets ----
  hc(11300, 'bitcoin-wallet', 'Bitcoin/Litecoin wallet.dat', WALLET, R`\$bitcoin\$\d{1,3}\$${hex(32, 256)}\$\d{1,3}\$${hex(16, 64)}\$(?<rounds>\d{1,8})\$${rest(2, 4096)}`, 10, { john: 'bitcoin', parse: parseIterated }),
  hc(12700, 'blockchain-wallet', 'Blockchain, My Wallet', WALLET, R`\$blockchain\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'blockchain' }),
  hc(15200, 'blockchain-wallet-v2', 'Blockchain, My Wallet, V2', WALLET, R`\$blockchain\$v2\$(?<rounds>\d{1,8})\$\d{1,6}\$${hex(64, 16384)}`, 3, { john: 'blockchain', parse: parseIterated }),
  hc(18800, 'blockchain-second-password', 'Blockchain, My Wallet, Second Password (SHA256)', WALLET, R`${b64(76, 80)}={0,2}`, 0.5, { signature: false }),
  hc(15600, 'ethereum-pbkdf2', 'Ethereum Wallet, PBKDF2-HMAC-SHA256', WALLET, R`\$ethereum\$p\*(?<rounds>\d{1,8})\*${hex(32, 64)}\*${hex(64)}\*${hex(64)}`, 5, { john: 'ethereum', parse: parseIterated }),
  hc(15700, 'ethereum-scrypt', 'Ethereum Wallet, SCRYPT', WALLET, R`\$ethereum\$s\*(?<N>\d{1,8})\*(?<r>\d{1,3})\*(?<p>\d{1,3})\*${hex(64)}\*${hex(64)}\*${hex(64)}`, 5, { john: 'ethereum', parse: groupParams }),
  hc(16300, 'ethereum-presale', 'Ethereum Pre-Sale Wallet, PBKDF2-HMAC-SHA256', WALLET, R`\$ethereum\$w\*${hex(64, 4096)}\*${hex(40)}\*${hex(32)}`, 2, { john: 'ethereum' }),
  hc(16600, 'electrum-1-3', 'Electrum Wallet (Salt-Type 1-3)', WALLET, R`\$electrum\$[1-3]\*${hex(32)}\*${hex(32)}`, 3, { john: 'electrum' }),
  hc(21700, 'electrum-4', 'Electrum Wallet (Salt-Type 4)', WALLET, R`\$electrum\$4\*${hex(66)}\*${hex(64, 8192)}\*${hex(64)}`, 2, { john: 'electrum' }),
  hc(21800, 'electrum-5', 'Electrum Wallet (Salt-Type 5)', WALLET, R`\$electrum\$5\*${hex(66)}\*${hex(64, 8192)}\*${hex(64)}`, 2, { john: 'electrum' }),
  hc(22500, 'multibit-classic-key', 'MultiBit Classic .key (MD5)', WALLET, R`\$multibit\$1\*${hex(16)}\*${hex(64)}`, 2, { john: 'multibit' }),
  hc(22700, 'multibit-hd', 'MultiBit HD (scrypt)', WALLET, R`\$multibit\$2\*${hex(32)}\*${hex(32)}\*${hex(32)}`, 2, { john: 'multibit' }),
  hc(27700, 'multibit-classic-wallet', 'MultiBit Classic .wallet (scrypt)', WALLET, R`\$multibit\$3\*(?<N>\d{1,8})\*(?<r>\d{1,3})\*(?<p>\d{1,3})\*${hex(16)}\*${hex(64)}`, 2, { parse: groupParams }),
  hc(25500, 'stellar-xlm', 'Stargazer Stellar Wallet XLM', WALLET, R`\$stellar\$${b64p(22, 24)}\$${b64p(16)}\$${b64p(64, 256)}`, 1),
  hc(26600, 'metamask', 'MetaMask Wallet (needs all data, checks AES-GCM tag)', WALLET, R`\$metamask\$${b64p(43, 44)}\$${b64p(22, 24)}\$${b64p(100, 16384)}`, 5),
  hc(26610, 'metamask-short', 'MetaMask Wallet (short hash, plaintext check)', WALLET, R`\$metamask-short\$${b64p(43, 44)}\$${b64p(22, 24)}\$${b64p(43, 128)}`, 4),
  hc(31900, 'metamask-mobile', 'MetaMask Mobile Wallet', WALLET, R`\$metamaskMobile\$${b64p(22, 24)}\$${hex(32)}\$${b64p(20, 16384)}`, 2),
  hc(28200, 'exodus-wallet', 'Exodus Desktop Wallet (scrypt)', WALLET, R`EXODUS:(?<N>\d{1,8}):(?<r>\d{1,3}):(?<p>\d{1,3}):${b64p(43, 44)}:${b64p(16, 24)}:${b64p(43, 44)}:${b64p(22, 24)}`, 2, { parse: groupParams }),
  hc(29800, 'bisq-wallet', 'Bisq .wallet (scrypt)', WALLET, R`\$bisq\$3\*(?<N>\d{1,8})\*(?<r>\d{1,3})\*(?<p>\d{1,3})\*${hex(16)}\*${hex(64)}`, 1, { parse: groupParams }),
  hc(32500, 'dogechain-wallet', 'Dogechain.info Wallet', WALLET, R`\$dogechain\$0\*(?<rounds>\d{1,8})\*${b64p(64, 4096)}\*${b64p(22, 24)}`, 1, { parse: parseIterated }),
  hc(29600, 'terra-station-wallet', 'Terra Station Wallet (AES256-CBC(PBKDF2($pass)))', WALLET, R`${lhex(64)}${b64p(100, 120)}`, 1, { signature: true }),

  hc(28501, 'bitcoin-address-p2pkh', 'Bitcoin WIF private key (P2PKH), compressed', WALLET, R`1[1-9A-HJ-NP-Za-km-z]{25,33}`, 4, {
    description: 'Bitcoin P2PKH address (base58, 1…): hashcat cracks the private key behind it, WIF or raw, compressed or not',
    variants: [variant(28502, 'Bitcoin WIF private key (P2PKH), uncompressed'), variant(30901, 'Bitcoin raw private key (P2PKH), compressed'), variant(30902, 'Bitcoin raw private key (P2PKH), uncompressed')],
  }),
  hc(28505, 'bitcoin-address-p2sh-p2wpkh', 'Bitcoin WIF private key (P2SH(P2WPKH)), compressed', WALLET, R`3[1-9A-HJ-NP-Za-km-z]{25,33}`, 4, {
    description: 'Bitcoin P2SH-wrapped SegWit address (base58, 3…): hashcat cracks the private key behind it',
    variants: [variant(28506, 'Bitcoin WIF private key (P2SH(P2WPKH)), uncompressed'), variant(30905, 'Bitcoin raw private key (P2SH(P2WPKH)), compressed'), variant(30906, 'Bitcoin raw private key (P2SH(P2WPKH)), uncompressed')],
  }),
  hc(28503, 'bitcoin-address-p2wpkh', 'Bitcoin WIF private key (P2WPKH, Bech32), compressed', WALLET, R`bc1q[02-9ac-hj-np-z]{38}`, 4, {
    signature: true,
    description: 'Bitcoin native SegWit address (Bech32, bc1q…): hashcat cracks the private key behind it',
    variants: [variant(28504, 'Bitcoin WIF private key (P2WPKH, Bech32), uncompressed'), variant(30903, 'Bitcoin raw private key (P2WPKH, Bech32), compressed'), variant(30904, 'Bitcoin raw private key (P2WPKH, Bech32), uncompressed')],
  }),

  // ---- Instant messaging, one-time passwords, generic ciphers ----
  hc(22301, 'telegram-mobile-passcode', 'Telegram Mobile App Passcode (SHA256)', IM, R`\$telegram\$0\*${hex(64)}\*${hex(32, 512)}`, 3),
  hc(22600, 'telegram-desktop-old', 'Telegram Desktop < v2.1.14 (PBKDF2-HMAC-SHA1)', IM, R`\$telegram\$1\*(?<rounds>\d{1,8})\*${hex(64)}\*${hex(64, 2048)}`, 2, { parse: parseIterated }),
  hc(24500, 'telegram-desktop', 'Telegram Desktop >= v2.1.14 (PBKDF2-HMAC-SHA512)', IM, R`\$telegram\$2\*(?<rounds>\d{1,8})\*${hex(64)}\*${hex(64, 2048)}`, 2, { parse: parseIterated }),
  hc(28300, 'teamspeak3-channel', 'Teamspeak 3 (channel hash)', IM, R`\$teamspeak\$3\$${b64p(27, 28)}\$${b64p(8, 1024)}`, 1),
  hc(29200, 'radmin3', 'Radmin3', EAS, R`\$radmin3\$${hex(2, 128)}\*${hex(64)}\*${hex(512)}`, 1),
  hc(18100, 'totp-hmac-sha1', 'TOTP (HMAC-SHA1)', OTP, R`\d{6,8}:\d{1,20}`, 2, { signature: true }),
  hc(10100, 'siphash', 'SipHash', RAW, R`${hex(16)}:2:4:${hex(32)}`, 2, { signature: true }),
  hc(15400, 'chacha20', 'ChaCha20', CIPHER, R`\$chacha20\$\*${hex(16)}\*\d{1,5}\*${hex(16)}\*${hex(16)}\*${hex(16)}`, 1),
  hc(33500, 'rc4-40-dropn', 'RC4 40-bit DropN', CIPHER, R`\$rc4\$40\$\d{1,6}\$${hex(2, 512)}\$\d{1,6}\$${hex(10)}`, 1),
  hc(33501, 'rc4-72-dropn', 'RC4 72-bit DropN', CIPHER, R`\$rc4\$72\$\d{1,6}\$${hex(2, 512)}\$\d{1,6}\$${hex(10)}`, 1),
  hc(33502, 'rc4-104-dropn', 'RC4 104-bit DropN', CIPHER, R`\$rc4\$104\$\d{1,6}\$${hex(2, 512)}\$\d{1,6}\$${hex(10)}`, 1),
  hc(32700, 'kremlin-encrypt', 'Kremlin Encrypt 3.0 w/NewDES', CIPHER, R`\$kgb\$${hex(16)}\$${hex(40)}`, 1),
  hc(32000, 'netiq-sspr-md5', 'NetIQ SSPR (MD5)', EAS, R`\$sspr\$0\$(?<rounds>\d{1,8})\$NONE\$${hex(32)}`, 2, { parse: parseIterated }),
  hc(32010, 'netiq-sspr-sha1', 'NetIQ SSPR (SHA1)', EAS, R`\$sspr\$1\$(?<rounds>\d{1,8})\$NONE\$${hex(40)}`, 2, { parse: parseIterated }),
  hc(32020, 'netiq-sspr-salted-sha1', 'NetIQ SSPR (SHA-1 with Salt)', EAS, R`\$sspr\$2\$(?<rounds>\d{1,8})\$[^$\s]{1,128}\$${hex(40)}`, 2, { parse: parseIterated }),
  hc(32030, 'netiq-sspr-salted-sha256', 'NetIQ SSPR (SHA-256 with Salt)', EAS, R`\$sspr\$3\$(?<rounds>\d{1,8})\$[^$\s]{1,128}\$${hex(64)}`, 2, { parse: parseIterated }),
  hc(32031, 'adobe-aem-sha256', 'Adobe AEM (SSPR, SHA-256 with Salt)', EAS, R`\$sspr\$3\$(?<rounds>\d{1,8})\$${hex(16)}\$${hex(64)}`, 2.5, { parse: parseIterated }),
  hc(32040, 'netiq-sspr-salted-sha512', 'NetIQ SSPR (SHA-512 with Salt)', EAS, R`\$sspr\$4\$(?<rounds>\d{1,8})\$[^$\s]{1,128}\$${hex(128)}`, 2, { parse: parseIterated }),
  hc(32041, 'adobe-aem-sha512', 'Adobe AEM (SSPR, SHA-512 with Salt)', EAS, R`\$sspr\$4\$(?<rounds>\d{1,8})\$${hex(16)}\$${hex(128)}`, 2.5, { parse: parseIterated }),
  hc(32050, 'netiq-sspr-pbkdf2-sha1', 'NetIQ SSPR (PBKDF2WithHmacSHA1)', EAS, R`\$pbkdf2-hmac-sha1\$(?<rounds>\d{1,8})\$${hex(2, 128)}\$${hex(40)}`, 2, { parse: parseIterated }),
  hc(32070, 'netiq-sspr-pbkdf2-sha512', 'NetIQ SSPR (PBKDF2WithHmacSHA512)', EAS, R`\$pbkdf2-hmac-sha512\$(?<rounds>\d{1,8})\.${hex(2, 128)}\.${hex(128)}`, 2, { parse: parseIterated }),
  hc(21500, 'solarwinds-orion', 'SolarWinds Orion', EAS, R`\$solarwinds\$0\$[^$\s]{1,128}\$${b64p(86, 88)}`, 2),
  hc(21501, 'solarwinds-orion-v2', 'SolarWinds Orion v2', EAS, R`\$solarwinds\$1\$${b64p(22, 24)}\$${b64p(86, 88)}`, 2),
  hc(600, 'blake2b-512-hashcat', 'BLAKE2b-512', RAW, R`\$BLAKE2\$${hex(128)}`, 30, { john: 'raw-blake2', description: 'BLAKE2b-512 in hashcat\'s $BLAKE2$hex form' }),
  sameSyntax([
    hc(610, 'blake2b-512-pass-salt', 'BLAKE2b-512($pass.$salt)', SALTED, R`\$BLAKE2\$${hex(128)}:${SALT}`, 3),
    hc(620, 'blake2b-512-salt-pass', 'BLAKE2b-512($salt.$pass)', SALTED, R`\$BLAKE2\$${hex(128)}:${SALT}`, 3),
  ]),
  hc(31000, 'blake2s-256-hashcat', 'BLAKE2s-256', RAW, R`\$BLAKE2\$${hex(64)}`, 10, { description: 'BLAKE2s-256 in hashcat\'s $BLAKE2$hex form' }),

  // ---- Digests inside the wrappers people copy from real tools (bare base64 and colon-hex
  // forms of every registry digest are generated from the registry: see encoded.ts) ----
  // Subresource Integrity (W3C SRI §3.1: sha256/384/512) and npm/yarn `integrity`, whose old
  // lockfiles still carry sha1-; Nix prints its SRI hashes the same way (`nix hash convert`).
  envelope('sha512', 'SHA-512 (SRI / npm integrity)', 'sri', R`sha512-(?<payload>${b64(86)}(?:==)?)`, 300, 'Subresource Integrity / npm and yarn `integrity`: sha512- + base64 SHA-512 (W3C SRI); verify checks the digest of the input', { parse: base64Payload(64) }),
  envelope('sha384', 'SHA-384 (SRI)', 'sri', R`sha384-(?<payload>${b64(64)})`, 200, 'Subresource Integrity (W3C SRI, <script integrity>): sha384- + base64 SHA-384; verify checks the digest of the input', { parse: base64Payload(48) }),
  envelope('sha256', 'SHA-256 (SRI / Nix)', 'sri', R`sha256-(?<payload>${b64(43)}=?)`, 200, 'Subresource Integrity or a Nix SRI hash: sha256- + base64 SHA-256; verify checks the digest of the input (for Nix: the file, or the NAR of a path)', { parse: base64Payload(32) }),
  envelope('sha1', 'SHA-1 (npm integrity)', 'sri', R`sha1-(?<payload>${b64(27)}=?)`, 40, 'npm lockfile v1 `integrity` (or Nix SRI) with SHA-1: sha1- + base64', { parse: base64Payload(20) }),
  // OCI image spec descriptor.md "Digests": algorithm ":" encoded; sha256 and sha512 are the
  // registered algorithms, lowercase hex only. Nix also accepts sha256: + hex.
  envelope('sha256', 'SHA-256 (OCI/Docker digest)', 'oci-digest', R`sha256:${lhex(64)}`, 300, 'OCI/Docker content digest (image-spec descriptor.md): sha256: + hex of the blob or manifest; verify checks the digest of the input'),
  envelope('sha512', 'SHA-512 (OCI digest)', 'oci-digest', R`sha512:${lhex(128)}`, 20, 'OCI content digest with SHA-512 (image-spec descriptor.md); verify checks the digest of the input'),
  // Nix base32 (libutil hash.cc): alphabet 0-9a-z without e o t u, bytes read from the end; the
  // first character carries the top bits, which for 256 bits leave only 0 or 1.
  envelope('sha256', 'SHA-256 (Nix base32)', 'nix-base32', R`sha256:[01]${nix32(51)}`, 100, 'Nix hash: sha256: + Nix base32 (nix-hash --type sha256 --base32, nix hash convert --to nix32); verify checks the digest of the input (a file, or the NAR of a path)'),
  envelope('sha512', 'SHA-512 (Nix base32)', 'nix-base32', R`sha512:[0-3]${nix32(102)}`, 10, 'Nix hash: sha512: + Nix base32; verify checks the digest of the input'),
  envelope('sha1', 'SHA-1 (Nix base32)', 'nix-base32', R`sha1:${nix32(32)}`, 10, 'Nix hash: sha1: + Nix base32; verify checks the digest of the input'),
  envelope('md5', 'MD5 (Nix base32)', 'nix-base32', R`md5:[0-3]${nix32(25)}`, 5, 'Nix hash: md5: + Nix base32; verify checks the digest of the input'),
  envelope('sha256', 'SHA-256 (bare Nix base32)', 'nix-base32', R`[01]${nix32(51)}`, 20, 'Nix base32 SHA-256 without its sha256: prefix, as older Nix expressions write it (sha256 = "…"); verify checks the digest of the input', { signature: false }),
  // OpenSSH key fingerprints (ssh-keygen -l; sshkey.c fingerprint_b64 and fingerprint_hex).
  envelope('sha256', 'SHA-256 (OpenSSH fingerprint)', 'openssh-fingerprint', R`SHA256:(?<payload>${b64(43)})`, 300, 'OpenSSH key fingerprint (ssh-keygen -l): SHA256: + unpadded base64 of the SHA-256 of the key blob; verify checks the digest of the input (the key blob: the base64 field of the .pub line, decoded)', { parse: base64Payload(32) }),
  envelope('md5', 'MD5 (OpenSSH legacy fingerprint)', 'openssh-fingerprint', R`MD5:${colonHexPattern(16)}`, 60, 'Legacy OpenSSH key fingerprint (ssh-keygen -l -E md5): MD5: + colon-separated hex; verify checks the digest of the input (the key blob)'),
  // Go's go.sum h1: hash (golang.org/x/mod/sumdb/dirhash Hash1): SHA-256 of a summary that
  // lists every file of the module with its own SHA-256, so no single input verifies it.
  envelope('sha256', 'SHA-256 (go.sum h1:)', 'go-sum-h1', R`h1:(?<payload>${b64(43)}=)`, 100, 'Go modules go.sum hash (h1:): base64 SHA-256 of the dirhash summary of the module\'s files', {
    parse: base64Payload(32), unverifiable: 'a go.sum h1: hash is the SHA-256 of a summary listing every file of the module with its own SHA-256 (dirhash Hash1), not the digest of one input',
  }),
  // git object ids (git hash-object): sha1 or, in SHA-256 repositories, sha256 of
  // "<type> <size>\0" + content. They look exactly like bare digests: ranked below the bare
  // digest of the same length and below the digests the tests require in the top 5.
  envelope('sha1', 'Git object id (SHA-1)', 'git-object-id', lhex(40), 25, 'git object id (commit, tree, blob or tag): SHA-1 of "<type> <size>\\0" + content, lowercase hex', {
    signature: false, unverifiable: 'a git object id hashes "<type> <size>\\0" + content, and the id does not say which object type it is; ask /api/verify for the bare sha1 of that exact byte string instead',
  }),
  envelope('sha256', 'Git object id (SHA-256)', 'git-object-id', lhex(64), 2, 'git object id in a SHA-256 repository (git init --object-format=sha256), lowercase hex', {
    signature: false, unverifiable: 'a git object id hashes "<type> <size>\\0" + content, and the id does not say which object type it is; ask /api/verify for the bare sha256 of that exact byte string instead',
  }),
  // Amazon S3 multipart upload ETag: md5 of the concatenated binary md5s of the parts, then
  // "-" and the number of parts (1 to 10,000).
  envelope('md5', 'MD5 (S3 multipart ETag)', 's3-multipart-etag', R`${lhex(32)}-[1-9]\d{0,4}`, 50, 'Amazon S3 multipart-upload ETag: MD5 of the concatenated MD5s of the parts, then - and the part count', {
    signature: true, unverifiable: 'an S3 multipart ETag is the MD5 of the parts\' MD5s, and the part boundaries are not in the string',
  }),

  hc(14700, 'itunes-backup-9', 'iTunes backup < 10.0', FBE, R`\$itunes_backup\$\*9\*${hex(80)}\*(?<rounds>\d{1,8})\*${hex(40)}\*\*`, 4, { john: 'itunes-backup', parse: parseIterated }),
  hc(14800, 'itunes-backup-10', 'iTunes backup >= 10.0', FBE, R`\$itunes_backup\$\*10\*${hex(80)}\*(?<rounds>\d{1,8})\*${hex(40)}\*\d{1,8}\*${hex(40)}`, 5, { john: 'itunes-backup', parse: parseIterated }),
  hc(18900, 'android-backup', 'Android Backup', FBE, R`\$ab\$[1-5]\*[01]\*(?<rounds>\d{1,8})\*${hex(128)}\*${hex(128)}\*${hex(32)}\*${hex(192)}`, 3, { parse: parseIterated }),
  cryptVolume('truecrypt', 'TrueCrypt', 29300, [['RIPEMD160'], ['SHA512'], ['Whirlpool'], ['RIPEMD160', true]], 0),
  cryptVolume('veracrypt', 'VeraCrypt', 29400, [['RIPEMD160'], ['SHA512'], ['Whirlpool'], ['RIPEMD160', true], ['SHA256'], ['SHA256', true], ['Streebog-512'], ['Streebog-512', true]], 1),
]

// Every registry digest in base64/base64url and colon hex, ranked by the hex rows above.
formatSpecs.push(...encodedDigestRows(formatSpecs))

/**
 * TrueCrypt and VeraCrypt volume headers: hashcat's 293xx/294xx modes share one syntax
 * ($truecrypt$salt$header) and differ in the PRF (second-to-last digit) and the XTS key size
 * (last digit: 512, 1024 or 1536 bits), which the string does not reveal. One row per tool,
 * the others as variants; the primary is each tool's default (AES, XTS 512, RIPEMD-160 for
 * TrueCrypt, SHA-512 for VeraCrypt).
 */
function cryptVolume(tag: string, tool: string, base: number, prfs: Array<[string, boolean?]>, primaryPrf: number): FormatSpec {
  const modes = prfs.flatMap(([prf, bootMode], index) => [1, 2, 3].map((xts) => ({
    hashcat: base + (index + 1) * 10 + xts,
    displayName: `${tool} ${prf} + XTS ${512 * xts} bit${bootMode ? ' + boot-mode' : ''}`,
  })))
  const primary = modes[primaryPrf * 3]!
  return hc(primary.hashcat, tag, primary.displayName, FDE, R`\$${tag}\$${hex(128)}\$${hex(896)}(?:\$[^$\s]{1,256})?`, 10, {
    ...(tag === 'truecrypt' ? { john: 'tc_aes_xts' } : {}),
    description: `${tool} volume header (salt and encrypted header); the PRF and cipher cascade are not visible, so every ${base + 11}–${base + prfs.length * 10 + 3} mode is a candidate`,
    variants: modes.filter((mode) => mode !== primary),
  })
}

/** The crypt(3) scheme inside an LDAP {CRYPT} value, by its prefix. */
function cryptSchemeOf(crypt: string): string {
  const id = /^\$([^$]{1,16})\$/.exec(crypt)?.[1]
  switch (id) {
    case '1': return 'md5-crypt'
    case '5': return 'sha256-crypt'
    case '6': return 'sha512-crypt'
    case 'y': return 'yescrypt'
    case 'gy': return 'gost-yescrypt'
    case '2a': case '2b': case '2y': return 'bcrypt'
    case 'apr1': return 'apr1'
    default: return crypt.startsWith('_') ? 'bsdi-crypt' : crypt.length === 13 ? 'des-crypt' : 'unknown'
  }
}
