/**
 * TLSH (Trend Micro's locality-sensitive hash), version 4 as the reference prints it: `T1` and 70
 * hex digits (128 buckets, a 1-byte checksum, a 5-byte window). Written here from the reference
 * (github.com/trendmicro/tlsh, src/tlsh_impl.cpp and src/tlsh_util.cpp; its two tables are copied
 * below) and checked against that reference's output (test/fixtures/tlsh/).
 *
 * Every byte, with the four before it, adds six triplets to 128 buckets through a Pearson hash; the
 * hash is each bucket's quartile (2 bits), the input's length on a log scale, two quartile ratios
 * and a checksum. State is the 5-byte window and 256 counters, whatever the input's size.
 */
import { problems } from '../problem.js'

/** The reference's Pearson permutation (tlsh_impl.cpp's v_table). */
export const PEARSON = Uint8Array.from([
  1, 87, 49, 12, 176, 178, 102, 166, 121, 193, 6, 84, 249, 230, 44, 163,
  14, 197, 213, 181, 161, 85, 218, 80, 64, 239, 24, 226, 236, 142, 38, 200,
  110, 177, 104, 103, 141, 253, 255, 50, 77, 101, 81, 18, 45, 96, 31, 222,
  25, 107, 190, 70, 86, 237, 240, 34, 72, 242, 20, 214, 244, 227, 149, 235,
  97, 234, 57, 22, 60, 250, 82, 175, 208, 5, 127, 199, 111, 62, 135, 248,
  174, 169, 211, 58, 66, 154, 106, 195, 245, 171, 17, 187, 182, 179, 0, 243,
  132, 56, 148, 75, 128, 133, 158, 100, 130, 126, 91, 13, 153, 246, 216, 219,
  119, 68, 223, 78, 83, 88, 201, 99, 122, 11, 92, 32, 136, 114, 52, 10,
  138, 30, 48, 183, 156, 35, 61, 26, 143, 74, 251, 94, 129, 162, 63, 152,
  170, 7, 115, 167, 241, 206, 3, 150, 55, 59, 151, 220, 90, 53, 23, 131,
  125, 173, 15, 238, 79, 95, 89, 16, 105, 137, 225, 224, 217, 160, 37, 123,
  118, 73, 2, 157, 46, 116, 9, 145, 134, 228, 207, 212, 202, 215, 69, 229,
  27, 188, 67, 124, 168, 252, 42, 4, 29, 108, 21, 247, 19, 205, 39, 203,
  233, 40, 186, 147, 198, 192, 155, 33, 164, 191, 98, 204, 165, 180, 117, 76,
  140, 36, 210, 172, 41, 54, 159, 8, 185, 232, 113, 196, 231, 47, 146, 120,
  51, 65, 28, 144, 254, 221, 93, 189, 194, 139, 112, 43, 71, 109, 184, 209,
])

/** The upper bound of each length class (tlsh_util.cpp's topval): the length's log-scale byte. */
const LENGTH_CLASS_TOP = [
  1, 2, 3, 5, 7, 11, 17, 25, 38, 57,
  86, 129, 194, 291, 437, 656, 854, 1110, 1443, 1876,
  2439, 3171, 3475, 3823, 4205, 4626, 5088, 5597, 6157, 6772,
  7450, 8195, 9014, 9916, 10907, 11998, 13198, 14518, 15970, 17567,
  19323, 21256, 23382, 25720, 28292, 31121, 34233, 37656, 41422, 45564,
  50121, 55133, 60646, 66711, 73382, 80721, 88793, 97672, 107439, 118183,
  130002, 143002, 157302, 173032, 190335, 209369, 230306, 253337, 278670, 306538,
  337191, 370911, 408002, 448802, 493682, 543050, 597356, 657091, 722800, 795081,
  874589, 962048, 1058252, 1164078, 1280486, 1408534, 1549388, 1704327, 1874759, 2062236,
  2268459, 2495305, 2744836, 3019320, 3321252, 3653374, 4018711, 4420582, 4862641, 5348905,
  5883796, 6472176, 7119394, 7831333, 8614467, 9475909, 10423501, 11465851, 12612437, 13873681,
  15261050, 16787154, 18465870, 20312458, 22343706, 24578077, 27035886, 29739474, 32713425, 35984770,
  39583245, 43541573, 47895730, 52685306, 57953837, 63749221, 70124148, 77136564, 84850228, 93335252,
  102668779, 112935659, 124229227, 136652151, 150317384, 165349128, 181884040, 200072456, 220079703, 242087671,
  266296456, 292926096, 322218735, 354440623, 389884688, 428873168, 471760495, 518936559, 570830240, 627913311,
  690704607, 759775136, 835752671, 919327967, 1011260767, 1112386880, 1223623232, 1345985727, 1480584256, 1628642751,
  1791507135, 1970657856, 2167723648, 2384496256, 2622945920, 2885240448, 3173764736, 3491141248, 3840255616, 4224281216,
]

