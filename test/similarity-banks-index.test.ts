/**
 * The bank indexes (src/similarity/banks/pdq.ts, tlsh.ts, ssdeep.ts) against their linear scans,
 * on haystacks with planted near-duplicates (test/helpers/bank-inputs.ts): the same entries at the
 * same values for every threshold, with every slicing the PDQ index can choose forced on a bank of
 * modest size, and thresholds past the point where a search falls back to scanning. The scans are
 * themselves checked against Python, libfuzzy and loops over the compare functions in
 * similarity-banks.test.ts.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readdirSync } from 'node:fs'
import { groupByKey, groupScratch } from '../src/similarity/banks/group.js'
import { openPdqSearcher } from '../src/similarity/banks/table-threads.js'
import { chooseSlicing, PdqSearcher, pdqLinearScan, pdqWords } from '../src/similarity/banks/pdq.js'
import { MatchSink } from '../src/similarity/banks/sink.js'
import { SsdeepSearcher, ssdeepLinearScan } from '../src/similarity/banks/ssdeep.js'
import { TlshSearcher, tlshLinearScan } from '../src/similarity/banks/tlsh.js'
import { BANK_TYPE_SPECS, SSDEEP_RECORD_BYTES, TLSH_RECORD_BYTES } from '../src/similarity/banks/types.js'
import { flipBits, pdqHashes, ssdeepHashes, tlshHashes } from './helpers/bank-inputs.js'
import { Random } from './helpers/random.js'

/** The records of these hashes, one after another, in a buffer of their own. */
function recordsOf(type: 'pdq' | 'tlsh' | 'ssdeep', hashes: readonly string[]): Buffer {
  const spec = BANK_TYPE_SPECS[type]
  const records = Buffer.from(new ArrayBuffer(hashes.length * spec.recordBytes))
  hashes.forEach((hash, at) => spec.encode(hash)!.copy(records, at * spec.recordBytes))
  return records
}

/** A sink's matches as sorted `entry:value:variant` strings. */
const listed = (sink: MatchSink) => sink.entries.map((entry, at) => `${entry}:${sink.values[at]}:${sink.variants[at]}`).sort()

describe('the tables the indexes share (groupByKey)', () => {
  it('groups values by key, each group in input order, with its offsets: the same as a stable sort, for keys of 1 to 24 bits', () => {
    const random = new Random(17)
    for (const bits of [1, 5, 12, 13, 16, 23, 24]) {
      for (const count of [0, 1, 777, 20_000]) {
        // Few distinct keys at the wide widths too, so that groups of many entries are checked.
        const spread = random.chance(0.5) ? 2 ** bits : Math.min(2 ** bits, 37)
        const keys = Uint32Array.from({ length: count }, () => random.int(spread) * Math.floor(2 ** bits / spread))
        const values = random.chance(0.5) ? Uint32Array.from({ length: count }, () => random.int(1 << 30)) : null
        const { ids, offsets } = groupByKey(keys, values, bits, groupScratch(count))
        const order = Array.from({ length: count }, (_, at) => at).sort((a, b) => keys[a]! - keys[b]! || a - b)
        assert.deepEqual([...ids], order.map((at) => (values === null ? at : values[at]!)), `${bits} bits, ${count} entries`)
        const expected = new Uint32Array(2 ** bits + 1)
        for (const key of keys) expected[key + 1]!++
        for (let key = 1; key < expected.length; key++) expected[key]! += expected[key - 1]!
        assert.ok(Buffer.from(offsets.buffer).equals(Buffer.from(expected.buffer)), `${bits} bits, ${count} entries: the offsets`)
      }
    }
  })
})

