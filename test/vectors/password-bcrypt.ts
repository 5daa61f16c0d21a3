/**
 * bcrypt vectors. Sources:
 *  - OW: Openwall crypt_blowfish 1.3 wrapper.c `tests[]` (the same table libxcrypt and PHP test with):
 *    `$2a$`, `$2b$`, `$2y$` and `$2x$`, including the 8-bit vectors whose `$2a$` result differs from
 *    `$2b$` because of crypt_blowfish's safety measure, and the 72-byte rule.
 *  - HC: hashcat example hashes, mode 3200 (password "hashcat").
 */
import type { PasswordVector } from './password-types.js'

const OW = 'Openwall crypt_blowfish wrapper.c tests[]'
const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex')

export const bcryptVectors: PasswordVector[] = [
  { hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', input: 'U*U', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK', input: 'U*U*', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a', input: 'U*U*U', algorithm: 'bcrypt', source: OW },
  // Only the first 72 bytes count: "chars after 72 are ignored".
  { hash: '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui', input: '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy', input: '', algorithm: 'bcrypt', source: OW },
  { hash: '$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e', input: hex('\xff\xff\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e', input: hex('\xff\xff\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  // crypt_blowfish's $2a$ safety measure: differs from the $2b$/$2y$ result for the same password.
  { hash: '$2a$05$/OK.fbVrR/bpIqNJ5ianF.nqd1wy.pTMdcvrRWxyiGL2eMz.2a85.', input: hex('\xff\xff\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$/OK.fbVrR/bpIqNJ5ianF.ZC1JEJ8Z4gPfpe1JOr/oyPXTWl9EFd.', input: hex('\xff\xa334\xff\xff\xff\xa3345'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2y$05$/OK.fbVrR/bpIqNJ5ianF.o./n25XVfn6oAPaUvHe.Csk4zRfsYPi', input: hex('\xff\xa334\xff\xff\xff\xa3345'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2y$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq', input: hex('\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$/OK.fbVrR/bpIqNJ5ianF.Sa7shbm4.OzKpvFnX1pQLmQW96oUlCq', input: hex('\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$/OK.fbVrR/bpIqNJ5ianF.nRht2l/HRhr6zmCp9vYUvvsqynflf9e', input: hex('\xff\xa3345'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2y$05$/OK.fbVrR/bpIqNJ5ianF.6IflQkJytoRVc1yuaNtHfiuq.FRlSIS', input: hex('\xa3ab'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  // $2x$: hashes made by the old sign-extension bug (verified through libxcrypt).
  { hash: '$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e', input: hex('\xa3'), inputEncoding: 'hex', algorithm: 'bcrypt', source: OW },
  { hash: '$2a$05$MBCzKhG1KhezLh.0LRa0Kuw12nLJtpHy6DIaU.JAnqJUDYspHC.Ou', input: 'hashcat', algorithm: 'bcrypt', source: 'hashcat example hashes, mode 3200' },
]
