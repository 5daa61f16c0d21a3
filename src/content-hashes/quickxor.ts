/**
 * OneDrive's and SharePoint's `quickXorHash` (Microsoft, "QuickXorHash", OneDrive developer code
 * snippets; the reference is a C# HashAlgorithm): a 160-bit value in which byte number n of the
 * file is XORed in at bit (11 · n) mod 160, wrapping around the end; then the file's length, as a
 * 64-bit little-endian number, is XORed into the last 8 of its 20 bytes. It is printed in base64.
 *
 * Since 11 · 160 ≡ 0 (mod 160), every byte whose position is the same mod 160 lands on the same
 * bits. So the bytes are first XORed into 160 lanes, by position mod 160, four at a time where
 * they line up, and the lanes are placed at their bit offsets once, at the end.
 */
import { base64 } from './encoding.js'
import { fixedSegments, type SegmentedHash } from './segments.js'
import type { ContentHasher } from './types.js'

const WIDTH_BYTES = 20
const LANES = 160
const LANE_WORDS = LANES / 4
const SHIFT_BITS = 11
/** Input is copied into an aligned scratch buffer to XOR it as 32-bit words. */
const SCRATCH_BYTES = 64 * 1024

export class QuickXorHash implements ContentHasher {
  readonly #lanes = new Uint8Array(LANES)
  readonly #laneWords = new Uint32Array(this.#lanes.buffer)
  readonly #scratch = new Uint8Array(SCRATCH_BYTES)
  readonly #scratchWords = new Uint32Array(this.#scratch.buffer)
  /** The lane the next byte goes to: the file position mod 160. */
  #lane = 0
  #length = 0

  /** `start`: the file position of the first byte this hasher sees (a segment's, segments.ts). */
  constructor(start = 0) {
    this.restart(start)
  }

  /** Starts over at file position `start`, keeping the scratch buffer (one hasher serves every segment of a share). */
  restart(start: number): void {
    this.#lanes.fill(0)
    this.#lane = start % LANES
    this.#length = 0
  }

  /** The 160 lanes, each the XOR of the bytes seen at positions ≡ its index (mod 160). */
  lanes(): Uint8Array {
    return this.#lanes.slice()
  }

  update(chunk: Uint8Array): void {
    const lanes = this.#lanes
    const end = chunk.length
    let position = 0
    let lane = this.#lane
    this.#length += end
    while (position < end && (lane & 3) !== 0) {
      lanes[lane] = (lanes[lane] as number) ^ (chunk[position++] as number)
      if (++lane === LANES) lane = 0
    }
    const laneWords = this.#laneWords, scratchWords = this.#scratchWords
    while (end - position >= 4) {
      const take = Math.min(SCRATCH_BYTES, (end - position) & ~3)
      this.#scratch.set(chunk.subarray(position, position + take))
      let word = lane >>> 2
      // Runs up to the end of the lanes, then around: no test per word.
      for (let index = 0, words = take >>> 2; index < words;) {
        const run = Math.min(LANE_WORDS - word, words - index)
        for (let step = 0; step < run; step++) {
          laneWords[word + step] = (laneWords[word + step] as number) ^ (scratchWords[index + step] as number)
        }
        index += run
        word += run
        if (word === LANE_WORDS) word = 0
      }
      lane = word << 2
      position += take
    }
    while (position < end) {
      lanes[lane] = (lanes[lane] as number) ^ (chunk[position++] as number)
      if (++lane === LANES) lane = 0
    }
    this.#lane = lane
  }

  finish(): string {
    return finishLanes(this.#lanes, this.#length)
  }
}

/** Places the lanes at their bit offsets and XORs in the length. */
function finishLanes(lanes: Uint8Array, length: number): string {
  const out = new Uint8Array(WIDTH_BYTES)
  for (let lane = 0; lane < LANES; lane++) {
    const byte = lanes[lane] as number
    if (byte === 0) continue
    const bit = (SHIFT_BITS * lane) % (8 * WIDTH_BYTES)
    const at = bit >>> 3, shift = bit & 7
    out[at] = (out[at] as number) ^ ((byte << shift) & 0xff)
    if (shift > 0) {
      const next = (at + 1) % WIDTH_BYTES
      out[next] = (out[next] as number) ^ (byte >>> (8 - shift))
    }
  }
  // The length, 64-bit little-endian, into bytes 12..19. A double holds it exactly below 2^53.
  const low = length >>> 0, high = Math.floor(length / 0x1_0000_0000)
  for (let index = 0; index < 4; index++) {
    out[12 + index] = (out[12 + index] as number) ^ ((low >>> (8 * index)) & 0xff)
    out[16 + index] = (out[16 + index] as number) ^ ((high >>> (8 * index)) & 0xff)
  }
  return base64(out)
}

/**
 * Split by data (segments.ts): a byte's place depends only on its position, so each 4 MiB segment's
 * lanes are XORed together at the end.
 */
export const quickXorSegments: SegmentedHash = {
  segmentStart: fixedSegments(4 * 1024 * 1024),
  segmentDigest() {
    const hash = new QuickXorHash()
    return { begin: (_index, start) => hash.restart(start), update: (bytes) => hash.update(bytes), end: () => hash.lanes() }
  },
  emptyIsOneSegment: false,
  combine(segments, length) {
    const lanes = new Uint8Array(LANES)
    for (const segment of segments) for (let lane = 0; lane < LANES; lane++) lanes[lane] = (lanes[lane] as number) ^ (segment[lane] as number)
    return finishLanes(lanes, length)
  },
}