describe('the PDQ tables built on threads (table-threads.ts)', () => {
  it('give the same tables as a build on the calling thread, and an abort stops the threads at once', async () => {
    const count = 2_000_000
    const hashes = Buffer.from(new SharedArrayBuffer(count * 32))
    new Random(61).fill(hashes)
    const threadsNow = () => readdirSync('/proc/self/task').length
    const threads = threadsNow()
    // Aborted 50 ms in: a build of 2 M hashes takes seconds, so this rejects only if it stops.
    const controller = new AbortController()
    const building = openPdqSearcher(hashes, count, controller.signal)
    setTimeout(() => controller.abort(new Error('the file was refused')), 50)
    await assert.rejects(building, /the file was refused/)
    const until = Date.now() + 5000
    while (threadsNow() > threads && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.ok(threadsNow() <= threads, `threads: ${threadsNow()} after the abort, ${threads} before`)
    // Unaborted, on a smaller bank: every table equal to the calling thread's.
    const small = 200_000
    const onThreads = await openPdqSearcher(hashes.subarray(0, small * 32), small)
    const here = new PdqSearcher(Buffer.from(hashes.buffer, 0, small * 32), small)
    assert.equal(onThreads.indexName, here.indexName)
    const queries = Array.from({ length: 20 }, (_, at) => [flipBits(new Random(at), hashes.toString('hex', at * 997 * 32, at * 997 * 32 + 32), 9)].map((hash) => BANK_TYPE_SPECS.pdq.encode(hash)!))
    for (const query of queries) {
      const [a, b] = [new MatchSink('distance', 1), new MatchSink('distance', 1)]
      onThreads.search(query, 31, true, a)
      here.search(query, 31, true, b)
      assert.deepEqual(listed(a), listed(b))
      assert.ok(a.size >= 1)
    }
  })
})

describe('the PDQ index', () => {
  const random = new Random(45_101)
  const hashes = pdqHashes(random, 30_000, 6000)
  const records = recordsOf('pdq', hashes)
  const words = new Uint32Array(records.buffer, 0, hashes.length * 8)
  const queries = [
    ...Array.from({ length: 30 }, (_, at) => hashes[at * 7]!),
    ...Array.from({ length: 10 }, (_, at) => flipBits(random, hashes[at]!, at * 3)),
    random.bytes(32).toString('hex'),
  ]

  for (const slicing of [{ slices: 16, bits: 16 }, { slices: 11, bits: 23 }, { slices: 13, bits: 19 }, { slices: 18, bits: 14 }, { slices: 32, bits: 8 }]) {
    it(`${slicing.slices} slices of ${slicing.bits} bits: the same matches as the scan, at every threshold`, () => {
      const searcher = new PdqSearcher(records, hashes.length, slicing)
      let probed = 0
      for (const threshold of [0, 1, 10, 31, 32, 40, 47, 64, 90]) {
        if (searcher.probes(threshold)) probed++
        for (const query of queries) {
          const record = BANK_TYPE_SPECS.pdq.encode(query)!
          const indexed = new MatchSink('distance', 1)
          searcher.search([record], threshold, true, indexed)
          const scanned = new MatchSink('distance', 1)
          pdqLinearScan(words, hashes.length, [pdqWords(record)], threshold, scanned)
          assert.deepEqual(listed(indexed), listed(scanned), `threshold ${threshold}`)
        }
      }
      assert.ok(probed >= 3, `the index is used at small thresholds (${probed})`)
    })
  }

  it('with several query hashes, each entry once at its least distance, as the scan', () => {
    const searcher = new PdqSearcher(records, hashes.length, { slices: 16, bits: 16 })
    const variants = [hashes[1]!, flipBits(random, hashes[1]!, 5), flipBits(random, hashes[2]!, 12), random.bytes(32).toString('hex')]
      .map((hash) => BANK_TYPE_SPECS.pdq.encode(hash)!)
    const indexed = new MatchSink('distance', variants.length)
    searcher.search(variants, 31, true, indexed)
    const scanned = new MatchSink('distance', variants.length)
    pdqLinearScan(words, hashes.length, variants.map(pdqWords), 31, scanned)
    // The variants too: among equal distances, the lowest.
    assert.deepEqual(listed(indexed), listed(scanned))
    assert.ok(indexed.size > 2)
  })

  it('many searches at once (searchMany): each the same as its own scan, in chunks or not', () => {
    const groups = [
      ...queries.map((query) => [query]),
      [hashes[1]!, flipBits(random, hashes[1]!, 5), flipBits(random, hashes[2]!, 12), random.bytes(32).toString('hex')],
      [hashes[3]!, hashes[3]!],
    ].map((group) => group.map((hash) => BANK_TYPE_SPECS.pdq.encode(hash)!))
    let matched = 0
    for (const slicing of [{ slices: 11, bits: 23 }, { slices: 16, bits: 16 }, { slices: 13, bits: 19 }]) {
      const searcher = new PdqSearcher(records, hashes.length, slicing)
      for (const threshold of [0, 10, 31, 47]) {
        // The whole batch as one chunk, then chunks of a few hashes (a group is never split).
        for (const chunkWork of [undefined, 20_000]) {
          const sinks = groups.map((group) => new MatchSink('distance', group.length))
          searcher.searchMany(groups, threshold, true, sinks, chunkWork)
          groups.forEach((group, at) => {
            const scanned = new MatchSink('distance', group.length)
            pdqLinearScan(words, hashes.length, group.map(pdqWords), threshold, scanned)
            // The variant too: among equal distances the lowest (the group [hashes[3], hashes[3]] ties at every entry).
            assert.deepEqual(listed(sinks[at]!), listed(scanned), `${slicing.slices}×${slicing.bits}, threshold ${threshold}, group ${at}`)
            matched += scanned.size
          })
        }
      }
    }
    assert.ok(matched > 100, `planted near-duplicates were found (${matched})`)
  })

  it('chooses tables within the memory budget, and none for a small bank', () => {
    assert.equal(chooseSlicing(1000), null)
    for (const count of [100_000, 1_000_000, 10_000_000, 50_000_000]) {
      const slicing = chooseSlicing(count)!
      const bytes = (slicing.slices * (2 ** slicing.bits + 1) * 4) / count + slicing.slices * 4
      assert.ok(bytes + 32 <= 128, `${count}: ${bytes} bytes per hash`)
      assert.ok(slicing.slices * slicing.bits <= 256)
    }
  })
})

describe('the TLSH index', () => {
  const random = new Random(45_102)
  const hashes = tlshHashes(random, 20_000, 8000)
  const records = recordsOf('tlsh', hashes)
  const searcher = new TlshSearcher(records, hashes.length, true)
  const queries = Array.from({ length: 40 }, (_, at) => BANK_TYPE_SPECS.tlsh.encode(hashes[(at * 211) % 8000]!)!)

  for (const lengthTerm of [true, false]) {
    it(`the same matches as the scan at every threshold (lengthTerm ${lengthTerm})`, () => {
      let found = 0
      for (const threshold of [0, 1, 15, 16, 30, 31, 47, 48, 63, 100, 300]) {
        for (const query of queries) {
          const indexed = new MatchSink('distance', 1)
          searcher.search([query], threshold, lengthTerm, indexed)
          const scanned = new MatchSink('distance', 1)
          tlshLinearScan(records, hashes.length, [query], threshold, lengthTerm, scanned)
          assert.deepEqual(listed(indexed), listed(scanned), `threshold ${threshold}`)
          found += scanned.size
        }
      }
      assert.ok(searcher.probes(30) && searcher.probes(47) && !searcher.probes(300), 'the index is used at the default threshold, the scan far above it')
      assert.ok(found > 400, `near-duplicates are found (${found})`)
    })
  }
})

describe('the ssdeep index', () => {
  const random = new Random(45_103)
  // Hashes of generated files and their near-copies, and short hashes (strings under 7
  // characters, scored 100 only when the same), some twice.
  const hashes = [...ssdeepHashes(random, 300, 300), '3:ab:c', '3:ab:c', '6:abcdef:xy', '3:AAAAAAAAAA:BB', '3:AAAAA:BB', '12:abcdefgh:abc']
  const records = recordsOf('ssdeep', hashes)
  const searcher = new SsdeepSearcher(records, hashes.length, true)

  it('the same matches as the scan, at every threshold', () => {
    let partial = 0
    for (const threshold of [1, 20, 50, 80, 100]) {
      for (const hash of [...hashes.filter((_, at) => at % 5 === 0), '3:ab:c', '3:AAAA:BB', '6:abcdefgh:abc', '24:abcdefghijk:zz']) {
        const query = BANK_TYPE_SPECS.ssdeep.encode(hash)!
        const indexed = new MatchSink('score', 1)
        searcher.search([query], threshold, true, indexed)
        const scanned = new MatchSink('score', 1)
        ssdeepLinearScan(records, hashes.length, [query], threshold, scanned)
        assert.deepEqual(listed(indexed), listed(scanned), `${hash} at ${threshold}`)
        partial += scanned.values.filter((score) => score < 100).length
      }
    }
    assert.ok(partial > 50, `scores below 100 are found (${partial})`)
  })

  it('records have the width the index reads', () => {
    assert.equal(records.length, hashes.length * SSDEEP_RECORD_BYTES)
    assert.equal(TLSH_RECORD_BYTES, 35)
  })
})
