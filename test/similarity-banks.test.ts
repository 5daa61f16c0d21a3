/**
 * Similarity banks (src/similarity/banks/): import → open → search for every type, each search
 * against an oracle that does not use the bank's code: for PDQ, Hamming distances computed by
 * Debian's Python; for TLSH, the test's own loop over the input lines with the already-tested
 * parseTlsh/tlshDistance; for ssdeep, libfuzzy's fuzzy_compare (through Python's ctypes) and the
 * test's own loop with ssdeepCompare; for the digests, Python's hashlib. Then the file: its data
 * SHA-256 against coreutils and hashlib, and damaged, truncated and foreign files refused, naming
 * the file. Then the import's refusals, each naming its line.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import {
  BankFileError, BankImportError, importBank, isBankHash, openBank, splitFields, type Bank, type BankMatch, type BankType,
} from '../src/similarity/banks/index.js'
import { parseSsdeep, ssdeepCompare } from '../src/similarity/ssdeep.js'
import { parseTlsh, tlshDistance } from '../src/similarity/tlsh.js'
import { flipBits, pdqHashes, ssdeepHashes, tlshHashes } from './helpers/bank-inputs.js'
import { Random } from './helpers/random.js'
import { python, run, skipUnless } from './helpers/tools.js'

let scratch: string
before(() => { scratch = mkdtempSync(join(tmpdir(), 'hashd-banks-')) })
after(() => { if (scratch) rmSync(scratch, { recursive: true, force: true }) })

let fileNumber = 0
/** Writes lines to a new input file and imports them; returns the open bank. */
async function bankOf(type: BankType, lines: readonly string[]): Promise<{ bank: Bank, path: string, dataSha256: string }> {
  const input = join(scratch, `input-${++fileNumber}.csv`)
  const path = join(scratch, `bank-${fileNumber}.bank`)
  writeFileSync(input, `${lines.join('\n')}\n`)
  const summary = await importBank(input, path, type)
  const bank = await openBank(path)
  assert.equal(bank.count, summary.count)
  assert.equal(bank.dataSha256, summary.dataSha256)
  return { bank, path, dataSha256: summary.dataSha256 }
}

/** An oracle's answer as the bank gives it: by value (distance up, score down), ties by hash then id. */
interface Expected { id: string, value: number, hash: string }

function sortExpected(expected: Expected[], measure: 'distance' | 'score', normalise: (hash: string) => string): Expected[] {
  const sign = measure === 'distance' ? 1 : -1
  const bytes = (hash: string) => normalise(hash)
  return expected.sort((a, b) => sign * (a.value - b.value) || Buffer.compare(Buffer.from(bytes(a.hash), 'latin1'), Buffer.from(bytes(b.hash), 'latin1'))
    || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id)))
}

/** The (id, value) pairs of matches, for comparing with an oracle where hash-order ties cannot be reproduced. */
const pairs = (matches: readonly BankMatch[]) => matches.map((match) => `${match.id}:${match.distance ?? match.score}`).sort()
const expectedPairs = (expected: readonly Expected[]) => expected.map((entry) => `${entry.id}:${entry.value}`).sort()

