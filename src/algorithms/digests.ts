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
import { createEd2k } from './impl/ed2k.js'
import { Gost94 } from './impl/gost94.js'
import { HAS160 } from './impl/has160.js'
import { LMHash } from './impl/lm.js'
import { MD2 } from './impl/md2.js'
import { Streebog } from './impl/streebog.js'
import { Tiger } from './impl/tiger.js'
import type { DigestAlgorithm, Hasher } from './types.js'

const OPENSSL = 'OpenSSL (node:crypto)'
const HASH_WASM = 'hash-wasm (WASM)'
/** Algorithms no maintained package implements: written here, checked against published vectors and RHash. */
const HAND_WRITTEN = 'hashd (src/algorithms/impl)'
const HAND_WRITTEN_WASM = 'hashd (src/algorithms/impl, C compiled to WebAssembly)'

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

/** A fixed-length digest written here, in src/algorithms/impl/. */
function handWritten(name: string, displayName: string, outputBytes: number, blockBytes: number, reference: string, aliases: string[], create: () => Hasher): DigestAlgorithm {
  return { kind: 'digest', name, displayName, aliases, outputBytes, blockBytes, reference, implementation: HAND_WRITTEN, create }
}

export const digestAlgorithms: DigestAlgorithm[] = [
  {
    ...handWritten('md2', 'MD2', 16, 16, 'RFC 1319 (with erratum 555)', [], () => new MD2()),
    weak: 'MD2 is broken (preimage and collision attacks) and obsolete',
  },
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
      return { update: (data) => { hasher.update(Buffer.from(data.buffer, data.byteOffset, data.byteLength)) }, digest: () => hasher.digestBuffer() }
    },
  },
  openssl('ripemd160', 'RIPEMD-160', 20, 64, 'ISO/IEC 10118-3', ['rmd160']),
  {
    kind: 'digest', name: 'whirlpool', displayName: 'Whirlpool', aliases: ['whirlpool-512'], outputBytes: 64, blockBytes: 64,
    reference: 'ISO/IEC 10118-3 (Whirlpool, 2003 revision)', implementation: HASH_WASM, create: wasmHasher(() => createWhirlpool()),
  },
  openssl('sm3', 'SM3', 32, 64, 'GB/T 32905-2016; draft-sca-cfrg-sm3'),
  {
    ...handWritten('tiger', 'Tiger/192', 24, 64, 'Anderson & Biham, Tiger: A Fast New Hash Function (FSE 1996); byte order as RHash --tiger',
      ['tiger192', 'tiger-192', 'tiger192,3', 'tiger1'], () => new Tiger(1)),
    implementation: HAND_WRITTEN_WASM,
  },
  {
    ...handWritten('tiger2', 'Tiger2/192', 24, 64, 'Tiger with MD4-style 0x80 padding (Tiger reference page, 2005)', ['tiger2-192'], () => new Tiger(2)),
    implementation: HAND_WRITTEN_WASM,
  },
  handWritten('streebog-256', 'Streebog-256 (GOST R 34.11-2012)', 32, 64, 'RFC 6986 (GOST R 34.11-2012); byte order as gost12sum and RHash --gost12-256',
    ['streebog256', 'gost12-256', 'gostr3411-2012-256', 'gost-r-34.11-2012-256', 'stribog-256'], () => new Streebog(32)),
  handWritten('streebog-512', 'Streebog-512 (GOST R 34.11-2012)', 64, 64, 'RFC 6986 (GOST R 34.11-2012); byte order as gost12sum and RHash --gost12-512',
    ['streebog512', 'gost12-512', 'gostr3411-2012-512', 'gost-r-34.11-2012-512', 'stribog-512', 'streebog'], () => new Streebog(64)),
  handWritten('gost94', 'GOST R 34.11-94 (test parameters)', 32, 32, 'RFC 5831 (GOST R 34.11-94) with the standard\'s test S-boxes, as RHash --gost94',
    ['gost', 'gostr3411-94', 'gost-r-34.11-94', 'gost94-test'], () => new Gost94('test')),
  handWritten('gost94-cryptopro', 'GOST R 34.11-94 (CryptoPro parameters)', 32, 32, 'RFC 5831 with id-GostR3411-94-CryptoProParamSet (RFC 4357 §11.2), as RHash --gost94-cryptopro',
    ['gost-cryptopro', 'gostr3411-94-cryptopro', 'gost94cp'], () => new Gost94('cryptopro')),
  handWritten('has160', 'HAS-160', 20, 64, 'TTAS.KO-12.0011/R2 (Korean hash standard for KCDSA)', ['has-160'], () => new HAS160()),
  {
    kind: 'digest', name: 'ed2k', displayName: 'eD2k (eDonkey/eMule)', aliases: ['edonkey', 'edonkey2000', 'emule', 'ed2k-hash'], outputBytes: 16,
    reference: 'MD4 of the MD4s of 9,728,000-byte chunks; exact multiples append MD4(""), as RHash --ed2k', implementation: `${HAND_WRITTEN} over ${HASH_WASM} MD4`,
    create: createEd2k,
    weak: 'ed2k is built on MD4, which is broken (practical collisions)',
  },
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
    // FreeBSD and libxcrypt write the NT hash as crypt(3) "nthash", `$3$$` + hex: that is nt-crypt's.
    passwordForm: 'nt-crypt',
    weak: 'NTLM is an unsalted MD4 password hash',
  },
  {
    kind: 'digest', name: 'lm', displayName: 'LM (LAN Manager)', aliases: ['lmhash', 'lm-hash', 'lanman', 'lan-manager'], outputBytes: 16,
    reference: 'MS-NLMP §3.3.1 LMOWFv1: DES of "KGS!@#$%" under the uppercased, 14-byte padded password', implementation: `${HAND_WRITTEN} over ${OPENSSL} DES`,
    create: () => new LMHash(),
    weak: 'LM is an unsalted, case-insensitive hash of two 7-character halves; crackable in seconds',
  },
  {
    kind: 'digest', name: 'mysql41', displayName: 'MySQL 4.1+ PASSWORD()', aliases: ['mysql-sha1', 'mysql5', 'mysql-native-password'], outputBytes: 20,
    reference: 'MySQL mysql_native_password: "*" + uppercase hex of SHA1(SHA1(password))', implementation: OPENSSL,
    create: () => composed(opensslHasher('sha1')(20), sha1Of),
    format: (digest) => `*${Buffer.from(digest).toString('hex').toUpperCase()}`,
    formatPattern: /^\*[0-9A-Fa-f]{40}$/,
    // Dumps and tools also print it as bare hex (hashcat -m 300 takes it so): accepted when named.
    namedForm: (hash) => /^[0-9A-Fa-f]{40}$/.test(hash) ? `*${hash}` : null,
    weak: 'mysql41 is an unsalted double SHA-1',
  },
]
