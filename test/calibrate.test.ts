/**
 * POST /api/calibrate: for each supported scheme the options are within the server's caps (as
 * GET /api/algorithms states them) and at or above the OWASP Password Storage Cheat Sheet minimums,
 * hashes made with them verify without a rehash recommendation, lowered caps are honoured, memory
 * bounds below the minimum are refused, and the calibration rate limit answers 429. No assertion
 * here depends on how fast this machine is (bench/calibrate.ts measures that).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'

/** OWASP Password Storage Cheat Sheet minimums (and libxcrypt's default yescrypt cost, as hashd uses). */
const MINIMUMS: Record<string, (options: Record<string, number>) => boolean> = {
  argon2id: ({ memoryCost = 0, timeCost = 0 }) => memoryCost * timeCost >= 19456 * 2 && memoryCost >= 7168,
  bcrypt: ({ cost = 0 }) => cost >= 10,
  'bcrypt-sha256': ({ cost = 0 }) => cost >= 10,
  scrypt: ({ N = 0, r = 0, p = 0 }) => N >= 2 ** 17 && r === 8 && p >= 1,
  'pbkdf2-sha256': ({ iterations = 0 }) => iterations >= 600_000,
  'pbkdf2-sha512': ({ iterations = 0 }) => iterations >= 210_000,
  yescrypt: ({ cost = 0 }) => cost >= 5,
}

async function within(server: TestServer, algorithm: string, options: Record<string, number>): Promise<void> {
  const catalogue = (await server.get('/api/algorithms')).body.algorithms as Array<{ name: string, options: Record<string, { min: number, max: number }> }>
  const bounds = catalogue.find((entry) => entry.name === algorithm)?.options ?? {}
  for (const [name, value] of Object.entries(options)) {
    const bound = bounds[name]
    assert.ok(bound, `${algorithm} has no option ${name}`)
    assert.ok(Number.isInteger(value) && value >= bound.min && value <= bound.max, `${algorithm} ${name} ${value} outside ${bound.min}…${bound.max}`)
  }
}

