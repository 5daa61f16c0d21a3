/**
 * The bare loop the token rows of bench/keys.ts compare hashd against: `C_SignInit` then `C_Sign`
 * with CKM_SHA256_HMAC, again and again, with nothing else around them. It is written here with
 * koffi alone and none of hashd's code (src/keys/pkcs11/ is what is measured, so it is not what
 * measures): the module is loaded and logged in on this thread, then each of SESSIONS worker
 * threads opens its own session and calls the two functions synchronously in a tight loop over
 * the same messages hashd is sent, as a C program with a thread per session would.
 *
 *     node dist/bench/pkcs11-loop.js MODULE PIN_FILE TOKEN_LABEL KEY_LABEL SESSIONS SECONDS MESSAGES_FILE
 *
 * (MESSAGES_FILE: a JSON array of the messages, as strings) *
 * prints {"rate": C_Sign per second, "cpuMicros": CPU time of the process per C_Sign}.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'

type Koffi = typeof import('koffi')
const koffi = createRequire(import.meta.url)('koffi') as Koffi

const CKF_OS_LOCKING_OK = 0x2
const CKF_SERIAL_SESSION = 0x4
const CKU_USER = 1
const CKA_CLASS = 0x0
const CKA_LABEL = 0x3
const CKO_SECRET_KEY = 0x4
const CKM_SHA256_HMAC = 0x251
const CKR_CRYPTOKI_ALREADY_INITIALIZED = 0x191

/** The few functions the loop needs, declared from pkcs11f.h (Unix ABI: CK_ULONG is unsigned long). */
function bind(modulePath: string) {
  const lib = koffi.load(modulePath)
  const ulong = 'unsigned long'
  const attribute = koffi.struct({ type: ulong, pValue: 'void *', ulValueLen: ulong })
  const mechanism = koffi.struct({ mechanism: ulong, pParameter: 'void *', ulParameterLen: ulong })
  const initArgs = koffi.struct({ CreateMutex: 'void *', DestroyMutex: 'void *', LockMutex: 'void *', UnlockMutex: 'void *', flags: ulong, pReserved: 'void *' })
  const tokenLabel = koffi.struct({ label: koffi.array('uint8_t', 32, 'Typed'), rest: koffi.array('uint8_t', 256, 'Typed') })
  return {
    initialize: lib.func('C_Initialize', ulong, [koffi.pointer(initArgs)]),
    slotList: lib.func('C_GetSlotList', ulong, ['uint8_t', koffi.out(koffi.pointer(ulong)), koffi.inout(koffi.pointer(ulong))]),
    // Only the label (the first 32 bytes) is read; the rest of CK_TOKEN_INFO (under 256 bytes) is room.
    tokenInfo: lib.func('C_GetTokenInfo', ulong, [ulong, koffi.out(koffi.pointer(tokenLabel))]),
    openSession: lib.func('C_OpenSession', ulong, [ulong, ulong, 'void *', 'void *', koffi.out(koffi.pointer(ulong))]),
    login: lib.func('C_Login', ulong, [ulong, ulong, 'void *', ulong]),
    findInit: lib.func('C_FindObjectsInit', ulong, [ulong, koffi.pointer(attribute), ulong]),
    find: lib.func('C_FindObjects', ulong, [ulong, koffi.out(koffi.pointer(ulong)), ulong, koffi.out(koffi.pointer(ulong))]),
    findFinal: lib.func('C_FindObjectsFinal', ulong, [ulong]),
    signInit: lib.func('C_SignInit', ulong, [ulong, koffi.pointer(mechanism), ulong]),
    sign: lib.func('C_Sign', ulong, [ulong, 'void *', ulong, 'void *', koffi.inout(koffi.pointer(ulong))]),
  }
}

function check(rv: unknown, what: string): void {
  if (Number(rv) !== 0) throw new Error(`${what} returned 0x${Number(rv).toString(16)}`)
}

interface Job { modulePath: string, slot: number, key: number, seconds: number, messages: string[] }

