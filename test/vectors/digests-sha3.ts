/** SHA-3, SHAKE (FIPS 202) and the original Keccak padding. */
import { MILLION_A, MSG_448, MSG_896, type DigestVector } from './digests-types.js'

const SOURCE = 'NIST FIPS 202 examples (csrc.nist.gov Example Values, SHA3-*_Msg0 / _Msg24 / 448 / 896 / 1M a)'
const KECCAK_SOURCE = 'Keccak team KAT files (ShortMsgKAT_*.txt, Len = 0) and the Ethereum Yellow Paper KEC("")'

function fips(algorithm: string, empty: string, abc: string, m448: string, m896: string, million: string): DigestVector[] {
  return [
    { algorithm, input: { text: '' }, expected: empty, source: SOURCE },
    { algorithm, input: { text: 'abc' }, expected: abc, source: SOURCE },
    { algorithm, input: { text: MSG_448 }, expected: m448, source: SOURCE },
    { algorithm, input: { text: MSG_896 }, expected: m896, source: SOURCE },
    { algorithm, input: MILLION_A, expected: million, source: SOURCE },
  ]
}

export const sha3Vectors: DigestVector[] = [
  ...fips('sha3-224', '6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7', 'e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf',
    '8a24108b154ada21c9fd5574494479ba5c7e7ab76ef264ead0fcce33', '543e6868e1666c1a643630df77367ae5a62a85070a51c14cbf665cbc', 'd69335b93325192e516a912e6d19a15cb51c6ed5c15243e7a7fd653c'),
  ...fips('sha3-256', 'a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a', '3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532',
    '41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376', '916f6061fe879741ca6469b43971dfdb28b1a32dc36cb3254e812be27aad1d18', '5c8875ae474a3634ba4fd55ec85bffd661f32aca75c6d699d0cdcb6c115891c1'),
  ...fips('sha3-384', '0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2ac3713831264adb47fb6bd1e058d5f004',
    'ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25',
    '991c665755eb3a4b6bbdfb75c78a492e8c56a22c5c4d7e429bfdbc32b9d4ad5aa04a1f076e62fea19eef51acd0657c22',
    '79407d3b5916b59c3e30b09822974791c313fb9ecc849e406f23592d04f625dc8c709b98b43b3852b337216179aa7fc7',
    'eee9e24d78c1855337983451df97c8ad9eedf256c6334f8e948d252d5e0e76847aa0774ddb90a842190d2c558b4b8340'),
  ...fips('sha3-512', 'a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a615b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26',
    'b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0',
    '04a371e84ecfb5b8b77cb48610fca8182dd457ce6f326a0fd3d7ec2f1e91636dee691fbe0c985302ba1b0d8dc78c086346b533b49c030d99a27daf1139d6e75e',
    'afebb2ef542e6579c50cad06d2e578f9f8dd6881d7dc824d26360feebf18a4fa73e3261122948efcfd492e74e82e2189ed0fb440d187f382270cb455f21dd185',
    '3c3a876da14034ab60627c077bb98f7e120a2a5370212dffb3385a18d4f38859ed311d0a9d5141ce9cc5c66ee689b266a8aa18ace8282a0e0db596c90b0a7b87'),
  { algorithm: 'shake128', input: { text: '' }, expected: '7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26', source: 'NIST FIPS 202 examples, SHAKE128_Msg0 (first 256 bits)' },
  { algorithm: 'shake128', input: { text: 'abc' }, expected: '5881092dd818bf5cf8a3ddb793fbcba74097d5c526a6d35f97b83351940f2cc8', source: 'NIST FIPS 202 examples, SHAKE128 "abc" (first 256 bits)' },
  { algorithm: 'shake256', input: { text: '' }, expected: '46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be', source: 'NIST FIPS 202 examples, SHAKE256_Msg0 (first 512 bits)' },
  { algorithm: 'shake256', input: { text: 'abc' }, expected: '483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e4', source: 'NIST FIPS 202 examples, SHAKE256 "abc" (first 512 bits)' },
  { algorithm: 'shake128', input: { text: '' }, outputLength: 16, expected: '7f9c2ba4e88f827d616045507605853e', source: 'NIST FIPS 202 examples, SHAKE128_Msg0 (first 128 bits)' },
  { algorithm: 'keccak-224', input: { text: '' }, expected: 'f71837502ba8e10837bdd8d365adb85591895602fc552b48b7390abd', source: KECCAK_SOURCE },
  { algorithm: 'keccak-256', input: { text: '' }, expected: 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470', source: KECCAK_SOURCE },
  { algorithm: 'keccak-384', input: { text: '' }, expected: '2c23146a63a29acf99e73b88f8c24eaa7dc60aa771780ccc006afbfa8fe2479b2dd2b21362337441ac12b515911957ff', source: KECCAK_SOURCE },
  { algorithm: 'keccak-512', input: { text: '' }, expected: '0eab42de4c3ceb9235fc91acffe746b29c29a8c366b7c60e4e67c466f36a4304c00fa9caf9d87976ba469bcbe06713b435f091ef2769fb160cdab33d3670680e', source: KECCAK_SOURCE },
  { algorithm: 'keccak-256', input: { text: 'abc' }, expected: '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45', source: 'Keccak-256("abc"), as published in the Ethereum and Solidity documentation' },
]