describe('PDQ banks', () => {
  const random = new Random(45_001)
  const hashes = pdqHashes(random, 2000, 600)
  const lines = hashes.map((hash, at) => `${hash},pdq-${at},label ${at % 7}`)
  let bank: Bank
  before(async () => { bank = (await bankOf('pdq', lines)).bank })
  after(() => bank?.close())

  /** Hamming distances from Python: for each query, every entry within the threshold. */
  function pythonMatches(queries: readonly string[], threshold: number): Expected[][] {
    const out = python(`
import sys, json
hashes = [int(line.split(',')[0], 16) for line in sys.stdin.read().split()]
threshold = int(sys.argv[1])
result = []
for q in sys.argv[2:]:
    qv = int(q, 16)
    result.append([[i, bin(qv ^ h).count('1')] for i, h in enumerate(hashes) if bin(qv ^ h).count('1') <= threshold])
print(json.dumps(result))
`, [String(threshold), ...queries], hashes.join('\n'))
    return (JSON.parse(out) as [number, number][][]).map((found) => found.map(([at, value]) => ({ id: `pdq-${at}`, value, hash: hashes[at]! })))
  }

  it('finds every entry within 31 bits, as Python counts them', { skip: skipUnless('python3') }, () => {
    const queries = [...Array.from({ length: 20 }, (_, at) => hashes[at]!), flipBits(random, hashes[5]!, 10), random.bytes(32).toString('hex')]
    const expected = pythonMatches(queries, 31)
    for (const [at, query] of queries.entries()) {
      const result = bank.search(query, { threshold: 31, limit: 10_000 })
      assert.equal(result.truncated, false)
      assert.deepEqual(pairs(result.matches), expectedPairs(expected[at]!), `query ${at}`)
      const distances = result.matches.map((match) => match.distance!)
      assert.deepEqual(distances, [...distances].sort((a, b) => a - b), 'sorted by distance')
    }
    assert.ok(expected.slice(0, 20).some((found) => found.length > 1), 'the planted near-duplicates are found')
  })

  it('answers thresholds from 0 to 256 exactly, and the limit truncates in order', { skip: skipUnless('python3') }, () => {
    for (const threshold of [0, 8, 40, 100, 128]) {
      const query = hashes[threshold]!
      const expected = sortExpected(pythonMatches([query], threshold)[0]!, 'distance', (hash) => hash)
      const result = bank.search(query, { threshold, limit: 5000 })
      assert.deepEqual(pairs(result.matches), expectedPairs(expected), `threshold ${threshold}`)
      const limited = bank.search(query, { threshold, limit: 3 })
      assert.equal(limited.truncated, expected.length > 3)
      assert.deepEqual(limited.matches.map((match) => match.distance), expected.slice(0, 3).map((entry) => entry.value))
      assert.deepEqual(limited.matches, result.matches.slice(0, 3), 'a limited answer is the head of the whole one')
    }
    assert.equal(bank.search(hashes[0]!, { threshold: 256, limit: 1_000_000 }).matches.length, hashes.length)
  })

  it('with several query hashes (dihedral variants), reports each entry once at its least distance', () => {
    const variants = [random.bytes(32).toString('hex'), flipBits(random, hashes[3]!, 4), flipBits(random, hashes[3]!, 9), flipBits(random, hashes[70]!, 20)]
    const result = bank.search(variants, { threshold: 31, limit: 10_000 })
    // The test's own loop: the least distance over the variants, entry by entry.
    const distance = (a: string, b: string) => {
      let bits = 0
      const x = Buffer.from(a, 'hex')
      const y = Buffer.from(b, 'hex')
      for (let i = 0; i < 32; i++) for (let v = x[i]! ^ y[i]!; v !== 0; v &= v - 1) bits++
      return bits
    }
    const expected: Expected[] = []
    hashes.forEach((hash, at) => {
      const best = Math.min(...variants.map((variant) => distance(variant, hash)))
      if (best <= 31) expected.push({ id: `pdq-${at}`, value: best, hash })
    })
    assert.deepEqual(pairs(result.matches), expectedPairs(expected))
    for (const match of result.matches) {
      const at = Number(match.id.slice(4))
      assert.equal(distance(variants[match.variant!]!, hashes[at]!), match.distance, `variant of ${match.id}`)
    }
    assert.equal(new Set(result.matches.map((match) => match.id)).size, result.matches.length, 'each entry once')
  })

  it('returns ids and labels as imported', () => {
    const result = bank.search(hashes[11]!, { threshold: 0, limit: 10 })
    assert.deepEqual(result.matches[0], { id: 'pdq-11', label: 'label 4', distance: 0 })
  })

  it('a bank large enough to be indexed when opened finds what Python finds', { skip: skipUnless('python3') }, async () => {
    const big = pdqHashes(new Random(45_010), 60_000, 3000)
    const { bank: indexed } = await bankOf('pdq', big.map((hash, at) => `${hash},big-${at}`))
    try {
      assert.match(indexed.index, /^multi-index hashing/)
      const queries = [big[0]!, big[1]!, flipBits(random, big[2]!, 12)]
      const out = python(`
import sys, json
hashes = [int(line, 16) for line in sys.stdin.read().split()]
print(json.dumps([[[i, bin(int(q, 16) ^ h).count('1')] for i, h in enumerate(hashes) if bin(int(q, 16) ^ h).count('1') <= 31] for q in sys.argv[1:]]))
`, queries, big.join('\n'))
      const expected = JSON.parse(out) as [number, number][][]
      for (const [at, query] of queries.entries()) {
        const result = indexed.search(query, { threshold: 31, limit: 10_000 })
        assert.deepEqual(pairs(result.matches), expected[at]!.map(([entry, value]) => `big-${entry}:${value}`).sort(), `query ${at}`)
        assert.ok(result.matches.length >= 1)
      }
    } finally {
      indexed.close()
    }
  })

  it('refuses a query that is not a PDQ hash', () => {
    assert.throws(() => bank.search('abc', { threshold: 31, limit: 10 }), TypeError)
    assert.equal(isBankHash('pdq', hashes[0]!.toUpperCase()), true)
    assert.equal(isBankHash('pdq', `${hashes[0]!}0`), false)
  })
})

