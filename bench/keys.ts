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
 * - Keys in a PKCS#11 token (SoftHSM2, a token made as the tests make theirs: test/helpers/softhsm.ts),
 *   skipped with a line naming `softhsm2` when it is not installed. The token's key holds the same
 *   secret as the file key, so both answer the same HMAC (checked before timing):
 *   - one item per request with `keyName` of a token key against a file key, A B B A on one server
 *     (goal ≥ 0.7);
 *   - a batch of 10,000 items (MAX_BATCH_ITEMS' default) with the token key against a bare loop of
 *     C_SignInit/C_Sign with as many sessions as the server's PKCS11_SESSIONS (bench/pkcs11-loop.ts:
 *     node and koffi, none of hashd's code), over the same 10,000 32-byte messages, each on core 0,
 *     A B B A (goal ≥ 0.8).
 * BENCH_KEYS_ONLY=audit runs the audit rows alone (`BENCH_ONLY=keys BENCH_KEYS_ONLY=audit npm run
 * bench`), to measure the audit log's cost without the other rows' minutes.
 * The server runs at LOG_LEVEL=warn with the limiter off, as row 1's quiet configuration. Rates
 * are wall-clock items per second while the server is kept busy; the server's CPU time per item is
 * printed beside them, which drifts less on a shared machine.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeSoftToken, SOFTHSM_MODULE, TOKEN_LABEL } from '../test/helpers/softhsm.js'
import { cpuSeconds, throughput } from './load.js'
import { hasProgram, start, stop, type Started } from './servers.js'

const ITEMS = 1000
/** 32 bytes each, all different. */
const message32 = (index: number) => `bench-message-${String(index).padStart(6, '0')}-32bytes`.slice(0, 32)
const MESSAGES = Array.from({ length: ITEMS }, (_, index) => message32(index))
/** The token rows' batch: MAX_BATCH_ITEMS' default, so one request. */
const TOKEN_ITEMS = 10_000
const TOKEN_MESSAGES = Array.from({ length: TOKEN_ITEMS }, (_, index) => message32(index))
/** PKCS11_SESSIONS of the server, and the bare loop's threads. */
const TOKEN_SESSIONS = 4

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
  const auditOnly = process.env.BENCH_KEYS_ONLY === 'audit'
  let server: Started | undefined
  try {
    if (!auditOnly) await benchFileKeyRows()
    await benchAuditRows()
  } finally {
    if (server) await stop(server)
    rmSync(dir, { recursive: true, force: true })
  }
  if (!auditOnly) await benchTokenKeys(hashdScript, seconds)

  async function benchFileKeyRows(): Promise<void> {
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
  }

  async function benchAuditRows(): Promise<void> {
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
  }
}

/** The bare C_SignInit/C_Sign loop (bench/pkcs11-loop.ts) on core 0, over the messages in `messagesFile`. */
function bareTokenLoop(env: Record<string, string>, pinFile: string, keyLabel: string, messagesFile: string, seconds: number): Rate {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'pkcs11-loop.js')
  const node = [process.execPath, script, SOFTHSM_MODULE, pinFile, TOKEN_LABEL, keyLabel, String(TOKEN_SESSIONS), String(seconds), messagesFile]
  const [command, ...args] = hasProgram('taskset') ? ['taskset', '-c', '0', ...node] : node
  const result = spawnSync(command!, args, { encoding: 'utf8', env: { ...process.env, ...env } })
  if (result.status !== 0) throw new Error(`bare PKCS#11 loop failed: ${result.stderr}`)
  return JSON.parse(result.stdout) as Rate
}

/** The HMAC one request answers (to check that the token's key and the file's give the same). */
async function answer(url: string, body: object): Promise<string> {
  const response = await fetch(`${url}/api/hmac`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST /api/hmac answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { hmac: string }).hmac
}

