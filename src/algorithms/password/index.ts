/**
 * Every password-hash scheme, in detection order: `/api/verify` without `algorithm` asks each in
 * turn whether it claims the hash. Prefixed formats claim by prefix (so a damaged hash of a known
 * format is reported as malformed rather than unrecognized); the two formats without a prefix,
 * BSDi (`_` + 19) and traditional DES (13 characters), claim only their exact shape and come last.
 */
import { apr1 } from './apr1.js'
import { argon2d, argon2i, argon2id } from './argon2.js'
import { bcrypt } from './bcrypt.js'
import { bcryptSha256 } from './bcrypt-sha256.js'
import { bsdiCrypt, desCrypt, gostYescrypt, md5Crypt, ntCrypt, sha256Crypt, sha512Crypt, yescrypt } from './crypt.js'
import { ldapCrypt, ldapMd5, ldapSha, ldapSmd5, ldapSsha, ldapSsha256, ldapSsha512 } from './ldap.js'
import { pbkdf2Sha1, pbkdf2Sha256, pbkdf2Sha512 } from './pbkdf2.js'
import { drupal7, phpass } from './phpass.js'
import { scrypt } from './scrypt.js'
import type { PasswordScheme } from '../types.js'

export const passwordSchemes: PasswordScheme[] = [
  bcrypt, bcryptSha256,
  argon2id, argon2i, argon2d,
  scrypt,
  pbkdf2Sha256, pbkdf2Sha512, pbkdf2Sha1,
  yescrypt, gostYescrypt,
  sha512Crypt, sha256Crypt,
  md5Crypt, apr1,
  phpass, drupal7,
  ldapSsha512, ldapSsha256, ldapSsha, ldapSmd5, ldapSha, ldapMd5, ldapCrypt,
  ntCrypt,
  bsdiCrypt, desCrypt,
]