const WINDOW = 5
const BUCKETS = 256
const EFFECTIVE_BUCKETS = 128
const CODE_BYTES = EFFECTIVE_BUCKETS / 4
/** Fewer bytes than this give no hash (the reference prints TNULL). */
export const TLSH_MIN_INPUT_BYTES = 50
/** The reference counts the length in 32 bits; beyond this its length class is not defined. */
export const TLSH_MAX_INPUT_BYTES = LENGTH_CLASS_TOP[LENGTH_CLASS_TOP.length - 1]!

const pearson = (salt: number, i: number, j: number, k: number): number => PEARSON[PEARSON[PEARSON[salt ^ i]! ^ j]! ^ k]!

/** The length's class: the first class whose top is at least the length (l_capturing). */
function lengthClass(length: number): number {
  let low = 0
  let high = LENGTH_CLASS_TOP.length - 1
  while (low < high) {
    const middle = (low + high) >> 1
    if (length <= LENGTH_CLASS_TOP[middle]!) high = middle
    else low = middle + 1
  }
  return low
}

/** The decoded fields of a TLSH hash, as the reference holds them (lsh_bin). */
export interface TlshDigest {
  checksum: number
  lValue: number
  q1Ratio: number
  q2Ratio: number
  /** 32 bytes, four 2-bit bucket codes each, in the reference's internal order. */
  code: Uint8Array
}

const swapNibbles = (byte: number): number => ((byte >> 4) | (byte << 4)) & 0xff

/** The reference's text form: `T1`, then checksum, length and ratios with nibbles swapped, then the code reversed. */
export function formatTlsh(digest: TlshDigest): string {
  const bytes = new Uint8Array(3 + CODE_BYTES)
  bytes[0] = swapNibbles(digest.checksum)
  bytes[1] = swapNibbles(digest.lValue)
  bytes[2] = swapNibbles(digest.q1Ratio | (digest.q2Ratio << 4))
  for (let i = 0; i < CODE_BYTES; i++) bytes[3 + i] = digest.code[CODE_BYTES - 1 - i]!
  return `T1${Buffer.from(bytes).toString('hex').toUpperCase()}`
}

/** `T1` and 70 hex digits, or the 70 digits alone (the form before version 4). Linear; in the ReDoS gate. */
export const TLSH_PATTERN = /^(?:T1)?[0-9A-Fa-f]{70}$/

export function parseTlsh(hash: string): TlshDigest | null {
  if (!TLSH_PATTERN.test(hash)) return null
  const bytes = Buffer.from(hash.startsWith('T1') ? hash.slice(2) : hash, 'hex')
  const q = swapNibbles(bytes[2]!)
  const code = new Uint8Array(CODE_BYTES)
  for (let i = 0; i < CODE_BYTES; i++) code[i] = bytes[3 + CODE_BYTES - 1 - i]!
  return { checksum: swapNibbles(bytes[0]!), lValue: swapNibbles(bytes[1]!), q1Ratio: q & 0x0f, q2Ratio: q >> 4, code }
}

/**
 * The hash's fields from the state after the last byte: the bucket counts (the first 128 are used),
 * the input's length and the checksum. Throws a 422 problem for input too short or too uniform.
 */
export function tlshFromCounts(buckets: Uint32Array, length: number, checksum: number): TlshDigest {
  if (length < TLSH_MIN_INPUT_BYTES) {
    throw problems.unprocessable('tlsh-input', 'Input not hashable with TLSH', `TLSH needs at least ${TLSH_MIN_INPUT_BYTES} bytes of input; this input has ${length}`)
  }
  const counts = buckets.subarray(0, EFFECTIVE_BUCKETS)
  const sorted = Uint32Array.from(counts).sort()
  const q1 = sorted[EFFECTIVE_BUCKETS / 4 - 1]!
  const q2 = sorted[EFFECTIVE_BUCKETS / 2 - 1]!
  const q3 = sorted[EFFECTIVE_BUCKETS - EFFECTIVE_BUCKETS / 4 - 1]!
  let nonZero = 0
  for (const count of counts) if (count > 0) nonZero++
  // The reference gives no hash unless more than half the buckets are used (and q3 > 0).
  if (q3 === 0 || nonZero <= EFFECTIVE_BUCKETS / 2) {
    throw problems.unprocessable('tlsh-input', 'Input not hashable with TLSH', 'The input is too uniform for TLSH: fewer than half of its 128 buckets are used')
  }
  const code = new Uint8Array(CODE_BYTES)
  for (let i = 0; i < CODE_BYTES; i++) {
    let byte = 0
    for (let j = 0; j < 4; j++) {
      const count = counts[4 * i + j]!
      if (count > q3) byte += 3 << (j * 2)
      else if (count > q2) byte += 2 << (j * 2)
      else if (count > q1) byte += 1 << (j * 2)
    }
    code[i] = byte
  }
  return {
    checksum,
    lValue: lengthClass(length),
    q1Ratio: Math.floor((q1 * 100) / q3) % 16,
    q2Ratio: Math.floor((q2 * 100) / q3) % 16,
    code,
  }
}

