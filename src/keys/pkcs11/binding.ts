/**
 * The PKCS#11 (v2.40, OASIS) functions hashd calls, bound with koffi: the module named by
 * PKCS11_MODULE is loaded with dlopen and its `C_*` symbols are called directly, with no build
 * step. koffi was chosen over pkcs11js (the binding graphene-pk11 is built on) because pkcs11js is
 * a native addon: node-gyp must find Node's headers (a download, or `npm_config_nodedir`) and a
 * C++ compiler on every machine that installs it, which the image and a fresh machine do not
 * have; koffi ships prebuilt for every platform Node runs on and is already a dependency
 * (libxcrypt, mallopt, preadv2).
 *
 * Every call that may wait on the device runs off the event loop: with koffi's `.async`, on a
 * libuv thread, or, for the HMACs of `signMany`, on a thread of hashd's (sign-thread.ts) that makes
 * a group of them in one hand-off; the module is initialised with CKF_OS_LOCKING_OK so that
 * sessions may be used from several threads at once (one call per session at a time: pool.ts).
 *
 * Types follow the Unix ABI of pkcs11t.h: CK_ULONG is `unsigned long`, structures are not packed.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import type { LibraryHandle } from 'koffi'
import type { SignJob, SignReply } from './sign-thread.js'

type Koffi = typeof import('koffi')
type KoffiFunction = ReturnType<LibraryHandle['func']>

/** CK_RV values hashd tells apart (pkcs11t.h). */
export const CKR = {
  OK: 0x0,
  ARGUMENTS_BAD: 0x7,
  ATTRIBUTE_SENSITIVE: 0x11,
  DEVICE_ERROR: 0x30,
  DEVICE_MEMORY: 0x31,
  DEVICE_REMOVED: 0x32,
  ENCRYPTED_DATA_INVALID: 0x40,
  FUNCTION_FAILED: 0x6,
  GENERAL_ERROR: 0x5,
  KEY_HANDLE_INVALID: 0x60,
  KEY_TYPE_INCONSISTENT: 0x63,
  KEY_FUNCTION_NOT_PERMITTED: 0x68,
  MECHANISM_INVALID: 0x70,
  MECHANISM_PARAM_INVALID: 0x71,
  OBJECT_HANDLE_INVALID: 0x82,
  OPERATION_ACTIVE: 0x90,
  PIN_INCORRECT: 0xa0,
  PIN_LEN_RANGE: 0xa2,
  PIN_EXPIRED: 0xa3,
  PIN_LOCKED: 0xa4,
  SESSION_CLOSED: 0xb0,
  SESSION_HANDLE_INVALID: 0xb3,
  TOKEN_NOT_PRESENT: 0xe0,
  TOKEN_NOT_RECOGNIZED: 0xe1,
  USER_ALREADY_LOGGED_IN: 0x100,
  USER_NOT_LOGGED_IN: 0x101,
  USER_PIN_NOT_INITIALIZED: 0x102,
  ENCRYPTED_DATA_LEN_RANGE: 0x41,
  BUFFER_TOO_SMALL: 0x150,
  CRYPTOKI_NOT_INITIALIZED: 0x190,
  CRYPTOKI_ALREADY_INITIALIZED: 0x191,
} as const

const CKR_NAMES = new Map<number, string>(Object.entries(CKR).map(([name, value]) => [value, `CKR_${name}`]))

/** `CKR_PIN_INCORRECT (0xa0)`: the name when known, always the number. */
export function rvName(rv: number): string {
  return `${CKR_NAMES.get(rv) ?? 'CKR'} (0x${rv.toString(16)})`
}

