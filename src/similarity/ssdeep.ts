/**
 * ssdeep: context-triggered piecewise hashing (CTPH), as libfuzzy 2.14 (ssdeep's library) computes
 * and compares it. Written here from the algorithm of libfuzzy's fuzzy.c (Tridgell's spamsum, with
 * Kornblum's and Oi's changes); checked against Debian's `ssdeep` and libfuzzy.so.2.
 *
 * A hash is `blocksize:hash1:hash2`: a rolling hash over a 7-byte window cuts the input into pieces
 * where it hits `-1 (mod blocksize)`, and each piece adds one base64 character (a 6-bit FNV-style
 * hash of the piece) to the hash of that block size; hash2 is the same at twice the block size.
 * The block size is the smallest `3·2^i` for which about 32–64 pieces are cut, which is only known
 * at the end, so the state runs every candidate block size still in play at once and drops the
 * smallest once it is clearly too small (libfuzzy's fuzzy_state): memory is bounded (31 × 64
 * characters) whatever the input's size.
 */

const ROLLING_WINDOW = 7
const MIN_BLOCKSIZE = 3
const HASH_INIT = 0x27
const NUM_BLOCKHASHES = 31
/** SPAMSUM_LENGTH: the most characters a block hash has. */
export const SPAMSUM_LENGTH = 64
/** The largest input libfuzzy hashes: the largest block size times 64 (192 GiB). */
export const SSDEEP_MAX_INPUT_BYTES = MIN_BLOCKSIZE * 2 ** (NUM_BLOCKHASHES - 1) * SPAMSUM_LENGTH

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const B64_CODES = Uint8Array.from(B64, (ch) => ch.charCodeAt(0))

/**
 * libfuzzy's sum_hash: FNV-1 (prime 0x01000193) kept to the 6 bits the base64 character uses; the
 * low 6 bits of a product depend only on the low 6 bits of its factors, so the table is exact.
 */
const SUM_TABLE = (() => {
  const table = new Uint8Array(64 * 64)
  for (let h = 0; h < 64; h++) {
    for (let c = 0; c < 64; c++) table[h * 64 + c] = (Math.imul(h, 0x01000193) ^ c) & 0x3f
  }
  return table
})()

const blockSizeAt = (index: number): number => MIN_BLOCKSIZE * 2 ** index

/** The characters of one block size's hash so far. */
interface BlockHash {
  digest: Uint8Array
  length: number
  /** The character hash2 ends with when cut to 32 characters (0 for none). */
  halfDigest: number
}

const newBlockHash = (): BlockHash => ({ digest: new Uint8Array(SPAMSUM_LENGTH), length: 0, halfDigest: 0 })

/**
 * A streaming ssdeep hasher; `digest()` gives the string `ssdeep -b` prints before the file name.
 * The per-byte work (the rolling hash over the last 7 bytes: an Adler-like h1 and h2 and a
 * shift/xor h3, and each block size's piece hash) runs on locals in `update`; only a trigger
 * point, about one byte in 3·2^start, leaves the loop.
 */
export class SsdeepHasher {
  private totalSize = 0
  private reduceBorder = MIN_BLOCKSIZE * SPAMSUM_LENGTH
  private start = 0
  private end = 1
  private readonly blocks: BlockHash[] = [newBlockHash()]
  /**
   * Each block size's running piece hash, and the one kept for the 32-character hash2. The two are
   * equal until a block has 32 characters (both reset at every cut before that), so the second is
   * only kept apart for those block sizes: the ones below `halfEnd` (the larger a block size, the
   * fewer its characters).
   */
  private readonly pieceHash = new Uint8Array(NUM_BLOCKHASHES).fill(HASH_INIT)
  private readonly halfPieceHash = new Uint8Array(NUM_BLOCKHASHES).fill(HASH_INIT)
  private halfEnd = 0
  private rollMask = 0
  private readonly window = new Uint8Array(ROLLING_WINDOW)
  private h1 = 0
  private h2 = 0
  private h3 = 0
  private n = 0
  /** The piece hash of the 32nd block size, kept once every block size is in play (-1 before). */
  private lastH = -1

