/**
 * scrypt vectors. Sources:
 *  - RFC: RFC 7914 §12 test vectors (also Percival's scrypt paper, appendix B) in passlib's
 *    `$scrypt$` encoding, as quoted in passlib's test_handlers_scrypt.py; the test file also
 *    recomputes the RFC's derived keys with Python's hashlib.scrypt.
 *  - OW: the same RFC vector in Openwall's/libxcrypt's `$7$` encoding (passlib test_handlers_scrypt.py,
 *    citing jas/scrypt-unix-crypt unix-scrypt.txt).
 *  - XC: libxcrypt test/ka-table.inc, scrypt section.
 *  - PL: passlib test_handlers_scrypt.py custom vectors.
 */
import type { PasswordVector } from './password-types.js'

const PL = 'passlib test_handlers_scrypt.py'
const XC = 'libxcrypt test/ka-table.inc (scrypt)'

export const scryptVectors: PasswordVector[] = [
  { hash: '$scrypt$ln=4,r=1,p=1$$d9ZXYjhleyA7GcpCwYoEl/FrSETjB0ro39/6P+3iFEI', input: '', algorithm: 'scrypt', source: 'RFC 7914 §12 vector 1 (passlib encoding)' },
  { hash: '$scrypt$ln=10,r=8,p=16$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWI', input: 'password', algorithm: 'scrypt', source: 'RFC 7914 §12 vector 2 (passlib encoding)' },
  { hash: '$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU$cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofI', input: 'pleaseletmein', algorithm: 'scrypt', source: 'RFC 7914 §12 vector 3 (passlib encoding)' },
  { hash: '$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D', input: 'pleaseletmein', algorithm: 'scrypt', source: 'RFC 7914 §12 vector 3 in $7$ encoding (unix-scrypt.txt, via passlib)' },
  { hash: '$scrypt$ln=8,r=8,p=1$wlhLyXmP8b53bm1NKYVQqg$mTpvG8lzuuDk+DWz8HZIB6Vum6erDuUm0As5yU+VxWA', input: 'test', algorithm: 'scrypt', source: PL },
  { hash: '$scrypt$ln=1,r=4,p=2$yhnD+J+Tci4lZCwFgHCuVQ$fAsEWmxSHuC0cHKMwKVFPzrQukgvK09Sj+NueTSxKds', input: 'nacl', algorithm: 'scrypt', source: PL },
  { hash: '$scrypt$ln=7,r=8,p=1$jjGmtDamdA4BQAjBeA9BSA$OiWRHhQtpDx7M/793x6UXK14AD512jg/qNm/hkWZG4M', input: 't\u00e1\u0411\u2113\u0259', algorithm: 'scrypt', source: PL },
  { hash: '$7$66..../....SodiumChloride$SpJsFY2pIFcsdECgiLhE7VnInSJAT3kTfdlS6S6xFq9', input: '', algorithm: 'scrypt', source: XC },
  { hash: '$7$76..../....unUNunUNunUNun$MHVhxrNwp6l3KndOGprjC2Go6U2ZoyHUGXYBX7mnlM8', input: '', algorithm: 'scrypt', source: XC },
  { hash: '$7$66..../....SodiumChloride$WpfVhZgVj63.RiL2fAQZsLyYNROrrN67Wlo8QJ5bI/A', input: 'abc', algorithm: 'scrypt', source: XC },
  { hash: '$7$76..../....SodiumChloride$vQPLamucdOIp12SaBOsZXbo5SIZqu4VGHeE1YV5N9s4', input: 'dragon', algorithm: 'scrypt', source: XC },
  { hash: '$7$66..../....unUNunUNunUNun$zgXL0PpmXAb.i9pEJsmc09rwZqDNacNHdZN0/NY2lK9', input: '01234567', algorithm: 'scrypt', source: XC },
]

/** RFC 7914 §12: the derived keys themselves, for the hashlib.scrypt cross-check. */
export const rfc7914 = [
  { password: '', salt: '', N: 16, r: 1, p: 1, dk: '77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906' },
  { password: 'password', salt: 'NaCl', N: 1024, r: 8, p: 16, dk: 'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640' },
  { password: 'pleaseletmein', salt: 'SodiumChloride', N: 16384, r: 8, p: 1, dk: '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887' },
]
