/**
 * phpass and Drupal 7 vectors. Sources:
 *  - OW: Openwall phpass 0.3 (its own test), JtR 1.7.9 and passlib custom vectors, as quoted in
 *    passlib's test_handlers.py (phpass_test).
 *  - HC: hashcat example hashes, modes 400 (phpass) and 7900 (Drupal 7), password "hashcat".
 * passlib has no Drupal 7 handler, so Drupal vectors come from hashcat and are cross-checked in the
 * test file against a direct computation of Drupal's _password_crypt with Python's hashlib.
 */
import type { PasswordVector } from './password-types.js'

const PL = 'passlib test_handlers.py phpass_test'

export const phpassVectors: PasswordVector[] = [
  { hash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0', input: 'test12345', algorithm: 'phpass', source: `${PL} (from the official phpass 0.3 source)` },
  { hash: '$H$9aaaaaSXBjgypwqm.JsMssPLiS8YQ00', input: 'test1', algorithm: 'phpass', source: `${PL} (JtR 1.7.9)` },
  { hash: '$P$912345678LIjjb6PhecupozNBmDndU0', input: 'thisisalongertestPW', algorithm: 'phpass', source: `${PL} (JtR 1.7.9)` },
  { hash: '$H$712345678WhEyvy1YWzT4647jzeOmo0', input: 'JohnRipper', algorithm: 'phpass', source: `${PL} (JtR 1.7.9)` },
  { hash: '$P$7JaFQsPzJSuenezefD/3jHgt5hVfNH0', input: '', algorithm: 'phpass', source: PL },
  { hash: '$P$7SMy8VxnfsIy2Sxm7fJxDSdil.h7TW.', input: 't\u00e1\u0411\u2113\u0259', algorithm: 'phpass', source: PL },
  { hash: '$P$946647711V1klyitUYhtB8Yw5DMA/w.', input: 'hashcat', algorithm: 'phpass', source: 'hashcat example hashes, mode 400' },
]

export const drupal7Vectors: PasswordVector[] = [
  { hash: '$S$C20340258nzjDWpoQthrdNTR02f0pmev0K/5/Nx80WSkOQcPEQRh', input: 'hashcat', algorithm: 'drupal7', source: 'hashcat example hashes, mode 7900' },
]
