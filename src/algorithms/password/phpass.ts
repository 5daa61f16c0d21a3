/**
 * phpass portable hashes (`$P$`, and phpBB3's `$H$`: Solar Designer's PasswordHash.php,
 * crypt_private) and Drupal 7's SHA-512 variant `$S$` (includes/password.inc, _password_crypt).
 * Both: one character of log2 iterations, 8 salt characters, then
 * hash = H(salt ‖ password), repeated 2^n times as hash = H(hash ‖ password), in phpass's base 64.
 * Drupal keeps the first 55 characters (DRUPAL_HASH_LENGTH). Small and fully specified, and no
 * maintained npm package implements them on bytes, so they are written here.
 */
import { createHash, randomBytes } from 'node:crypto'
import { problems } from '../../problem.js'
import { ITOA64, atoi64 } from './crypt-params.js'
import { equalHashText, legacyReason, requireAtMost } from './common.js'
import type { PasswordScheme } from '../types.js'

/** PasswordHash.php encode64: little-endian groups of three bytes, six bits per character. */
function encode64(input: Buffer, count: number): string {
  let output = ''
  let i = 0
  do {
    let value = input[i++] as number
    output += ITOA64[value & 0x3f]
    if (i < count) value |= (input[i] as number) << 8
    output += ITOA64[(value >> 6) & 0x3f]
    if (i++ >= count) break
    if (i < count) value |= (input[i] as number) << 16
    output += ITOA64[(value >> 12) & 0x3f]
    if (i++ >= count) break
    output += ITOA64[(value >> 18) & 0x3f]
  } while (i < count)
  return output
}

/** crypt_private / _password_crypt over a 12-character setting (`$P$` + count + 8 of salt). */
function portableHash(algorithm: 'md5' | 'sha512', password: Uint8Array, setting: string): string {
  const count = 2 ** atoi64(setting[3])
  let hash = createHash(algorithm).update(setting.slice(4, 12), 'latin1').update(password).digest()
  for (let i = 0; i < count; i++) hash = createHash(algorithm).update(hash).update(password).digest()
  return setting.slice(0, 12) + encode64(hash, hash.length)
}

interface PortableSpec {
  name: 'phpass' | 'drupal7'
  displayName: string
  aliases: string[]
  reference: string
  prefixes: string[]
  algorithm: 'md5' | 'sha512'
  /** Characters after the 12-character setting. */
  checksumChars: number
  /** log2 iteration counts accepted: phpass and Drupal both allow 7–30. */
  minLog2: number
  maxLog2: number
  defaultLog2: number
}

function portableScheme(spec: PortableSpec): PasswordScheme {
  const pattern = new RegExp(`^(\\$[${spec.prefixes.map((prefix) => prefix[1]).join('')}]\\$)([./0-9A-Za-z])([./0-9A-Za-z]{8})[./0-9A-Za-z]{${spec.checksumChars}}$`)
  const writes = spec.prefixes[0] as string
  return {
    kind: 'password',
    name: spec.name,
    displayName: spec.displayName,
    family: 'phpass',
    aliases: spec.aliases,
    reference: spec.reference,
    implementation: `hashd (node:crypto ${spec.algorithm.toUpperCase()})`,
    reads: spec.prefixes,
    writes,
    options: {
      rounds: {
        default: spec.defaultLog2, min: spec.minLog2, max: spec.maxLog2,
        description: 'log2 of the iteration count (the character after the prefix)',
        cap: (caps) => Math.floor(Math.log2(caps.shaCryptRounds)),
      },
    },
    claims: (hash) => spec.prefixes.some((prefix) => hash.startsWith(prefix)),
    parse(hash) {
      const match = pattern.exec(hash)
      if (!match) throw problems.malformedHash(spec.name, `expected ${spec.prefixes.join(' or ')}, a count character, 8 of salt and ${spec.checksumChars} of hash`)
      const log2 = atoi64(match[2])
      if (log2 < spec.minLog2 || log2 > spec.maxLog2) throw problems.malformedHash(spec.name, `the count character must stand for 2^${spec.minLog2} to 2^${spec.maxLog2} iterations`)
      return { scheme: spec.name, params: { rounds: log2 }, format: match[1] as string }
    },
    checkCaps(params, caps) {
      requireAtMost(spec.name, 'iterations (2^rounds)', 2 ** (params.rounds ?? 0), caps.shaCryptRounds)
    },
    rehashReason: () => legacyReason(spec.name),
    hash(input, options) {
      const setting = writes + ITOA64[options.rounds ?? spec.defaultLog2] + Array.from(randomBytes(8), (byte) => ITOA64[byte & 0x3f]).join('')
      return portableHash(spec.algorithm, input, setting).slice(0, 12 + spec.checksumChars)
    },
    verify(input, hash) {
      return equalHashText(portableHash(spec.algorithm, input, hash).slice(0, hash.length), hash)
    },
  }
}

export const phpass = portableScheme({
  name: 'phpass',
  displayName: 'phpass portable hash',
  aliases: ['phpass-md5', 'wordpress', 'phpbb3', '$P$'],
  reference: 'Openwall phpass PasswordHash.php (crypt_private); passlib.hash.phpass',
  prefixes: ['$P$', '$H$'],
  algorithm: 'md5',
  checksumChars: 22,
  minLog2: 7,
  maxLog2: 30,
  // passlib's default_rounds for phpass.
  defaultLog2: 19,
})

export const drupal7 = portableScheme({
  name: 'drupal7',
  displayName: 'Drupal 7 SHA-512',
  aliases: ['drupal', 'drupal-sha512', '$S$'],
  reference: 'Drupal 7 includes/password.inc (_password_crypt, DRUPAL_HASH_LENGTH 55)',
  prefixes: ['$S$'],
  algorithm: 'sha512',
  // 55 characters in all: 12 of setting, 43 of the 86-character encoding of SHA-512.
  checksumChars: 43,
  minLog2: 7,
  maxLog2: 30,
  // DRUPAL_HASH_COUNT in Drupal 7.
  defaultLog2: 15,
})
