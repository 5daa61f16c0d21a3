/**
 * The WebAssembly ssdeep and TLSH (src/similarity/wasm/similarity.c, wrapped by
 * src/similarity/fast.ts), which the registry runs: the committed binary is what
 * scripts/build-similarity-wasm.sh makes of the committed C; the hashes are the TLSH reference's
 * (test/fixtures/tlsh) and Debian's `ssdeep -b`, and the same as the TypeScript hashers' in any
 * chunking, across the 64 KiB one call into WebAssembly takes, on inputs that keep few block sizes in
 * play and on inputs that keep many (the C's two loops); hashers interleaved on one thread, or
 * reusing a finished one's instance, keep their own state.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { Problem } from '../src/problem.js'
import { FastSsdeepHasher, FastTlshHasher } from '../src/similarity/fast.js'
import { SsdeepHasher } from '../src/similarity/ssdeep.js'
import { TlshHasher } from '../src/similarity/tlsh.js'
import { Random } from './helpers/random.js'
import { similarityInputs } from './helpers/similarity-inputs.js'
import { run, skipUnless } from './helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const COMMITTED = join(ROOT, 'src', 'similarity', 'wasm', 'similarity-wasm.ts')

interface StreamHasher { update(data: Uint8Array): void, digest(): string }

/** Feeds `data` in pieces of the given sizes (cycled), then the rest; the digest, or the problem's detail. */
function hashIn(hasher: StreamHasher, data: Uint8Array, sizes: readonly number[]): string {
  let position = 0
  for (let i = 0; position < data.length; i++) {
    const size = sizes[i % sizes.length]!
    hasher.update(data.subarray(position, position + size))
    position += size
  }
  try {
    return hasher.digest()
  } catch (error) {
    if (error instanceof Problem) return `problem: ${error.detail}`
    throw error
  }
}

/** Chunkings that straddle the 64 KiB input, the 7- and 5-byte windows, and single bytes. */
const CHUNKINGS: readonly (readonly number[])[] = [[1 << 30], [1, 2, 3, 5, 7, 11, 4093], [65535, 2, 65537], [100_000, 3], [7, 65536, 1]]

/**
 * Seven bytes after which libfuzzy's rolling hash is 3·q − 1 with q a multiple of 2^22: each time
 * they pass, a piece ends at every block size up to 3·2^22, so many block sizes come into play
 * while the smallest are still in play too (more lanes than the C's fast loop holds).
 */
const ALL_SIZES_TRIGGER = Buffer.from('75a87319defded', 'hex')

function rollingHashOf(window: Uint8Array): number {
  let h1 = 0
  let h2 = 0
  let h3 = 0
  for (const c of window) {
    h2 = (h2 - h1 + 7 * c) | 0
    h1 = (h1 + c) | 0
    h3 = (h3 << 5) ^ c
  }
  return (h1 + h2 + h3 + 1) >>> 0
}

/** Random bytes with ALL_SIZES_TRIGGER every `every` bytes or so. */
function manyBlockSizes(random: Random, size: number, every: number): Buffer {
  const data = random.bytes(size)
  for (let at = random.int(every); at + 7 <= size; at += 1 + random.int(2 * every)) data.set(ALL_SIZES_TRIGGER, at)
  return data
}

function inputs(): { name: string, data: Buffer }[] {
  const random = new Random(4501)
  const list = similarityInputs()
  for (const size of [65_535, 65_536, 65_537, 200_000, 1_100_000]) list.push({ name: `random-extra-${size}`, data: random.bytes(size) })
  // 16 MiB: large enough that the block sizes past the first 16 lanes are the ones printed.
  for (const [size, every] of [[5000, 300], [70_000, 2000], [400_000, 5000], [2_000_000, 40_000], [16 * 1024 * 1024, 3000]] as const) {
    list.push({ name: `many-block-sizes-${size}`, data: manyBlockSizes(random, size, every) })
  }
  list.push({ name: 'zeros-300000', data: Buffer.alloc(300_000) })
  return list
}

