/**
 * Streebog (GOST R 34.11-2012) and GOST R 34.11-94.
 *
 * RFC 6986 §10 prints messages and hash values as big-endian numbers, most significant byte
 * first; the hash consumes and tools print the byte string in the opposite order. The RFC's text
 * is recorded here as printed and reversed once, by `rfcNumber`.
 */
import type { DigestVector } from './digests-types.js'

/** The byte string a big-endian number printed in RFC 6986 stands for. */
export const rfcNumber = (hex: string): string => Buffer.from(hex, 'hex').reverse().toString('hex')

const M1 = '323130393837363534333231303938373635343332313039383736353433323130393837363534333231303938373635343332313039383736353433323130'
const M2 = 'fbe2e5f0eee3c820fbeafaebef20fffbf0e1e0f0f520e0ed20e8ece0ebe5f0f2f120fff0eeec20f120faf2fee5e2202ce8f6f3ede220e8e6eee1e8f0f2d1202ce8f0f2e5e220e5d1'

const GOST94_TEST = 'GOST R 34.11-94 with the test parameter set: examples in RFC 5831 §7.3 and Wikipedia, "GOST (hash function)"'
const GOST94_CRYPTOPRO = 'GOST R 34.11-94 with the CryptoPro parameter set: Wikipedia, "GOST (hash function)", examples'

export const gostVectors: DigestVector[] = [
  { algorithm: 'streebog-512', input: { hex: rfcNumber(M1) }, source: 'RFC 6986 §10.1.1 (M1)',
    expected: rfcNumber('486f64c1917879417fef082b3381a4e211c324f074654c38823a7b76f830ad00fa1fbae42b1285c0352f227524bc9ab16254288dd6863dccd5b9f54a1ad0541b') },
  { algorithm: 'streebog-256', input: { hex: rfcNumber(M1) }, source: 'RFC 6986 §10.1.2 (M1)',
    expected: rfcNumber('00557be5e584fd52a449b16b0251d05d27f94ab76cbaa6da890b59d8ef1e159d') },
  { algorithm: 'streebog-512', input: { hex: rfcNumber(M2) }, source: 'RFC 6986 §10.2.1 (M2)',
    expected: rfcNumber('28fbc9bada033b1460642bdcddb90c3fb3e56c497ccd0f62b8a2ad4935e85f037613966de4ee00531ae60f3b5a47f8dae06915d5f2f194996fcabf2622e6881e') },
  { algorithm: 'streebog-256', input: { hex: rfcNumber(M2) }, source: 'RFC 6986 §10.2.2 (M2)',
    expected: rfcNumber('508f7e553c06501d749a66fc28c6cac0b005746d97537fa85d9e40904efed29d') },
  { algorithm: 'streebog-512', input: { text: '' }, source: 'Wikipedia, "Streebog", hash of the empty string',
    expected: '8e945da209aa869f0455928529bcae4679e9873ab707b55315f56ceb98bef0a7362f715528356ee83cda5f2aac4c6ad2ba3a715c1bcd81cb8e9f90bf4c1c1a8a' },
  { algorithm: 'streebog-256', input: { text: '' }, source: 'Wikipedia, "Streebog", hash of the empty string',
    expected: '3f539a213e97c802cc229d474c6aa32a825a360b2a933a949fd925208d9ce1bb' },
  { algorithm: 'gost94', input: { text: 'This is message, length=32 bytes' }, source: GOST94_TEST,
    expected: 'b1c466d37519b82e8319819ff32595e047a28cb6f83eff1c6916a815a637fffa' },
  { algorithm: 'gost94', input: { text: 'Suppose the original message has length = 50 bytes' }, source: GOST94_TEST,
    expected: '471aba57a60a770d3a76130635c1fbea4ef14de51f78b4ae57dd893b62f55208' },
  { algorithm: 'gost94', input: { text: '' }, source: GOST94_TEST, expected: 'ce85b99cc46752fffee35cab9a7b0278abb4c2d2055cff685af4912c49490f8d' },
  { algorithm: 'gost94', input: { text: 'a' }, source: GOST94_TEST, expected: 'd42c539e367c66e9c88a801f6649349c21871b4344c6a573f849fdce62f314dd' },
  { algorithm: 'gost94', input: { text: 'abc' }, source: GOST94_TEST, expected: 'f3134348c44fb1b2a277729e2285ebb5cb5e0f29c975bc753b70497c06a4d51d' },
  { algorithm: 'gost94', input: { text: 'message digest' }, source: GOST94_TEST, expected: 'ad4434ecb18f2c99b60cbe59ec3d2469582b65273f48de72db2fde16a4889a4d' },
  { algorithm: 'gost94', input: { text: 'The quick brown fox jumps over the lazy dog' }, source: GOST94_TEST, expected: '77b7fa410c9ac58a25f49bca7d0468c9296529315eaca76bd1a10f376d1f4294' },
  { algorithm: 'gost94-cryptopro', input: { text: '' }, source: GOST94_CRYPTOPRO, expected: '981e5f3ca30c841487830f84fb433e13ac1101569b9c13584ac483234cd656c0' },
  { algorithm: 'gost94-cryptopro', input: { text: 'a' }, source: GOST94_CRYPTOPRO, expected: 'e74c52dd282183bf37af0079c9f78055715a103f17e3133ceff1aacf2f403011' },
  { algorithm: 'gost94-cryptopro', input: { text: 'abc' }, source: GOST94_CRYPTOPRO, expected: 'b285056dbf18d7392d7677369524dd14747459ed8143997e163b2986f92fd42c' },
  { algorithm: 'gost94-cryptopro', input: { text: 'message digest' }, source: GOST94_CRYPTOPRO, expected: 'bc6041dd2aa401ebfa6e9886734174febdb4729aa972d60f549ac39b29721ba0' },
  { algorithm: 'gost94-cryptopro', input: { text: 'The quick brown fox jumps over the lazy dog' }, source: GOST94_CRYPTOPRO, expected: '9004294a361a508c586fe53d1f1b02746765e71b765472786e4770d565830a76' },
]
