/**
 * The LAN Manager password hash (MS-NLMP §3.3.1, LMOWFv1): the password is uppercased, padded with
 * NULs or cut to 14 bytes, split into two 7-byte DES keys, and each key encrypts the constant
 * "KGS!@#$%"; the two ciphertexts are the 16-byte hash.
 *
 * Bytes are taken as given, with only ASCII a–z uppercased, and anything past 14 bytes is
 * silently dropped, as passlib's `lmhash` does for byte input. (Windows uppercases in the OEM code
 * page; pass such bytes with inputEncoding hex to reproduce that exactly.)
 *
 * Single DES is not in Node's default OpenSSL provider (des-ecb lives in the legacy provider), but
 * two-key triple DES is, and EDE with K1 = K2 is single DES: E_K(D_K(E_K(x))) = E_K(x).
 */
import { createCipheriv } from 'node:crypto'
import type { Hasher } from '../types.js'

const MAGIC = Buffer.from('KGS!@#$%', 'latin1')
const PASSWORD_BYTES = 14

/** Spreads 56 key bits over 8 bytes, 7 bits each; DES ignores the low (parity) bit. */
function desKey(seven: Uint8Array): Buffer {
  const key = Buffer.alloc(8)
  let carry = 0
  for (let i = 0; i < 7; i++) {
    const byte = seven[i] as number
    key[i] = (carry | (byte >>> i)) & 0xfe
    carry = (byte << (7 - i)) & 0xff
  }
  key[7] = carry & 0xfe
  return key
}

/** DES-ECB of one block, as 3DES-EDE with both keys equal. */
export function desEncryptBlock(key: Buffer, block: Buffer): Buffer {
  const cipher = createCipheriv('des-ede-ecb', Buffer.concat([key, key]), null)
  cipher.setAutoPadding(false)
  return Buffer.concat([cipher.update(block), cipher.final()])
}

export class LMHash implements Hasher {
  readonly #password = new Uint8Array(PASSWORD_BYTES)
  #length = 0

  update(data: Uint8Array): void {
    const take = Math.min(PASSWORD_BYTES - this.#length, data.length)
    this.#password.set(data.subarray(0, take), this.#length)
    this.#length += take
  }

  digest(): Uint8Array {
    const password = this.#password.map((byte) => (byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte))
    return Buffer.concat([
      desEncryptBlock(desKey(password.subarray(0, 7)), MAGIC),
      desEncryptBlock(desKey(password.subarray(7, 14)), MAGIC),
    ])
  }
}
