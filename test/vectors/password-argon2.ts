/**
 * Argon2 vectors in the PHC string format. Sources:
 *  - XC: libxcrypt test/ka-table.inc, argon2d section (m=32, t=1–2, p=4; salts "somesalt", "diffsalt").
 *  - REF: the reference implementation's own test suite (P-H-C/phc-winner-argon2 src/test.c,
 *    hashtest(): "password", salt "somesalt"), for v=19 and v=16 (0x10, written without v=).
 * The test file also generates hashes with the reference `argon2` CLI at run time.
 */
import type { PasswordVector } from './password-types.js'

const XC = 'libxcrypt test/ka-table.inc (argon2d)'
const REF = 'phc-winner-argon2 src/test.c'

export const argon2Vectors: PasswordVector[] = [
  { hash: '$argon2d$v=19$m=32,t=1,p=4$c29tZXNhbHQ$t3wvdI5gUU+HEU2Kv2NPNTui7ek61zrrJXpXHJ7C3kg', input: '', algorithm: 'argon2d', source: XC },
  { hash: '$argon2d$v=19$m=32,t=2,p=4$ZGlmZnNhbHQ$rXuWBzfC4Y9ALgTNgDR79CWLaUUzLbuJ6bwMNrOQEY0', input: '', algorithm: 'argon2d', source: XC },
  { hash: '$argon2d$v=19$m=32,t=1,p=4$c29tZXNhbHQ$SrDLLcU2ldtsHaY75qyD3biSVyG4ouT4pDf5kIgvwMA', input: 'abc', algorithm: 'argon2d', source: XC },
  { hash: '$argon2d$v=19$m=32,t=2,p=4$c29tZXNhbHQ$mvviY67PNrvt+YWo7vpqHKErG9T62fcWXAHZpNz/x0M', input: 'dragon', algorithm: 'argon2d', source: XC },
  { hash: '$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8', input: 'password', algorithm: 'argon2i', source: REF },
  { hash: '$argon2i$v=19$m=256,t=2,p=2$c29tZXNhbHQ$T/XOJ2mh1/TIpJHfCdQan76Q5esCFVoT5MAeIM1Oq2E', input: 'password', algorithm: 'argon2i', source: REF },
  { hash: '$argon2i$m=256,t=2,p=1$c29tZXNhbHQ$/U3YPXYsSb3q9XxHvc0MLxur+GP960kN9j7emXX8zwY', input: 'password', algorithm: 'argon2i', source: `${REF} (version 0x10)` },
  { hash: '$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4', input: 'password', algorithm: 'argon2id', source: REF },
]