  update(data: Uint8Array): void {
    this.totalSize += data.length
    if (this.totalSize > SSDEEP_MAX_INPUT_BYTES) throw new RangeError(`ssdeep hashes at most ${SSDEEP_MAX_INPUT_BYTES} bytes`)
    const { window, pieceHash, halfPieceHash } = this
    let { h1, h2, h3, n, start, end, halfEnd, rollMask, lastH } = this
    for (let k = 0; k < data.length; k++) {
      const c = data[k]!
      h2 = (h2 - h1 + ROLLING_WINDOW * c) | 0
      h1 = (h1 + c - window[n]!) | 0
      window[n] = c
      n = n === ROLLING_WINDOW - 1 ? 0 : n + 1
      h3 = (h3 << 5) ^ c
      const low = c & 0x3f
      for (let i = start; i < end; i++) pieceHash[i] = SUM_TABLE[(pieceHash[i]! << 6) | low]!
      for (let i = start; i < halfEnd; i++) halfPieceHash[i] = SUM_TABLE[(halfPieceHash[i]! << 6) | low]!
      if (lastH >= 0) lastH = SUM_TABLE[(lastH << 6) | low]!
      const horg = (h1 + h2 + h3 + 1) >>> 0
      // libfuzzy skips horg == 0: the sum 0xffffffff is not -1 (mod 3) once 1 is added in 32 bits.
      if (horg === 0) continue
      const h = (horg / MIN_BLOCKSIZE) >>> 0
      if ((h & rollMask) !== 0 || horg % MIN_BLOCKSIZE !== 0) continue
      this.lastH = lastH
      this.trigger(h)
      ;({ start, end, halfEnd, rollMask, lastH } = this)
    }
    Object.assign(this, { h1, h2, h3, n, lastH })
  }

  /** A trigger point: each block size it reaches ends a piece and adds a character. */
  private trigger(rolled: number): void {
    const { blocks, pieceHash, halfPieceHash } = this
    let h = rolled >>> this.start
    for (let i = this.start; i < this.end; i++) {
      const block = blocks[i]!
      // The first cut at this block size starts the next one (at most 30 times).
      if (block.length === 0) this.forkNext()
      const halfKept = block.length >= SPAMSUM_LENGTH / 2
      block.digest[block.length] = B64_CODES[pieceHash[i]!]!
      block.halfDigest = B64_CODES[halfKept ? halfPieceHash[i]! : pieceHash[i]!]!
      if (block.length < SPAMSUM_LENGTH - 1) {
        // From the 32nd character on, the half hash runs on from the piece hash's value here.
        if (!halfKept) halfPieceHash[i] = pieceHash[i]!
        // The last character takes every remaining piece: only reset while there is room.
        block.length++
        pieceHash[i] = HASH_INIT
        if (block.length < SPAMSUM_LENGTH / 2) {
          halfPieceHash[i] = HASH_INIT
          block.halfDigest = 0
        }
      } else {
        this.tryReduce()
      }
      if ((h & 1) !== 0) break
      h = h >>> 1
    }
    let halfEnd = this.start
    for (let i = this.start; i < this.end; i++) if (blocks[i]!.length >= SPAMSUM_LENGTH / 2) halfEnd = i + 1
    this.halfEnd = halfEnd
  }

  private forkNext(): void {
    const last = this.end - 1
    if (this.end < NUM_BLOCKHASHES) {
      this.blocks.push(newBlockHash())
      // The last block size has no characters yet, so its half hash is its piece hash.
      this.pieceHash[this.end] = this.pieceHash[last]!
      this.end++
    } else if (this.lastH < 0) {
      this.lastH = this.pieceHash[last]!
    }
  }

  /** Drops the smallest block size once the input is long enough that it can no longer be chosen. */
  private tryReduce(): void {
    if (this.end - this.start < 2) return
    if (this.reduceBorder >= this.totalSize) return
    if (this.blocks[this.start + 1]!.length < SPAMSUM_LENGTH / 2) return
    this.start++
    this.reduceBorder *= 2
    this.rollMask = this.rollMask * 2 + 1
  }

  digest(): string {
    const { blocks } = this
    const h = (this.h1 + this.h2 + this.h3) >>> 0
    let bi = this.start
    while (blockSizeAt(bi) * SPAMSUM_LENGTH < this.totalSize) bi++
    if (bi >= this.end) bi = this.end - 1
    while (bi > this.start && blocks[bi]!.length < SPAMSUM_LENGTH / 2) bi--

    const first = blocks[bi]!
    let hash1 = Buffer.from(first.digest.subarray(0, first.length)).toString('latin1')
    // The piece still open adds a last character (none when the rolling hash is 0, libfuzzy's rule).
    const last1 = h !== 0 ? B64_CODES[this.pieceHash[bi]!]! : first.digest[first.length]!
    if (last1 !== 0) hash1 += String.fromCharCode(last1)
    let hash2 = ''
    if (bi < this.end - 1) {
      const second = blocks[bi + 1]!
      const kept = Math.min(second.length, SPAMSUM_LENGTH / 2 - 1)
      hash2 = Buffer.from(second.digest.subarray(0, kept)).toString('latin1')
      const halfH = second.length >= SPAMSUM_LENGTH / 2 ? this.halfPieceHash[bi + 1]! : this.pieceHash[bi + 1]!
      const last2 = h !== 0 ? B64_CODES[halfH]! : second.halfDigest
      if (last2 !== 0) hash2 += String.fromCharCode(last2)
    } else if (h !== 0) {
      hash2 = bi === 0 ? B64[this.pieceHash[bi]!]! : B64[this.lastH]!
    }
    return `${blockSizeAt(bi)}:${hash1}:${hash2}`
  }
}

