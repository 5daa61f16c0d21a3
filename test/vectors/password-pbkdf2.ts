/**
 * PBKDF2 vectors in passlib's, Django's and hashcat's spellings. Sources:
 *  - PL: passlib test_handlers_pbkdf2.py / test_handlers_django.py.
 *  - HC: hashcat example hashes, modes 20400, 20300, 20200 (passlib) and 10000 (Django),
 *    password "hashcat".
 */
import type { PasswordVector } from './password-types.js'

const PL = 'passlib test_handlers_pbkdf2.py'
const WAV = '\u0399\u03c9\u03b1\u03bd\u03bd\u03b7\u03c2'

export const pbkdf2Vectors: PasswordVector[] = [
  { hash: '$pbkdf2$1212$OB.dtnSEXZK8U5cgxU/GYQ$y5LKPOplRmok7CZp/aqVDVg8zGI', input: 'password', algorithm: 'pbkdf2-sha1', source: PL },
  { hash: '$pbkdf2$1212$THDqatpidANpadlLeTeOEg$HV3oi1k5C5LQCgG1BMOL.BX4YZc', input: WAV, algorithm: 'pbkdf2-sha1', source: PL },
  { hash: '$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ', input: 'password', algorithm: 'pbkdf2-sha256', source: PL },
  { hash: '$pbkdf2-sha256$1212$3SABFJGDtyhrQMVt1uABPw$WyaUoqCLgvz97s523nF4iuOqZNbp5Nt8do/cuaa7AiI', input: WAV, algorithm: 'pbkdf2-sha256', source: PL },
  { hash: '$pbkdf2-sha512$1212$RHY0Fr3IDMSVO/RSZyb5ow$eNLfBK.eVozomMr.1gYa17k9B7KIK25NOEshvhrSX.esqY3s.FvWZViXz4KoLlQI.BzY/YTNJOiKc5gBYFYGww', input: 'password', algorithm: 'pbkdf2-sha512', source: PL },
  { hash: 'pbkdf2_sha256$10000$kjVJaVz6qsnJ$5yPHw3rwJGECpUf70daLGhOrQ5+AMxIJdz1c3bqK1Rs=', input: 'not a password', algorithm: 'pbkdf2-sha256', source: 'passlib test_handlers_django.py (Django 1.4 hasher)' },
  { hash: 'pbkdf2_sha256$10000$bEwAfNrH1TlQ$OgYUblFNUX1B8GfMqaCYUK/iHyO0pa7STTDdaEJBuY0=', input: 't\u00e1\u0411\u2113\u0259', algorithm: 'pbkdf2-sha256', source: 'passlib test_handlers_django.py (Django 1.4 hasher)' },
  { hash: 'pbkdf2_sha256$10000$1135411628$bFYX62rfJobJ07VwrUMXfuffLfj2RDM2G6/BrTrUWkE=', input: 'hashcat', algorithm: 'pbkdf2-sha256', source: 'hashcat example hashes, mode 10000' },
  { hash: '$pbkdf2$131000$r5WythYixPgfQ2jt3buXcg$8Kdr.QQEOaZIXNOrrru36I/.6Po', input: 'hashcat', algorithm: 'pbkdf2-sha1', source: 'hashcat example hashes, mode 20400' },
  { hash: '$pbkdf2-sha256$29000$x9h7j/Ge8x6DMEao1VqrdQ$kra3R1wEnY8mPdDWOpTqOTINaAmZvRMcYd8u5OBQP9A', input: 'hashcat', algorithm: 'pbkdf2-sha256', source: 'hashcat example hashes, mode 20300' },
  { hash: '$pbkdf2-sha512$25000$LyWE0HrP2RsjZCxlDGFMKQ$1vC5Ohk2mCS9b6akqsEfgeb4l74SF8XjH.SljXf3dMLHdlY1GK9ojcCKts6/asR4aPqBmk74nCDddU3tvSCJvw', input: 'hashcat', algorithm: 'pbkdf2-sha512', source: 'hashcat example hashes, mode 20200' },
]
