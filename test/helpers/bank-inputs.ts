/**
 * Bank inputs for the bank tests (test/similarity-banks*.test.ts): random hashes of each type with
 * planted near-duplicates, the way Meta's benchmark-query makes its haystack (random hashes, and
 * copies of some with a few bits flipped), so that searches find something at every distance.
 */
import { nearCopy } from './similarity-inputs.js'
import { Random } from './random.js'
import { ssdeepOf } from '../../src/similarity/ssdeep.js'

/** A PDQ hash (64 hex digits) with `bits` distinct random bits of `base` flipped. */
export function flipBits(random: Random, base: string, bits: number): string {
  const bytes = Buffer.from(base, 'hex')
  const chosen = new Set<number>()
  while (chosen.size < bits) chosen.add(random.int(256))
  for (const bit of chosen) bytes[bit >> 3]! ^= 1 << (bit & 7)
  return bytes.toString('hex')
}

/** `count` random PDQ hashes, then near-duplicates of the first `planted` at 1 to 40 bits. */
export function pdqHashes(random: Random, count: number, planted: number): string[] {
  const hashes = Array.from({ length: count }, () => random.bytes(32).toString('hex'))
  for (let i = 0; i < planted; i++) hashes.push(flipBits(random, hashes[i % count]!, random.range(1, 40)))
  return hashes
}

const hexDigit = (random: Random) => '0123456789ABCDEF'[random.int(16)]!

/**
 * A TLSH hash in the `T1` form with random fields; near-duplicates change a few code digits and
 * sometimes the checksum, the length and the ratios by a little.
 */
export function tlshHashes(random: Random, count: number, planted: number): string[] {
  const hashes: string[] = []
  for (let i = 0; i < count; i++) {
    let hex = ''
    for (let d = 0; d < 70; d++) hex += hexDigit(random)
    hashes.push(`T1${hex}`)
  }
  for (let i = 0; i < planted; i++) {
    const digits = hashes[i % count]!.slice(2).split('')
    const changes = random.range(0, 12)
    for (let c = 0; c < changes; c++) digits[6 + random.int(64)] = hexDigit(random)
    // Checksum, length and ratios: the first six digits (each byte's nibbles swapped in the text).
    for (const at of [0, 1, 2, 3, 4, 5]) {
      if (random.chance(0.2)) {
        const value = parseInt(digits[at]!, 16)
        digits[at] = ((value + random.pick([1, 15, 2, 14])) & 15).toString(16).toUpperCase()
      }
    }
    hashes.push(`T1${digits.join('')}`)
  }
  return hashes
}

/** ssdeep hashes of random text and of near-copies of it, so that scores spread over 0–100. */
export function ssdeepHashes(random: Random, count: number, planted: number): string[] {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'hash', 'bank', 'match', 'file', 'data', 'near', 'copy', ' ', '\n']
  const bases: Buffer[] = []
  const hashes: string[] = []
  for (let i = 0; i < count; i++) {
    const size = random.pick([300, 1000, 3000, 10_000, 30_000])
    const base = Buffer.from(random.text(words, size / 5))
    bases.push(base)
    hashes.push(ssdeepOf(base))
  }
  for (let i = 0; i < planted; i++) hashes.push(ssdeepOf(nearCopy(random, bases[i % count]!)))
  return hashes
}
