/**
 * `npm run bench:hmac-once`: one HMAC-SHA256 under a key used once, as node:crypto's createHmac
 * and as hmacOnce (two one-shot hashes over padded key blocks, src/algorithms/hmac.ts), for a
 * 32-byte and a 2 KB message, five rounds of A B in one process (BENCH_ROUNDS). hmacOfPieces picks
 * by OpenSSL's version; this shows the figures behind that choice on the Node that runs it.
 */
import { createHmac, randomBytes } from 'node:crypto'
import { hmacOnce } from '../src/algorithms/hmac.js'
import { digestNamed } from '../src/algorithms/registry.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SHA256 = digestNamed('sha256')
const key = randomBytes(32)

/** Microseconds a call, over about a second of calls after a warm-up. */
function perCall(call: () => void): number {
  for (let index = 0; index < 2000; index++) call()
  const started = process.hrtime.bigint()
  let calls = 0
  while (process.hrtime.bigint() - started < 1_000_000_000n) {
    for (let index = 0; index < 100; index++) call()
    calls += 100
  }
  return Number(process.hrtime.bigint() - started) / 1000 / calls
}

console.log(`node ${process.version}, OpenSSL ${process.versions.openssl}; µs a call, ${ROUNDS} rounds`)
for (const bytes of [32, 2048]) {
  const message = randomBytes(bytes)
  const reference = createHmac('sha256', key).update(message).digest()
  if (!hmacOnce(SHA256, key, [message])!.equals(reference)) throw new Error('hmacOnce differs from createHmac')
  const viaCreateHmac: number[] = []
  const viaHmacOnce: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    viaCreateHmac.push(perCall(() => createHmac('sha256', key).update(message).digest()))
    viaHmacOnce.push(perCall(() => hmacOnce(SHA256, key, [message])))
  }
  const show = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ')
  console.log(`${String(bytes).padStart(5)} bytes   createHmac ${show(viaCreateHmac)}   hmacOnce ${show(viaHmacOnce)}`)
}