describe('POST /api/calibrate', () => {
  let server: TestServer
  before(async () => { server = await startServer({ CALIBRATE_RATE_LIMIT_MAX: '0' }) })
  after(() => server.close())

  for (const algorithm of Object.keys(MINIMUMS)) {
    it(`${algorithm}: options within the caps and at or above the minimums; a hash made with them needs no rehash`, async () => {
      const response = await server.post('/api/calibrate', { algorithm, targetMs: 50, ...(algorithm === 'argon2id' ? { maxMemoryKiB: 32768 } : {}) })
      assert.equal(response.status, 200, response.text)
      const { options, measuredMs, measurements, warnings, targetMs } = response.body
      assert.equal(response.body.algorithm, algorithm)
      assert.equal(targetMs, 50)
      assert.ok((MINIMUMS[algorithm] as (o: Record<string, number>) => boolean)(options), `${algorithm} ${JSON.stringify(options)} is below the minimum`)
      await within(server, algorithm, options)
      if (algorithm === 'argon2id') assert.ok(options.memoryCost <= 32768, 'maxMemoryKiB was not honoured')
      assert.ok(measurements.length >= 3 && measurements.length <= 4)
      // measuredMs is the measurement of the options returned: the last one, or the one before when
      // the refinement came out further from the target and was dropped.
      const ofOptions = measurements.filter((measured: { options: Record<string, number> }) =>
        Object.entries(measured.options).every(([name, value]) => options[name] === value))
      assert.ok(ofOptions.some((measured: { ms: number }) => measured.ms === measuredMs), `${measuredMs} is not a measurement of ${JSON.stringify(options)}`)
      // The warning follows from the figures measured, whatever they are on this machine.
      const slowAtMinimum = warnings.some((warning: string) => /below what the minimum takes/.test(warning))
      if (slowAtMinimum) assert.ok(measuredMs > targetMs)

      const hashed = await server.post('/api/hash', { input: 'calibrated', algorithm, options })
      assert.equal(hashed.status, 200, hashed.text)
      const verified = await server.post('/api/verify', { input: 'calibrated', hash: hashed.body.hash })
      assert.deepEqual([verified.body.match, verified.body.rehashRecommended], [true, false], verified.body.reason)
    })
  }

  it('never goes below the minimum, with a warning when the minimum is slower than the target', async () => {
    const response = await server.post('/api/calibrate', { algorithm: 'pbkdf2-sha256', targetMs: 10 })
    assert.equal(response.status, 200)
    assert.equal(response.body.options.iterations, 600_000)
    if (response.body.measuredMs > 12.5) assert.match(response.body.warnings.join(' '), /targetMs 10 is below what the minimum takes on this server/)
  })

  it('refuses memory bounds below the minimum and schemes it does not calibrate', async () => {
    const scrypt = await server.post('/api/calibrate', { algorithm: 'scrypt', targetMs: 100, maxMemoryKiB: 65536 })
    assert.equal(scrypt.status, 422)
    assert.equal(scrypt.body.type, 'urn:hashd:problem:below-minimum')
    assert.equal((await server.post('/api/calibrate', { algorithm: 'argon2id', targetMs: 100, maxMemoryKiB: 4096 })).status, 422)
    // The floors the document states for maxMemoryKiB (openapi.test.ts checks them against OWASP and libxcrypt) are the server's own.
    for (const [algorithm, floor] of [['argon2id', 7168], ['scrypt', 131_072], ['yescrypt', 16_384]] as const) {
      const below = await server.post('/api/calibrate', { algorithm, targetMs: 10, maxMemoryKiB: floor - 1 })
      assert.equal(below.body.type, 'urn:hashd:problem:below-minimum', `${algorithm} at ${floor - 1} KiB`)
      const at = await server.post('/api/calibrate', { algorithm, targetMs: 10, maxMemoryKiB: floor })
      assert.equal(at.status, 200, `${algorithm} at ${floor} KiB: ${at.text}`)
    }
    for (const algorithm of ['sha256', 'md5-crypt', 'des-crypt']) {
      const response = await server.post('/api/calibrate', { algorithm, targetMs: 100 })
      assert.equal(response.status, 400, algorithm)
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
    }
    assert.equal((await server.post('/api/calibrate', { algorithm: 'nope', targetMs: 100 })).status, 400)
    for (const targetMs of [5, 5001, 100.5]) assert.equal((await server.post('/api/calibrate', { algorithm: 'bcrypt', targetMs })).status, 400)
  })
})

describe('POST /api/calibrate under lowered caps and its own rate limit', () => {
  let server: TestServer
  before(async () => {
    server = await startServer({ MAX_BCRYPT_COST: '11', MAX_ARGON2_TIME_COST: '3', MAX_PBKDF2_ITERATIONS: '650000', CALIBRATE_RATE_LIMIT_MAX: '3' })
  })
  after(() => server.close())

  it('stops at the caps even for a long target, and the fourth calibration in the window is 429 with Retry-After', async () => {
    const expected: Array<[string, Record<string, number>]> = [
      ['bcrypt', { cost: 11 }], ['pbkdf2-sha256', { iterations: 650_000 }], ['argon2id', { memoryCost: 32768, timeCost: 3 }],
    ]
    for (const [algorithm, caps] of expected) {
      const response = await server.post('/api/calibrate', { algorithm, targetMs: 5000, ...(algorithm === 'argon2id' ? { maxMemoryKiB: 32768 } : {}) })
      assert.equal(response.status, 200, response.text)
      for (const [name, value] of Object.entries(caps)) assert.equal(response.body.options[name], value, `${algorithm} ${name}`)
      await within(server, algorithm, response.body.options)
    }
    const refused = await server.post('/api/calibrate', { algorithm: 'bcrypt', targetMs: 50 })
    assert.equal(refused.status, 429)
    assert.match(refused.headers.get('content-type') ?? '', /^application\/problem\+json/)
    assert.ok(Number(refused.headers.get('retry-after')) >= 1)
    assert.match(refused.body.detail, /CALIBRATE_RATE_LIMIT_MAX/)
  })
})