/** The ssdeep hash of a whole buffer (libfuzzy's fuzzy_hash_buf). */
export function ssdeepOf(data: Uint8Array): string {
  const hasher = new SsdeepHasher()
  hasher.update(data)
  return hasher.digest()
}

/**
 * What an ssdeep hash looks like: a block size, then two base64 strings of at most 64 characters.
 * Linear (no nested quantifiers); registered in test/helpers/regexes.ts for the ReDoS gate.
 */
export const SSDEEP_PATTERN = /^[1-9][0-9]{0,10}:[A-Za-z0-9+/]{0,64}:[A-Za-z0-9+/]{0,64}$/

export interface ParsedSsdeep {
  blockSize: number
  hash1: string
  hash2: string
}

/** Splits a hash of SSDEEP_PATTERN's form, or returns null. */
export function parseSsdeep(hash: string): ParsedSsdeep | null {
  if (!SSDEEP_PATTERN.test(hash)) return null
  const [blockSize, hash1, hash2] = hash.split(':') as [string, string, string]
  return { blockSize: Number(blockSize), hash1, hash2 }
}

/** libfuzzy's copy_eliminate_sequences: runs of one character longer than 3 are cut to 3. */
function eliminateSequences(text: string): string {
  let out = ''
  let run = 0
  for (let i = 0; i < text.length; i++) {
    if (i > 0 && text[i] === text[i - 1]) {
      if (++run >= 3) { run = 3; continue }
    } else {
      run = 0
    }
    out += text[i]
  }
  return out
}

/** Whether two strings share a substring of 7 characters (the rolling window), libfuzzy's gate. */
function hasCommonSubstring(s1: string, s2: string): boolean {
  if (s1.length < ROLLING_WINDOW || s2.length < ROLLING_WINDOW) return false
  const windows = new Set<string>()
  for (let i = 0; i + ROLLING_WINDOW <= s1.length; i++) windows.add(s1.slice(i, i + ROLLING_WINDOW))
  for (let j = 0; j + ROLLING_WINDOW <= s2.length; j++) {
    if (windows.has(s2.slice(j, j + ROLLING_WINDOW))) return true
  }
  return false
}

/**
 * libfuzzy's edit_distn: insertions and deletions cost 1 and a substitution 2, so the distance is
 * `len1 + len2 − 2·LCS`. Both strings are at most 64 characters.
 */
function weightedEditDistance(s1: string, s2: string): number {
  let previous = new Uint8Array(s2.length + 1)
  let current = new Uint8Array(s2.length + 1)
  for (let i = 1; i <= s1.length; i++) {
    for (let j = 1; j <= s2.length; j++) {
      current[j] = s1[i - 1] === s2[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!)
    }
    [previous, current] = [current, previous]
  }
  return s1.length + s2.length - 2 * previous[s2.length]!
}

/** libfuzzy's score_strings: 0–100 for two block hashes at one block size. */
function scoreStrings(s1: string, s2: string, blockSize: number): number {
  if (!hasCommonSubstring(s1, s2)) return 0
  let score = weightedEditDistance(s1, s2)
  score = Math.floor((score * SPAMSUM_LENGTH) / (s1.length + s2.length))
  score = Math.floor((100 * score) / SPAMSUM_LENGTH)
  score = 100 - score
  // Small block sizes: a short hash must not claim a big match (the cap grows with the block size).
  if (blockSize >= Math.floor((99 + ROLLING_WINDOW) / ROLLING_WINDOW) * MIN_BLOCKSIZE) return score
  return Math.min(score, Math.floor(blockSize / MIN_BLOCKSIZE) * Math.min(s1.length, s2.length))
}

/**
 * libfuzzy's fuzzy_compare: 0 (no match) to 100. Hashes whose block sizes are neither equal nor a
 * factor of two apart cannot be compared and score 0. Both arguments must be of SSDEEP_PATTERN's form.
 */
export function ssdeepCompare(a: ParsedSsdeep, b: ParsedSsdeep): number {
  const { blockSize: bs1 } = a
  const { blockSize: bs2 } = b
  if (bs1 !== bs2 && bs1 * 2 !== bs2 && !(bs1 % 2 === 0 && bs1 / 2 === bs2)) return 0
  const a1 = eliminateSequences(a.hash1)
  const a2 = eliminateSequences(a.hash2)
  const b1 = eliminateSequences(b.hash1)
  const b2 = eliminateSequences(b.hash2)
  if (bs1 === bs2 && a1 === b1 && a2 === b2) return 100
  if (bs1 === bs2) return Math.max(scoreStrings(a1, b1, bs1), scoreStrings(a2, b2, bs1 * 2))
  if (bs1 * 2 === bs2) return scoreStrings(b1, a2, bs2)
  return scoreStrings(a1, b2, bs1)
}
