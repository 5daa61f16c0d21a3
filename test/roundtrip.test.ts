/**
 * Round-trip properties for every algorithm the registry lists (GET /api/algorithms), with random
 * inputs (fast-check, fixed seed, HASHD_FUZZ_RUNS): hash then verify matches and a one-bit change
 * of the input does not; /api/filehash gives the digest /api/hash gives for the same bytes; HMAC
 * over hex- or base64-encoded key and message equals HMAC over the text they decode to (and, where
 * OpenSSL has the hash, node:crypto's HMAC). Password schemes run at their minimum cost options.
 */
import assert from 'node:assert/strict'
import { createHmac, getHashes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { FUZZ_RUNS, fuzzParameters } from './helpers/fuzz.js'
import { startServer, type TestServer } from './helpers/server.js'

interface AlgorithmInfo { name: string, kind: string, operations: string[], writes?: string | null, options: Record<string, { min: number }> }

let server: TestServer
let algorithms: AlgorithmInfo[] = []

before(async () => {
  server = await startServer()
  algorithms = ((await server.get('/api/algorithms')).body as { algorithms: AlgorithmInfo[] }).algorithms
})
after(async () => { await server.close() })

/** The same bytes with one bit flipped (a byte appended to an empty input): a different input for every algorithm here. */
function changed(bytes: Uint8Array, position: number): Buffer {
  if (bytes.length === 0) return Buffer.from('a')
  const copy = Buffer.from(bytes)
  const index = position % copy.length
  copy[index] = (copy[index] as number) ^ 1
  return copy
}

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await server.post(path, body)
  assert.equal(response.status, 200, `${path} ${JSON.stringify(body).slice(0, 300)} → ${response.status} ${response.text.slice(0, 300)}`)
  return response.body as Record<string, unknown>
}

/** Per-algorithm runs: the whole registry shares a budget of about HASHD_FUZZ_RUNS cases per property. */
const perAlgorithm = (count: number, floor: number) => Math.max(floor, Math.round(FUZZ_RUNS / Math.max(1, count)))

