/**
 * The similarity hashes through the real server: /api/hash (text and bytes), /api/filehash (a raw
 * upload, inline and on the hash threads, beside a digest), the operations that refuse them, and
 * POST /api/similarity/compare against ssdeep's hashes and libfuzzy's scores, the TLSH reference's distances and the
 * Hamming distances of Meta's PDQ reference hashes (test/fixtures/ssdeep/, tlsh/, pdq/).
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { digestNamed } from '../src/algorithms/registry.js'
import { chooseSink, computesContentHashes, hashUpload } from '../src/upload/pipeline.js'
import { HashThreads } from '../src/upload/threads.js'
import { Readable } from 'node:stream'
import { similarityInputs } from './helpers/similarity-inputs.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'

const fixture = (path: string): string[] =>
  readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), 'utf8').trim().split('\n').filter((line) => !line.startsWith('#'))
const tlshHashes = new Map(fixture('tlsh/hashes.tsv').map((line) => line.split('\t') as [string, string]))
/** Debian's `ssdeep -b` of the same inputs (test/fixtures/ssdeep/hashes.tsv says how they were made). */
const ssdeepHashes = new Map(fixture('ssdeep/hashes.tsv').map((line) => line.split('\t') as [string, string]))
const ssdeepOf = (name: string): string => ssdeepHashes.get(name)!
const inputs = new Map(similarityInputs().map(({ name, data }) => [name, data]))
const inputNamed = (name: string): Buffer => inputs.get(name)!

let server: TestServer
before(async () => { server = await startServer() })
after(async () => { await server.close() })

