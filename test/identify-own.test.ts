/**
 * Identify knows everything hashd writes: every algorithm /api/hash offers, in every encoding it
 * answers in, every password scheme at its default and at its smallest options, and each peppered
 * under a pepper key, is identified with hashd's own name first among its formats (for a digest:
 * among the formats of its length), and `verifiable` says exactly what /api/verify does with it:
 * every match marked verifiable is answered 200 by verify (with `verifyAlgorithm`), and every
 * match hashd's registry names but does not mark verifiable is refused. A peppered hash is
 * verifiable only on a server that holds its key, and a cost above the server's caps is not. A
 * tagged HMAC of every algorithm is hashd-tagged-hmac, checked by /api/hmac/verify.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'

interface AlgorithmInfo { name: string, kind: string, operations: string[], options: Record<string, { min: number, default: number }> }
interface Match { algorithm: string, verifiable: boolean, verifyAlgorithm?: string, params?: Record<string, unknown>, format?: string }

const INPUT = 'correct horse battery staple'
let dir: string
/** Pepper key k1; the password schemes' hashes are made here. */
let server: TestServer
/** Pepper key k2 only, and bcrypt capped at cost 10: a k1 hash and a cost-12 bcrypt are not verifiable here. */
let other: TestServer
let algorithms: AlgorithmInfo[]
let registry: Set<string>

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hashd-identify-own-'))
  // A named HMAC key for every algorithm with an HMAC (GET /api/algorithms of a plain server names them).
  const plain = await startServer({ LOG_LEVEL: 'warn' })
  const hmacAlgorithms = ((await plain.get('/api/algorithms')).body.algorithms as AlgorithmInfo[]).filter((algorithm) => algorithm.operations.includes('hmac')).map((algorithm) => algorithm.name)
  await plain.close()
  writeFileSync(join(dir, 'hmac'), `tags 7 ${randomBytes(32).toString('base64')} algorithms=${hmacAlgorithms.join(',')}\n`)
  writeFileSync(join(dir, 'k1'), `k1 ${randomBytes(32).toString('base64')}\n`)
  writeFileSync(join(dir, 'k2'), `k2 ${randomBytes(32).toString('base64')}\n`)
  server = await startServer({ PEPPER_KEYS_FILE: join(dir, 'k1'), HMAC_KEYS_FILE: join(dir, 'hmac'), LOG_LEVEL: 'warn' })
  other = await startServer({ PEPPER_KEYS_FILE: join(dir, 'k2'), MAX_BCRYPT_COST: '10', LOG_LEVEL: 'warn' })
  algorithms = (await server.get('/api/algorithms')).body.algorithms as AlgorithmInfo[]
  registry = new Set(algorithms.map((algorithm) => algorithm.name))
})
after(async () => {
  await server?.close()
  await other?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function identify(on: TestServer, hash: string): Promise<Match[]> {
  const response = await on.post('/api/identify', { hash })
  assert.equal(response.status, 200, response.text)
  return response.body.matches as Match[]
}

/**
 * Every match of `hash` that names a verify algorithm: verify answers 200 exactly where the match
 * is verifiable (and, for the algorithm that made it, says it matches the input).
 */
async function assertVerifiableExactly(on: TestServer, hash: string, matches: Match[], madeBy: string): Promise<void> {
  for (const match of matches) {
    const algorithm = match.verifyAlgorithm ?? match.algorithm
    if (!match.verifiable && !registry.has(algorithm)) continue
    // A wrapper verify cannot check (a git object id is the sha1 of a header and the content): the
    // same string named as the bare digest is another reading, which the bare digest's match covers.
    if (!match.verifiable && match.format !== undefined) continue
    const verified = await on.post('/api/verify', { input: INPUT, hash, algorithm })
    assert.equal(verified.status === 200, match.verifiable,
      `${hash.slice(0, 60)} read as ${match.algorithm}: verifiable ${match.verifiable}, but verify answered ${verified.status} ${verified.body?.type ?? ''}`)
    if (match.algorithm === madeBy && match.verifiable) assert.equal(verified.body.match, true, `${hash.slice(0, 60)}: verify as ${algorithm}`)
  }
}

describe('identify knows every format hashd writes', () => {
  it('every digest, XOF and checksum, in hex, base64 and base64url', async () => {
    const digests = algorithms.filter((algorithm) => algorithm.kind !== 'password' && algorithm.kind !== 'similarity' && algorithm.operations.includes('hash'))
    assert.ok(digests.length >= 40, `${digests.length} digests`)
    for (const { name } of digests) {
      for (const encoding of ['hex', 'base64', 'base64url']) {
        const made = await server.post('/api/hash', { input: INPUT, algorithm: name, encoding })
        assert.equal(made.status, 200, made.text)
        const matches = await identify(server, made.body.hash)
        const own = matches.find((match) => match.algorithm === name)
        assert.ok(own, `${name} (${encoding}) ${made.body.hash}: identified as ${matches.map((match) => match.algorithm).join(', ') || 'nothing'}`)
        assert.equal(own.verifiable, true, `${name} (${encoding}) is verifiable`)
        await assertVerifiableExactly(server, made.body.hash, matches, name)
      }
    }
  })

  it('every similarity hash, known by its form and not verifiable (it is compared, not verified)', async () => {
    const similar = algorithms.filter((algorithm) => algorithm.kind === 'similarity')
    assert.deepEqual(similar.map((algorithm) => algorithm.name).sort(), ['ssdeep', 'tlsh'])
    const input = 'The quick brown fox jumps over the lazy dog, again and again, until the dog wakes up. '.repeat(40)
    for (const { name } of similar) {
      const made = await server.post('/api/hash', { input, algorithm: name })
      assert.equal(made.status, 200, made.text)
      const matches = await identify(server, made.body.hash)
      assert.equal(matches[0]?.algorithm, name, `${name} ${made.body.hash}: identified as ${matches.map((match) => match.algorithm).join(', ') || 'nothing'}`)
      assert.equal(matches[0]!.verifiable, false)
    }
  })

  it('a PDQ hash as /api/filehash gives it: PDQ among the matches, below SHA-256 (same form), not verifiable, and compare takes it', async () => {
    const image = readFileSync(new URL('../../test/fixtures/pdq/gen-rgb-300x200.jpg', import.meta.url))
    const response = await server.fetch('/api/filehash?algorithms=pdq', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: image })
    assert.equal(response.status, 200)
    const { hash } = ((await response.json()) as { hashes: { pdq: { hash: string } } }).hashes.pdq
    assert.match(hash, /^[0-9a-f]{64}$/)
    const answer = (await server.post('/api/identify', { hash })).body as { matches: Array<Match & { confidence: number, category: string, description: string }> }
    const names = answer.matches.map((match) => match.algorithm)
    const pdq = answer.matches.find((match) => match.algorithm === 'pdq')
    assert.ok(pdq, `identified as ${names.join(', ')}`)
    assert.equal(pdq.verifiable, false)
    assert.equal(pdq.category, 'Similarity hash')
    assert.match(pdq.description, /\/api\/similarity\/compare/)
    assert.equal(names[0], 'sha256')
    for (const digest of ['sha256', 'sha3-256', 'keccak-256', 'blake3']) assert.ok(names.indexOf(digest) < names.indexOf('pdq'), `${digest} before pdq: ${names.join(', ')}`)
    assert.ok(pdq.confidence > 0 && pdq.confidence < answer.matches[0]!.confidence)
    // Uppercase (a tool that uppercases hex) is still read as PDQ.
    assert.ok((await identify(server, hash.toUpperCase())).some((match) => match.algorithm === 'pdq'))
    // What the description says to do with it works: compare reads the same string as PDQ.
    const compared = await server.post('/api/similarity/compare', { a: hash, b: hash, algorithm: 'pdq' })
    assert.equal(compared.status, 200, compared.text)
    assert.deepEqual([compared.body.algorithm, compared.body.distance, compared.body.similar], ['pdq', 0, true])
  })

  it('every tagged HMAC (a named key, format tagged), with every algorithm: hashd-tagged-hmac with its version, checked by /api/hmac/verify and not by /api/verify', async () => {
    const macs = algorithms.filter((algorithm) => algorithm.operations.includes('hmac'))
    assert.ok(macs.length >= 20, `${macs.length} HMAC algorithms`)
    for (const { name } of macs) {
      const made = await server.post('/api/hmac', { message: INPUT, keyName: 'tags', algorithm: name, format: 'tagged' })
      assert.equal(made.status, 200, made.text)
      const matches = await identify(server, made.body.hmac)
      assert.equal(matches[0]?.algorithm, 'hashd-tagged-hmac', `${name} ${made.body.hmac}: identified as ${matches.map((match) => match.algorithm).join(', ') || 'nothing'}`)
      assert.equal(matches[0]!.params?.version, 7)
      assert.equal(matches[0]!.verifiable, false, 'a tagged HMAC is checked by /api/hmac/verify, which needs the key name')
      assert.notEqual((await server.post('/api/verify', { input: INPUT, hash: made.body.hmac })).body.match, true)
      const checked = await server.post('/api/hmac/verify', { message: INPUT, keyName: 'tags', algorithm: name, hmac: made.body.hmac })
      assert.equal(checked.body.valid, true, `${name}: ${checked.text}`)
    }
  })

  it('every password scheme, at its defaults and at its smallest options, first among the matches', async () => {
    const schemes = algorithms.filter((algorithm) => algorithm.kind === 'password' && algorithm.operations.includes('hash'))
    assert.ok(schemes.length >= 20, `${schemes.length} schemes`)
    for (const { name, options } of schemes) {
      for (const pick of ['default', 'min'] as const) {
        const chosen = Object.fromEntries(Object.entries(options).map(([option, spec]) => [option, spec[pick]]))
        const made = await server.post('/api/hash', { input: INPUT, algorithm: name, options: chosen, pepper: false })
        assert.equal(made.status, 200, `${name} ${JSON.stringify(chosen)}: ${made.text}`)
        const matches = await identify(server, made.body.hash)
        assert.equal(matches[0]?.algorithm, name, `${name} (${pick} options) ${made.body.hash}: first match ${matches[0]?.algorithm}`)
        assert.equal(matches[0]?.verifiable, true, `${name} (${pick} options) is verifiable`)
        await assertVerifiableExactly(server, made.body.hash, matches, name)
      }
    }
  })

  it('every password scheme peppered: verifiable as the scheme inside where the server holds the key, and only there', async () => {
    const schemes = algorithms.filter((algorithm) => algorithm.kind === 'password' && algorithm.operations.includes('hash'))
    for (const { name, options } of schemes) {
      const cheapest = Object.fromEntries(Object.entries(options).map(([option, spec]) => [option, spec.min]))
      const made = await server.post('/api/hash', { input: INPUT, algorithm: name, options: cheapest })
      assert.equal(made.body.pepperKey, 'k1', made.text)
      const here = await identify(server, made.body.hash)
      assert.equal(here[0]?.algorithm, 'peppered', `${name} peppered: ${here.map((match) => match.algorithm).join(', ')}`)
      assert.deepEqual([here[0]?.verifiable, here[0]?.verifyAlgorithm, here[0]?.params], [true, name, { version: 1, key: 'k1', scheme: name }])
      await assertVerifiableExactly(server, made.body.hash, here, 'peppered')
      const verified = await server.post('/api/verify', { input: INPUT, hash: made.body.hash })
      assert.equal(verified.body.match, true, `${name} peppered verifies without naming the algorithm`)

      const elsewhere = await identify(other, made.body.hash)
      assert.equal(elsewhere[0]?.algorithm, 'peppered')
      assert.equal(elsewhere[0]?.verifiable, false, 'a server without k1 cannot verify it')
      assert.equal(elsewhere[0]?.verifyAlgorithm, undefined)
      const refused = await other.post('/api/verify', { input: INPUT, hash: made.body.hash })
      assert.deepEqual([refused.status, refused.body.type], [422, 'urn:hashd:problem:unknown-pepper-key'])
    }
  })

  it('a cost above the server\'s caps is not verifiable there (verify answers 422 cost-above-cap)', async () => {
    const made = await server.post('/api/hash', { input: INPUT, algorithm: 'bcrypt', options: { cost: 12 }, pepper: false })
    assert.equal(made.status, 200, made.text)
    const hash = made.body.hash as string
    const here = await identify(server, hash)
    assert.deepEqual([here[0]?.algorithm, here[0]?.verifiable], ['bcrypt', true])
    const capped = await identify(other, hash)
    assert.deepEqual([capped[0]?.algorithm, capped[0]?.verifiable], ['bcrypt', false], 'MAX_BCRYPT_COST=10 there')
    await assertVerifiableExactly(other, hash, capped, 'bcrypt')
  })
})
