/** HMAC vectors: RFC 4231 (SHA-224/256/384/512), RFC 2202 (MD5, SHA-1) and RFC 7836 (Streebog). */

export interface HmacVector {
  algorithm: string
  keyHex: string
  messageHex: string
  expected: string
  /** RFC 4231 case 5 and RFC 2202 case 5 publish only a truncated prefix of the output. */
  truncatedTo?: number
  source: string
}

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex')
const fill = (byte: string, count: number) => byte.repeat(count)

/** RFC 4231 §4.2–4.8: key and data of each test case, then the four outputs. */
const RFC4231_CASES: Array<{ keyHex: string, messageHex: string, truncatedTo?: number, outputs: [string, string, string, string] }> = [
  { keyHex: fill('0b', 20), messageHex: hex('Hi There'), outputs: [
    '896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22',
    'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
    'afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6',
    '87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854'] },
  { keyHex: hex('Jefe'), messageHex: hex('what do ya want for nothing?'), outputs: [
    'a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44',
    '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    'af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649',
    '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737'] },
  { keyHex: fill('aa', 20), messageHex: fill('dd', 50), outputs: [
    '7fb3cb3588c6c1f6ffa9694d7d6ad2649365b0c1f65d69d1ec8333ea',
    '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe',
    '88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27',
    'fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb'] },
  { keyHex: '0102030405060708090a0b0c0d0e0f10111213141516171819', messageHex: fill('cd', 50), outputs: [
    '6c11506874013cac6a2abc1bb382627cec6a90d86efc012de7afec5a',
    '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b',
    '3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e6801dd23c4a7d679ccf8a386c674cffb',
    'b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd'] },
  { keyHex: fill('0c', 20), messageHex: hex('Test With Truncation'), truncatedTo: 16, outputs: [
    '0e2aea68a90c8d37c988bcdb9fca6fa8', 'a3b6167473100ee06e0c796c2955552b', '3abf34c3503b2a23a46efc619baef897', '415fad6271580a531d4179bc891d87a6'] },
  { keyHex: fill('aa', 131), messageHex: hex('Test Using Larger Than Block-Size Key - Hash Key First'), outputs: [
    '95e9a0db962095adaebe9b2d6f0dbce2d499f112f2d2b7273fa6870e',
    '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
    '4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952',
    '80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598'] },
  { keyHex: fill('aa', 131), messageHex: hex('This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.'), outputs: [
    '3a854166ac5d9f023f54d517d0b39dbd946770db9c2b95c9f6f565d1',
    '9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2',
    '6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5a678cc31e799176d3860e6110c46523e',
    'e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58'] },
]

/** RFC 2202 §2 (MD5) and §3 (SHA-1): key, data, then [md5, sha1]; keys differ in length per hash. */
const RFC2202_CASES: Array<{ md5Key: string, sha1Key: string, messageHex: string, truncatedTo?: number, md5: string, sha1: string }> = [
  { md5Key: fill('0b', 16), sha1Key: fill('0b', 20), messageHex: hex('Hi There'), md5: '9294727a3638bb1c13f48ef8158bfc9d', sha1: 'b617318655057264e28bc0b6fb378c8ef146be00' },
  { md5Key: hex('Jefe'), sha1Key: hex('Jefe'), messageHex: hex('what do ya want for nothing?'), md5: '750c783e6ab0b503eaa86e310a5db738', sha1: 'effcdf6ae5eb2fa2d27416d5f184df9c259a7c79' },
  { md5Key: fill('aa', 16), sha1Key: fill('aa', 20), messageHex: fill('dd', 50), md5: '56be34521d144c88dbb8c733f0e8b3f6', sha1: '125d7342b9ac11cd91a39af48aa17b4f63f175d3' },
  { md5Key: '0102030405060708090a0b0c0d0e0f10111213141516171819', sha1Key: '0102030405060708090a0b0c0d0e0f10111213141516171819', messageHex: fill('cd', 50),
    md5: '697eaf0aca3a3aea3a75164746ffaa79', sha1: '4c9007f4026250c6bc8414f9bf50c86c2d7235da' },
  { md5Key: fill('0c', 16), sha1Key: fill('0c', 20), messageHex: hex('Test With Truncation'), md5: '56461ef2342edc00f9bab995690efd4c', sha1: '4c1a03424b55e07fe7f27be1d58bb9324a9a5a04' },
  { md5Key: fill('aa', 80), sha1Key: fill('aa', 80), messageHex: hex('Test Using Larger Than Block-Size Key - Hash Key First'),
    md5: '6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd', sha1: 'aa4ae5e15272d00e95705637ce8a3b55ed402112' },
  { md5Key: fill('aa', 80), sha1Key: fill('aa', 80), messageHex: hex('Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data'),
    md5: '6f630fad67cda0ee1fb1f562db3aa53e', sha1: 'e8e99d0f45237d786d6bbaa7965c7808bbff1a91' },
]

export const hmacVectors: HmacVector[] = [
  ...RFC4231_CASES.flatMap(({ keyHex, messageHex, truncatedTo, outputs }, index) =>
    (['sha224', 'sha256', 'sha384', 'sha512'] as const).map((algorithm, which): HmacVector => ({
      algorithm, keyHex, messageHex, expected: outputs[which] as string, ...(truncatedTo ? { truncatedTo } : {}), source: `RFC 4231 §4.${index + 2} (test case ${index + 1})`,
    }))),
  ...RFC2202_CASES.flatMap(({ md5Key, sha1Key, messageHex, md5, sha1 }, index): HmacVector[] => [
    { algorithm: 'md5', keyHex: md5Key, messageHex, expected: md5, source: `RFC 2202 §2 (test case ${index + 1})` },
    { algorithm: 'sha1', keyHex: sha1Key, messageHex, expected: sha1, source: `RFC 2202 §3 (test case ${index + 1})` },
  ]),
  // RFC 7836 §4.1.1 and §4.1.2: HMAC_GOSTR3411_2012_256 and _512 (R 50.1.113-2016).
  { algorithm: 'streebog-256', keyHex: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', messageHex: '0126bdb87800af214341456563780100',
    expected: 'a1aa5f7de402d7b3d323f2991c8d4534013137010a83754fd0af6d7cd4922ed9', source: 'RFC 7836 §4.1.1 (HMAC_GOSTR3411_2012_256)' },
  { algorithm: 'streebog-512', keyHex: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f', messageHex: '0126bdb87800af214341456563780100',
    expected: 'a59bab22ecae19c65fbde6e5f4e9f5d8549d31f037f9df9b905500e171923a773d5f1530f2ed7e964cb2eedc29e9ad2f3afe93b2814f79f5000ffc0366c251e6', source: 'RFC 7836 §4.1.2 (HMAC_GOSTR3411_2012_512)' },
]