const upload = async (body: Buffer, query: string): Promise<TestResponse> =>
  toTestResponse(await fetch(`${server.url}/api/filehash?${query}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body }))

function assertProblem(response: TestResponse, status: number, pattern: RegExp): void {
  assert.equal(response.status, status, response.text)
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
  assert.match(response.body.detail, pattern)
}

describe('similarity hashes in /api/hash and /api/filehash', () => {
  it('/api/hash: text and bytes, in the tools\' own forms', async () => {
    for (const name of ['text-1000', 'random-4096']) {
      const data = inputNamed(name)
      const base64 = await server.post('/api/hash', { input: data.toString('base64'), inputEncoding: 'base64', algorithm: 'tlsh' })
      assert.equal(base64.status, 200, base64.text)
      assert.equal(base64.body.hash, tlshHashes.get(name))
      assert.equal(base64.body.encoding, 'standard')
      const ssdeep = await server.post('/api/hash', { input: data.toString('base64'), inputEncoding: 'base64', algorithm: 'SSDEEP', encoding: 'base64' })
      assert.equal(ssdeep.body.hash, ssdeepOf(name))
    }
    const text = inputNamed('text-1000').toString('utf8')
    assert.equal((await server.post('/api/hash', { input: text, algorithm: 'tlsh' })).body.hash, tlshHashes.get('text-1000'))
  })

  it('/api/filehash: beside a digest, inline and on the hash threads', async () => {
    for (const name of ['text-65536', 'random-3145728']) {
      const data = inputNamed(name)
      const response = await upload(data, 'algorithms=sha256,ssdeep,tlsh')
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(response.body.hashes, {
        sha256: createHash('sha256').update(data).digest('hex'),
        ssdeep: ssdeepOf(name),
        tlsh: tlshHashes.get(name),
      })
    }
  })

  it('go to the hash threads even alone, as slow hashers do', async () => {
    const threads = new HashThreads({ threads: 2, ringBytes: 64 * 1024, idleMs: 1_000 })
    try {
      const data = inputNamed('random-3145728')
      for (const name of ['tlsh', 'ssdeep']) {
        const sink = await chooseSink([digestNamed(name)], { expectedBytes: data.length, threads })
        assert.ok(computesContentHashes(sink), `${name} alone gets a threaded sink`)
        const { digests } = await hashUpload(Readable.from([data.subarray(0, 1_000_000), data.subarray(1_000_000)]), [digestNamed(name)], { maxBytes: data.length, tooLargeDetail: '' }, sink)
        const text = digestNamed(name).format!(digests.get(name)!)
        assert.equal(text, name === 'tlsh' ? tlshHashes.get('random-3145728') : ssdeepOf('random-3145728'))
      }
      assert.ok(!computesContentHashes(await chooseSink([digestNamed('sha256')], { expectedBytes: data.length, threads })), 'a fast digest alone stays inline')
    } finally {
      await threads.close()
    }
  })

  it('TLSH of too little or too uniform data is a 422 problem, in both routes', async () => {
    assertProblem(await server.post('/api/hash', { input: 'short', algorithm: 'tlsh' }), 422, /at least 50 bytes/)
    assertProblem(await upload(Buffer.alloc(5000, 0x41), 'algorithms=sha256,tlsh'), 422, /too uniform/)
    assertProblem(await upload(Buffer.alloc(2 * 1024 * 1024, 0x41), 'algorithms=md5,tlsh'), 422, /too uniform/)
  })

  it('verify and HMAC refuse them', async () => {
    assertProblem(await server.post('/api/verify', { input: 'x', hash: tlshHashes.get('text-1000'), algorithm: 'tlsh' }), 400, /compared by score or distance/)
    assertProblem(await server.post('/api/hmac', { message: 'x', key: 'k', algorithm: 'ssdeep' }), 400, /similarity hash/)
  })
})

describe('POST /api/similarity/compare', () => {
  it('scores ssdeep pairs as libfuzzy\'s fuzzy_compare does', async () => {
    const rows = fixture('ssdeep/compare.txt').map((line) => line.split(' ') as [string, string, string])
    const picked = [...rows.filter(([, , score]) => score !== '0').slice(0, 30), ...rows.filter(([, , score]) => score === '0').slice(0, 5)]
    for (const [a, b, score] of picked) {
      const response = await server.post('/api/similarity/compare', { a, b })
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(response.body, { algorithm: 'ssdeep', score: Number(score), similar: Number(score) >= 50, threshold: 50 })
    }
  })

  it('gives TLSH distances as the reference does, with and without the length term', async () => {
    const rows = fixture('tlsh/distances.tsv').map((line) => line.split('\t') as [string, string, string, string])
    for (const [a, b, withLength, withoutLength] of rows.filter((_, index) => index % 15 === 0)) {
      const response = await server.post('/api/similarity/compare', { a, b })
      assert.deepEqual(response.body, { algorithm: 'tlsh', distance: Number(withLength), similar: Number(withLength) <= 30, threshold: 30, lengthTerm: true })
      const xlen = await server.post('/api/similarity/compare', { a, b, algorithm: 'TLSH', lengthTerm: false, threshold: 100 })
      assert.deepEqual(xlen.body, { algorithm: 'tlsh', distance: Number(withoutLength), similar: Number(withoutLength) <= 100, threshold: 100, lengthTerm: false })
    }
  })

  it('gives PDQ distances as the Hamming distance of Meta\'s reference hashes, with Meta\'s threshold of 31', async () => {
    // The reference's hashes of the fixtures and of their rotations and flips (test/fixtures/pdq/),
    // each pair's distance counted here from the XOR of the two numbers.
    const expected = JSON.parse(readFileSync(new URL('../../test/fixtures/pdq/expected.json', import.meta.url), 'utf8')) as Record<string, { hash: string, dihedral: Record<string, string> }>
    const hashes = Object.values(expected).flatMap(({ hash, dihedral }) => [hash, ...Object.values(dihedral)])
    const hamming = (a: string, b: string): number => [...(BigInt(`0x${a}`) ^ BigInt(`0x${b}`)).toString(2)].filter((bit) => bit === '1').length
    // Pairs across the images and their variants, and each image against its hash with a few bits
    // changed (a near copy, within the threshold).
    const nearCopy = (hash: string, bits: number): string => (BigInt(`0x${hash}`) ^ ((1n << BigInt(bits)) - 1n)).toString(16).padStart(64, '0')
    const pairs = [
      ...hashes.filter((_, index) => index % 3 === 0).map((a, index) => [a, hashes[(index * 7 + 5) % hashes.length]!] as const),
      ...Object.values(expected).map(({ hash }, index) => [hash, nearCopy(hash, 10 + index * 3)] as const),
    ]
    let similar = 0
    for (const [a, b] of pairs) {
      const response = await server.post('/api/similarity/compare', { a, b })
      const distance = hamming(a, b)
      if (distance <= 31) similar += 1
      assert.deepEqual(response.body, { algorithm: 'pdq', distance, similar: distance <= 31, threshold: 31 }, `${a} ${b}`)
    }
    assert.ok(similar > 0, 'some pairs are within the threshold')
    const one = hashes[0]!
    assert.deepEqual((await server.post('/api/similarity/compare', { a: one, b: one.toUpperCase(), algorithm: 'PDQ', threshold: 0 })).body, { algorithm: 'pdq', distance: 0, similar: true, threshold: 0 })
    assertProblem(await server.post('/api/similarity/compare', { a: one, b: one, threshold: 257 }), 400, /threshold for pdq is an integer from 0 to 256/)
    assertProblem(await server.post('/api/similarity/compare', { a: one, b: one, lengthTerm: true }), 400, /lengthTerm applies to TLSH only/)
    assertProblem(await server.post('/api/similarity/compare', { a: one, b: tlshHashes.get('text-1000')! }), 422, /pdq hash and b a tlsh hash/)
  })

  it('refuses a malformed hash (400 naming the field), two kinds (422) and options that do not apply (400)', async () => {
    const tlsh = tlshHashes.get('text-1000')!
    const ssdeep = ssdeepOf('text-1000')
    let response = await server.post('/api/similarity/compare', { a: tlsh, b: 'TNULL' })
    assertProblem(response, 400, /^b is not/)
    assert.equal(response.body.errors[0].pointer, '/body/b')
    response = await server.post('/api/similarity/compare', { a: 'nonsense', b: tlsh })
    assert.equal(response.body.errors[0].pointer, '/body/a')
    assertProblem(await server.post('/api/similarity/compare', { a: tlsh, b: tlsh, algorithm: 'ssdeep' }), 400, /^a is not a ssdeep hash/)
    assertProblem(await server.post('/api/similarity/compare', { a: tlsh, b: ssdeep }), 422, /tlsh hash and b a ssdeep hash/)
    assertProblem(await server.post('/api/similarity/compare', { a: ssdeep, b: ssdeep, lengthTerm: false }), 400, /lengthTerm applies to TLSH only/)
    assertProblem(await server.post('/api/similarity/compare', { a: ssdeep, b: ssdeep, threshold: 101 }), 400, /threshold for ssdeep/)
    assertProblem(await server.post('/api/similarity/compare', { a: ssdeep, b: ssdeep, algorithm: 'md5' }), 400, /algorithm must be one of/)
    assert.deepEqual((await server.post('/api/similarity/compare', { a: ssdeep, b: ssdeep, threshold: 100 })).body, { algorithm: 'ssdeep', score: 100, similar: true, threshold: 100 })
  })
})
