/**
 * What password operations need besides the worker pool: the pepper keys in force (reloadable on
 * SIGHUP) and the password policy. One instance per server, made by plugins/passwords.ts.
 */
import type { Config } from '../config.js'
import { readPepperKeysFile, type PepperKeyring } from './pepper-keys.js'
import { resolvePasswordPolicy, type PasswordPolicy } from './password-policy.js'

export class Passwords {
  readonly policy: PasswordPolicy
  readonly keysFile: string | null
  #keyring: PepperKeyring | null

  constructor(config: Pick<Config, 'pepperKeysFile' | 'passwordPolicy' | 'caps'>) {
    this.policy = resolvePasswordPolicy(config)
    this.keysFile = config.pepperKeysFile
    this.#keyring = this.keysFile === null ? null : readPepperKeysFile(this.keysFile)
  }

  /** The pepper keys in force, or null when PEPPER_KEYS_FILE is not set. */
  get keyring(): PepperKeyring | null { return this.#keyring }

  /** Reads PEPPER_KEYS_FILE again; on error keeps the keys in force and rethrows. Returns the key count. */
  reload(): number {
    if (this.keysFile === null) return 0
    this.#keyring = readPepperKeysFile(this.keysFile)
    return this.#keyring.ids.length
  }
}

