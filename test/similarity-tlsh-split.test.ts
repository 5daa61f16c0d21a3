/**
 * TLSH split by data over hash threads (similarity/fast.ts's FastTlshShareHasher, upload/threads.ts)
 * against Trend Micro's reference: inputs whose 64 KiB spans end inside the 5-byte window, hashed
 * in shares in-process, through the hash threads, and as uploads to the real server, each equal to
 * what `tlsh -f` printed for them (test/fixtures/tlsh/split.tsv, whose README names the commit).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { digestNamed } from '../src/algorithms/registry.js'
import { combineTlshShares, FastTlshShareHasher } from '../src/similarity/fast.js'
import { formatTlsh } from '../src/similarity/tlsh.js'
import { chooseSink, computesContentHashes, hashUpload } from '../src/upload/pipeline.js'
import { balance, HashThreads, splitDigestsByData } from '../src/upload/threads.js'
import { tlshSplitInputs } from './helpers/similarity-inputs.js'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'

const expected = new Map(readFileSync(new URL('../../test/fixtures/tlsh/split.tsv', import.meta.url), 'utf8')
  .trim().split('\n').map((line) => line.split('\t') as [string, string]))
const inputs = tlshSplitInputs()
const SPAN = 64 * 1024

/** Cuts `data` into pieces of `step` bytes, the first `first` long (so that cuts fall a few bytes into a span). */
function pieces(data: Buffer, first: number, step: number): Buffer[] {
  const cut = [data.subarray(0, first)]
  for (let at = first; at < data.length; at += step) cut.push(data.subarray(at, at + step))
  return cut
}

describe('TLSH in shares', () => {
  it('covers every input with a reference hash', () => {
    assert.equal(inputs.length, expected.size)
    assert.ok(inputs.every(({ name }) => expected.get(name)?.startsWith('T1')))
  })

  it('2, 3 and 4 shares, in chunkings cut inside the window at span edges, give the reference\'s hash', () => {
    for (const { name, data } of inputs) {
      for (const count of [2, 3, 4]) {
        for (const [first, step] of [[SPAN + 2, SPAN], [SPAN - 3, 1 + (data.length % 997)], [3, 70_001]] as const) {
          const shares = Array.from({ length: count }, (_, index) => new FastTlshShareHasher(index, count))
          for (const piece of pieces(data, first, step)) for (const share of shares) share.update(piece)
          assert.equal(formatTlsh(combineTlshShares(shares.map((share) => share.digest()))), expected.get(name), `${name}, ${count} shares, ${first}/${step}`)
        }
      }
    }
  })

  it('each on a lane of its own, beside other digests', () => {
    const algorithms = ['md5', 'ssdeep', 'tlsh', 'sha1'].map(digestNamed)
    for (const lanes of [2, 3, 4]) {
      const { algorithms: spread, splits } = splitDigestsByData(algorithms, lanes)
      assert.deepEqual(splits.map((split) => split.shareKeys.length), [lanes])
      for (const work of balance(spread, lanes)) {
        assert.ok(work.algorithms.filter((algorithm) => algorithm.share !== undefined).length <= 1, `${lanes} lanes: ${work.algorithms.map((algorithm) => algorithm.share?.key ?? algorithm.name).join(',')}`)
      }
    }
  })
})

describe('TLSH on the hash threads', () => {
  it('gives the reference\'s hash on 3 and 4 threads (2 and 3 shares), alone and beside a digest, for chunks cut inside the window', async () => {
    for (const threadCount of [3, 4]) {
      const threads = new HashThreads({ threads: threadCount, ringBytes: 256 * 1024, idleMs: 1_000 })
      try {
        for (const { name, data } of inputs.filter((input) => input.data.length > 3 * SPAN)) {
          for (const names of [['tlsh'], ['md5', 'tlsh']]) {
            const algorithms = names.map(digestNamed)
            // No declared length: a small upload would be hashed inline.
            const sink = await chooseSink(algorithms, { threads })
            assert.ok(computesContentHashes(sink), 'a threaded sink')
            const { digests } = await hashUpload(Readable.from(pieces(data, 2 * SPAN + 1, 50_003)), algorithms, { maxBytes: data.length, tooLargeDetail: '' }, sink)
            assert.equal(digestNamed('tlsh').format!(digests.get('tlsh')!), expected.get(name), `${name}, ${names.join(',')} on ${threadCount} threads`)
            assert.deepEqual([...digests.keys()].sort(), [...names].sort(), 'no share left in the result')
          }
        }
      } finally {
        await threads.close()
      }
    }
  })
})

describe('TLSH uploads over HTTP', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  it('are the reference\'s hash, alone and beside a digest', async () => {
    for (const { name, data } of inputs.filter((input) => input.data.length > 1024 * 1024)) {
      for (const query of ['algorithms=tlsh', 'algorithms=md5,tlsh']) {
        const response = await toTestResponse(await fetch(`${server.url}/api/filehash?${query}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: data }))
        assert.equal(response.status, 200, response.text)
        assert.equal(response.body.hashes.tlsh, expected.get(name), `${name}, ${query}`)
      }
    }
  })
})
