/**
 * The key ring: every secret hashd holds, each kind from its own keys file, all through one
 * loader (file.ts), one model of versions and states (ring.ts) and one reload mechanism
 * (file-reload.ts: when the file changes on disk, Kubernetes' `..data` symlink swap included, and
 * on SIGHUP; a file that fails to load keeps the keys in force and shows in the logs, the metrics
 * and /api/health). The pepper (passwords), the named HMAC keys and the API keys read from here;
 * none of them reads or watches a file itself.
 *
 * Log lines about keys name files, key names, ids, versions and counts; never a secret.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { reloadable, type Reloadable } from '../file-reload.js'
import { readKeysFile, type ApiKey } from './api-keys.js'
import { readHmacKeysFile, type HmacKeyring } from './hmac.js'
import { readPepperKeysFile, type PepperKeyring } from './pepper.js'
import { Pkcs11Token } from './pkcs11/token.js'

export type { ApiKey } from './api-keys.js'
export type { HmacKey, HmacKeyring, HmacSecret } from './hmac.js'
export type { PepperKeyring } from './pepper.js'

/** What the load and reload lines say of each kind: names, versions, states. */
function describePepper(file: string) {
  return (keyring: PepperKeyring) => ({
    keysFile: file,
    keys: keyring.ring.versions.length,
    keyIds: keyring.ids,
    currentKey: keyring.current.id,
    ...(keyring.ring.versions.some((version) => version.state === 'staged' || version.state === 'retired')
      ? { states: Object.fromEntries(keyring.ring.versions.map((version) => [version.id, version.state])) }
      : {}),
  })
}

function describeHmac(file: string) {
  return (keyring: HmacKeyring) => ({ keysFile: file, keys: keyring.names.length, currentVersions: keyring.toJSON() })
}

/** A key file's new value in force (a reload), as the audit log records it: names, versions, counts; never a secret. */
export interface KeyRingChange {
  source: 'api-keys' | 'pepper-keys' | 'hmac-keys'
  summary: Record<string, string | number>
}

function hmacSummary(keyring: HmacKeyring): Record<string, string | number> {
  return { keys: keyring.names.length, currentVersions: keyring.keys.map((key) => `${key.name}:${key.ring.current.ordinal}`).join(',') }
}

export class KeyRing {
  readonly #listeners: ((change: KeyRingChange) => void)[] = []
  /** PEPPER_KEYS_FILE, or null without it. */
  readonly pepper: Reloadable<PepperKeyring> | null
  /** HMAC_KEYS_FILE, or null without it. */
  readonly hmac: Reloadable<HmacKeyring> | null
  /** API_KEYS_FILE (hashes of the keys by sha256 hex), or null without it. */
  readonly apiKeys: Reloadable<Map<string, ApiKey>> | null
  /** The PKCS#11 token of PKCS11_MODULE that `pkcs11:` versions use, or null without one. */
  readonly pkcs11: Pkcs11Token | null

  /**
   * Loads every configured file now: a file that cannot be read or parsed at start is a
   * ConfigError naming the variable, file and line (the server does not start).
   */
  constructor(config: Pick<Config, 'pepperKeysFile' | 'hmacKeysFile' | 'apiKeysFile' | 'fileReloadPollMs' | 'pkcs11'>, log: FastifyBaseLogger) {
    const opened: Reloadable<unknown>[] = []
    const token = config.pkcs11 === null ? null : new Pkcs11Token({
      ...config.pkcs11,
      log: (level, fields, message) => { log[level](fields, message) },
    })
    this.pkcs11 = token
    try {
      const { pepperKeysFile, hmacKeysFile, apiKeysFile, fileReloadPollMs: pollMs } = config
      this.apiKeys = apiKeysFile === null ? null : reloadable({
        source: 'api-keys', what: 'API keys', files: [apiKeysFile], log, pollMs,
        load: () => readKeysFile(apiKeysFile), describe: (value) => ({ keysFile: apiKeysFile, keys: value.size }),
        swapped: (next) => { this.#changed('api-keys', { keys: next.size }) },
      })
      if (this.apiKeys) opened.push(this.apiKeys)
      this.pepper = pepperKeysFile === null ? null : reloadable({
        source: 'pepper-keys', what: 'pepper keys', files: [pepperKeysFile], log, pollMs,
        load: () => readPepperKeysFile(pepperKeysFile, token), describe: describePepper(pepperKeysFile),
        swapped: (next) => { this.#changed('pepper-keys', { keys: next.ring.versions.length, currentKey: next.current.id }) },
      })
      if (this.pepper) opened.push(this.pepper)
      this.hmac = hmacKeysFile === null ? null : reloadable({
        source: 'hmac-keys', what: 'HMAC keys', files: [hmacKeysFile], log, pollMs,
        load: () => readHmacKeysFile(hmacKeysFile, token), describe: describeHmac(hmacKeysFile),
        swapped: (next) => { this.#changed('hmac-keys', hmacSummary(next)) },
      })
    } catch (error) {
      for (const each of opened) each.close()
      throw error
    }
    if (this.apiKeys && config.apiKeysFile !== null) log.info({ keysFile: config.apiKeysFile, keys: this.apiKeys.value.size }, 'API keys loaded')
    if (this.pepper && config.pepperKeysFile !== null) log.info(describePepper(config.pepperKeysFile)(this.pepper.value), 'pepper keys loaded')
    if (this.hmac && config.hmacKeysFile !== null) log.info(describeHmac(config.hmacKeysFile)(this.hmac.value), 'HMAC keys loaded')
  }

  /** Calls `listener` after each reload that puts a new value in force (the audit log records them). */
  onChange(listener: (change: KeyRingChange) => void): void {
    this.#listeners.push(listener)
  }

  #changed(source: KeyRingChange['source'], summary: KeyRingChange['summary']): void {
    for (const listener of this.#listeners) listener({ source, summary })
  }

  /** Opens the PKCS#11 token, when there is one (a token that is away is the degraded state, not an error). */
  async start(): Promise<void> {
    await this.pkcs11?.start()
  }

  /** Stops watching the files and closes the PKCS#11 module once no call is in it. */
  async close(): Promise<void> {
    this.apiKeys?.close()
    this.pepper?.close()
    this.hmac?.close()
    await this.pkcs11?.close()
  }
}