/** One session's loop: C_SignInit and C_Sign until the time is up; the count of MACs made. */
function loop(job: Job): number {
  const c = bind(job.modulePath)
  const rv = Number(c.initialize({ CreateMutex: null, DestroyMutex: null, LockMutex: null, UnlockMutex: null, flags: CKF_OS_LOCKING_OK, pReserved: null }))
  if (rv !== 0 && rv !== CKR_CRYPTOKI_ALREADY_INITIALIZED) check(rv, 'C_Initialize')
  const session = [0]
  check(c.openSession(job.slot, CKF_SERIAL_SESSION, null, null, session), 'C_OpenSession')
  const messages = job.messages.map((message) => Buffer.from(message, 'utf8'))
  const mechanism = { mechanism: CKM_SHA256_HMAC, pParameter: null, ulParameterLen: 0 }
  const out = Buffer.alloc(32)
  const length = [32]
  let count = 0
  const end = process.hrtime.bigint() + BigInt(Math.round(job.seconds * 1e9))
  while (process.hrtime.bigint() < end) {
    for (const message of messages) {
      check(c.signInit(session[0], mechanism, job.key), 'C_SignInit')
      length[0] = 32
      check(c.sign(session[0], message, message.length, out, length), 'C_Sign')
    }
    count += messages.length
  }
  return count
}

async function main(): Promise<void> {
  const [modulePath, pinFile, tokenLabel, keyLabel, sessions, seconds, messagesFile] = process.argv.slice(2)
  if (messagesFile === undefined) throw new Error('usage: pkcs11-loop MODULE PIN_FILE TOKEN_LABEL KEY_LABEL SESSIONS SECONDS MESSAGES_FILE')
  const c = bind(modulePath!)
  check(c.initialize({ CreateMutex: null, DestroyMutex: null, LockMutex: null, UnlockMutex: null, flags: CKF_OS_LOCKING_OK, pReserved: null }), 'C_Initialize')
  const count = [16]
  const slots = new Array<number>(16).fill(0)
  check(c.slotList(1, slots, count), 'C_GetSlotList')
  const slot = slots.slice(0, count[0]).find((each) => {
    const info: { label?: Uint8Array } = {}
    check(c.tokenInfo(each, info), 'C_GetTokenInfo')
    return Buffer.from(info.label!).toString('utf8').trimEnd() === tokenLabel
  })
  if (slot === undefined) throw new Error(`no token labelled ${tokenLabel}`)
  // The login is the application's (PKCS#11 §5.6): every session the workers open shares it.
  const session = [0]
  check(c.openSession(slot, CKF_SERIAL_SESSION, null, null, session), 'C_OpenSession')
  const pin = Buffer.from(readFileSync(pinFile!, 'utf8').trim(), 'utf8')
  check(c.login(session[0], CKU_USER, pin, pin.length), 'C_Login')
  const classValue = Buffer.alloc(8)
  classValue.writeBigUInt64LE(BigInt(CKO_SECRET_KEY))
  const label = Buffer.from(keyLabel!, 'utf8')
  check(c.findInit(session[0], [{ type: CKA_CLASS, pValue: classValue, ulValueLen: 8 }, { type: CKA_LABEL, pValue: label, ulValueLen: label.length }], 2), 'C_FindObjectsInit')
  const handles = [0, 0]
  const found = [0]
  check(c.find(session[0], handles, 2, found), 'C_FindObjects')
  check(c.findFinal(session[0]), 'C_FindObjectsFinal')
  if (found[0] !== 1) throw new Error(`${found[0]} secret keys labelled ${keyLabel}`)
  const job: Job = { modulePath: modulePath!, slot, key: handles[0]!, seconds: Number(seconds), messages: JSON.parse(readFileSync(messagesFile, 'utf8')) as string[] }
  const started = process.cpuUsage()
  const counts = await Promise.all(Array.from({ length: Number(sessions) }, () => new Promise<number>((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: job })
    worker.once('message', resolve)
    worker.once('error', reject)
  })))
  const cpu = process.cpuUsage(started)
  const total = counts.reduce((sum, each) => sum + each, 0)
  console.log(JSON.stringify({ rate: total / job.seconds, cpuMicros: (cpu.user + cpu.system) / total }))
  process.exit(0)
}

if (isMainThread) await main()
else parentPort!.postMessage(loop(workerData as Job))