describe('TLSH banks', () => {
  const random = new Random(45_002)
  // Over 4,096 entries: the bank is indexed when opened (the index itself: similarity-banks-index.test.ts).
  const hashes = tlshHashes(random, 3500, 1500)
  // Half in the T1 form and half in the pre-4 form: the bank holds the same digest either way.
  const lines = hashes.map((hash, at) => `${at % 2 === 0 ? hash : hash.slice(2)},tlsh-${at}`)
  let bank: Bank
  before(async () => { bank = (await bankOf('tlsh', lines)).bank })
  after(() => bank?.close())

  function loop(query: string, threshold: number, lengthTerm: boolean): Expected[] {
    const q = parseTlsh(query)!
    const expected: Expected[] = []
    hashes.forEach((hash, at) => {
      const value = tlshDistance(q, parseTlsh(hash)!, lengthTerm)
      if (value <= threshold) expected.push({ id: `tlsh-${at}`, value, hash })
    })
    return expected
  }

  for (const lengthTerm of [true, false]) {
    it(`finds every entry within the threshold (lengthTerm ${lengthTerm}), as tlshDistance scores them`, () => {
      let found = 0
      for (const threshold of [0, 30, 60, 150]) {
        for (let q = 0; q < 25; q++) {
          const query = hashes[(q * 37 + threshold) % hashes.length]!
          const expected = loop(query, threshold, lengthTerm)
          const result = bank.search(query, { threshold, limit: 10_000, lengthTerm })
          assert.deepEqual(pairs(result.matches), expectedPairs(expected), `query ${q}, threshold ${threshold}`)
          found += expected.length
        }
      }
      assert.ok(found > 100, `near-duplicates are found (${found})`)
    })
  }

  it('is indexed when opened', () => { assert.match(bank.index, /^bucket-group index/) })

  it('gives the match\'s distance beside the ids', () => {
    const result = bank.search(hashes[1]!, { threshold: 0, limit: 5 })
    assert.equal(result.matches[0]!.id, 'tlsh-1')
    assert.equal(result.matches[0]!.distance, 0)
    assert.equal(result.matches[0]!.label, null)
  })
})

