/**
 * Vectors for the other crypt(3) formats libxcrypt computes. Sources:
 *  - XC: libxcrypt test/ka-table.inc (its known-answer table, sections md5crypt, yescrypt,
 *    gost_yescrypt, descrypt, nt); 8-bit passwords are given in hex.
 *  - JTR: John the Ripper 1.7.9 vectors as quoted in passlib's test_handlers.py.
 *  - PL: passlib test_handlers.py custom vectors.
 *  - HC: hashcat example hashes (password "hashcat").
 */
import type { PasswordVector } from './password-types.js'

const XC = 'libxcrypt test/ka-table.inc'
const JTR = 'John the Ripper 1.7.9 (via passlib test_handlers.py)'
const PL = 'passlib test_handlers.py'
const THE_YEAR_LONG = 'THE YEAR 1866 was marked by a bizarre development, an unexplained and downright inexplicable phenomenon that surely no one has forgotten.'
const DIGITS_72 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
const hex = (text: string): string => Buffer.from(text, 'latin1').toString('hex')

export const md5CryptVectors: PasswordVector[] = [
  { hash: '$1$CCCCCCCC$Gsh1Cpbqgk.zHFemcUtVH.', input: 'THE YEAR', algorithm: 'md5-crypt', source: XC },
  { hash: '$1$abcdefgh$wX/XLDulTCITBlw11On0e1', input: 'THE YEAR', algorithm: 'md5-crypt', source: XC },
  { hash: '$1$CCCCCCCC$ztBvhxgwecESGOR9UyhRp.', input: 'étude', algorithm: 'md5-crypt', source: XC },
  { hash: '$1$abcdefgh$1ieAOKER8H8Q8E9pWRDAL/', input: 'Ångström', algorithm: 'md5-crypt', source: XC },
  { hash: '$1$CCCCCCCC$naH8Ddw2hni3K6EBuhhqO/', input: hex('\xa3'), inputEncoding: 'hex', algorithm: 'md5-crypt', source: XC },
  { hash: '$1$CCCCCCCC$J91yKhxXfvtUnYMc.dJRS0', input: THE_YEAR_LONG, algorithm: 'md5-crypt', source: XC },
  { hash: '$1$dXc3I7Rw$ctlgjDdWJLMT.qwHsWhXR1', input: 'U*U*U*U*', algorithm: 'md5-crypt', source: JTR },
  { hash: '$1$Eu.GHtia$CFkL/nE1BYTlEPiVx1VWX0', input: '', algorithm: 'md5-crypt', source: JTR },
  { hash: '$1$38652870$DUjsu4TTlTsOe/xxZ05uf/', input: 'hashcat', algorithm: 'md5-crypt', source: 'hashcat example hashes, mode 500' },
]

export const apr1Vectors: PasswordVector[] = [
  { hash: '$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/', input: 'myPassword', algorithm: 'apr1', source: 'Apache httpd docs, misc/password_encryptions.html (via passlib)' },
  { hash: '$apr1$bzYrOHUx$a1FcpXuQDJV3vPY20CS6N1', input: 't\u00e1\u0411\u2113\u0259', algorithm: 'apr1', source: PL },
  { hash: '$apr1$62722340$zGjeAwVP2KwY6MtumUI1N/', input: 'hashcat', algorithm: 'apr1', source: 'hashcat example hashes, mode 1600' },
]

export const yescryptVectors: PasswordVector[] = [
  { hash: '$y$j75$LdJMENpBABJJ3hIHjB1Bi.$s0qvYYdO0C7xT6wRA3w1OvwQN1QFKFzQOjgDrNuprK6', input: 'THE YEAR', algorithm: 'yescrypt', source: XC },
  { hash: '$y$j85$LdJMENpBABJJ3hIHjB1Bi.$9bzSqsy.tgf3vABDP.Wuq0kUG2dQzR03IMMoqvle5I0', input: 'THE YEAR', algorithm: 'yescrypt', source: XC },
  { hash: '$y$j75$.......$6v6FMOgOfETtKAUsUjzlPEFqKzbkDZzXMu4cgRJKjP5', input: 'THE YEAR', algorithm: 'yescrypt', source: XC },
  { hash: '$y$j75$LdJMENpBABJJ3hIHjB1Bi.$ZgTUWYYUx76vUOHZF0X27Rq9go43bzjSmecsreE0zo7', input: DIGITS_72, algorithm: 'yescrypt', source: XC },
  { hash: '$y$j85$LdJMENpBABJJ3hIHjB1Bi.$ZHvxQJ0LnwjoB0/hiubRE1nf7g4tMTi.F2SKjj5mGtB', input: hex('\xff\xff\xa3'), inputEncoding: 'hex', algorithm: 'yescrypt', source: XC },
  { hash: '$y$j75$LdJMENpBABJJ3hIHjB1Bi.$FjTL7ogvhXvz/UWjObjzlmUreQCU4y2/kKfazRi1KEC', input: hex('1\xa3345'), inputEncoding: 'hex', algorithm: 'yescrypt', source: XC },
  { hash: '$y$j75$LdJMENpBABJJ3hIHjB1Bi.$GvVaUBsKJZRpLNffGI63DblLjvrJoswzwIKthTrHXPA', input: THE_YEAR_LONG, algorithm: 'yescrypt', source: XC },
]