describe('round trips for every algorithm in the registry', () => {
  it('digests and checksums: hash then verify matches; a changed input does not', async () => {
    const digests = algorithms.filter((algorithm) => algorithm.kind !== 'password' && algorithm.operations.includes('hash') && algorithm.operations.includes('verify'))
    assert.ok(digests.length > 40, `only ${digests.length} digests listed`)
    for (const { name } of digests) {
      // LM and NTLM hash passwords (text); LM reads at most 14 characters and folds case.
      const text = name === 'lm' || name === 'ntlm'
      const input = text ? fc.string({ unit: 'grapheme-ascii', maxLength: 14 }).map((value) => Buffer.from(value.toUpperCase())) : fc.uint8Array({ maxLength: 2_000 })
      await fc.assert(fc.asyncProperty(input, fc.nat(), async (bytes, position) => {
        const other = changed(bytes, position)
        const encode = (value: Uint8Array) => (text ? { input: Buffer.from(value).toString('utf8') } : { input: Buffer.from(value).toString('hex'), inputEncoding: 'hex' })
        const { hash } = await post('/api/hash', { algorithm: name, ...encode(bytes) })
        assert.equal((await post('/api/verify', { algorithm: name, hash, ...encode(bytes) })).match, true, `${name} verify of its own hash`)
        assert.equal((await post('/api/verify', { algorithm: name, hash, ...encode(other) })).match, false, `${name} verify of a changed input`)
      }), { ...fuzzParameters(), numRuns: perAlgorithm(digests.length, 2) })
    }
  })

  it('password schemes at minimum cost: hash then verify matches; a changed input does not', async () => {
    const schemes = algorithms.filter((algorithm) => algorithm.kind === 'password' && algorithm.operations.includes('hash'))
    assert.ok(schemes.length > 15, `only ${schemes.length} password schemes listed`)
    for (const { name, options } of schemes) {
      const cheapest = Object.fromEntries(Object.entries(options).map(([option, bounds]) => [option, bounds.min]))
      await fc.assert(fc.asyncProperty(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }), fc.nat(), async (password, position) => {
        const other = changed(Buffer.from(password), position).toString('latin1')
        const { hash } = await post('/api/hash', { algorithm: name, input: password, options: cheapest })
        assert.equal((await post('/api/verify', { hash, input: password })).match, true, `${name}: ${String(hash)}`)
        assert.equal((await post('/api/verify', { hash, input: other })).match, false, `${name}: changed input`)
      }), { ...fuzzParameters(), numRuns: perAlgorithm(schemes.length * 4, 2) })
    }
  })

  it('filehash gives the same digest as hash on the same bytes, for every file algorithm', async () => {
    const names = algorithms.filter((algorithm) => algorithm.operations.includes('filehash')).map((algorithm) => algorithm.name)
    // Algorithms defined on text (NTLM's UTF-16LE) refuse bytes that are not UTF-8, by hash and filehash alike.
    const textOnly = new Set<string>()
    for (const name of names) {
      const response = await server.post('/api/hash', { algorithm: name, input: 'gA==', inputEncoding: 'base64' })
      if (response.status === 422 && response.body.type === 'urn:hashd:problem:not-text') textOnly.add(name)
    }
    const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
    const isUtf8 = (bytes: Uint8Array) => { try { strictUtf8.decode(bytes); return true } catch { return false } }
    const upload = async (batch: string[], bytes: Uint8Array) => {
      const form = new FormData()
      form.append('algorithms', batch.join(','))
      form.append('file', new Blob([bytes]), 'random.bin')
      const response = await fetch(`${server.url}/api/filehash`, { method: 'POST', body: form })
      return { status: response.status, body: await response.json() as { size: number, hashes: Record<string, string>, type?: string } }
    }
    const input = fc.oneof(fc.uint8Array({ maxLength: 100_000 }), fc.string({ maxLength: 2_000 }).map((text) => new TextEncoder().encode(text)))
    // TLSH has no hash of fewer than 50 bytes, or of too uniform ones: both routes refuse those alike.
    const tlshRefuses = async (bytes: Uint8Array): Promise<boolean> => {
      const response = await server.post('/api/hash', { algorithm: 'tlsh', input: Buffer.from(bytes).toString('base64'), inputEncoding: 'base64' })
      return response.status === 422 && response.body.type === 'urn:hashd:problem:tlsh-input'
    }
    await fc.assert(fc.asyncProperty(input, async (bytes) => {
      const text = isUtf8(bytes)
      const noTlsh = await tlshRefuses(bytes)
      if (noTlsh) {
        const { status, body } = await upload(['tlsh'], bytes)
        assert.deepEqual([status, body.type], [422, 'urn:hashd:problem:tlsh-input'])
      }
      const usable = names.filter((name) => (text || !textOnly.has(name)) && !(noTlsh && name === 'tlsh'))
      for (let index = 0; index < usable.length; index += 16) {
        const batch = usable.slice(index, index + 16)
        const { status, body } = await upload(batch, bytes)
        assert.equal(status, 200, JSON.stringify(body))
        assert.equal(body.size, bytes.length)
        for (const name of batch) {
          const { hash } = await post('/api/hash', { algorithm: name, input: Buffer.from(bytes).toString('base64'), inputEncoding: 'base64' })
          assert.equal(body.hashes[name], hash, `${name} over ${bytes.length} bytes`)
        }
      }
      if (!text && textOnly.size > 0) {
        const { status, body } = await upload([...textOnly], bytes)
        assert.deepEqual([status, body.type], [422, 'urn:hashd:problem:not-text'])
      }
    }), fuzzParameters(0.05))
  })

  it('HMAC over hex/base64 key and message equals HMAC over the decoded text (and node:crypto where OpenSSL has the hash)', async () => {
    const names = algorithms.filter((algorithm) => algorithm.operations.includes('hmac')).map((algorithm) => algorithm.name)
    const openssl = new Set(getHashes())
    for (const name of names) {
      await fc.assert(fc.asyncProperty(fc.string({ minLength: 1, maxLength: 200 }), fc.string({ maxLength: 300 }), async (key, message) => {
        const keyBytes = Buffer.from(key, 'utf8')
        const messageBytes = Buffer.from(message, 'utf8')
        const text = (await post('/api/hmac', { algorithm: name, key, message })).hmac
        const hexKey = (await post('/api/hmac', { algorithm: name, key: keyBytes.toString('hex'), keyEncoding: 'hex', message: messageBytes.toString('base64'), inputEncoding: 'base64' })).hmac
        assert.equal(hexKey, text, `${name}: encoded key and message`)
        if (openssl.has(name)) assert.equal(text, createHmac(name, keyBytes).update(messageBytes).digest('hex'), `${name}: node:crypto`)
      }), { ...fuzzParameters(), numRuns: perAlgorithm(names.length, 2) })
    }
  })
})
