/** Windows and MySQL password digests: NTLM, LM, mysql41, and eD2k (which has no vectors beyond MD4's). */
import type { DigestVector } from './digests-types.js'

const DAVENPORT = 'Eric Glass, "The NTLM Authentication Protocol and Security Support Provider" (davenport.sourceforge.net/ntlm.html), password "SecREt01"'
const PASSLIB = 'passlib test suite (passlib/tests/test_handlers.py), lmhash / nthash / mysql41 known_correct_hashes'

export const credentialVectors: DigestVector[] = [
  { algorithm: 'lm', input: { text: 'SecREt01' }, expected: 'ff3750bcc2b22412c2265b23734e0dac', source: DAVENPORT },
  { algorithm: 'ntlm', input: { text: 'SecREt01' }, expected: 'cd06ca7c7e10c99b1d33b7485a2ed808', source: DAVENPORT },
  { algorithm: 'lm', input: { text: 'OLDPASSWORD' }, expected: 'c9b81d939d6fd80cd408e6b105741864', source: PASSLIB },
  { algorithm: 'lm', input: { text: 'NEWPASSWORD' }, expected: '09eeab5aa415d6e4d408e6b105741864', source: PASSLIB },
  { algorithm: 'lm', input: { text: 'welcome' }, expected: 'c23413a8a1e7665faad3b435b51404ee', source: PASSLIB },
  { algorithm: 'lm', input: { text: '' }, expected: 'aad3b435b51404eeaad3b435b51404ee', source: PASSLIB },
  { algorithm: 'ntlm', input: { text: 'password' }, expected: '8846f7eaee8fb117ad06bdd830b7586c', source: PASSLIB },
  { algorithm: 'mysql41', input: { text: 'mypass' }, expected: '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4', source: PASSLIB },
  // eD2k of anything shorter than one 9,728,000-byte chunk is its MD4 (RFC 1320 Appendix A.5).
  { algorithm: 'ed2k', input: { text: 'abc' }, expected: 'a448017aaf21d8525fc10ae87aa6729d', source: 'RFC 1320 Appendix A.5 (single-chunk eD2k is MD4)' },
  { algorithm: 'ed2k', input: { text: '' }, expected: '31d6cfe0d16ae931b73c59d7e0c089c0', source: 'RFC 1320 Appendix A.5 (single-chunk eD2k is MD4)' },
]
