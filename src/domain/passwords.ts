/**
 * What password operations need besides the worker pool: the pepper keys in force (reloaded when
 * PEPPER_KEYS_FILE changes and on SIGHUP: the key ring, src/keys/) and the password policy. One
 * instance per server.
 */
import type { Config } from '../config.js'
import type { PepperKeyring } from '../keys/pepper.js'
import { resolvePasswordPolicy, type PasswordPolicy } from './password-policy.js'

export class Passwords {
  readonly policy: PasswordPolicy
  readonly #keys: { readonly value: PepperKeyring } | null

  /** `keys` holds the pepper keys in force (a Reloadable), or is null without PEPPER_KEYS_FILE. */
  constructor(config: Pick<Config, 'passwordPolicy' | 'caps'>, keys: { readonly value: PepperKeyring } | null) {
    this.policy = resolvePasswordPolicy(config)
    this.#keys = keys
  }

  /** The pepper keys in force, or null when PEPPER_KEYS_FILE is not set. */
  get keyring(): PepperKeyring | null { return this.#keys?.value ?? null }
}

