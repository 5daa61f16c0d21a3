/**
 * A rotation across two replicas that share Redis, as a rolling change of a mounted Secret does it:
 * each replica has its own keys files (its own node's copy) and reloads when they change on disk,
 * without a signal, and the files change one replica after the other. While it runs, a client
 * hammers both replicas, making an HMAC (tagged, with the key's name) and a peppered password hash
 * on one and checking it on the other, and no request may fail at any step:
 *
 *   k1 → k1 + k2 (staged) → k2 (current) → k1 retired
 *
 * for the named HMAC key and for the pepper alike. Python's hmac checks a sample of the HMACs
 * under the secrets in the files. Then a batch counts its items against the limit the two
 * replicas share.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { hashKey } from '../src/keys/api-keys.js'
import { pythonHmac } from './helpers/hmac.js'
import { startHashd, type HashdProcess } from './helpers/process.js'
import { startRedis, type TestRedis } from './helpers/redis.js'
import { skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-rotation-'))
after(() => rmSync(dir, { recursive: true, force: true }))
const secret = () => randomBytes(32).toString('base64')

/** Replaces a file the way editors, config tools and the kubelet do: a new file renamed over the old. */
function replace(path: string, text: string): void {
  writeFileSync(`${path}.new`, text)
  renameSync(`${path}.new`, path)
}

interface Keys { hmac: { name: string, versions: Array<{ version: number, state: string }> }[], pepper: { currentKey: string, keys: Array<{ id: string, state: string }> } }

