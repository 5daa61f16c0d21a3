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
import { createMD4 } from 'hash-wasm'
import { createEd2k, ED2K_CHUNK_BYTES } from '../algorithms/impl/ed2k.js'
import type { Hasher } from '../algorithms/types.js'
import { AichHash, aichSegments } from './aich.js'
import { BtihV1, btihSegments } from './bittorrent.js'
import { hex } from './encoding.js'
import { fixedSegments, splitSegments, splitTogether, type DataSplit, type SegmentedHash } from './segments.js'
import { TigerTreeHash, tthSegments } from './tth.js'
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
    return link(this.#name, this.#size, this.#tth.finish(), btih, hex(this.#ed2k.digest()), this.#aich.finish())
  }
}

function link(name: string, size: number, tth: string, btih: string, ed2k: string, aich: string): string {
  return `magnet:?xl=${size}&dn=${magnetEncode(name)}&xt=urn:tree:tiger:${tth.toLowerCase()}&xt=urn:btih:${btih}&xt=urn:ed2k:${ed2k}&xt=urn:aich:${aich.toLowerCase()}`
}

/**
 * ed2k split by data (segments.ts): a segment is a chunk, each its MD4; the result is as
 * algorithms/impl/ed2k.ts gives it, RHash's "red" hash, which after a whole number of chunks adds
 * the MD4 of an empty one.
 */
const ed2kSegments: SegmentedHash = {
  segmentStart: fixedSegments(ED2K_CHUNK_BYTES),
  async segmentDigest() {
    const md4 = await createMD4()
    return { begin: () => { md4.init() }, update: (bytes) => { md4.update(bytes) }, end: () => md4.digest('binary') }
  },
  emptyIsOneSegment: true,
  async combine(chunks, length) {
    if (length < ED2K_CHUNK_BYTES) return hex(chunks[0] as Uint8Array)
    const md4 = await createMD4()
    md4.init()
    const last = length % ED2K_CHUNK_BYTES === 0 ? [(await createMD4()).init().digest('binary')] : []
    for (const chunk of [...chunks, ...last]) md4.update(chunk)
    return hex(md4.digest('binary'))
  },
}

/** The magnet link split by data: its TTH, btih, ed2k and AICH each split, in the same shares. Undefined where btih is. */
export function magnetSplit(name: string, pieceLength: number | undefined, size: number | undefined): DataSplit | undefined {
  const btih = btihSegments(name, pieceLength, size)
  if (btih === undefined) return undefined
  // btih first among the parts: it checks the size given up front.
  return splitTogether([btih, tthSegments, ed2kSegments, aichSegments].map(splitSegments),
    ([btihText, tth, ed2k, aich], length) => link(name, length, tth as string, btihText as string, ed2k as string, aich as string))
}