describe('ssdeep banks', () => {
  const random = new Random(45_003)
  // Over 2,048 entries: the bank is indexed when opened.
  const hashes = ssdeepHashes(random, 1100, 1000)
  const lines = hashes.map((hash, at) => `${hash},ssdeep-${at}`)
  let bank: Bank
  before(async () => { bank = (await bankOf('ssdeep', lines)).bank })
  after(() => bank?.close())

  const queries = [...hashes.slice(0, 20), ...hashes.slice(1100, 1110)]

  it('finds every entry scoring at least the threshold, as libfuzzy\'s fuzzy_compare scores them', { skip: skipUnless('libfuzzy') }, () => {
    const scores = JSON.parse(python(`
import ctypes, sys, json
lib = ctypes.CDLL('libfuzzy.so.2')
lib.fuzzy_compare.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
hashes = sys.stdin.read().split()
print(json.dumps([[lib.fuzzy_compare(q.encode(), h.encode()) for h in hashes] for q in sys.argv[1:]]))
`, queries, hashes.join('\n'))) as number[][]
    let found = 0
    for (const threshold of [1, 30, 50, 90]) {
      for (const [q, query] of queries.entries()) {
        const expected: Expected[] = []
        scores[q]!.forEach((value, at) => { if (value >= threshold) expected.push({ id: `ssdeep-${at}`, value, hash: hashes[at]! }) })
        const result = bank.search(query, { threshold, limit: 10_000 })
        assert.deepEqual(pairs(result.matches), expectedPairs(expected), `query ${q}, threshold ${threshold}`)
        const values = result.matches.map((match) => match.score!)
        assert.deepEqual(values, [...values].sort((a, b) => b - a), 'sorted by score, highest first')
        found += expected.filter((entry) => entry.value < 100).length
      }
    }
    assert.ok(found > 20, `near-copies with scores below 100 are found (${found})`)
  })

  it('is indexed when opened', () => { assert.match(bank.index, /^7-character piece index/) })

  it('agrees with the test\'s own loop over ssdeepCompare', () => {
    for (const query of queries) {
      const parsed = parseSsdeep(query)!
      const expected: Expected[] = []
      hashes.forEach((hash, at) => {
        const value = ssdeepCompare(parsed, parseSsdeep(hash)!)
        if (value >= 40) expected.push({ id: `ssdeep-${at}`, value, hash })
      })
      assert.deepEqual(pairs(bank.search(query, { threshold: 40, limit: 10_000 }).matches), expectedPairs(expected))
    }
  })
})

describe('digest banks', () => {
  for (const type of ['md5', 'sha1', 'sha256'] as const) {
    it(`${type}: finds the entries with the digest, and nothing for another`, { skip: skipUnless('python3') }, async () => {
      const digests = python(`
import hashlib, sys
for i in range(500): print(hashlib.new(sys.argv[1], b'entry %d' % i).hexdigest())
`, [type]).split('\n')
      // Entry 7's digest twice under two ids; upper-case hex is the same digest.
      const lines = [...digests.map((digest, at) => `${at % 3 === 0 ? digest.toUpperCase() : digest},${type}-${at}`), `${digests[7]},second`]
      const { bank } = await bankOf(type, lines)
      try {
        for (const at of [0, 1, 250, 499]) {
          assert.deepEqual(bank.search(digests[at]!, { threshold: 0, limit: 10 }), { matches: [{ id: `${type}-${at}`, label: null, distance: 0 }], truncated: false })
        }
        assert.deepEqual(bank.search(digests[7]!, { threshold: 0, limit: 10 }).matches.map((match) => match.id).sort(), ['second', `${type}-7`].sort())
        assert.deepEqual(bank.search(digests[7]!, { threshold: 0, limit: 1 }).truncated, true)
        const absent = python(`import hashlib, sys; print(hashlib.new(sys.argv[1], b'not in the bank').hexdigest())`, [type])
        assert.deepEqual(bank.search(absent, { threshold: 0, limit: 10 }), { matches: [], truncated: false })
      } finally {
        bank.close()
      }
    })
  }

  it('an empty bank opens and finds nothing', async () => {
    const { bank } = await bankOf('sha256', ['# nothing yet'])
    assert.equal(bank.count, 0)
    assert.deepEqual(bank.search('0'.repeat(64), { threshold: 0, limit: 10 }), { matches: [], truncated: false })
    bank.close()
  })
})

