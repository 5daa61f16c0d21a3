/**
 * TLSH (src/similarity/tlsh.ts) against Trend Micro's reference, version 4: the hashes of the
 * seeded inputs of test/helpers/similarity-inputs.ts and the distances, with and without the
 * length term, as the reference printed them (test/fixtures/tlsh/, whose README names the commit).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { Problem } from '../src/problem.js'
import { parseTlsh, TLSH_PATTERN, TlshHasher, tlshDistance, tlshOf } from '../src/similarity/tlsh.js'
import { similarityInputs } from './helpers/similarity-inputs.js'

const fixture = (name: string): string[][] =>
  readFileSync(new URL(`../../test/fixtures/tlsh/${name}`, import.meta.url), 'utf8').trim().split('\n').map((line) => line.split('\t'))

describe('TLSH hashes', () => {
  it('are the reference\'s, in any chunking; TNULL inputs are a 422 problem', () => {
    const expected = new Map(fixture('hashes.tsv').map(([name, hash]) => [name!, hash!]))
    const inputs = similarityInputs()
    assert.equal(inputs.length, expected.size)
    for (const { name, data } of inputs) {
      const hasher = new TlshHasher()
      const step = 1 + (data.length % 997)
      for (let at = 0; at < data.length; at += step) hasher.update(data.subarray(at, at + step))
      const want = expected.get(name)
      if (want === 'TNULL') {
        assert.throws(() => hasher.digest(), (error: unknown) => error instanceof Problem && error.status === 422 && /TLSH/.test(error.detail), name)
      } else {
        assert.equal(hasher.digest(), want, name)
        assert.match(want!, TLSH_PATTERN)
      }
    }
  })

  it('say why there is no hash: too short, or too uniform', () => {
    assert.throws(() => tlshOf(Buffer.alloc(49, 1)), /at least 50 bytes/)
    assert.throws(() => tlshOf(Buffer.alloc(5000, 1)), /too uniform/)
  })
})

describe('TLSH distances', () => {
  it('are the reference\'s, with the length term and without (-xlen)', () => {
    const rows = fixture('distances.tsv')
    assert.ok(rows.length > 400)
    const distances = new Set<number>()
    for (const [a, b, withLength, withoutLength] of rows) {
      const parsedA = parseTlsh(a!)
      const parsedB = parseTlsh(b!)
      assert.ok(parsedA && parsedB, `${a} ${b}`)
      assert.equal(tlshDistance(parsedA, parsedB), Number(withLength), `${a} ${b}`)
      assert.equal(tlshDistance(parsedA, parsedB, false), Number(withoutLength), `${a} ${b} -xlen`)
      distances.add(Number(withLength))
    }
    // Close and far pairs both: the threshold of 30 falls inside the range.
    assert.ok([...distances].some((d) => d > 0 && d <= 30) && [...distances].some((d) => d > 100))
  })

  it('accept the form before version 4 and refuse what is not a TLSH hash', () => {
    const hash = 'T1A111C8F653E6896A8DA69A84F22314C2F307077FE5F828A30C518BD54C9A7508D0B4BE'
    assert.equal(tlshDistance(parseTlsh(hash)!, parseTlsh(hash.slice(2).toLowerCase())!), 0)
    for (const bad of ['TNULL', '', hash.slice(0, -1), `${hash}0`, `T2${hash.slice(2)}`, `t1${hash.slice(2)}`, hash.replace('A', 'G')]) assert.equal(parseTlsh(bad), null, bad)
  })
})
