/**
 * The inputs the similarity tests hash, made from a seed so that the reference outputs committed
 * under test/fixtures/tlsh/ can be compared without the files: empty, tiny, random and text of
 * sizes around TLSH's 50-byte and 256-byte limits up to 3 MiB, uniform inputs that have no TLSH, and
 * near-copies (bytes changed, runs inserted and deleted, the start repeated) whose distances and
 * scores spread across the scale.
 */
import { Random } from './random.js'

const MiB = 1024 * 1024

export interface SimilarityInput {
  name: string
  data: Buffer
}

/** Bytes changed, runs inserted and deleted, sometimes the start repeated at the end. */
export function nearCopy(random: Random, base: Buffer): Buffer {
  let copy = Buffer.from(base)
  const edits = random.pick([1, 3, 10, 30, 100])
  for (let edit = 0; edit < edits && copy.length > 1; edit++) {
    const at = random.int(copy.length)
    const kind = random.int(3)
    if (kind === 0) copy[at] = random.int(256)
    else if (kind === 1) copy = Buffer.concat([copy.subarray(0, at), random.bytes(random.range(1, 50)), copy.subarray(at)])
    else copy = Buffer.concat([copy.subarray(0, at), copy.subarray(at + random.range(1, 50))])
  }
  if (random.chance(0.3)) copy = Buffer.concat([copy, copy.subarray(0, copy.length >> random.int(3))])
  return copy
}

const TEXT = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', ' ', ' ', '\n', '.', 'the ', 'and ', 'of ']

/** The same list on every machine (seed 45). */
export function similarityInputs(): SimilarityInput[] {
  const random = new Random(45)
  const inputs: SimilarityInput[] = []
  const sizes = [0, 1, 6, 7, 49, 50, 51, 64, 100, 191, 192, 193, 255, 256, 257, 1000, 4096, 10_000, 65_536, 300_000, 3 * MiB]
  for (const size of sizes) {
    inputs.push({ name: `random-${size}`, data: random.bytes(size) })
    inputs.push({ name: `text-${size}`, data: Buffer.from(random.text(TEXT, size)).subarray(0, size) })
  }
  for (const size of [0, 100, 5000]) inputs.push({ name: `uniform-${size}`, data: Buffer.alloc(size, 0x41) })
  inputs.push({ name: 'two-bytes-5000', data: Buffer.from('ab'.repeat(2500)) })
  for (let base = 0; base < 24; base++) {
    const original = base % 2 === 0
      ? random.bytes(random.pick([500, 3000, 20_000, 120_000]))
      : Buffer.from(random.text(TEXT, random.pick([2000, 40_000])))
    inputs.push({ name: `family-${base}-0`, data: original })
    for (let copy = 1; copy <= 3; copy++) inputs.push({ name: `family-${base}-${copy}`, data: nearCopy(random, original) })
  }
  return inputs
}

/**
 * Inputs for TLSH split by data over hash threads (fast.ts's FastTlshShareHasher counts spans of
 * 64 KiB): lengths that end just before, on and just after a span's edge, and longer ones whose
 * spans' first triplets read the last bytes of a span another share counted; random and text.
 * The same list on every machine (seed 46); their reference hashes are test/fixtures/tlsh/split.tsv.
 */
export function tlshSplitInputs(): SimilarityInput[] {
  const random = new Random(46)
  const span = 64 * 1024
  const inputs: SimilarityInput[] = []
  for (const size of [span - 1, span, span + 1, span + 2, span + 3, span + 4, span + 5, 3 * span + 3, 5 * span + 2, MiB + 1, 2 * MiB + 4]) {
    inputs.push({ name: `random-${size}`, data: random.bytes(size) })
    inputs.push({ name: `text-${size}`, data: Buffer.from(random.text(TEXT, size)).subarray(0, size) })
  }
  return inputs
}