/** Attribute types (CKA_*) and values hashd writes or reads. */
export const CKA = {
  CLASS: 0x0,
  TOKEN: 0x1,
  PRIVATE: 0x2,
  LABEL: 0x3,
  VALUE: 0x11,
  KEY_TYPE: 0x100,
  ID: 0x102,
  SENSITIVE: 0x103,
  ENCRYPT: 0x104,
  DECRYPT: 0x105,
  SIGN: 0x108,
  VERIFY: 0x10a,
  VALUE_LEN: 0x161,
  EXTRACTABLE: 0x162,
} as const
export const CKO_SECRET_KEY = 0x4
export const CKK_GENERIC_SECRET = 0x10
export const CKK_AES = 0x1f
export const CKU_USER = 1
const CKF_RW_SESSION = 0x2
const CKF_SERIAL_SESSION = 0x4
const CKF_OS_LOCKING_OK = 0x2

/** Mechanisms (CKM_*). */
export const CKM = {
  GENERIC_SECRET_KEY_GEN: 0x350,
  AES_KEY_GEN: 0x1080,
  AES_GCM: 0x1087,
  SHA256_HMAC: 0x251,
  SHA384_HMAC: 0x261,
  SHA512_HMAC: 0x271,
} as const

/** CK_TOKEN_INFO flags about the user PIN. */
export const CKF_TOKEN_INITIALIZED = 0x400
export const CKF_USER_PIN_COUNT_LOW = 0x10000
export const CKF_USER_PIN_FINAL_TRY = 0x20000
export const CKF_USER_PIN_LOCKED = 0x40000

/** A failed call: the function and its CK_RV. */
export class Pkcs11Error extends Error {
  readonly rv: number
  readonly fn: string
  constructor(fn: string, rv: number) {
    super(`${fn} returned ${rvName(rv)}`)
    this.name = 'Pkcs11Error'
    this.fn = fn
    this.rv = rv
  }
}

/** One attribute of a template: a number (CK_ULONG), a boolean (CK_BBOOL) or bytes. */
export interface Attribute {
  type: number
  value: number | boolean | Uint8Array
}

export interface TokenInfo {
  label: string
  serialNumber: string
  flags: number
}

export interface GcmParams {
  iv: Uint8Array
  aad: Uint8Array
  tagBits: number
}

/** A mechanism: HMACs take no parameter; AES-GCM takes CK_GCM_PARAMS. */
export type Mechanism = { mechanism: number } | { mechanism: typeof CKM.AES_GCM, gcm: GcmParams }

const ULONG_BYTES = 8

function attributeValue(value: Attribute['value']): Buffer {
  if (typeof value === 'boolean') return Buffer.from([value ? 1 : 0])
  if (typeof value === 'number') {
    const bytes = Buffer.alloc(ULONG_BYTES)
    bytes.writeBigUInt64LE(BigInt(value))
    return bytes
  }
  return Buffer.from(value)
}

/** Trailing spaces of a fixed-width CK_UTF8CHAR field (labels are padded with blanks, not NULs). */
function blankPadded(bytes: Uint8Array): string {
  let end = bytes.length
  while (end > 0 && (bytes[end - 1] === 0x20 || bytes[end - 1] === 0)) end--
  return Buffer.from(bytes.subarray(0, end)).toString('utf8')
}

/** An async koffi call as a promise. */
function call(fn: KoffiFunction, name: string, args: unknown[]): Promise<number> {
  return new Promise((resolve, reject) => {
    fn.async(...args, (error: unknown, rv: number) => {
      if (error) reject(error instanceof Error ? error : new Error(String(error)))
      else resolve(Number(rv))
    })
  }).then((rv) => {
    if (rv !== CKR.OK) throw new Pkcs11Error(name, rv as number)
    return rv as number
  })
}

/** A thread of `signMany` and the groups it has been given. */
interface SignThread {
  worker: Worker
  pending: Map<number, { resolve: (macs: Buffer[]) => void, reject: (error: Error) => void, count: number, outputBytes: number }>
}

/**
 * A loaded module: the C_* functions as promises, each throwing Pkcs11Error on a CK_RV other than
 * CKR_OK. Handles (slots, sessions, objects) are CK_ULONG, passed as numbers.
 */
