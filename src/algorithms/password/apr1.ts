/**
 * Apache's `$apr1$` (htpasswd -m): Poul-Henning Kamp's md5-crypt with the magic string `$apr1$`
 * in place of `$1$` (APR apr_md5.c, apr_md5_encode). libxcrypt does not implement it, and the npm
 * package for it (apache-md5) takes JavaScript strings rather than bytes, so it is written here,
 * on raw bytes, against FreeBSD's crypt-md5.c; tests check it against htpasswd and passlib both ways.
 */
import { createHash, randomBytes } from 'node:crypto'
import { problems } from '../../problem.js'
import { ITOA64 } from './crypt-params.js'
import { equalHashText, legacyReason } from './common.js'
import type { PasswordScheme } from '../types.js'

const MAGIC = Buffer.from('$apr1$')
const APR1 = /^\$apr1\$([!-#%-~]{0,8})\$([./0-9A-Za-z]{22})$/

const md5 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('md5')
  for (const part of parts) hash.update(part)
  return hash.digest()
}

/** crypt-md5.c's _crypt_to64: `count` characters of `value`, least significant six bits first. */
function to64(value: number, count: number): string {
  let text = ''
  for (let i = 0; i < count; i++, value >>>= 6) text += ITOA64[value & 0x3f]
  return text
}

/** md5-crypt of `password` with `salt` (at most 8 bytes) under `magic`, as FreeBSD's crypt_md5. */
export function md5CryptWithMagic(password: Uint8Array, salt: Buffer, magic: Buffer): string {
  const alternate = md5(password, salt, password)
  const context = createHash('md5').update(password).update(magic).update(salt)
  for (let left = password.length; left > 0; left -= 16) context.update(alternate.subarray(0, Math.min(left, 16)))
  // "Then something really weird...": one bit of the length at a time, a NUL or the first byte.
  for (let bits = password.length; bits > 0; bits >>>= 1) context.update(bits & 1 ? Buffer.of(0) : password.subarray(0, 1))
  let final = context.digest()
  // 1000 rounds "to slow things down" (crypt-md5.c).
  for (let round = 0; round < 1000; round++) {
    const step = createHash('md5')
    step.update(round & 1 ? password : final)
    if (round % 3) step.update(salt)
    if (round % 7) step.update(password)
    step.update(round & 1 ? final : password)
    final = step.digest()
  }
  const b = (i: number): number => final[i] as number
  const encoded = to64((b(0) << 16) | (b(6) << 8) | b(12), 4) + to64((b(1) << 16) | (b(7) << 8) | b(13), 4) +
    to64((b(2) << 16) | (b(8) << 8) | b(14), 4) + to64((b(3) << 16) | (b(9) << 8) | b(15), 4) +
    to64((b(4) << 16) | (b(10) << 8) | b(5), 4) + to64(b(11), 2)
  return `${magic.toString('latin1')}${salt.toString('latin1')}$${encoded}`
}

export const apr1: PasswordScheme = {
  kind: 'password',
  name: 'apr1',
  displayName: 'Apache APR1-MD5',
  family: 'crypt',
  aliases: ['apr1-md5', 'apr-md5-crypt', 'htpasswd-md5', '$apr1$'],
  reference: 'Apache Portable Runtime apr_md5.c (apr_md5_encode); FreeBSD crypt-md5.c',
  implementation: 'hashd (node:crypto MD5)',
  reads: ['$apr1$'],
  writes: '$apr1$',
  options: {},
  claims: (hash) => hash.startsWith('$apr1$'),
  parse(hash) {
    if (!APR1.test(hash)) throw problems.malformedHash('apr1', 'expected $apr1$, up to 8 salt characters, $ and 22 characters of ./0-9A-Za-z')
    return { scheme: 'apr1', params: {}, format: '$apr1$' }
  },
  checkCaps: () => {},
  rehashReason: () => legacyReason('apr1 (1000 rounds of MD5)'),
  hash(input) {
    // htpasswd draws 8 salt characters from the crypt alphabet; 6 random bits each.
    const salt = Buffer.from(Array.from(randomBytes(8), (byte) => ITOA64.charCodeAt(byte & 0x3f)))
    return md5CryptWithMagic(input, salt, MAGIC)
  },
  verify(input, hash) {
    const salt = Buffer.from((APR1.exec(hash) as RegExpExecArray)[1] as string, 'latin1')
    return equalHashText(md5CryptWithMagic(input, salt, MAGIC), hash)
  },
}
