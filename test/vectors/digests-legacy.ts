/** RIPEMD-160, Whirlpool, SM3, Tiger, Tiger2 and HAS-160: the examples their designers published. */
import { MILLION_A, MSG_448, RFC13XX_SUITE, suite, type DigestVector } from './digests-types.js'

const RIPEMD = 'Dobbertin, Bosselaers, Preneel: "RIPEMD-160: A Strengthened Version of RIPEMD", test values (homes.esat.kuleuven.be/~bosselae/ripemd160.html)'
const WHIRLPOOL = 'Barreto & Rijmen, The WHIRLPOOL Hashing Function (ISO/IEC 10118-3:2004 test vectors, NESSIE set 1)'
const TIGER = 'Anderson & Biham, Tiger test vectors (www.cs.technion.ac.il/~biham/Reports/Tiger/test-vectors-nessie-format.dat, byte order of the NESSIE file)'
const HAS160 = 'HAS-160 test vectors (TTAS.KO-12.0011/R2 Appendix, as reproduced in RHash and Crypto++ TestVectors)'

export const legacyVectors: DigestVector[] = [
  ...suite('ripemd160', RIPEMD, RFC13XX_SUITE, [
    '9c1185a5c5e9fc54612808977ee8f548b2258d31', '0bdc9d2d256b3ee9daae347be6f4dc835a467ffe', '8eb208f7e05d987a9b044a8e98c6b087f15a0bfc',
    '5d0689ef49d2fae572b881b123a85ffa21595f36', 'f71c27109c692c1b56bbdceb5b9d2865b3708dbc', 'b0e20b6e3116640286ed3a87a5713079b21f5189',
    '9b752e45573d4b39f4dbd3323cab82bf63326bfb']),
  { algorithm: 'ripemd160', input: { text: MSG_448 }, expected: '12a053384a9c0c88e405a06c27dcf49ada62eb2b', source: RIPEMD },
  { algorithm: 'ripemd160', input: MILLION_A, expected: '52783243c1697bdbe16d37f97f68f08325dc1528', source: RIPEMD },
  ...suite('whirlpool', WHIRLPOOL, ['', 'a', 'abc', 'message digest'], [
    '19fa61d75522a4669b44e39c1d2e1726c530232130d407f89afee0964997f7a73e83be698b288febcf88e3e03c4f0757ea8964e59b63d93708b138cc42a66eb3',
    '8aca2602792aec6f11a67206531fb7d7f0dff59413145e6973c45001d0087b42d11bc645413aeff63a42391a39145a591a92200d560195e53b478584fdae231a',
    '4e2448a4c6f486bb16b6562c73b4020bf3043e3a731bce721ae1b303d97e6d4c7181eebdb6c57e277d0e34957114cbd6c797fc9d95d8b582d225292076d4eef5',
    '378c84a4126e2dc6e56dcc7458377aac838d00032230f53ce1f5700c0ffb4d3b8421557659ef55c106b4b52ac5a4aaa692ed920052838f3362e86dbd37a8903e']),
  { algorithm: 'sm3', input: { text: 'abc' }, expected: '66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0', source: 'GB/T 32905-2016 Appendix A.1 (draft-sca-cfrg-sm3 §A.1)' },
  { algorithm: 'sm3', input: { repeat: 'abcd', times: 16 }, expected: 'debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732', source: 'GB/T 32905-2016 Appendix A.2 (draft-sca-cfrg-sm3 §A.2)' },
  ...suite('tiger', TIGER, RFC13XX_SUITE, [
    '3293ac630c13f0245f92bbb1766e16167a4e58492dde73f3', '77befbef2e7ef8ab2ec8f93bf587a7fc613e247f5f247809', '2aab1484e8c158f2bfb8c5ff41b57a525129131c957b5f93',
    'd981f8cb78201a950dcf3048751e441c517fca1aa55a29f6', '1714a472eee57d30040412bfcc55032a0b11602ff37beee9', '8dcea680a17583ee502ba38a3c368651890ffbccdc49a8cc',
    '1c14795529fd9f207a958f84c52f11e887fa0cabdfd91bfd']),
  { algorithm: 'tiger', input: { text: MSG_448 }, expected: '0f7bf9a19b9c58f2b7610df7e84f0ac3a71c631e7b53f78e', source: TIGER },
  { algorithm: 'tiger', input: MILLION_A, expected: '6db0e2729cbead93d715c6a7d36302e9b3cee0d2bc314b41', source: TIGER },
  { algorithm: 'tiger', input: { text: 'The quick brown fox jumps over the lazy dog' }, expected: '6d12a41e72e644f017b6f0e2f7b44c6285f06dd5d2c5b075', source: 'Wikipedia, "Tiger (hash function)", examples' },
  { algorithm: 'tiger2', input: { text: '' }, expected: '4441be75f6018773c206c22745374b924aa8313fef919f41', source: 'Wikipedia, "Tiger (hash function)", Tiger2 examples' },
  { algorithm: 'tiger2', input: { text: 'The quick brown fox jumps over the lazy dog' }, expected: '976abff8062a2e9dcea3a1ace966ed9c19cb85558b4976d8', source: 'Wikipedia, "Tiger (hash function)", Tiger2 examples' },
  ...suite('has160', HAS160, RFC13XX_SUITE, [
    '307964ef34151d37c8047adec7ab50f4ff89762d', '4872bcbc4cd0f0a9dc7c2f7045e5b43b6c830db8', '975e810488cf2a3d49838478124afce4b1c78804',
    '2338dbc8638d31225f73086246ba529f96710bc6', '596185c9ab6703d0d0dbb98702bc0f5729cd1d3c', 'cb5d7efbca2f02e0fb7167cabb123af5795764e5',
    '07f05c8c0773c55ca3a5a695ce6aca4c438911b5']),
  { algorithm: 'has160', input: MILLION_A, expected: 'd6ad6f0608b878da9b87999c2525cc84f4c9f18d', source: HAS160 },
]