export class Pkcs11Module {
  readonly path: string
  readonly #koffi: Koffi
  readonly #lib: LibraryHandle
  readonly #fn: Record<string, KoffiFunction>

  private constructor(path: string, koffi: Koffi, lib: LibraryHandle) {
    this.path = path
    this.#koffi = koffi
    this.#lib = lib
    const attribute = koffi.struct({ type: 'unsigned long', pValue: 'void *', ulValueLen: 'unsigned long' })
    const mechanism = koffi.struct({ mechanism: 'unsigned long', pParameter: 'void *', ulParameterLen: 'unsigned long' })
    const gcmParams = koffi.struct({ pIv: 'void *', ulIvLen: 'unsigned long', ulIvBits: 'unsigned long', pAAD: 'void *', ulAADLen: 'unsigned long', ulTagBits: 'unsigned long' })
    const gcmMechanism = koffi.struct({ mechanism: 'unsigned long', pParameter: koffi.pointer(gcmParams), ulParameterLen: 'unsigned long' })
    const tokenInfo = koffi.struct({
      label: koffi.array('uint8_t', 32, 'Typed'), manufacturerID: koffi.array('uint8_t', 32, 'Typed'),
      model: koffi.array('uint8_t', 16, 'Typed'), serialNumber: koffi.array('uint8_t', 16, 'Typed'),
      flags: 'unsigned long', ulMaxSessionCount: 'unsigned long', ulSessionCount: 'unsigned long',
      ulMaxRwSessionCount: 'unsigned long', ulRwSessionCount: 'unsigned long', ulMaxPinLen: 'unsigned long',
      ulMinPinLen: 'unsigned long', ulTotalPublicMemory: 'unsigned long', ulFreePublicMemory: 'unsigned long',
      ulTotalPrivateMemory: 'unsigned long', ulFreePrivateMemory: 'unsigned long',
      hardwareVersion: koffi.array('uint8_t', 2, 'Typed'), firmwareVersion: koffi.array('uint8_t', 2, 'Typed'),
      utcTime: koffi.array('uint8_t', 16, 'Typed'),
    })
    const initArgs = koffi.struct({ CreateMutex: 'void *', DestroyMutex: 'void *', LockMutex: 'void *', UnlockMutex: 'void *', flags: 'unsigned long', pReserved: 'void *' })
    const ulong = 'unsigned long'
    const declare = (name: string, args: unknown[]) => lib.func(name, ulong, args as never)
    this.#fn = {
      C_Initialize: declare('C_Initialize', [koffi.pointer(initArgs)]),
      C_Finalize: declare('C_Finalize', ['void *']),
      C_GetSlotList: declare('C_GetSlotList', ['uint8_t', koffi.out(koffi.pointer(ulong)), koffi.inout(koffi.pointer(ulong))]),
      C_GetTokenInfo: declare('C_GetTokenInfo', [ulong, koffi.out(koffi.pointer(tokenInfo))]),
      C_OpenSession: declare('C_OpenSession', [ulong, ulong, 'void *', 'void *', koffi.out(koffi.pointer(ulong))]),
      C_CloseSession: declare('C_CloseSession', [ulong]),
      C_Login: declare('C_Login', [ulong, ulong, 'void *', ulong]),
      C_FindObjectsInit: declare('C_FindObjectsInit', [ulong, koffi.pointer(attribute), ulong]),
      C_FindObjects: declare('C_FindObjects', [ulong, koffi.out(koffi.pointer(ulong)), ulong, koffi.out(koffi.pointer(ulong))]),
      C_FindObjectsFinal: declare('C_FindObjectsFinal', [ulong]),
      C_GetAttributeValue: declare('C_GetAttributeValue', [ulong, ulong, koffi.inout(koffi.pointer(attribute)), ulong]),
      C_SignInit: declare('C_SignInit', [ulong, koffi.pointer(mechanism), ulong]),
      C_Sign: declare('C_Sign', [ulong, 'void *', ulong, 'void *', koffi.inout(koffi.pointer(ulong))]),
      C_EncryptInit: declare('C_EncryptInit', [ulong, koffi.pointer(gcmMechanism), ulong]),
      C_Encrypt: declare('C_Encrypt', [ulong, 'void *', ulong, 'void *', koffi.inout(koffi.pointer(ulong))]),
      C_DecryptInit: declare('C_DecryptInit', [ulong, koffi.pointer(gcmMechanism), ulong]),
      C_Decrypt: declare('C_Decrypt', [ulong, 'void *', ulong, 'void *', koffi.inout(koffi.pointer(ulong))]),
      C_GenerateKey: declare('C_GenerateKey', [ulong, koffi.pointer(mechanism), koffi.pointer(attribute), ulong, koffi.out(koffi.pointer(ulong))]),
    }
  }

  /**
   * Loads the module (dlopen) and calls C_Initialize; throws when either fails. `signThreads`
   * threads (sign-thread.ts) make the HMACs of `signMany`, started on its first use.
   */
  static async open(path: string, signThreads = 1): Promise<Pkcs11Module> {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi
    const lib = koffi.load(path)
    const module = new Pkcs11Module(path, koffi, lib)
    module.#signThreadCount = Math.max(1, signThreads)
    try {
      await call(module.#fn.C_Initialize!, 'C_Initialize', [{ CreateMutex: null, DestroyMutex: null, LockMutex: null, UnlockMutex: null, flags: CKF_OS_LOCKING_OK, pReserved: null }])
    } catch (error) {
      // Another part of the process (or an earlier open) initialised it: usable as it is.
      if (!(error instanceof Pkcs11Error && error.rv === CKR.CRYPTOKI_ALREADY_INITIALIZED)) {
        lib.unload()
        throw error
      }
    }
    return module
  }

  /** C_Finalize, then unloads the module (a later open starts afresh: a module that lost its device). */
  async close(): Promise<void> {
    // The threads first: none may be inside a call when the module is finalised.
    const threads = this.#signThreads.splice(0)
    await Promise.all(threads.map((thread) => thread.worker.terminate()))
    for (const thread of threads) this.#failThread(thread, new Pkcs11Error('C_Sign', CKR.CRYPTOKI_NOT_INITIALIZED))
    try {
      await call(this.#fn.C_Finalize!, 'C_Finalize', [null])
    } finally {
      this.#lib.unload()
    }
  }

  /** Slots with a token present. */
  async slots(): Promise<number[]> {
    const count = [0]
    await call(this.#fn.C_GetSlotList!, 'C_GetSlotList', [1, null, count])
    if (count[0] === 0) return []
    const list = new Array<number>(count[0]!).fill(0)
    await call(this.#fn.C_GetSlotList!, 'C_GetSlotList', [1, list, count])
    return list.slice(0, count[0]).map(Number)
  }

  async tokenInfo(slot: number): Promise<TokenInfo> {
    const info: Record<string, unknown> = {}
    await call(this.#fn.C_GetTokenInfo!, 'C_GetTokenInfo', [slot, info])
    return { label: blankPadded(info.label as Uint8Array), serialNumber: blankPadded(info.serialNumber as Uint8Array), flags: Number(info.flags) }
  }

  /** A read-write serial session (read-write so that C_GenerateKey may make token objects). */
  async openSession(slot: number): Promise<number> {
    const handle = [0]
    await call(this.#fn.C_OpenSession!, 'C_OpenSession', [slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, null, null, handle])
    return Number(handle[0])
  }

  async closeSession(session: number): Promise<void> {
    await call(this.#fn.C_CloseSession!, 'C_CloseSession', [session])
  }

  /** C_Login as the user. The PIN's bytes are passed and not kept. */
  async login(session: number, pin: Uint8Array): Promise<void> {
    const bytes = Buffer.from(pin)
    try {
      await call(this.#fn.C_Login!, 'C_Login', [session, CKU_USER, bytes, bytes.length])
    } finally {
      bytes.fill(0)
    }
  }

  /** The handles of the objects matching `template` (at most `max`). */
  async findObjects(session: number, template: Attribute[], max = 2): Promise<number[]> {
    const values = template.map((each) => attributeValue(each.value))
    const attributes = template.map((each, index) => ({ type: each.type, pValue: values[index], ulValueLen: values[index]!.length }))
    await call(this.#fn.C_FindObjectsInit!, 'C_FindObjectsInit', [session, attributes, attributes.length])
    try {
      const handles = new Array<number>(max).fill(0)
      const count = [0]
      await call(this.#fn.C_FindObjects!, 'C_FindObjects', [session, handles, max, count])
      return handles.slice(0, count[0]).map(Number)
    } finally {
      await call(this.#fn.C_FindObjectsFinal!, 'C_FindObjectsFinal', [session])
    }
  }

  /** A CK_ULONG attribute of an object (CKA_KEY_TYPE, CKA_VALUE_LEN). */
  async ulongAttribute(session: number, object: number, type: number): Promise<number> {
    const value = Buffer.alloc(ULONG_BYTES)
    const attributes = [{ type, pValue: value, ulValueLen: ULONG_BYTES }]
    await call(this.#fn.C_GetAttributeValue!, 'C_GetAttributeValue', [session, object, attributes, 1])
    return Number(value.readBigUInt64LE())
  }

  /** C_SignInit and C_Sign in one: the MAC of `data` (at most `outputBytes` long). */
  async sign(session: number, mechanism: number, key: number, data: Uint8Array, outputBytes: number): Promise<Buffer> {
    await call(this.#fn.C_SignInit!, 'C_SignInit', [session, { mechanism, pParameter: null, ulParameterLen: 0 }, key])
    const out = Buffer.alloc(outputBytes)
    const length = [outputBytes]
    await call(this.#fn.C_Sign!, 'C_Sign', [session, data, data.length, out, length])
    return out.subarray(0, length[0])
  }

  /**
   * The MACs of many messages, each a C_SignInit and C_Sign on `session`, made on a thread of
   * their own (sign-thread.ts) in one hand-off: the MACs in order, each at most `outputBytes`
   * long (an HMAC's is always that long). The first call that fails throws its Pkcs11Error, as
   * `sign` does; a thread that dies fails its groups with CKR_GENERAL_ERROR (the module is then
   * opened afresh: token.ts).
   */
  signMany(session: number, mechanism: number, key: number, messages: readonly Uint8Array[], outputBytes: number): Promise<Buffer[]> {
    const ends = new Uint32Array(messages.length)
    let total = 0
    for (let index = 0; index < messages.length; index++) ends[index] = total += messages[index]!.length
    const data = new Uint8Array(total)
    for (let index = 0, at = 0; index < messages.length; at = ends[index]!, index++) data.set(messages[index]!, at)
    const thread = this.#leastBusyThread()
    const id = this.#nextJob++
    return new Promise<Buffer[]>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject, count: messages.length, outputBytes })
      thread.worker.postMessage({ id, session, mechanism, key, data, ends, outputBytes } satisfies SignJob, [data.buffer, ends.buffer])
    })
  }

  #signThreadCount = 1
  #nextJob = 0
  readonly #signThreads: SignThread[] = []

  #leastBusyThread(): SignThread {
    let best: SignThread | undefined
    for (const thread of this.#signThreads) if (best === undefined || thread.pending.size < best.pending.size) best = thread
    if (best !== undefined && (best.pending.size === 0 || this.#signThreads.length >= this.#signThreadCount)) return best
    const worker = new Worker(new URL('./sign-thread.js', import.meta.url), { workerData: { modulePath: this.path } })
    // The threads wait for work without keeping the process alive; the module's owner closes them.
    worker.unref()
    const thread: SignThread = { worker, pending: new Map() }
    worker.on('message', (reply: SignReply) => {
      const job = thread.pending.get(reply.id)
      if (job === undefined) return
      thread.pending.delete(reply.id)
      if ('rv' in reply) { job.reject(new Pkcs11Error(reply.fn, reply.rv)); return }
      const macs = Buffer.from(reply.macs.buffer, reply.macs.byteOffset, reply.macs.byteLength)
      job.resolve(Array.from({ length: job.count }, (_, index) => macs.subarray(index * job.outputBytes, (index + 1) * job.outputBytes)))
    })
    const fail = () => {
      const index = this.#signThreads.indexOf(thread)
      if (index >= 0) this.#signThreads.splice(index, 1)
      this.#failThread(thread, new Pkcs11Error('C_Sign', CKR.GENERAL_ERROR))
    }
    worker.on('error', fail)
    worker.on('exit', fail)
    this.#signThreads.push(thread)
    return thread
  }

  #failThread(thread: SignThread, error: Pkcs11Error): void {
    for (const job of thread.pending.values()) job.reject(error)
    thread.pending.clear()
  }

  #gcmMechanism(gcm: GcmParams): Record<string, unknown> {
    const params = { pIv: Buffer.from(gcm.iv), ulIvLen: gcm.iv.length, ulIvBits: gcm.iv.length * 8, pAAD: gcm.aad.length ? Buffer.from(gcm.aad) : null, ulAADLen: gcm.aad.length, ulTagBits: gcm.tagBits }
    return { mechanism: CKM.AES_GCM, pParameter: params, ulParameterLen: 6 * ULONG_BYTES }
  }

  /** AES-GCM encryption: ciphertext followed by the tag, as PKCS#11 writes it. */
  async encryptGcm(session: number, key: number, gcm: GcmParams, plaintext: Uint8Array): Promise<Buffer> {
    await call(this.#fn.C_EncryptInit!, 'C_EncryptInit', [session, this.#gcmMechanism(gcm), key])
    const out = Buffer.alloc(plaintext.length + gcm.tagBits / 8)
    const length = [out.length]
    await call(this.#fn.C_Encrypt!, 'C_Encrypt', [session, Buffer.from(plaintext), plaintext.length, out, length])
    return out.subarray(0, length[0])
  }

  /** AES-GCM decryption of ciphertext‖tag; a wrong tag is CKR_ENCRYPTED_DATA_INVALID. */
  async decryptGcm(session: number, key: number, gcm: GcmParams, sealed: Uint8Array): Promise<Buffer> {
    await call(this.#fn.C_DecryptInit!, 'C_DecryptInit', [session, this.#gcmMechanism(gcm), key])
    const out = Buffer.alloc(Math.max(1, sealed.length))
    const length = [out.length]
    await call(this.#fn.C_Decrypt!, 'C_Decrypt', [session, Buffer.from(sealed), sealed.length, out, length])
    return out.subarray(0, length[0])
  }

  /** C_GenerateKey: a new object made inside the token; its handle. */
  async generateKey(session: number, mechanism: number, template: Attribute[]): Promise<number> {
    const values = template.map((each) => attributeValue(each.value))
    const attributes = template.map((each, index) => ({ type: each.type, pValue: values[index], ulValueLen: values[index]!.length }))
    const handle = [0]
    await call(this.#fn.C_GenerateKey!, 'C_GenerateKey', [session, { mechanism, pParameter: null, ulParameterLen: 0 }, attributes, attributes.length, handle])
    return Number(handle[0])
  }

  /** Whether koffi is the one given (tests). */
  get koffi(): Koffi { return this.#koffi }
}
