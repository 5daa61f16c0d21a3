/**
 * The key ring's rows of `npm run bench` (BENCH_ONLY=keys): HMAC-SHA256 of 32-byte messages under a
 * named key (HMAC_KEYS_FILE), items per second on one core.
 *
 * - A batch of 1,000 items per request (POST /api/hmac with `items`) against a bare loop of
 *   node:crypto `createHmac(…).update(m).digest('hex')` over the same messages in one process, each
 *   pinned to core 0, A B B A (goal ≥ 0.8); and against one item per request on the same server
 *   (goal ≥ 10); and, for scale, against `openssl speed -hmac sha256 -bytes 32` on core 0, the
 *   machine's limit for one core (printed, no goal).
 * - One item per request: `keyName` against `key` (the same secret sent by the caller), A B B A on
 *   one server (goal ≥ 0.95: finding a named key costs nothing).
 * - One item per request with `keyName`, the audit log on (AUDIT_LOG=file:…, a line per request)
 *   against off, a server of each in turn on core 0, A B B A (goal ≥ 0.85).
 * The server runs at LOG_LEVEL=warn with the limiter off, as row 1's quiet configuration. Rates
 * are wall-clock items per second while the server is kept busy; the server's CPU time per item is
 * printed beside them, which drifts less on a shared machine.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuSeconds, throughput } from './load.js'
import { hasProgram, start, stop, type Started } from './servers.js'

const ITEMS = 1000
/** 32 bytes each, all different. */
const MESSAGES = Array.from({ length: ITEMS }, (_, index) => `bench-message-${String(index).padStart(6, '0')}-32bytes`.slice(0, 32))

/** The bare loop, in a process of its own on core 0: HMACs per second over `seconds`. */
const BARE_LOOP = `
const { createHmac } = require('node:crypto')
const [secret, seconds, messages] = [Buffer.from(process.argv[1], 'base64'), Number(process.argv[2]), JSON.parse(process.argv[3])]
let count = 0
const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9))
const started = process.cpuUsage()
while (process.hrtime.bigint() < end) {
  for (const message of messages) createHmac('sha256', secret).update(message).digest('hex')
  count += messages.length
}
const cpu = process.cpuUsage(started)
console.log(JSON.stringify({ rate: count / seconds, cpuMicros: (cpu.user + cpu.system) / count }))
`

interface Rate { rate: number, cpuMicros: number }

