/**
 * Every password-hash scheme, in detection order: `/api/verify` without `algorithm` asks each in
 * turn whether it claims the hash, so more specific prefixes come before more general ones.
 */
import { argon2d, argon2i, argon2id } from './argon2.js'
import { bcrypt } from './bcrypt.js'
import { pbkdf2Sha1, pbkdf2Sha256, pbkdf2Sha512 } from './pbkdf2.js'
import { scrypt } from './scrypt.js'
import type { PasswordScheme } from '../types.js'

export const passwordSchemes: PasswordScheme[] = [
  bcrypt,
  argon2id, argon2i, argon2d,
  scrypt,
  pbkdf2Sha256, pbkdf2Sha512, pbkdf2Sha1,
]
