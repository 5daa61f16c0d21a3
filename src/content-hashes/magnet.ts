/**
 * A magnet link for one file, byte for byte as `rhash --magnet --btih --tth --ed2k --aich` prints
 * it (librhash's `rhash_print_magnet`):
 *
 *   magnet:?xl=<size>&dn=<name>&xt=urn:tree:tiger:<tth>&xt=urn:btih:<btih>&xt=urn:ed2k:<ed2k>&xt=urn:aich:<aich>
 *
 * The size in decimal; the name percent-encoded (every byte of its UTF-8 but RFC 3986's unreserved
 * `A–Z a–z 0–9 - . _ ~`, in lower-case hex, so a space is `%20`); TTH and AICH in lower-case base32,
 * the BitTorrent v1 info-hash and the ed2k hash in lower-case hex. The info-hash is btih's: the same
 * name and piece length (RHash's default for the size when none is given).
 *
 * It runs the tth, aich, btih and ed2k hashers of this registry and the algorithm registry side by
 * side over the same bytes.
 */
import { createEd2k } from '../algorithms/impl/ed2k.js'
import type { Hasher } from '../algorithms/types.js'
import { AichHash } from './aich.js'
import { BtihV1 } from './bittorrent.js'
import { hex } from './encoding.js'
import { TigerTreeHash } from './tth.js'
import type { ContentHasher } from './types.js'

/** RFC 3986 §2.3's unreserved characters stay; every other byte of the UTF-8 is `%xx`, in lower case as RHash writes it. */
export function magnetEncode(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const isUnreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
      || byte === 0x2d || byte === 0x2e || byte === 0x5f || byte === 0x7e
    out += isUnreserved ? String.fromCharCode(byte) : `%${byte.toString(16).padStart(2, '0')}`
  }
  return out
}

export class MagnetLink implements ContentHasher {
  readonly #name: string
  readonly #tth = new TigerTreeHash()
  readonly #aich = new AichHash()
  readonly #btih: BtihV1
  readonly #ed2k: Hasher
  #size = 0

  private constructor(name: string, btih: BtihV1, ed2k: Hasher) {
    this.#name = name
    this.#btih = btih
    this.#ed2k = ed2k
  }

  /** `pieceLength` or `size` as for btih: without a piece length, RHash's default needs the size up front. */
  static async create(name: string, pieceLength: number | undefined, size: number | undefined): Promise<MagnetLink> {
    const btih = new BtihV1(name, pieceLength, size)
    return new MagnetLink(name, btih, await createEd2k())
  }

  update(chunk: Uint8Array): void {
    this.#size += chunk.length
    this.#btih.update(chunk)
    this.#tth.update(chunk)
    this.#ed2k.update(chunk)
    this.#aich.update(chunk)
  }

  finish(): string {
    // btih first: it checks the size given up front, so a wrong one is its 422 and not a link.
    const btih = this.#btih.finish()
    return `magnet:?xl=${this.#size}&dn=${magnetEncode(this.#name)}`
      + `&xt=urn:tree:tiger:${this.#tth.finish().toLowerCase()}`
      + `&xt=urn:btih:${btih}`
      + `&xt=urn:ed2k:${hex(this.#ed2k.digest())}`
      + `&xt=urn:aich:${this.#aich.finish().toLowerCase()}`
  }
}