function bareLoop(secret: string, seconds: number): Rate {
  const node = [process.execPath, '-e', BARE_LOOP, secret, String(seconds), JSON.stringify(MESSAGES)]
  const [command, ...args] = hasProgram('taskset') ? ['taskset', '-c', '0', ...node] : node
  const result = spawnSync(command!, args, { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`bare loop failed: ${result.stderr}`)
  return JSON.parse(result.stdout) as Rate
}

/** Items per second through the server, and its CPU time per item. */
async function served(server: Started, body: object, itemsPerRequest: number, seconds: number, connections: number): Promise<Rate> {
  await throughput(server.url, body, 1, '/api/hmac', connections)
  const before = cpuSeconds(server.child.pid)
  const { rate, requests } = await throughput(server.url, body, seconds, '/api/hmac', connections)
  return { rate: rate * itemsPerRequest, cpuMicros: (cpuSeconds(server.child.pid) - before) * 1e6 / (requests * itemsPerRequest) }
}

/** `openssl speed -hmac sha256 -bytes 32` on core 0: HMACs per second, or null without openssl. */
function opensslSpeed(seconds: number): number | null {
  if (!hasProgram('openssl')) return null
  const command = [...hasProgram('taskset') ? ['taskset', '-c', '0'] : [], 'openssl', 'speed', '-seconds', String(Math.max(1, Math.round(seconds))), '-bytes', '32', '-hmac', 'sha256']
  const output = spawnSync(command[0]!, command.slice(1), { encoding: 'utf8' }).stdout ?? ''
  // The table's last line: "hmac(sha256)   <bytes/s for 32-byte blocks>k"; counts are in 1000s of bytes per second.
  const match = /^hmac\(sha256\)\s+([\d.]+)k/im.exec(output)
  return match ? Number(match[1]) * 1000 / 32 : null
}

const mean = (a: Rate, b: Rate): Rate => ({ rate: (a.rate + b.rate) / 2, cpuMicros: (a.cpuMicros + b.cpuMicros) / 2 })
const show = (rate: Rate) => `${rate.rate.toFixed(0).padStart(8)} items/s ${rate.cpuMicros.toFixed(2).padStart(6)} µs CPU/item`

export async function benchKeys(hashdScript: string, seconds: number): Promise<void> {
  console.log(`\n6. HMAC-SHA256 of 32-byte messages under a named key (HMAC_KEYS_FILE), items per second on one core (core 0), A B B A`)
  const dir = mkdtempSync(join(tmpdir(), 'hashd-bench-keys-'))
  const secret = randomBytes(32).toString('base64')
  const keysFile = join(dir, 'hmac-keys')
  writeFileSync(keysFile, `bench 1 ${secret}\n`)
  const batch = { keyName: 'bench', items: MESSAGES.map((message) => ({ message })) }
  const named = { keyName: 'bench', message: MESSAGES[7] }
  const own = { key: secret, keyEncoding: 'base64', message: MESSAGES[7] }
  let server: Started | undefined
  try {
    server = await start(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', HMAC_KEYS_FILE: keysFile }, '0')
    const a1 = bareLoop(secret, seconds)
    const b1 = await served(server, batch, ITEMS, seconds, 4)
    const b2 = await served(server, batch, ITEMS, seconds, 4)
    const a2 = bareLoop(secret, seconds)
    const single1 = await served(server, named, 1, seconds, 50)
    const single2 = await served(server, named, 1, seconds, 50)
    const [bare, batched, single] = [mean(a1, a2), mean(b1, b2), mean(single1, single2)]
    console.log(`batch of ${ITEMS}, keyName              ${show(batched)}`)
    console.log(`bare createHmac loop, one process  ${show(bare)}   batch ÷ bare: ${(batched.rate / bare.rate).toFixed(2)} by items/s, ${(bare.cpuMicros / batched.cpuMicros).toFixed(2)} by CPU/item (goal ≥ 0.80)`)
    console.log(`one item per request, keyName      ${show(single)}   batch ÷ single: ${(batched.rate / single.rate).toFixed(1)} by items/s (goal ≥ 10)`)
    const openssl = opensslSpeed(seconds)
    console.log(openssl === null
      ? 'openssl speed -hmac sha256 -bytes 32: skipped (openssl not installed)'
      : `openssl speed -hmac sha256 -bytes 32 ${openssl.toFixed(0).padStart(8)} HMACs/s on one core: the machine's limit; batch ÷ openssl: ${(batched.rate / openssl).toFixed(2)}, bare loop ÷ openssl: ${(bare.rate / openssl).toFixed(2)}`)

    // keyName against key, one per request, A B B A on the same server.
    const k1 = await served(server, own, 1, seconds, 50)
    const n1 = await served(server, named, 1, seconds, 50)
    const n2 = await served(server, named, 1, seconds, 50)
    const k2 = await served(server, own, 1, seconds, 50)
    const [byName, byKey] = [mean(n1, n2), mean(k1, k2)]
    console.log(`POST /api/hmac with keyName        ${show(byName)}`)
    console.log(`POST /api/hmac with key            ${show(byKey)}   keyName ÷ key: ${(byName.rate / byKey.rate).toFixed(2)} by items/s, ${(byKey.cpuMicros / byName.cpuMicros).toFixed(2)} by CPU/item (goal ≥ 0.95)`)
    await stop(server)
    server = undefined

    // The audit log on (a file beside the keys, a line per request) against off, one per request,
    // each server alone on core 0 in its turn, A B B A.
    const auditKey = join(dir, 'audit.key')
    writeFileSync(auditKey, `${randomBytes(32).toString('base64')}\n`)
    const auditEnv = { AUDIT_LOG: `file:${join(dir, 'audit.log')}`, AUDIT_KEY: auditKey }
    const withServer = async (env: Record<string, string>): Promise<Rate> => {
      server = await start(hashdScript, { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', HMAC_KEYS_FILE: keysFile, ...env }, '0')
      try {
        return await served(server, named, 1, seconds, 50)
      } finally {
        await stop(server)
        server = undefined
      }
    }
    const off1 = await withServer({})
    const on1 = await withServer(auditEnv)
    const on2 = await withServer(auditEnv)
    const off2 = await withServer({})
    const [on, off] = [mean(on1, on2), mean(off1, off2)]
    console.log(`POST /api/hmac keyName, audit off  ${show(off)}`)
    console.log(`POST /api/hmac keyName, audit on   ${show(on)}   on ÷ off: ${(on.rate / off.rate).toFixed(2)} by items/s, ${(off.cpuMicros / on.cpuMicros).toFixed(2)} by CPU/item (goal ≥ 0.85)`)
  } finally {
    if (server) await stop(server)
    rmSync(dir, { recursive: true, force: true })
  }
}
