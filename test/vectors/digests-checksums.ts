/** CRCs, Adler-32 and xxHash: catalogue check values and the specifications' reference values. */
import type { DigestVector } from './digests-types.js'

const CATALOGUE = 'Greg Cook, Catalogue of parametrised CRC algorithms (reveng.sourceforge.net/crc-catalogue), "check" = CRC of "123456789"'
const XXHASH = 'xxHash reference values for the empty input with seed 0 (Cyan4973/xxHash, doc/xxhash_spec.md and tests/sanity_test_vectors.h)'

export const checksumVectors: DigestVector[] = [
  { algorithm: 'crc32', input: { text: '123456789' }, expected: 'cbf43926', source: `${CATALOGUE}, CRC-32/ISO-HDLC` },
  { algorithm: 'crc32c', input: { text: '123456789' }, expected: 'e3069283', source: `${CATALOGUE}, CRC-32/ISCSI` },
  { algorithm: 'crc64', input: { text: '123456789' }, expected: '995dc9bbdf1939fa', source: `${CATALOGUE}, CRC-64/XZ` },
  { algorithm: 'crc32', input: { text: '' }, expected: '00000000', source: `${CATALOGUE}: an empty message leaves init ^ xorout = 0` },
  { algorithm: 'adler32', input: { text: 'Wikipedia' }, expected: '11e60398', source: 'Wikipedia, "Adler-32", worked example' },
  { algorithm: 'adler32', input: { text: '' }, expected: '00000001', source: 'RFC 1950 §8.2: Adler-32 starts at 1' },
  { algorithm: 'xxh32', input: { text: '' }, expected: '02cc5d05', source: XXHASH },
  { algorithm: 'xxh64', input: { text: '' }, expected: 'ef46db3751d8e999', source: XXHASH },
  { algorithm: 'xxh3', input: { text: '' }, expected: '2d06800538d394c2', source: XXHASH },
  { algorithm: 'xxh128', input: { text: '' }, expected: '99aa06d3014798d86001c324468d497f', source: XXHASH },
]
