/**
 * The audit key: the one secret the audit log is written under. Every MAC the log holds comes from
 * `AuditKey.mac`, so the source of the secret is one seam: a file (`AUDIT_KEY=/path`), or an
 * object in a PKCS#11 token (`AUDIT_KEY=pkcs11:…`, RFC 7512, in the token of PKCS11_MODULE), whose
 * `mac` is a `C_Sign` with CKM_SHA256_HMAC and which never hands hashd the value. A token key is
 * opened with `openAuditKey` (its id is a MAC, made by the token); while the token is away its MACs
 * fail, and with AUDIT_FAIL=closed keyed operations answer 503 until it is back.
 *
 * Each use of the key is domain-separated by a label (RFC 2104's HMAC over `label NUL data`), so a
 * MAC made for one use can never stand for another: an input a client sends that happens to be the
 * bytes of a line cannot have its input MAC (which the log shows) taken for that line's MAC.
 *
 * The file holds the secret in base64 (standard or URL alphabet, padding optional), alone on its
 * first non-comment line (`#` starts a comment line): at least 32 bytes (HMAC-SHA-256's block
 * size's half, RFC 2104 §3 "L bytes"), at most 1024. `openssl rand -base64 32 > audit.key` makes one.
 */
import { readFileSync } from 'node:fs'
import { prepareHmac, type PreparedHmac } from '../algorithms/hmac.js'
import { digestNamed } from '../algorithms/registry.js'
import { ConfigError } from '../config.js'
import { CKM } from '../keys/pkcs11/binding.js'
import { Pkcs11Token } from '../keys/pkcs11/token.js'
import { parsePkcs11Uri, Pkcs11UriError, type Pkcs11Uri } from '../keys/pkcs11/uri.js'

export interface AuditKey {
  /** A name for the key that does not reveal it (a MAC of a fixed label), written in start and checkpoint lines. */
  readonly id: string
  /** HMAC-SHA-256 of `data` under the key. */
  mac(data: Uint8Array): Promise<Uint8Array>
  /**
   * The same MAC in hex, made at once, for a key held in memory: a line costs no promise and no
   * HMAC object (the prepared HMAC of algorithms/hmac.ts). Absent for a key in a token, whose MAC is
   * a call to the token made off the event loop.
   */
  readonly macHexNow?: (data: Uint8Array) => string
}

/** How every MAC of the log is written, as Vault's audit device writes its HMACed fields. */
export const MAC_PREFIX = 'hmac-sha256:'

export const AUDIT_KEY_MIN_BYTES = 32
export const AUDIT_KEY_MAX_BYTES = 1024

/** What each MAC of the log is for (the label before the NUL). */
export type MacUse = 'line' | 'input' | 'checkpoint' | 'key-id'

const LABELS: Readonly<Record<MacUse, Buffer>> = {
  line: Buffer.from('hashd-audit-line\0', 'latin1'),
  input: Buffer.from('hashd-audit-input\0', 'latin1'),
  checkpoint: Buffer.from('hashd-audit-checkpoint\0', 'latin1'),
  'key-id': Buffer.from('hashd-audit-key-id\0', 'latin1'),
}

export function labelled(use: MacUse, data: Uint8Array | string): Uint8Array {
  const label = LABELS[use]
  if (typeof data !== 'string') return Buffer.concat([label, data])
  // The label and the text's UTF-8 in one buffer, with no second copy of the text.
  const bytes = Buffer.allocUnsafe(label.length + Buffer.byteLength(data, 'utf8'))
  label.copy(bytes)
  bytes.write(data, label.length, 'utf8')
  return bytes
}

/** The MAC of `data` for `use`, in hex: a string at once for a key in memory, a promise for a key in a token. */
export function macHex(key: AuditKey, use: MacUse, data: Uint8Array | string): string | Promise<string> {
  const bytes = labelled(use, data)
  if (key.macHexNow) return key.macHexNow(bytes)
  return key.mac(bytes).then((mac) => Buffer.from(mac).toString('hex'))
}

/** A key held in memory, read from a file: HMAC-SHA-256 with its key blocks prepared once (algorithms/hmac.ts). */
class SecretAuditKey implements AuditKey {
  readonly id: string
  readonly #prepared: PreparedHmac
  readonly macHexNow: (data: Uint8Array) => string

  constructor(secret: Buffer) {
    this.#prepared = prepareHmac(digestNamed('sha256'), secret)!
    secret.fill(0)
    this.macHexNow = (data) => this.#prepared.text(data, 'hex')
    this.id = `sha256:${this.macHexNow(labelled('key-id', '')).slice(0, 16)}`
  }

  async mac(data: Uint8Array): Promise<Uint8Array> {
    return this.#prepared.mac(data)
  }
}