describe('the bank file', () => {
  const random = new Random(45_004)
  const hashes = pdqHashes(random, 200, 50)
  let path: string
  let dataSha256: string
  before(async () => {
    const made = await bankOf('pdq', hashes.map((hash, at) => `${hash},${at}`))
    made.bank.close()
    path = made.path
    dataSha256 = made.dataSha256
  })

  it('its data SHA-256 is what coreutils and Python\'s hashlib compute over the bytes after the header', { skip: skipUnless('sha256sum', 'python3') }, () => {
    assert.equal(run('sh', ['-c', 'tail -c +257 "$1" | sha256sum', 'sh', path]).split(' ')[0], dataSha256)
    assert.equal(python('import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()[256:]).hexdigest())', [path]), dataSha256)
  })

  it('does not depend on the input\'s order', async () => {
    const shuffled = hashes.map((hash, at) => `${hash},${at}`).reverse()
    const again = await bankOf('pdq', shuffled)
    again.bank.close()
    assert.equal(again.dataSha256, dataSha256)
  })

  const refused = async (bytes: Buffer, reason: RegExp) => {
    const damaged = join(scratch, `damaged-${++fileNumber}.bank`)
    writeFileSync(damaged, bytes)
    await assert.rejects(openBank(damaged), (error: unknown) => {
      assert.ok(error instanceof BankFileError, String(error))
      assert.equal(error.file, damaged)
      assert.match(error.message, new RegExp(damaged.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      assert.match(error.reason, reason)
      return true
    })
  }

  it('refuses a truncated file, naming it', async () => {
    const whole = readFileSync(path)
    await refused(whole.subarray(0, whole.length - 1), /truncated/)
    await refused(whole.subarray(0, 1000), /truncated/)
    await refused(whole.subarray(0, 100), /shorter than a bank's 256-byte header/)
    await refused(Buffer.alloc(0), /shorter than a bank's 256-byte header/)
    // truncate(1) on a copy, as a half-finished copy onto a volume leaves it.
    const cut = join(scratch, 'cut.bank')
    writeFileSync(cut, whole)
    truncateSync(cut, whole.length - 4000)
    await assert.rejects(openBank(cut), BankFileError)
  })

  it('refuses a file with damaged data or a damaged header', async () => {
    const whole = readFileSync(path)
    for (const at of [256, 256 + 32 * 100 + 5, whole.length - 1]) {
      const damaged = Buffer.from(whole)
      damaged[at]! ^= 0x10
      await refused(damaged, /data SHA-256 does not match/)
    }
    const header = Buffer.from(whole)
    header[20]! ^= 1
    await refused(header, /header checksum/)
    await refused(Buffer.concat([whole, Buffer.from('x')]), /bytes after the end/)
  })

  it('refuses another format version and other files, saying what they are', async () => {
    const whole = Buffer.from(readFileSync(path))
    whole.writeUInt32LE(2, 8)
    createHash('sha256').update(whole.subarray(0, 112)).digest().copy(whole, 112)
    await refused(whole, /format version 2.*reads version 1/)
    await refused(Buffer.concat([Buffer.from('HASHDPWN'), Buffer.alloc(400)]), /not a hashd similarity bank/)
    await refused(Buffer.from('a'.repeat(300)), /not a hashd similarity bank/)
  })

  it('an indexed PDQ bank refused after its tables started on their threads: the error names the file, and the threads end', async () => {
    // The tables start on their threads once the hashes are read; the entry table after them is
    // damaged here. (The stop itself is checked on a bank large enough to take seconds, in
    // similarity-banks-index.test.ts.)
    const threadsNow = () => readdirSync('/proc/self/task').length
    const big = pdqHashes(new Random(45_011), 60_000, 100)
    const made = await bankOf('pdq', big.map((hash, at) => `${hash},e-${at}`))
    assert.match(made.bank.index, /^multi-index hashing/)
    const count = made.bank.count
    made.bank.close()
    const whole = Buffer.from(readFileSync(made.path))
    whole.writeUInt32LE(0xffff_fff0, 256 + count * 32 + 8 * 5)
    const threads = threadsNow()
    await refused(whole, /entry table is out of order at entry 5/)
    const until = Date.now() + 5000
    while (threadsNow() > threads && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.ok(threadsNow() <= threads, `threads: ${threadsNow()} after the refusal, ${threads} before`)
  })

  it('names a file that is not there', async () => {
    await assert.rejects(openBank(join(scratch, 'absent.bank')), (error: unknown) => error instanceof BankFileError && /ENOENT/.test(error.reason))
  })
})

describe('bank:import input', () => {
  const pdq = (seed: number) => new Random(seed).bytes(32).toString('hex')

  it('reads RFC 4180 CSV with a header naming the columns in any order', async () => {
    const { bank } = await bankOf('pdq', [
      'label,extra,HASH,id',
      `"a label, with a comma",x,${pdq(1)},first`,
      `"say ""hi""",y,"${pdq(2)}","id, quoted"`,
      `,z,${pdq(3)},`,
    ])
    try {
      assert.deepEqual(bank.search(pdq(1), { threshold: 0, limit: 5 }).matches, [{ id: 'first', label: 'a label, with a comma', distance: 0 }])
      assert.deepEqual(bank.search(pdq(2), { threshold: 0, limit: 5 }).matches, [{ id: 'id, quoted', label: 'say "hi"', distance: 0 }])
      // An empty id is the line's number; an empty label is no label.
      assert.deepEqual(bank.search(pdq(3), { threshold: 0, limit: 5 }).matches, [{ id: '4', label: null, distance: 0 }])
    } finally {
      bank.close()
    }
  })

  it('reads hash[,id[,label]] lines, with comments, blank lines, CRLF and a byte order mark', async () => {
    const input = join(scratch, 'plain.txt')
    const bankPath = join(scratch, 'plain.bank')
    writeFileSync(input, `\uFEFF${pdq(4)}\r\n# a comment\r\n\r\n  ${pdq(5)} , five , the label \r\n${pdq(6)},six,"ünïcode ✓"\r\n`)
    const summary = await importBank(input, bankPath, 'pdq')
    assert.equal(summary.count, 3)
    const bank = await openBank(bankPath, 'named')
    try {
      assert.equal(bank.name, 'named')
      assert.deepEqual(bank.search(pdq(4), { threshold: 0, limit: 5 }).matches, [{ id: '1', label: null, distance: 0 }])
      assert.deepEqual(bank.search(pdq(5), { threshold: 0, limit: 5 }).matches, [{ id: 'five', label: 'the label', distance: 0 }])
      assert.deepEqual(bank.search(pdq(6), { threshold: 0, limit: 5 }).matches, [{ id: 'six', label: 'ünïcode ✓', distance: 0 }])
    } finally {
      bank.close()
    }
    const unnamed = await openBank(bankPath)
    assert.equal(unnamed.name, 'plain')
    unnamed.close()
  })

  it('splits fields as RFC 4180 says', () => {
    assert.deepEqual(splitFields('a,b,c'), ['a', 'b', 'c'])
    assert.deepEqual(splitFields('"a,b",c'), ['a,b', 'c'])
    assert.deepEqual(splitFields('"a""b"'), ['a"b'])
    assert.deepEqual(splitFields('a, "b" ,c'), ['a', 'b', 'c'])
    assert.deepEqual(splitFields(',,'), ['', '', ''])
    assert.deepEqual(splitFields('""'), [''])
    assert.match(splitFields('"a') as string, /not closed/)
    assert.match(splitFields('"a"b') as string, /after its closing quote/)
    assert.match(splitFields('a"b') as string, /quote inside it/)
  })

  const refusedLine = async (type: BankType, lines: string[], line: number, reason: RegExp) => {
    const input = join(scratch, `bad-${++fileNumber}.csv`)
    const output = join(scratch, `bad-${fileNumber}.bank`)
    writeFileSync(output, 'the bank in force')
    writeFileSync(input, lines.join('\n'))
    await assert.rejects(importBank(input, output, type), (error: unknown) => {
      assert.ok(error instanceof BankImportError, String(error))
      assert.equal(error.line, line, error.message)
      assert.match(error.message, new RegExp(`^line ${line}: `))
      assert.match(error.reason, reason)
      return true
    })
    assert.equal(readFileSync(output, 'utf8'), 'the bank in force', 'the old bank stays')
  }

  it('refuses a bad line, naming its number and why, and leaves the old bank', async () => {
    await refusedLine('pdq', [`${pdq(1)},a`, `${pdq(2).slice(1)},b`], 2, /is not a pdq hash \(64 hex digits/)
    await refusedLine('pdq', [`${pdq(1)},a`, '# x', `${'ab'.repeat(20)},b`], 3, /not a pdq hash.*looks like sha1/)
    await refusedLine('sha256', [`${pdq(1)}`, 'T1' + 'A'.repeat(70)], 2, /looks like tlsh/)
    await refusedLine('tlsh', ['3:abc:def'], 1, /not a tlsh hash.*looks like ssdeep/)
    await refusedLine('pdq', [`${pdq(1)},${'i'.repeat(257)}`], 1, /id is 257 bytes of UTF-8, more than 256/)
    await refusedLine('pdq', [`${pdq(1)},ok,${'é'.repeat(513)}`], 1, /label is 1026 bytes of UTF-8, more than 1,024/)
    await refusedLine('pdq', [`${pdq(1)},a`, `${pdq(2)},b`, `${pdq(1)},c`, `${pdq(1)},a`], 4, /same hash with the same id as line 1/)
    await refusedLine('pdq', [`${pdq(1)},a,b,c`], 1, /4 fields/)
    await refusedLine('pdq', [`${pdq(1)},"a`], 1, /not closed/)
    await refusedLine('pdq', [`${pdq(1)},a\u0001b`], 1, /control character \(U\+0001\)/)
    await refusedLine('pdq', ['name,other', `${pdq(1)}`], 1, /names no hash column/)
  })

  it('npm run bank:import prints the count and data SHA-256, and exits 1 naming a bad line, 2 for bad arguments', () => {
    const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'bank-import.js')
    const input = join(scratch, 'cli.csv')
    const output = join(scratch, 'cli.bank')
    writeFileSync(input, `${pdq(7)},seven\n${pdq(8)}\n`)
    const done = spawnSync(process.execPath, [script, input, output, '--type', 'pdq'], { encoding: 'utf8' })
    assert.equal(done.status, 0, done.stderr)
    const sha = createHash('sha256').update(readFileSync(output).subarray(256)).digest('hex')
    assert.match(done.stdout, new RegExp(`: 2 pdq entries from 2 lines .*\\n  data SHA-256 ${sha}\\n$`))
    writeFileSync(input, `${pdq(7)},seven\n${pdq(8).slice(2)}\n`)
    const refused = spawnSync(process.execPath, [script, input, output, '--type=pdq'], { encoding: 'utf8' })
    assert.equal(refused.status, 1)
    assert.match(refused.stderr, /^bank:import: .*cli\.csv: line 2: "[0-9a-f]{62}" is not a pdq hash/)
    assert.equal(spawnSync(process.execPath, [script, input, output], { encoding: 'utf8' }).status, 2)
    assert.equal(spawnSync(process.execPath, [script, input, output, '--type', 'crc32'], { encoding: 'utf8' }).status, 2)
  })

  it('writes nothing beside the output when refused', async () => {
    const input = join(scratch, 'refused.csv')
    const output = join(scratch, 'never.bank')
    writeFileSync(input, 'nonsense\n')
    await assert.rejects(importBank(input, output, 'md5'), BankImportError)
    assert.equal(existsSync(output), false)
  })
})
