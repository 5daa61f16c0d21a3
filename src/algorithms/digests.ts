/**
 * Every digest, XOF and checksum hashd knows, as data. One entry per algorithm: adding an
 * algorithm is adding an entry here and its vectors under test/vectors/.
 */
import { createHash } from 'node:crypto'
import {
  createAdler32, createBLAKE2b, createBLAKE3, createCRC32, createCRC64, createKeccak, createMD4,
  createWhirlpool, createXXHash128, createXXHash3, createXXHash32, createXXHash64,
} from 'hash-wasm'
import { Blake3Hasher } from '@napi-rs/blake-hash'
import { composed, opensslHasher, utf16leOf, wasmHasher } from './hashers.js'
import type { DigestAlgorithm } from './types.js'

const OPENSSL = 'OpenSSL (node:crypto)'
const HASH_WASM = 'hash-wasm (WASM)'

/** A fixed-length digest that OpenSSL implements. */
function openssl(name: string, displayName: string, outputBytes: number, blockBytes: number, reference: string, aliases: string[] = [], opensslName = name): DigestAlgorithm {
  return { kind: 'digest', name, displayName, aliases, outputBytes, blockBytes, opensslName, reference, implementation: OPENSSL, create: opensslHasher(opensslName) }
}

/** SHAKE (FIPS 202 §6.2): any output length; the default is twice the security level. */
function shake(bits: 128 | 256, blockBytes: number): DigestAlgorithm {
  return {
    kind: 'xof', name: `shake${bits}`, displayName: `SHAKE${bits}`, aliases: [`shake-${bits}`],
    outputBytes: bits / 4, outputLength: { min: 1, max: 1024 }, blockBytes, reference: 'FIPS 202 §6.2',
    implementation: OPENSSL, create: opensslHasher(`shake${bits}`, true),
  }
}

/** The original Keccak submission padding (0x01), which Ethereum uses; FIPS 202 SHA-3 pads 0x06. */
function keccak(bits: 224 | 256 | 384 | 512): DigestAlgorithm {
  return {
    kind: 'digest', name: `keccak-${bits}`, displayName: `Keccak-${bits}`, aliases: [`keccak${bits}`],
    outputBytes: bits / 8, blockBytes: 200 - bits / 4, reference: 'The Keccak reference, version 3 (2011)',
    implementation: HASH_WASM, create: wasmHasher(() => createKeccak(bits)),
  }
}

function blake2b(bits: 256 | 384): DigestAlgorithm {
  return {
    kind: 'digest', name: `blake2b-${bits}`, displayName: `BLAKE2b-${bits}`, aliases: [`blake2b${bits}`],
    outputBytes: bits / 8, blockBytes: 128, reference: 'RFC 7693',
    implementation: HASH_WASM, create: wasmHasher(() => createBLAKE2b(bits)),
  }
}

function checksum(name: string, displayName: string, outputBytes: number, reference: string, aliases: string[], create: DigestAlgorithm['create']): DigestAlgorithm {
  return { kind: 'checksum', name, displayName, aliases, outputBytes, reference, implementation: HASH_WASM, create }
}

const sha1Of = (data: Uint8Array): Uint8Array => createHash('sha1').update(data).digest()