/** A streaming TLSH hasher. `digest()` throws a 422 problem for input too short or too uniform. */
export class TlshHasher {
  private readonly window = new Uint8Array(WINDOW)
  private readonly buckets = new Uint32Array(BUCKETS)
  private checksum = 0
  private length = 0

  update(data: Uint8Array): void {
    const { window, buckets } = this
    let checksum = this.checksum
    let position = this.length
    // The four bytes before the current one, newest first (b1 is the byte just before).
    let b1 = window[(position + 4) % WINDOW]!
    let b2 = window[(position + 3) % WINDOW]!
    let b3 = window[(position + 2) % WINDOW]!
    let b4 = window[(position + 1) % WINDOW]!
    for (let index = 0; index < data.length; index++, position++) {
      const b0 = data[index]!
      if (position >= WINDOW - 1) {
        checksum = pearson(1, b0, b1, checksum)
        // The six triplets of the 5-byte window, each with the reference's salt.
        buckets[pearson(49, b0, b1, b2)]!++
        buckets[pearson(12, b0, b1, b3)]!++
        buckets[pearson(178, b0, b2, b3)]!++
        buckets[pearson(166, b0, b2, b4)]!++
        buckets[pearson(84, b0, b1, b4)]!++
        buckets[pearson(230, b0, b3, b4)]!++
      }
      b4 = b3
      b3 = b2
      b2 = b1
      b1 = b0
    }
    // Keep the last four bytes where the next call looks for them.
    window[(position + 4) % WINDOW] = b1
    window[(position + 3) % WINDOW] = b2
    window[(position + 2) % WINDOW] = b3
    window[(position + 1) % WINDOW] = b4
    this.checksum = checksum
    this.length = position
    if (this.length > TLSH_MAX_INPUT_BYTES) throw problems.unprocessable('tlsh-input', 'Input not hashable with TLSH', `TLSH hashes at most ${TLSH_MAX_INPUT_BYTES} bytes`)
  }

  /** The hash's fields (digest() formats them). */
  finish(): TlshDigest {
    return tlshFromCounts(this.buckets, this.length, this.checksum)
  }

  digest(): string {
    return formatTlsh(this.finish())
  }
}

export function tlshOf(data: Uint8Array): string {
  const hasher = new TlshHasher()
  hasher.update(data)
  return hasher.digest()
}

/** The distance between two values on a circle of `range` (mod_diff). */
function circularDifference(x: number, y: number, range: number): number {
  const direct = Math.abs(x - y)
  return Math.min(direct, range - direct)
}

/**
 * Distance between two code bytes (four 2-bit bucket codes each), indexed by x · 256 + y: per bucket
 * the difference, except that 0 against 3 counts 6. Exported for the bank searches (banks/tlsh.ts).
 */
export const TLSH_BYTE_DISTANCE = (() => {
  const table = new Uint8Array(256 * 256)
  for (let x = 0; x < 256; x++) {
    for (let y = 0; y < 256; y++) {
      let distance = 0
      for (let pair = 0; pair < 4; pair++) {
        const d = Math.abs(((x >> (2 * pair)) & 3) - ((y >> (2 * pair)) & 3))
        distance += d === 3 ? 6 : d
      }
      table[x * 256 + y] = distance
    }
  }
  return table
})()

const LENGTH_MULT = 12
const QRATIO_MULT = 12

/**
 * The reference's distance (totalDiff): 0 for the same hash, growing without a fixed top. Without
 * the length term (`lengthTerm: false`, the reference's `-xlen`) files of different sizes compare
 * on their content alone.
 */
export function tlshDistance(a: TlshDigest, b: TlshDigest, lengthTerm = true): number {
  let distance = 0
  if (lengthTerm) {
    const lDiff = circularDifference(a.lValue, b.lValue, 256)
    distance += lDiff <= 1 ? lDiff : lDiff * LENGTH_MULT
  }
  for (const [x, y] of [[a.q1Ratio, b.q1Ratio], [a.q2Ratio, b.q2Ratio]] as const) {
    const qDiff = circularDifference(x, y, 16)
    distance += qDiff <= 1 ? qDiff : (qDiff - 1) * QRATIO_MULT
  }
  if (a.checksum !== b.checksum) distance++
  for (let i = 0; i < CODE_BYTES; i++) distance += TLSH_BYTE_DISTANCE[a.code[i]! * 256 + b.code[i]!]!
  return distance
}