export const gostYescryptVectors: PasswordVector[] = [
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$VIvMlb2yKp1wnlflMAxutM8UsAjZPD6dcXHT0nL2UP6', input: '', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$L2dOa9cEfoqtM0yxuEyxQCctdYVD6HCXsluuaIJe9I.', input: 'abc', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$tJg7PZ3RWCiTHYH5k4CwP93mvcLHrQcXEpzxH0fJbe.', input: 'THE YEAR', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j85$.......$AKYs/ze5RzoPsxsE2SCEHYW1nAXZrp4twD6Acs77NbC', input: 'THE YEAR', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$ZHNcBWtiGfWpz02p4Cg4GYsV4qGrfFRWZeDo8sjfXR7', input: hex('\xa3'), inputEncoding: 'hex', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j85$LdJMENpBABJJ3hIHjB1Bi.$.xW9F5znHb6bRogZkj/iMqJyx7LSWhPWJ74A5DijFHC', input: 'ё', algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$/PoQ1T4MAgC85QGvPDQgRlbHymcS8hj1dFZfc.dw/uC', input: DIGITS_72, algorithm: 'gost-yescrypt', source: XC },
  { hash: '$gy$j75$LdJMENpBABJJ3hIHjB1Bi.$wXYInodkebOrIbqkAFikwcPHhk3o04P5O53fIsEwj96', input: THE_YEAR_LONG, algorithm: 'gost-yescrypt', source: XC },
]

export const desCryptVectors: PasswordVector[] = [
  { hash: 'CC2RU2fzIuOsc', input: 'THE YEAR', algorithm: 'des-crypt', source: XC },
  // Traditional DES reads only the first 8 characters.
  { hash: 'ab7TBnHv4ezs2', input: THE_YEAR_LONG, algorithm: 'des-crypt', source: XC },
  { hash: 'CCNf8Sbh3HDfQ', input: 'U*U*U*U*', algorithm: 'des-crypt', source: JTR },
  { hash: 'SDbsugeBiC58A', input: '', algorithm: 'des-crypt', source: JTR },
  { hash: 'N1tQbOFcM5fpg', input: 'test', algorithm: 'des-crypt', source: PL },
  { hash: '24leDr0hHfb3A', input: 'hashcat', algorithm: 'des-crypt', source: 'hashcat example hashes, mode 1500' },
]

export const bsdiCryptVectors: PasswordVector[] = [
  { hash: '_J9..CCCCXBrJUJV154M', input: 'U*U*U*U*', algorithm: 'bsdi-crypt', source: JTR },
  { hash: '_J9..CCCCXUhOBTXzaiE', input: 'U*U***U', algorithm: 'bsdi-crypt', source: JTR },
  { hash: '_J9..SDSD5YGyRCr4W4c', input: '', algorithm: 'bsdi-crypt', source: JTR },
  { hash: '_K9..SaltNrQgIYUAeoY', input: '726 even', algorithm: 'bsdi-crypt', source: JTR },
  { hash: '_KR/.crsmykRplHbAvwA', input: 'my', algorithm: 'bsdi-crypt', source: PL },
  { hash: '_GW..8841inaTltazRsQ', input: 'hashcat', algorithm: 'bsdi-crypt', source: 'hashcat example hashes, mode 12400' },
]

export const ntCryptVectors: PasswordVector[] = [
  { hash: '$3$$31d6cfe0d16ae931b73c59d7e0c089c0', input: '', algorithm: 'nt-crypt', source: XC },
  { hash: '$3$$e0fba38268d0ec66ef1cb452d5885e53', input: 'abc', algorithm: 'nt-crypt', source: XC },
  { hash: '$3$$f7eb9c06fafaa23c4bcf22ba6781c1e2', input: 'dragon', algorithm: 'nt-crypt', source: XC },
  { hash: '$3$$e1aeb5cac1f5fc905085787a81ff3a1f', input: 'THE YEAR', algorithm: 'nt-crypt', source: XC },
  { hash: '$3$$14afdf1514c72786089966de5e09b928', input: 'étude', algorithm: 'nt-crypt', source: XC },
  { hash: '$3$$7f8fe03093cc84b267b109625f6bbf4b', input: 'passphrase', algorithm: 'nt-crypt', source: PL },
]