/** A key in a PKCS#11 token: each MAC is a C_Sign with CKM_SHA256_HMAC. */
class TokenAuditKey implements AuditKey {
  id = ''
  readonly #uri: Pkcs11Uri
  readonly #token: Pkcs11Token

  constructor(uri: Pkcs11Uri, token: Pkcs11Token) {
    this.#uri = uri
    this.#token = token
  }

  mac(data: Uint8Array): Promise<Uint8Array> {
    return this.#token.withKey(this.#uri, (module, session, key) => module.sign(session, CKM.SHA256_HMAC, key, data, 32))
  }
}

/** The secret in a key file's text (see the format above); the messages never quote it. */
export function parseAuditKeyFile(text: string, where: string): Buffer {
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
  if (lines.length !== 1) throw new ConfigError(`${where} must hold one line of base64 (the audit key), found ${lines.length} lines that are not comments`)
  const encoded = lines[0]!
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw new ConfigError(`${where} is not base64 (make one with: openssl rand -base64 32)`)
  const secret = Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
  if (secret.length < AUDIT_KEY_MIN_BYTES) throw new ConfigError(`${where} holds ${secret.length} bytes; an audit key must have at least ${AUDIT_KEY_MIN_BYTES} (openssl rand -base64 32)`)
  if (secret.length > AUDIT_KEY_MAX_BYTES) throw new ConfigError(`${where} holds ${secret.length} bytes; an audit key has at most ${AUDIT_KEY_MAX_BYTES}`)
  return secret
}

/** A key from its bytes (tests and tools). */
export function auditKeyFromSecret(secret: Uint8Array): AuditKey {
  if (secret.length < AUDIT_KEY_MIN_BYTES) throw new ConfigError(`an audit key must have at least ${AUDIT_KEY_MIN_BYTES} bytes`)
  return new SecretAuditKey(Buffer.from(secret))
}

/** Whether AUDIT_KEY names a PKCS#11 object (RFC 7512) rather than a file. */
export function isPkcs11Uri(source: string): boolean {
  return /^pkcs11:/i.test(source.trim())
}

/** Why a `pkcs11:` audit key cannot be opened without a token. */
const NEEDS_TOKEN = 'names a key in a PKCS#11 token (pkcs11:…): set PKCS11_MODULE and PKCS11_PIN_FILE too'

/**
 * The key AUDIT_KEY names, from a file. A `pkcs11:` URI is never read as a file name: it takes
 * `openAuditKey`, with a token.
 */
export function loadAuditKey(source: string, variable = 'AUDIT_KEY'): AuditKey {
  if (isPkcs11Uri(source)) throw new ConfigError(`${variable} ${NEEDS_TOKEN}`)
  let text: string
  try {
    text = readFileSync(source, 'utf8')
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${source} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  return new SecretAuditKey(parseAuditKeyFile(text, `${variable} (${source})`))
}

/**
 * The key AUDIT_KEY names: a file, or a `pkcs11:` URI in `token` (the key ring's, or one the tools
 * open from PKCS11_MODULE and PKCS11_PIN_FILE). A token key's id is its MAC of the id label, made
 * now: a token that cannot make it is a ConfigError (the log does not start without its key).
 */
export async function openAuditKey(source: string, token: Pkcs11Token | null, variable = 'AUDIT_KEY'): Promise<AuditKey> {
  if (!isPkcs11Uri(source)) return loadAuditKey(source, variable)
  if (token === null) throw new ConfigError(`${variable} ${NEEDS_TOKEN}`)
  let uri: Pkcs11Uri
  try {
    uri = parsePkcs11Uri(source.trim())
    token.register(uri)
  } catch (error) {
    if (error instanceof Pkcs11UriError) throw new ConfigError(`${variable} is not a PKCS#11 URI hashd takes (RFC 7512): ${error.message}`)
    throw error
  }
  const key = new TokenAuditKey(uri, token)
  try {
    key.id = `sha256:${Buffer.from(await key.mac(labelled('key-id', ''))).toString('hex').slice(0, 16)}`
  } catch (error) {
    throw new ConfigError(`${variable}: the audit key in the PKCS#11 token cannot be used: ${(error as Error).message}`)
  }
  return key
}

/** The token of PKCS11_MODULE and PKCS11_PIN_FILE for a tool (audit:verify, audit:hash), or null without them. */
export function toolToken(env: NodeJS.ProcessEnv = process.env): Pkcs11Token | null {
  const modulePath = env.PKCS11_MODULE?.trim()
  const pinFile = env.PKCS11_PIN_FILE?.trim()
  if (!modulePath || !pinFile) return null
  return new Pkcs11Token({ modulePath, pinFile, sessions: 1, queueMax: 1024 })
}