async function benchTokenKeys(hashdScript: string, seconds: number): Promise<void> {
  console.log(`\n6b. HMAC-SHA256 of 32-byte messages under a key in a PKCS#11 token (SoftHSM2, PKCS11_SESSIONS=${TOKEN_SESSIONS}), on core 0, A B B A`)
  if (!existsSync(SOFTHSM_MODULE) || !hasProgram('softhsm2-util') || !hasProgram('pkcs11-tool')) {
    console.log(`token rows: skipped (softhsm2 not installed: ${SOFTHSM_MODULE} and softhsm2-util, and opensc's pkcs11-tool, Debian: softhsm2 opensc)`)
    return
  }
  const token = makeSoftToken()
  const secret = randomBytes(32)
  token.importKey('bench-hmac', secret, 'generic')
  const keysFile = join(token.dir, 'hmac-keys')
  writeFileSync(keysFile, `bench 1 ${secret.toString('base64')}\ntoken 1 pkcs11:token=${TOKEN_LABEL};object=bench-hmac\n`)
  const messagesFile = join(token.dir, 'messages.json')
  writeFileSync(messagesFile, JSON.stringify(TOKEN_MESSAGES))
  const env = {
    LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', HMAC_KEYS_FILE: keysFile, ...token.env,
    PKCS11_MODULE: SOFTHSM_MODULE, PKCS11_PIN_FILE: token.pinFile, PKCS11_SESSIONS: String(TOKEN_SESSIONS),
  }
  let server: Started | undefined
  try {
    server = await start(hashdScript, env, '0')
    const inFile = { keyName: 'bench', message: MESSAGES[7] }
    const inToken = { keyName: 'token', message: MESSAGES[7] }
    const [fromFile, fromToken] = [await answer(server.url, inFile), await answer(server.url, inToken)]
    if (fromFile !== fromToken) throw new Error(`the token's key and the file's key answer different HMACs (${fromToken}, ${fromFile})`)

    const f1 = await served(server, inFile, 1, seconds, 50)
    const t1 = await served(server, inToken, 1, seconds, 50)
    const t2 = await served(server, inToken, 1, seconds, 50)
    const f2 = await served(server, inFile, 1, seconds, 50)
    const [file, tokenKey] = [mean(f1, f2), mean(t1, t2)]
    console.log(`POST /api/hmac keyName, file key   ${show(file)}`)
    console.log(`POST /api/hmac keyName, token key  ${show(tokenKey)}   token ÷ file: ${(tokenKey.rate / file.rate).toFixed(2)} by items/s, ${(file.cpuMicros / tokenKey.cpuMicros).toFixed(2)} by CPU/item (goal ≥ 0.70)`)

    // One batch of 10,000 at a time (one connection), against the bare loop with as many sessions.
    const batch = { keyName: 'token', items: TOKEN_MESSAGES.map((message) => ({ message })) }
    const a1 = bareTokenLoop(token.env, token.pinFile, 'bench-hmac', messagesFile, seconds)
    const b1 = await served(server, batch, TOKEN_ITEMS, seconds, 1)
    const b2 = await served(server, batch, TOKEN_ITEMS, seconds, 1)
    const a2 = bareTokenLoop(token.env, token.pinFile, 'bench-hmac', messagesFile, seconds)
    const [bare, batched] = [mean(a1, a2), mean(b1, b2)]
    console.log(`batch of ${TOKEN_ITEMS}, token key, 1 connection ${show(batched)}`)
    console.log(`bare C_SignInit/C_Sign loop, ${TOKEN_SESSIONS} threads ${show(bare)}   batch ÷ bare: ${(batched.rate / bare.rate).toFixed(2)} by items/s, ${(bare.cpuMicros / batched.cpuMicros).toFixed(2)} by CPU/item (goal ≥ 0.80)`)
    console.log(`file-key requests ÷ bare token loop: ${(file.rate / bare.rate).toFixed(2)} (the token's own cost per MAC is ${bare.cpuMicros.toFixed(1)} µs CPU; the file key's whole request ${file.cpuMicros.toFixed(1)} µs)`)
  } finally {
    if (server) await stop(server)
    token.remove()
  }
}
