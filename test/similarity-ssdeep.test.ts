/**
 * ssdeep (src/similarity/ssdeep.ts) against libfuzzy 2.14: the hashes against Debian's `ssdeep -b`
 * and libfuzzy.so.2's fuzzy_hash_buf (through Debian's Python), the scores against its
 * fuzzy_compare. The inputs (test/helpers/similarity-inputs.ts) are empty, tiny, random and text
 * of sizes up to 3 MiB, and near-copies of them, so that the scores span 0–100. A
 * fixture of pairs scored by libfuzzy (test/fixtures/ssdeep/compare.txt) checks the score on any
 * machine.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parseSsdeep, SsdeepHasher, ssdeepCompare, ssdeepOf, SSDEEP_PATTERN } from '../src/similarity/ssdeep.js'
import { Random } from './helpers/random.js'
import { similarityInputs } from './helpers/similarity-inputs.js'
import { python, run, skipUnless } from './helpers/tools.js'

const inputs: Buffer[] = []
let scratch: string

before(() => {
  for (const { data } of similarityInputs()) inputs.push(data)
  scratch = mkdtempSync(join(tmpdir(), 'hashd-ssdeep-'))
})

after(() => { if (scratch) rmSync(scratch, { recursive: true, force: true }) })

/** libfuzzy through ctypes: hashes of the files named in argv, then scores of the pairs on stdin. */
const LIBFUZZY = `
import ctypes, sys, json
lib = ctypes.CDLL('libfuzzy.so.2')
lib.fuzzy_hash_buf.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_char_p]
lib.fuzzy_compare.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
hashes = []
for name in sys.argv[1:]:
    data = open(name, 'rb').read()
    out = ctypes.create_string_buffer(160)
    assert lib.fuzzy_hash_buf(data, len(data), out) == 0
    hashes.append(out.value.decode())
pairs = json.load(sys.stdin)
print(json.dumps({'hashes': hashes, 'scores': [lib.fuzzy_compare(a.encode(), b.encode()) for a, b in pairs]}))
`

const hashInChunks = (data: Uint8Array, step: number): string => {
  const hasher = new SsdeepHasher()
  for (let at = 0; at < data.length; at += step) hasher.update(data.subarray(at, at + step))
  return hasher.digest()
}

describe('ssdeep hashes', () => {
  it('are the same in any chunking, and of the documented form', () => {
    for (const input of inputs) {
      const whole = ssdeepOf(input)
      assert.match(whole, SSDEEP_PATTERN)
      assert.equal(hashInChunks(input, 1 + (input.length % 4093)), whole)
    }
    assert.equal(ssdeepOf(new Uint8Array(0)), '3::')
  })

  it('match libfuzzy\'s fuzzy_hash_buf, and its fuzzy_compare scores them', { skip: skipUnless('libfuzzy') }, () => {
    const names = inputs.map((input, index) => { const name = join(scratch, `in-${index}`); writeFileSync(name, input); return name })
    const ours = inputs.map((input) => ssdeepOf(input))
    // Every near-copy against its original and its siblings, and each input against a few others.
    const pairs: [string, string][] = []
    const random = new Random(7)
    for (let i = 0; i < ours.length; i++) {
      for (let j = Math.max(0, i - 4); j <= i; j++) pairs.push([ours[i]!, ours[j]!], [ours[j]!, ours[i]!])
      pairs.push([ours[i]!, ours[random.int(ours.length)]!])
    }
    const answer = JSON.parse(python(LIBFUZZY, names, JSON.stringify(pairs))) as { hashes: string[], scores: number[] }
    assert.deepEqual(ours, answer.hashes)
    const scores = pairs.map(([a, b]) => ssdeepCompare(parseSsdeep(a)!, parseSsdeep(b)!))
    assert.deepEqual(scores, answer.scores)
    // The cases reach across the scale, not only 0 and 100.
    const between = new Set(scores.filter((score) => score > 0 && score < 100).map((score) => Math.floor(score / 10)))
    assert.ok(between.size >= 4, `scores between 0 and 100 fall in only ${between.size} deciles`)
  })

  it('match Debian\'s ssdeep command on files of 4 KiB and more', { skip: skipUnless('ssdeep') }, () => {
    const chosen = inputs.map((input, index) => ({ input, index })).filter(({ input }) => input.length >= 4096)
    const names = chosen.map(({ input, index }) => { const name = join(scratch, `file-${index}`); writeFileSync(name, input); return name })
    const lines = run('ssdeep', ['-b', ...names]).split('\n')
    assert.equal(lines[0], 'ssdeep,1.1--blocksize:hash:hash,filename')
    const printed = new Map(lines.slice(1).map((line) => {
      const comma = line.indexOf(',')
      return [line.slice(comma + 2, -1), line.slice(0, comma)] as const
    }))
    for (const { input, index } of chosen) assert.equal(ssdeepOf(input), printed.get(`file-${index}`), `file-${index}`)
  })
})

describe('ssdeep scores', () => {
  it('are libfuzzy\'s fuzzy_compare on the committed pairs', () => {
    const lines = readFileSync(new URL('../../test/fixtures/ssdeep/compare.txt', import.meta.url), 'utf8').split('\n').filter((line) => line && !line.startsWith('#'))
    assert.ok(lines.length > 250)
    for (const line of lines) {
      const [a, b, expected] = line.split(' ') as [string, string, string]
      assert.equal(ssdeepCompare(parseSsdeep(a)!, parseSsdeep(b)!), Number(expected), line)
    }
  })

  it('refuse what is not an ssdeep hash', () => {
    for (const bad of ['', '3:abc', '0:a:b', 'x:a:b', '3:a:b:c', '3:a b:c', `3:${'A'.repeat(65)}:B`, '3:a:b,"file"']) assert.equal(parseSsdeep(bad), null, bad)
  })
})
