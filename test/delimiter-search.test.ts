/**
 * src/upload/delimiter-search.ts against Node's own Buffer.prototype.indexOf, the independent
 * reference: for every case, `find(data, from, to)` must be the first start in [from, to) at which
 * indexOf finds the whole delimiter, or -1. Random data with the delimiter planted at and around
 * the edges of the searched range (at `from`, at `to - 1`, just before `from`, across `to`), data
 * made of the delimiter's own bytes and of near misses (the delimiter with one byte changed), the
 * delimiters multipart senders use (curl's, a browser's, the shortest and the longest RFC 2046
 * allows, one of repeated bytes), views at odd byte offsets of a larger buffer, and the edges of
 * the API (from == to, the RangeError).
 *
 * The data comes from a seeded generator (xorshift32), so every case can be replayed: a failure
 * names its seed; HASHD_DELIMITER_SEED picks another base seed to explore.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DelimiterSearch } from '../src/upload/delimiter-search.js'
import { Random } from './helpers/random.js'

const BASE_SEED = Number(process.env.HASHD_DELIMITER_SEED ?? 0x5eed_2026) >>> 0 || 0x5eed_2026

/** The seed of case `index` of a test named `name`: independent cases, each replayable alone. */
function caseSeed(name: string, index: number): number {
  let hash = BASE_SEED
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0
  return (Math.imul(hash ^ index, 0x9e3779b1) >>> 0) || 1
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const HEX = '0123456789abcdef'
const fixed = new Random(0xdecaf)
const chars = (alphabet: string, count: number): string => Array.from({ length: count }, () => fixed.pick([...alphabet])).join('')
const latin1 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'latin1'))

