/**
 * Finding a multipart delimiter (RFC 2046 §5.1.1: CRLF "--" boundary, 5 to 74 bytes) in a file part
 * without looking at every byte.
 *
 * busboy searches each body chunk with Buffer.indexOf, which on random data is a memchr for the
 * delimiter's first byte (CR) over every byte of the chunk. In hashd that was most of what a
 * multipart upload cost over a raw one (13–17 %, where issue 19 allows 5 %).
 *
 * This search reads one pair of bytes in every m − 1 (m the delimiter's length): any occurrence of
 * the delimiter covers m − 1 consecutive pair positions, so it covers exactly one probed pair, and
 * that pair is one of the delimiter's own. A probe whose pair does not occur in the delimiter (all but
 * about m of 65,536 on random data) rules out every start it covers. A probe whose pair does occur is
 * followed by a plain comparison at each start it covers. The probes are independent loads, which
 * the core overlaps: about half of Buffer.indexOf's time over the same chunks
 * (`npm run bench:multipart-floor` prints both).
 */

export class DelimiterSearch {
  readonly delimiter: Uint8Array
  /** Bit p set when the byte pair p (first byte + second × 256) occurs in the delimiter: 8 KiB, so it stays in L1. */
  private readonly pairs = new Uint8Array(65536 / 8)

  constructor(delimiter: Uint8Array) {
    if (delimiter.length < 2) throw new RangeError('a delimiter has at least two bytes')
    this.delimiter = delimiter
    for (let index = 0; index + 1 < delimiter.length; index++) {
      const pair = (delimiter[index] as number) | ((delimiter[index + 1] as number) << 8)
      this.pairs[pair >> 3] = (this.pairs[pair >> 3] as number) | (1 << (pair & 7))
    }
  }

  get length(): number {
    return this.delimiter.length
  }

  /**
   * The first start in [from, to) at which the whole delimiter occurs in `data`, or -1. Reads up to
   * `to + length - 2`, so `to` must be at most `data.length - length + 1`: every start searched has
   * the whole delimiter's room inside `data`.
   */
  find(data: Uint8Array, from: number, to: number): number {
    const span = this.delimiter.length - 1
    if (to > data.length - span) throw new RangeError('the search runs past the data')
    const pairs = this.pairs
    // A pair read as one little-endian 16-bit load (first byte low), at any alignment.
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
    // Probes q, q + span, …: the pair at q is covered by the starts q - span + 1 … q.
    let probe = from + span - 1
    const end = to + span - 1
    // Four probes a round: independent loads the core can overlap.
    for (; probe + 3 * span < end; probe += 4 * span) {
      const a = view.getUint16(probe, true)
      const b = view.getUint16(probe + span, true)
      const c = view.getUint16(probe + 2 * span, true)
      const d = view.getUint16(probe + 3 * span, true)
      const hits = (((pairs[a >> 3] as number) >> (a & 7)) | ((pairs[b >> 3] as number) >> (b & 7))
        | ((pairs[c >> 3] as number) >> (c & 7)) | ((pairs[d >> 3] as number) >> (d & 7))) & 1
      if (hits === 0) continue
      for (let each = probe; each <= probe + 3 * span; each += span) {
        const found = this.startsCoveredBy(data, each, from, to)
        if (found !== -1) return found
      }
    }
    for (; probe < end; probe += span) {
      const pair = view.getUint16(probe, true)
      if ((((pairs[pair >> 3] as number) >> (pair & 7)) & 1) === 0) continue
      const found = this.startsCoveredBy(data, probe, from, to)
      if (found !== -1) return found
    }
    return -1
  }

  /** The first start within [from, to) whose occurrence would cover the pair at `probe`, where the delimiter is. */
  private startsCoveredBy(data: Uint8Array, probe: number, from: number, to: number): number {
    const delimiter = this.delimiter
    const last = Math.min(probe, to - 1)
    for (let start = Math.max(from, probe - delimiter.length + 2); start <= last; start++) {
      let index = 0
      while (index < delimiter.length && data[start + index] === delimiter[index]) index++
      if (index === delimiter.length) return start
    }
    return -1
  }
}