describe('a key rotation across two replicas sharing Redis, with no request failing', { skip: skipUnless('redis-server', 'python3') }, () => {
  const S = { h1: secret(), h2: secret(), p1: secret(), p2: secret() }
  const hammerKey = `hk_${randomBytes(32).toString('base64url')}`
  const bulkKey = `hk_${randomBytes(32).toString('base64url')}`
  let redis: TestRedis
  const replicas: Array<{ hashd: HashdProcess, hmacFile: string, pepperFile: string }> = []
  const auth = { authorization: `Bearer ${hammerKey}` }

  before(async () => {
    redis = await startRedis()
    const apiKeys = join(dir, 'api-keys')
    writeFileSync(apiKeys, `hammer ${hashKey(hammerKey)}\nbulk ${hashKey(bulkKey)} 30 items=30\n`)
    // One Redis, one prefix: both replicas count in the same buckets.
    const prefix = `hashd-rotation-${randomBytes(4).toString('hex')}:`
    for (const name of ['a', 'b']) {
      const hmacFile = join(dir, `${name}-hmac`)
      const pepperFile = join(dir, `${name}-pepper`)
      writeFileSync(hmacFile, `orders 1 ${S.h1}\n`)
      writeFileSync(pepperFile, `k1 ${S.p1}\n`)
      const hashd = await startHashd({
        // No Redis fault is meant here: a wide command bound keeps a loaded machine's slow answer
        // from being taken for an outage, which counts on the replica alone (redis-faults tests that).
        REDIS_URL: redis.url, REDIS_PREFIX: prefix, RATE_LIMIT_MAX: '1000000', REDIS_COMMAND_TIMEOUT_MS: '5000',
        HMAC_KEYS_FILE: hmacFile, PEPPER_KEYS_FILE: pepperFile, API_KEYS_FILE: apiKeys,
      })
      replicas.push({ hashd, hmacFile, pepperFile })
    }
  })
  after(async () => {
    for (const { hashd } of replicas) await hashd.stop()
    await redis?.destroy()
  })

  it('k1 → k1 + k2 (staged) → k2 (current) → k1 retired, for the HMAC key and the pepper, each replica in turn', async () => {
    const failures: string[] = []
    const samples: Array<{ message: string, hmac: string }> = []
    let running = true
    let iterations = 0
    const done = [0, 0]
    /** One worker: make on one replica, check on the other, alternating. */
    const worker = async (index: number) => {
      for (let turn = index; running; turn++) {
        const maker = replicas[turn % 2]!.hashd
        const checker = replicas[(turn + 1) % 2]!.hashd
        const message = `order ${turn}-${index}-${randomBytes(4).toString('hex')}`
        try {
          const made = await maker.post('/api/hmac', { message, keyName: 'orders', format: 'tagged' }, auth)
          if (made.status !== 200) { failures.push(`hmac ${made.status} ${made.text}`); continue }
          const checked = await checker.post('/api/hmac/verify', { message, hmac: made.body.hmac, keyName: 'orders' }, auth)
          if (checked.status !== 200 || checked.body.valid !== true) failures.push(`verify ${checked.status} ${checked.text} of ${made.body.hmac}`)
          if (samples.length < 400 && turn % 3 === 0) samples.push({ message, hmac: made.body.hmac })
          const hashed = await maker.post('/api/hash', { input: message, algorithm: 'bcrypt', options: { cost: 4 } }, auth)
          if (hashed.status !== 200) { failures.push(`hash ${hashed.status} ${hashed.text}`); continue }
          const matched = await checker.post('/api/verify', { input: message, hash: hashed.body.hash }, auth)
          if (matched.status !== 200 || matched.body.match !== true) failures.push(`password verify ${matched.status} ${matched.text}`)
        } catch (error) {
          failures.push(`request failed: ${String(error)}`)
        }
        iterations++
        done[index] = (done[index] ?? 0) + 1
      }
    }
    const workers = [worker(0), worker(1)]
    /** Waits until every worker has finished the iteration it was in (work made before a change is checked before the next). */
    const settle = async () => {
      const seen = [...done]
      while (done.some((count, index) => count < (seen[index] ?? 0) + 2)) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const keysOf = async (hashd: HashdProcess) => (await hashd.get('/api/keys', auth)).body as Keys
    /** Changes one replica's files, then waits until it has reloaded them (no signal: the change on disk). */
    const change = async (index: number, hmac: string, pepper: string, loaded: (keys: Keys) => boolean) => {
      const replica = replicas[index]!
      replace(replica.hmacFile, hmac)
      replace(replica.pepperFile, pepper)
      const deadline = Date.now() + 20_000
      while (!loaded(await keysOf(replica.hashd))) {
        assert.ok(Date.now() < deadline, `replica ${index} did not reload ${JSON.stringify(await keysOf(replica.hashd))}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await settle()
    }
    const state = (keys: Keys, version: number) => keys.hmac[0]?.versions.find((each) => each.version === version)?.state
    const pepperState = (keys: Keys, id: string) => keys.pepper.keys.find((each) => each.id === id)?.state

    await settle()
    const steps = [
      { hmac: `orders 1 ${S.h1}\norders 2 ${S.h2} state=staged\n`, pepper: `k1 ${S.p1}\nk2 ${S.p2} state=staged\n`, loaded: (keys: Keys) => state(keys, 2) === 'staged' && pepperState(keys, 'k2') === 'staged' },
      { hmac: `orders 1 ${S.h1}\norders 2 ${S.h2}\n`, pepper: `k1 ${S.p1}\nk2 ${S.p2}\n`, loaded: (keys: Keys) => state(keys, 2) === 'current' && keys.pepper.currentKey === 'k2' },
      { hmac: `orders 1 ${S.h1} state=retired\norders 2 ${S.h2}\n`, pepper: `k1 ${S.p1} state=retired\nk2 ${S.p2}\n`, loaded: (keys: Keys) => state(keys, 1) === 'retired' && pepperState(keys, 'k1') === 'retired' },
    ]
    for (const step of steps) {
      await change(0, step.hmac, step.pepper, step.loaded)
      await change(1, step.hmac, step.pepper, step.loaded)
    }
    running = false
    await Promise.all(workers)
    assert.deepEqual(failures, [])
    assert.ok(iterations >= 20, `the hammer ran ${iterations} iterations`)

    // Both versions were used, and Python agrees with every sampled HMAC.
    const versions = new Set(samples.map((sample) => sample.hmac.split(':')[1]))
    assert.deepEqual([...versions].sort(), ['v1', 'v2'])
    const checked = pythonHmac<boolean>(samples.map(({ message, hmac }) => ({ op: 'check', secret: hmac.startsWith('hashd:v1:') ? S.h1 : S.h2, message, hmac })))
    assert.ok(checked.every(Boolean))
    // No signal was sent: every reload was a change on disk.
    for (const { hashd } of replicas) {
      assert.match(hashd.stdout(), /HMAC keys reloaded \(changed on disk\)/)
      assert.doesNotMatch(hashd.stdout(), /\(SIGHUP\)/)
    }
  })

  it('a batch counts its items against the items budget both replicas share', async () => {
    const bulk = { authorization: `Bearer ${bulkKey}` }
    const [a, b] = [replicas[0]!.hashd, replicas[1]!.hashd]
    const items = Array.from({ length: 20 }, (_, index) => ({ message: String(index) }))
    const first = await a.post('/api/hmac', { keyName: 'orders', items }, bulk)
    assert.equal(first.status, 200)
    const second = await b.post('/api/hmac', { keyName: 'orders', items }, bulk)
    assert.equal(second.status, 429, second.text)
    assert.match(second.body.detail, /this batch's 20 items go over the items budget \(10 of 30 per \d+ s left/)
    assert.equal(second.body.policy, 'items')
    assert.match(second.headers.get('ratelimit') ?? '', /^"items";r=10;t=\d+$/)
  })
})