describe('similarity wasm: the committed binary comes from the committed source', () => {
  it('scripts/build-similarity-wasm.sh rebuilds src/similarity/wasm/similarity-wasm.ts byte for byte', { skip: skipUnless('clang-16', 'wasm-ld-16') }, () => {
    const scratch = mkdtempSync(join(tmpdir(), 'hashd-similarity-wasm-'))
    try {
      const rebuilt = join(scratch, 'similarity-wasm.ts')
      execFileSync('bash', [join(ROOT, 'scripts', 'build-similarity-wasm.sh'), rebuilt], { stdio: 'pipe' })
      const wasmOf = (module: string) => /'([A-Za-z0-9+/=]+)'/.exec(module)?.[1]
      const committed = readFileSync(COMMITTED, 'utf8')
      const fresh = readFileSync(rebuilt, 'utf8')
      assert.equal(wasmOf(fresh), wasmOf(committed), 'the WebAssembly bytes differ: rerun scripts/build-similarity-wasm.sh and commit its output')
      assert.equal(fresh, committed)
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  })

  it('names its source and its compiler in a header', () => {
    const header = readFileSync(COMMITTED, 'utf8').split('\n').slice(0, 2).join('\n')
    assert.match(header, /^\/\/ Generated by scripts\/build-similarity-wasm\.sh from src\/similarity\/wasm\/similarity\.c with .*clang version 16\./)
    assert.match(header, /Do not edit/)
  })
})

describe('similarity wasm: ssdeep', () => {
  const list = inputs()

  it('the inputs reach many block sizes in play at once', () => {
    assert.equal(rollingHashOf(ALL_SIZES_TRIGGER) % 3, 0)
    assert.equal((rollingHashOf(ALL_SIZES_TRIGGER) / 3) % 2 ** 22, 0)
    // The TypeScript hasher's own bookkeeping: more than 16 block sizes in play at some point.
    const hasher = new SsdeepHasher()
    const state = hasher as unknown as { start: number, end: number }
    let widest = 0
    const data = list.find(({ name }) => name === 'many-block-sizes-400000')!.data
    for (let at = 0; at < data.length; at += 1000) {
      hasher.update(data.subarray(at, at + 1000))
      widest = Math.max(widest, state.end - state.start)
    }
    assert.ok(widest > 16, `at most ${widest} block sizes in play`)
  })

  it('equals the TypeScript hasher in any chunking', () => {
    for (const { name, data } of list) {
      const expected = hashIn(new SsdeepHasher(), data, [data.length || 1])
      for (const sizes of CHUNKINGS) assert.equal(hashIn(new FastSsdeepHasher(), data, sizes), expected, `${name} in pieces of ${sizes.join(',')}`)
    }
  })

  it('matches Debian\'s ssdeep command', { skip: skipUnless('ssdeep') }, () => {
    const scratch = mkdtempSync(join(tmpdir(), 'hashd-ssdeep-wasm-'))
    try {
      const chosen = list.filter(({ data }) => data.length >= 4096)
      const names = chosen.map(({ name, data }) => { const file = join(scratch, name); writeFileSync(file, data); return file })
      const lines = run('ssdeep', ['-b', ...names]).split('\n').slice(1)
      const printed = new Map(lines.map((line) => { const comma = line.indexOf(','); return [line.slice(comma + 2, -1), line.slice(0, comma)] as const }))
      assert.equal(printed.size, chosen.length)
      for (const { name, data } of chosen) assert.equal(hashIn(new FastSsdeepHasher(), data, [65537, 3]), printed.get(name), name)
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  })
})

describe('similarity wasm: TLSH', () => {
  it('is the reference\'s on the committed fixtures, in any chunking', () => {
    const expected = new Map(readFileSync(new URL('../../test/fixtures/tlsh/hashes.tsv', import.meta.url), 'utf8').trim().split('\n').map((line) => line.split('\t') as [string, string]))
    for (const { name, data } of similarityInputs()) {
      const want = expected.get(name)!
      for (const sizes of CHUNKINGS) {
        const got = hashIn(new FastTlshHasher(), data, sizes)
        if (want === 'TNULL') assert.match(got, /^problem: /, name)
        else assert.equal(got, want, `${name} in pieces of ${sizes.join(',')}`)
      }
    }
  })

  it('equals the TypeScript hasher, problems included', () => {
    for (const { name, data } of inputs()) {
      const expected = hashIn(new TlshHasher(), data, [data.length || 1])
      for (const sizes of CHUNKINGS) assert.equal(hashIn(new FastTlshHasher(), data, sizes), expected, `${name} in pieces of ${sizes.join(',')}`)
    }
  })
})

describe('similarity wasm: instances', () => {
  it('hashers interleaved on one thread keep their own state, and reused instances start clean', () => {
    const random = new Random(4502)
    const a = random.bytes(300_000)
    const b = random.bytes(200_001)
    const hashers = [new FastSsdeepHasher(), new FastTlshHasher(), new FastSsdeepHasher(), new FastTlshHasher()] as const
    for (let at = 0; at < a.length; at += 7777) {
      hashers[0].update(a.subarray(at, at + 7777))
      hashers[1].update(a.subarray(at, at + 7777))
      hashers[2].update(b.subarray(at, at + 7777))
      hashers[3].update(b.subarray(at, at + 7777))
    }
    const reference = (hasher: StreamHasher, data: Uint8Array) => hashIn(hasher, data, [data.length])
    assert.equal(hashers[0].digest(), reference(new SsdeepHasher(), a))
    assert.equal(hashers[1].digest(), reference(new TlshHasher(), a))
    assert.equal(hashers[2].digest(), reference(new SsdeepHasher(), b))
    assert.equal(hashers[3].digest(), reference(new TlshHasher(), b))
    // The instances are back in the pool: new hashers start from nothing.
    assert.equal(hashIn(new FastSsdeepHasher(), b, [1000]), reference(new SsdeepHasher(), b))
    assert.equal(hashIn(new FastTlshHasher(), a, [1000]), reference(new TlshHasher(), a))
    assert.equal(new FastSsdeepHasher().digest(), '3::')
  })

  it('a finished hasher refuses more input', () => {
    const hasher = new FastSsdeepHasher()
    hasher.digest()
    assert.throws(() => hasher.update(new Uint8Array(1)), /already finished/)
  })
})
