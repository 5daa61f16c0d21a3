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
 * the core overlaps: under a third of Buffer.indexOf's time over the same chunks
 * (`npm run bench:multipart-floor` prints both).
 */

/**
 * The hot loop, kept apart so that it holds no call (a hit's check is the caller's), reads only its
 * arguments, and adds offsets computed once: from `probe`, four probes a round (independent loads
 * the core overlaps), the first round in which a probe's pair is in `pairs`. Its first probe, or
 * the first probe of the rounds that no longer fit before `end`. Written so, with the pair set in
 * 32-bit words, the search alone over 256 MiB of cached chunks read 5.2 ms in
 * `npm run bench:multipart-floor`, where the same loop inside `find` had read 8.1.
 */
function firstRoundWithPair(view: DataView, pairs: Uint32Array, probe: number, end: number, span: number): number {
  const two = span + span
  const three = two + span
  const four = two + two
  for (const last = end - three; probe < last; probe += four) {
    const a = view.getUint16(probe, true)
    const b = view.getUint16(probe + span, true)
    const c = view.getUint16(probe + two, true)
    const d = view.getUint16(probe + three, true)
    // Bit p of the set is bit (p mod 32) of word p >> 5; `>>>` takes its count mod 32.
    if ((((pairs[a >> 5] as number) >>> a | (pairs[b >> 5] as number) >>> b | (pairs[c >> 5] as number) >>> c | (pairs[d >> 5] as number) >>> d) & 1) !== 0) return probe
  }
  return probe
}

export class DelimiterSearch {
  readonly delimiter: Uint8Array
  /** Bit p set when the byte pair p (first byte + second × 256) occurs in the delimiter: 8 KiB, so it stays in L1. */
  private readonly pairs = new Uint32Array(65536 / 32)

  constructor(delimiter: Uint8Array) {
    if (delimiter.length < 2) throw new RangeError('a delimiter has at least two bytes')
    this.delimiter = delimiter
    for (let index = 0; index + 1 < delimiter.length; index++) {
      const pair = (delimiter[index] as number) | ((delimiter[index + 1] as number) << 8)
      this.pairs[pair >> 5] = (this.pairs[pair >> 5] as number) | (1 << (pair & 31))
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
    for (;;) {
      probe = firstRoundWithPair(view, pairs, probe, end, span)
      if (probe + 3 * span >= end) break
      for (let each = probe; each <= probe + 3 * span; each += span) {
        const found = this.startsCoveredBy(data, each, from, to)
        if (found !== -1) return found
      }
      probe += 4 * span
    }
    for (; probe < end; probe += span) {
      const pair = view.getUint16(probe, true)
      if ((((pairs[pair >> 5] as number) >>> pair) & 1) === 0) continue
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
