/**
 * LDAP userPassword vectors. Sources:
 *  - PL: passlib test_handlers.py (ldap_md5_test, ldap_sha1_test, ldap_salted_*_test), including
 *    salts of 4, 8, 15 and 16 bytes.
 *  - HC: hashcat example hashes, modes 101, 111, 1411, 1711 (password "hashcat").
 */
import type { PasswordVector } from './password-types.js'

const PL = 'passlib test_handlers.py'
const TABLE = 't\u00e1\u0411\u2113\u0259'

export const ldapVectors: PasswordVector[] = [
  { hash: '{MD5}/F4DjTilcDIIVEHn/nAQsA==', input: 'helloworld', algorithm: 'ldap-md5', source: PL },
  { hash: '{MD5}BUc/ihn2aBXnN7MyZKDQsA==', input: TABLE, algorithm: 'ldap-md5', source: PL },
  { hash: '{SHA}at+xg6SiyUovktq1redipHiJpaE=', input: 'helloworld', algorithm: 'ldap-sha', source: PL },
  { hash: '{SHA}uJ6qx+YUFzQbcQtyd2gpTQ5qJ3s=', input: 'hashcat', algorithm: 'ldap-sha', source: 'hashcat example hashes, mode 101' },
  { hash: '{SMD5}UjFY34os/pnZQ3oQOzjqGu4yeXE=', input: 'testing1234', algorithm: 'ldap-smd5', source: PL },
  { hash: '{SMD5}LnuZPJhiaY95/4lmVFpg548xBsD4P4cw', input: 'test', algorithm: 'ldap-smd5', source: PL },
  { hash: '{SMD5}FbAkzOMOxRbMp6Nn4hnZuel9j9Gas7a2lvI+x5hT6j0=', input: 'test', algorithm: 'ldap-smd5', source: PL },
  { hash: '{SSHA}0c0blFTXXNuAMHECS4uxrj3ZieMoWImr', input: 'testing123', algorithm: 'ldap-ssha', source: PL },
  { hash: '{SSHA}3yCSD1nLZXznra4N8XzZgAL+s1sQYsx5', input: TABLE, algorithm: 'ldap-ssha', source: PL },
  { hash: '{SSHA}Pfx6Vf48AT9x3FVv8znbo8WQkEVSipHSWovxXmvNWUvp/d/7', input: 'test', algorithm: 'ldap-ssha', source: PL },
  { hash: '{SSHA}FLzWcQqyle6Mo7NvrwXCMAmRzXQxNjYxMTYzNw==', input: 'hashcat', algorithm: 'ldap-ssha', source: 'hashcat example hashes, mode 111' },
  { hash: '{SSHA256}x1tymSTVjozxQ2PtT46ysrzhZxbcskK0o2f8hEFx7fAQQmhtDSEkJA==', input: 'password', algorithm: 'ldap-ssha256', source: PL },
  { hash: '{SSHA256}km7UjUTBZN8a+gf1ND2/qn15N7LsO/jmGYJXvyTfJKAbI0RoLWWslQ==', input: 'letm\u00e8\u00efn', algorithm: 'ldap-ssha256', source: PL },
  { hash: '{SSHA256}TFv2RpwyO0U9mA0Hk8FsXRa1I+4dNUtv27Qa8dzGVLinlDIm', input: 'test', algorithm: 'ldap-ssha256', source: PL },
  { hash: '{SSHA256}L5Wk0zPY2lmoR5pH20zngq37KkxFwgTquEhx95rxfVk3Ng==', input: 'hashcat', algorithm: 'ldap-ssha256', source: 'hashcat example hashes, mode 1411' },
  { hash: '{SSHA512}wExp4xjiCHS0zidJDC4UJq9EEeIebAQPJ1PWSwfhxWjfutI9XiiKuHm2AE41cEFfK+8HyI8bh+ztbczUGsvVFIgICWWPt7qu', input: 'toomanysecrets', algorithm: 'ldap-ssha512', source: `${PL} (from an LDAP server web interface, passlib issue 124)` },
  { hash: '{SSHA512}Yg9DQ2wURCFGwobu7R2O6cq7nVbnGMPrFCX0aPQ9kj/y1hd6k9PEzkgWCB5aXdPwPzNrVb0PkiHiBnG1CxFiT+B8L8U=', input: 'test', algorithm: 'ldap-ssha512', source: PL },
  { hash: '{SSHA512}Bz8w5q6qEtB1Nnc8b1jfTvTXVTwohWag33oghQGOtLChnkZTw/cuJaHQlLJEI3AWKZGCRyLA6Phujdxo+is7AjA2MDcyNjY1Mg==', input: 'hashcat', algorithm: 'ldap-ssha512', source: 'hashcat example hashes, mode 1711' },
  { hash: '{CRYPT}$1$dXc3I7Rw$ctlgjDdWJLMT.qwHsWhXR1', input: 'U*U*U*U*', algorithm: 'ldap-crypt', source: 'JtR 1.7.9 md5-crypt vector wrapped in {CRYPT} (RFC 2307 §5.3)' },
  { hash: '{CRYPT}$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1', input: 'Hello world!', algorithm: 'ldap-crypt', source: 'Drepper SHA-crypt vector wrapped in {CRYPT}' },
  { hash: '{crypt}$y$j75$LdJMENpBABJJ3hIHjB1Bi.$s0qvYYdO0C7xT6wRA3w1OvwQN1QFKFzQOjgDrNuprK6', input: 'THE YEAR', algorithm: 'ldap-crypt', source: 'libxcrypt ka-table yescrypt vector wrapped in {crypt}' },
  { hash: '{CRYPT}CCNf8Sbh3HDfQ', input: 'U*U*U*U*', algorithm: 'ldap-crypt', source: 'JtR 1.7.9 DES vector wrapped in {CRYPT}' },
]