export const digestAlgorithms: DigestAlgorithm[] = [
  {
    kind: 'digest', name: 'md4', displayName: 'MD4', aliases: [], outputBytes: 16, blockBytes: 64,
    reference: 'RFC 1320', implementation: HASH_WASM, create: wasmHasher(() => createMD4()),
    weak: 'MD4 is broken (practical collisions)',
  },
  { ...openssl('md5', 'MD5', 16, 64, 'RFC 1321'), weak: 'MD5 is broken (practical collisions)' },
  { ...openssl('sha1', 'SHA-1', 20, 64, 'FIPS 180-4', ['sha']), weak: 'SHA-1 is broken (practical collisions)' },
  openssl('sha224', 'SHA-224', 28, 64, 'FIPS 180-4'),
  openssl('sha256', 'SHA-256', 32, 64, 'FIPS 180-4', ['sha2']),
  openssl('sha384', 'SHA-384', 48, 128, 'FIPS 180-4'),
  openssl('sha512', 'SHA-512', 64, 128, 'FIPS 180-4'),
  openssl('sha512-224', 'SHA-512/224', 28, 128, 'FIPS 180-4 §5.3.6.1'),
  openssl('sha512-256', 'SHA-512/256', 32, 128, 'FIPS 180-4 §5.3.6.2'),
  openssl('sha3-224', 'SHA3-224', 28, 144, 'FIPS 202'),
  openssl('sha3-256', 'SHA3-256', 32, 136, 'FIPS 202'),
  openssl('sha3-384', 'SHA3-384', 48, 104, 'FIPS 202'),
  openssl('sha3-512', 'SHA3-512', 64, 72, 'FIPS 202'),
  keccak(224), keccak(256), keccak(384), keccak(512),
  shake(128, 168),
  shake(256, 136),
  blake2b(256), blake2b(384),
  openssl('blake2b-512', 'BLAKE2b-512', 64, 128, 'RFC 7693', ['blake2b'], 'blake2b512'),
  openssl('blake2s-256', 'BLAKE2s-256', 32, 64, 'RFC 7693', ['blake2s'], 'blake2s256'),
  {
    // BLAKE3 is an XOF; the native binding serves the default 32 bytes, hash-wasm any other length.
    kind: 'xof', name: 'blake3', displayName: 'BLAKE3', aliases: ['blake3-256'], outputBytes: 32,
    outputLength: { min: 1, max: 1024 }, blockBytes: 64,
    reference: 'The BLAKE3 specification (2020)', implementation: '@napi-rs/blake-hash (native); hash-wasm for other lengths',
    create: (outputBytes) => {
      if (outputBytes !== 32) return wasmHasher(() => createBLAKE3(outputBytes * 8))(outputBytes)
      const hasher = new Blake3Hasher()
      return { update: (data) => { hasher.update(data) }, digest: () => hasher.digestBuffer() }
    },
  },
  openssl('ripemd160', 'RIPEMD-160', 20, 64, 'ISO/IEC 10118-3', ['rmd160']),
  {
    kind: 'digest', name: 'whirlpool', displayName: 'Whirlpool', aliases: ['whirlpool-512'], outputBytes: 64, blockBytes: 64,
    reference: 'ISO/IEC 10118-3 (Whirlpool, 2003 revision)', implementation: HASH_WASM, create: wasmHasher(() => createWhirlpool()),
  },
  openssl('sm3', 'SM3', 32, 64, 'GB/T 32905-2016; draft-sca-cfrg-sm3'),
  checksum('crc32', 'CRC-32', 4, 'CRC-32/ISO-HDLC (zlib, PNG, Ethernet)', ['crc32b', 'crc-32-iso-hdlc'], wasmHasher(() => createCRC32())),
  checksum('crc32c', 'CRC-32C', 4, 'CRC-32/ISCSI (Castagnoli), RFC 3720 §B.4', ['crc32-castagnoli', 'crc32-iscsi'], wasmHasher(() => createCRC32(0x82f63b78))),
  checksum('crc64', 'CRC-64/XZ', 8, 'CRC-64/XZ (ECMA-182 polynomial, reflected, as xz and Go\'s crc64.ECMA)', ['crc64-xz', 'crc64-ecma', 'crc64-ecma182'], wasmHasher(() => createCRC64())),
  checksum('adler32', 'Adler-32', 4, 'RFC 1950 §8.2', [], wasmHasher(() => createAdler32())),
  checksum('xxh32', 'XXH32', 4, 'xxHash specification (XXH32, seed 0)', ['xxhash32'], wasmHasher(() => createXXHash32())),
  checksum('xxh64', 'XXH64', 8, 'xxHash specification (XXH64, seed 0)', ['xxhash64', 'xxhash'], wasmHasher(() => createXXHash64())),
  checksum('xxh3', 'XXH3-64', 8, 'xxHash specification (XXH3_64bits, seed 0)', ['xxh3-64', 'xxhash3', 'xxh364'], wasmHasher(() => createXXHash3())),
  checksum('xxh128', 'XXH3-128', 16, 'xxHash specification (XXH3_128bits, seed 0)', ['xxhash128', 'xxh3-128'], wasmHasher(() => createXXHash128())),
  {
    kind: 'digest', name: 'ntlm', displayName: 'NTLM (NT hash)', aliases: ['nt', 'nthash', 'md4-utf16le'], outputBytes: 16,
    reference: 'MS-NLMP §3.3.1: MD4 of the UTF-16LE password', implementation: HASH_WASM,
    create: async () => utf16leOf(await wasmHasher(() => createMD4())(16)),
    weak: 'NTLM is an unsalted MD4 password hash',
  },
  {
    kind: 'digest', name: 'mysql41', displayName: 'MySQL 4.1+ PASSWORD()', aliases: ['mysql-sha1', 'mysql5', 'mysql-native-password'], outputBytes: 20,
    reference: 'MySQL mysql_native_password: "*" + uppercase hex of SHA1(SHA1(password))', implementation: OPENSSL,
    create: () => composed(opensslHasher('sha1')(20), sha1Of),
    format: (digest) => `*${Buffer.from(digest).toString('hex').toUpperCase()}`,
    formatPattern: /^\*[0-9A-Fa-f]{40}$/,
    weak: 'mysql41 is an unsalted double SHA-1',
  },
]
