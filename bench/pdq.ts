/**
 * `npm run bench:pdq`: PDQ of a 12-megapixel JPEG (4000 × 3000, made here), decode included, in
 * hashd (sharp's decode, the reference's 512 × 512 prescale, the hash; one image at a time, in
 * this process) and, with PDQ_PHOTO_HASHER set to its path, in Meta's C++ `pdq-photo-hasher`
 * (built as test/fixtures/pdq/README.md says), given the same file BENCH_IMAGES times in one run
 * so that its start-up is spread over them. Both must give the same hash. Milliseconds per image,
 * wall time, BENCH_ROUNDS rounds of A B; the ratio is the reference's time over hashd's (higher is
 * better for hashd).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { pdqOfImage } from '../src/similarity/pdq/index.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const IMAGES = Number(process.env.BENCH_IMAGES ?? 10)
const reference = process.env.PDQ_PHOTO_HASHER
const WIDTH = 4000
const HEIGHT = 3000

/** A photo-like scene: smooth gradients, a few edges, and some grain, so JPEG has work to do. */
function scene(): Buffer {
  const pixels = Buffer.alloc(WIDTH * HEIGHT * 3)
  let seed = 1
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      const grain = (seed >>> 24) % 24
      const u = x / WIDTH
      const v = y / HEIGHT
      const edge = (u - 0.4) ** 2 + (v - 0.5) ** 2 < 0.05 ? 70 : 0
      const at = (y * WIDTH + x) * 3
      pixels[at] = Math.min(255, 60 + 120 * u + edge + grain)
      pixels[at + 1] = Math.min(255, 40 + 150 * v + grain)
      pixels[at + 2] = Math.min(255, 200 - 120 * u * v + grain - edge / 2)
    }
  }
  return pixels
}

const work = mkdtempSync(join(tmpdir(), 'hashd-bench-pdq-'))
try {
  const file = join(work, 'photo-12mp.jpg')
  const jpeg = await sharp(scene(), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).jpeg({ quality: 90 }).toBuffer()
  writeFileSync(file, jpeg)
  const limits = { maxPixels: 50_000_000 }
  const ours = (await pdqOfImage(jpeg, limits)).hash
  console.log(`PDQ of a ${WIDTH} × ${HEIGHT} JPEG (${(jpeg.length / 1e6).toFixed(1)} MB), decode included; ms an image, ${ROUNDS} rounds of ${IMAGES} images`)

  const hashd: number[] = []
  const cpp: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now()
    for (let image = 0; image < IMAGES; image++) await pdqOfImage(jpeg, limits)
    hashd.push((performance.now() - started) / IMAGES)
    if (reference) {
      const begun = performance.now()
      const out = execFileSync(reference, Array<string>(IMAGES).fill(file), { encoding: 'utf8' })
      cpp.push((performance.now() - begun) / IMAGES)
      const theirs = out.split('\n')[0]?.split(',')[0]
      if (theirs !== ours) throw new Error(`the reference's hash ${theirs} is not hashd's ${ours}`)
    }
  }
  const show = (values: number[]) => values.map((value) => value.toFixed(1)).join(' ')
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] as number
  console.log(`hashd              ${show(hashd)}`)
  if (reference) {
    console.log(`pdq-photo-hasher   ${show(cpp)}`)
    console.log(`ratio (reference ÷ hashd, medians): ${(median(cpp) / median(hashd)).toFixed(2)}; the same hash: ${ours}`)
  } else {
    console.log('pdq-photo-hasher   (set PDQ_PHOTO_HASHER to its path to compare)')
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
