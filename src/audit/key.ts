/**
 * The audit key: the one secret the audit log is written under. Every MAC the log holds comes from
 * `AuditKey.mac`, so the source of the secret is one seam: today a file (`AUDIT_KEY=/path`), later
 * an object in a PKCS#11 token (`AUDIT_KEY=pkcs11:…`, RFC 7512), whose `mac` is a `C_Sign` with
 * CKM_SHA256_HMAC and which never hands hashd the value.
 *
 * Each use of the key is domain-separated by a label (RFC 2104's HMAC over `label NUL data`), so a
 * MAC made for one use can never stand for another: an input a client sends that happens to be the
 * bytes of a line cannot have its input MAC (which the log shows) taken for that line's MAC.
 *
 * The file holds the secret in base64 (standard or URL alphabet, padding optional), alone on its
 * first non-comment line (`#` starts a comment line): at least 32 bytes (HMAC-SHA-256's block
 * size's half, RFC 2104 §3 "L bytes"), at most 1024. `openssl rand -base64 32 > audit.key` makes one.
 */
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { AUDIT_PKCS11_NOT_YET, ConfigError } from '../config.js'

export interface AuditKey {
  /** A name for the key that does not reveal it (a MAC of a fixed label), written in start and checkpoint lines. */
  readonly id: string
  /** HMAC-SHA-256 of `data` under the key. */
  mac(data: Uint8Array): Promise<Uint8Array>
}

/** How every MAC of the log is written, as Vault's audit device writes its HMACed fields. */
export const MAC_PREFIX = 'hmac-sha256:'

export const AUDIT_KEY_MIN_BYTES = 32
export const AUDIT_KEY_MAX_BYTES = 1024

/** What each MAC of the log is for (the label before the NUL). */
export type MacUse = 'line' | 'input' | 'checkpoint' | 'key-id'

export function labelled(use: MacUse, data: Uint8Array | string): Uint8Array {
  return Buffer.concat([Buffer.from(`hashd-audit-${use}\0`, 'latin1'), typeof data === 'string' ? Buffer.from(data, 'utf8') : data])
}

export async function macHex(key: AuditKey, use: MacUse, data: Uint8Array | string): Promise<string> {
  return Buffer.from(await key.mac(labelled(use, data))).toString('hex')
}

/** A key held in memory, read from a file. */
class SecretAuditKey implements AuditKey {
  readonly id: string
  readonly #secret: Buffer

  constructor(secret: Buffer) {
    this.#secret = secret
    this.id = `sha256:${createHmac('sha256', secret).update(labelled('key-id', '')).digest('hex').slice(0, 16)}`
  }

  async mac(data: Uint8Array): Promise<Uint8Array> {
    return createHmac('sha256', this.#secret).update(data).digest()
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

/**
 * The key AUDIT_KEY names. A `pkcs11:` URI is refused with a ConfigError until the token source
 * exists, rather than being read as a file name.
 */
export function loadAuditKey(source: string, variable = 'AUDIT_KEY'): AuditKey {
  if (isPkcs11Uri(source)) throw new ConfigError(AUDIT_PKCS11_NOT_YET)
  let text: string
  try {
    text = readFileSync(source, 'utf8')
  } catch (error) {
    throw new ConfigError(`${variable}: cannot read ${source} (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  return new SecretAuditKey(parseAuditKeyFile(text, `${variable} (${source})`))
}