/** The delimiters under test: CRLF "--" boundary (RFC 2046 §5.1.1), and a few the class must also handle. */
const DELIMITERS: Array<[string, Uint8Array]> = [
  ['curl (24 dashes and 16 hex digits)', latin1(`\r\n--${'-'.repeat(24)}${chars(HEX, 16)}`)],
  ['a browser (WebKitFormBoundary and 16 letters and digits)', latin1(`\r\n------WebKitFormBoundary${chars(ALNUM, 16)}`)],
  ['the shortest (a 1-character boundary)', latin1('\r\n--x')],
  ['the longest (a 70-character boundary, 74 bytes)', latin1(`\r\n--${chars(`${ALNUM}'()+_,-./:=? `, 69)}z`)],
  ['repeated bytes (\\r\\n-- and 30 × a)', latin1(`\r\n--${'a'.repeat(30)}`)],
  ['all dashes but the CRLF', latin1(`\r\n${'-'.repeat(40)}`)],
  ['two bytes (one pair, every pair probed)', latin1('\r\n')],
  ['three bytes of one value', latin1('aaa')],
  ['random bytes, 6 long', new Uint8Array([0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x80])],
]

/** Buffer.prototype.indexOf over the same bytes: the first start in [from, to), or -1. */
function reference(data: Uint8Array, delimiter: Uint8Array, from: number, to: number): number {
  if (from >= to) return -1
  const found = Buffer.from(data.buffer, data.byteOffset, data.byteLength).indexOf(delimiter, from)
  return found !== -1 && found < to ? found : -1
}

/** The largest `to` the search accepts for `data`. */
const maxTo = (data: Uint8Array, delimiter: Uint8Array): number => data.length - delimiter.length + 1

function plant(data: Uint8Array, delimiter: Uint8Array, start: number): void {
  // Only where it fits whole inside the data; a start outside is skipped.
  if (start < 0 || start + delimiter.length > data.length) return
  data.set(delimiter, start)
}

/** The ways a case's bytes are made before delimiters are planted. */
type Fill = 'random' | 'own bytes' | 'near misses' | 'crlf and dashes'

function fillData(random: Random, data: Uint8Array, delimiter: Uint8Array, fill: Fill): void {
  if (fill === 'random') {
    random.fill(data)
    return
  }
  if (fill === 'own bytes') {
    // Every byte is one of the delimiter's: every probed pair may be one of its pairs.
    for (let index = 0; index < data.length; index++) data[index] = delimiter[random.int(delimiter.length)] as number
    return
  }
  if (fill === 'crlf and dashes') {
    const bytes = [0x0d, 0x0a, 0x2d, 0x2d, 0x2d, delimiter[delimiter.length - 1] as number]
    for (let index = 0; index < data.length; index++) data[index] = random.pick(bytes)
    return
  }
  // Near misses: the delimiter over and over with one byte changed (most often its last), some
  // back to back, some cut short, with a little noise between.
  let at = 0
  while (at < data.length) {
    const miss = Uint8Array.from(delimiter)
    const changed = random.chance(0.6) ? miss.length - 1 : random.int(miss.length)
    miss[changed] = ((miss[changed] as number) + random.range(1, 255)) & 0xff
    const length = random.chance(0.8) ? miss.length : random.range(1, miss.length)
    data.set(miss.subarray(0, Math.min(length, data.length - at)), at)
    at += length
    if (random.chance(0.3)) {
      const noise = Math.min(random.range(0, 3), data.length - at)
      random.fill(data, at, at + noise)
      at += noise
    }
  }
}

function check(search: DelimiterSearch, data: Uint8Array, from: number, to: number, label: () => string): void {
  const expected = reference(data, search.delimiter, from, to)
  let actual: number
  try {
    actual = search.find(data, from, to)
  } catch (error) {
    assert.fail(`${label()}: find(data, ${from}, ${to}) threw ${String(error)}`)
  }
  if (actual !== expected) {
    assert.fail(`${label()}: find(data, ${from}, ${to}) = ${actual}, Buffer.indexOf says ${expected} `
      + `(length ${data.length}, byteOffset ${data.byteOffset}, delimiter ${JSON.stringify(Buffer.from(search.delimiter).toString('latin1'))})`)
  }
}

/** A case's data: a view at a random (often odd) offset of a larger buffer, or a buffer of its own. */
function makeView(random: Random, length: number): Uint8Array {
  if (random.chance(0.3)) return new Uint8Array(length)
  const before = random.range(1, 9)
  const after = random.range(0, 9)
  const parent = new ArrayBuffer(before + length + after)
  // The bytes around the view are random too: a search that reads past its view finds them.
  random.fill(new Uint8Array(parent))
  return random.chance(0.5) ? new Uint8Array(parent, before, length) : Buffer.from(parent, before, length)
}

describe('DelimiterSearch.find matches Buffer.indexOf', () => {
  const fills: Fill[] = ['random', 'random', 'own bytes', 'near misses', 'crlf and dashes']

  for (const [name, delimiter] of DELIMITERS) {
    it(`${name}: planted at and around from and to, over random data, its own bytes and near misses`, () => {
      const search = new DelimiterSearch(delimiter)
      const m = delimiter.length
      let searches = 0
      for (let index = 0; index < 700; index++) {
        const seed = caseSeed(name, index)
        const random = new Random(seed)
        const fill = random.pick(fills)
        const length = random.chance(0.05) ? random.range(2_000, 40_000)
          : random.chance(0.3) ? random.range(m - 1, m + 12)
            : random.range(m - 1, 400)
        const data = makeView(random, length)
        fillData(random, data, delimiter, fill)
        const label = () => `seed ${seed} (case ${index}, ${fill}, HASHD_DELIMITER_SEED=${BASE_SEED})`

        // The range searched, then delimiters where it is easiest to get wrong.
        const top = maxTo(data, delimiter)
        const to = random.chance(0.4) ? top : random.range(0, top)
        const from = random.chance(0.3) ? 0 : random.range(0, to)
        const places = [from, to - 1, from - 1, to, to - random.range(1, m - 1), random.int(length)]
        for (const place of places) if (random.chance(0.35)) plant(data, delimiter, place)
        for (let count = random.int(3); count > 0; count--) plant(data, delimiter, random.int(length))

        check(search, data, from, to, label)
        // The same data over other ranges: the whole, from each edge, a random one, an empty one.
        check(search, data, 0, top, label)
        check(search, data, from, top, label)
        check(search, data, 0, to, label)
        const other = random.range(0, top)
        check(search, data, random.range(0, other), other, label)
        check(search, data, other, other, label)
        searches += 6
      }
      assert.ok(searches >= 4000)
    })
  }

  it('random delimiters of 2 to 74 bytes from a small alphabet, so that pairs repeat', () => {
    for (let index = 0; index < 1500; index++) {
      const seed = caseSeed('random delimiters', index)
      const random = new Random(seed)
      const alphabet = [0x0d, 0x0a, 0x2d, random.int(256)]
      const delimiter = Uint8Array.from({ length: random.range(2, 74) }, () => random.pick(alphabet))
      const search = new DelimiterSearch(delimiter)
      const length = random.range(delimiter.length - 1, 600)
      const data = makeView(random, length)
      for (let at = 0; at < length; at++) data[at] = random.pick(alphabet)
      for (let count = random.int(4); count > 0; count--) plant(data, delimiter, random.int(length))
      const top = maxTo(data, delimiter)
      const to = random.range(0, top)
      const from = random.range(0, to)
      if (random.chance(0.5)) plant(data, delimiter, random.pick([from, to - 1, from - 1, to]))
      const label = () => `seed ${seed} (case ${index}, HASHD_DELIMITER_SEED=${BASE_SEED})`
      check(search, data, from, to, label)
      check(search, data, 0, top, label)
    }
  })

  it('every start of every range of a short buffer, with the delimiter at each place in turn', () => {
    // Exhaustive where it is cheap: all (from, to) over data a little longer than the delimiter.
    for (const [name, delimiter] of DELIMITERS) {
      const search = new DelimiterSearch(delimiter)
      const random = new Random(caseSeed(`exhaustive ${name}`, 0))
      const length = delimiter.length * 3 + 5
      for (let place = -1; place <= length - delimiter.length; place++) {
        const data = makeView(random, length)
        fillData(random, data, delimiter, 'own bytes')
        // Nothing but the planted delimiter may match: break every other occurrence.
        for (let found = reference(data, delimiter, 0, maxTo(data, delimiter)); found !== -1; found = reference(data, delimiter, 0, maxTo(data, delimiter))) {
          data[found] = ((data[found] as number) + 1) & 0xff
        }
        plant(data, delimiter, place)
        for (let to = 0; to <= maxTo(data, delimiter); to++) {
          for (let from = 0; from <= to; from++) check(search, data, from, to, () => `${name}, delimiter at ${place}`)
        }
      }
    }
  })

  it('never reads outside its view: a delimiter in the parent buffer just before or after the view is not found', () => {
    for (const [name, delimiter] of DELIMITERS) {
      const search = new DelimiterSearch(delimiter)
      const m = delimiter.length
      for (let cut = 1; cut < m; cut++) {
        for (const offset of [1, 3, 7]) {
          // The view holds `cut` bytes of a delimiter that began before it, then filler, then the
          // first m - cut bytes of one that ends after it.
          const length = m + cut + 3
          const start = m + offset
          const parent = new Uint8Array(start + length + m).fill(0x20)
          parent.set(delimiter, start - (m - cut))
          parent.set(delimiter, start + length - cut)
          const view = parent.subarray(start, start + length)
          const label = () => `${name}, cut ${cut}, byteOffset ${offset}`
          check(search, view, 0, maxTo(view, delimiter), label)
          assert.equal(search.find(view, 0, maxTo(view, delimiter)), -1, label())
          // The same bytes copied out: the same answer.
          check(search, Uint8Array.from(view), 0, maxTo(view, delimiter), label)
        }
      }
    }
  })
})

describe('DelimiterSearch: the edges of the API', () => {
  it('from == to searches nothing, even with the delimiter at from', () => {
    for (const [, delimiter] of DELIMITERS) {
      const search = new DelimiterSearch(delimiter)
      const data = new Uint8Array(delimiter.length * 4)
      for (const at of [0, 1, delimiter.length, delimiter.length * 3]) {
        data.fill(0)
        plant(data, delimiter, at)
        assert.equal(search.find(data, at, at), -1)
        assert.equal(search.find(data, at, at + 1), at)
        if (at > 0) assert.equal(search.find(data, at - 1, at), -1, 'a delimiter at `to` is outside [from, to)')
      }
    }
  })

  it('finds a delimiter that fills the data exactly, and the first of several', () => {
    for (const [, delimiter] of DELIMITERS) {
      const search = new DelimiterSearch(delimiter)
      assert.equal(search.find(delimiter, 0, 1), 0)
      const twice = new Uint8Array(delimiter.length * 2 + 3)
      plant(twice, delimiter, 2)
      plant(twice, delimiter, delimiter.length + 3)
      assert.equal(search.find(twice, 0, maxTo(twice, delimiter)), 2)
      assert.equal(search.find(twice, 3, maxTo(twice, delimiter)), delimiter.length + 3)
    }
  })

  it('throws a RangeError for a `to` past data.length - delimiter.length + 1, and not at it', () => {
    for (const [, delimiter] of DELIMITERS) {
      const search = new DelimiterSearch(delimiter)
      for (const length of [delimiter.length - 1, delimiter.length, delimiter.length + 5, 100]) {
        const data = new Uint8Array(length)
        const top = maxTo(data, delimiter)
        assert.equal(search.find(data, 0, top), -1)
        assert.throws(() => search.find(data, 0, top + 1), RangeError)
        assert.throws(() => search.find(data, top, top + 1), RangeError)
        assert.throws(() => search.find(data, 0, length + 10), RangeError)
      }
    }
  })

  it('refuses a delimiter of fewer than two bytes', () => {
    assert.throws(() => new DelimiterSearch(new Uint8Array(0)), RangeError)
    assert.throws(() => new DelimiterSearch(new Uint8Array([0x0d])), RangeError)
    assert.equal(new DelimiterSearch(latin1('\r\n--x')).length, 5)
  })
})
