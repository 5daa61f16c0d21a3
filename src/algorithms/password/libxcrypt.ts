/**
 * libxcrypt, the crypt(3) behind Linux's /etc/shadow (Debian's libcrypt1), reached through koffi.
 * It implements yescrypt, gost-yescrypt, SHA-crypt, md5-crypt, bcrypt (including crypt_blowfish's
 * `$2a$`/`$2x$` semantics), `$7$` scrypt, DES, BSDi and NT hashes; hashd uses it rather than
 * re-implementing them.
 *
 * Only the thread-safe entry points are bound: `crypt_rn` with a caller-owned `struct crypt_data`
 * and `crypt_gensalt_rn` with a caller-owned output buffer. `cryptHash` blocks, so it runs only
 * inside worker threads (scheme.hash / scheme.verify); each thread loads its own binding and owns
 * its own buffers. `cryptHashAsync` makes the same call through koffi's asynchronous calls, which
 * run it on libuv's thread pool and leave the calling thread free; each such call owns its
 * `struct crypt_data`, since several run at once. The library is loaded on first use; where it is
 * missing, or lacks a method, the caller gets 501.
 */
import { createRequire } from 'node:module'
import { isMainThread } from 'node:worker_threads'
import type { KoffiFunc } from 'koffi'
import { problems } from '../../problem.js'
import { equalHashText } from './common.js'

/** `sizeof (struct crypt_data)` in <crypt.h>: exactly 32768 bytes. */
const CRYPT_DATA_SIZE = 32768
/** CRYPT_GENSALT_OUTPUT_SIZE in <crypt.h>. */
const GENSALT_OUTPUT_SIZE = 192
/** CRYPT_MAX_PASSPHRASE_SIZE in <crypt.h>, counting the terminating NUL. */
export const CRYPT_MAX_PASSPHRASE_BYTES = 511
/** crypt_checksalt results (<crypt.h>): OK and LEGACY both mean "this build can compute it". */
const CRYPT_SALT_OK = 0
const CRYPT_SALT_METHOD_LEGACY = 3

/** The library names tried, most specific first (Debian/Ubuntu, then any other glibc system). */
const LIBRARY_NAMES = ['libcrypt.so.1', '/usr/lib/x86_64-linux-gnu/libcrypt.so.1', '/usr/lib/aarch64-linux-gnu/libcrypt.so.1', '/lib64/libcrypt.so.1']

interface Binding {
  cryptRn: KoffiFunc<(phrase: Buffer, setting: string, data: Buffer, size: number) => string | null>
  gensaltRn: (prefix: string, count: number, rbytes: Buffer | null, nrbytes: number, output: Buffer, size: number) => string | null
  checksalt: (setting: string) => number
  data: Buffer
  gensaltOutput: Buffer
}

let binding: Binding | null | undefined

function load(): Binding | null {
  if (binding !== undefined) return binding
  binding = null
  // koffi's native addon is required here, on first use, not at import: every thread imports the
  // registry, and loading the addon into each of them at start cost memory and, when a thread was
  // torn down mid-load (a server closed right after start), crashed the process in koffi's init.
  const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi')
  for (const name of LIBRARY_NAMES) {
    try {
      const lib = koffi.load(name)
      binding = {
        cryptRn: lib.func('char *crypt_rn(const char *phrase, const char *setting, _Inout_ uint8_t *data, int size)') as Binding['cryptRn'],
        gensaltRn: lib.func('char *crypt_gensalt_rn(const char *prefix, unsigned long count, const uint8_t *rbytes, int nrbytes, _Out_ uint8_t *output, int size)'),
        checksalt: lib.func('int crypt_checksalt(const char *setting)'),
        // Zeroed before first use, as <crypt.h> asks of a fresh struct crypt_data.
        data: Buffer.alloc(CRYPT_DATA_SIZE),
        gensaltOutput: Buffer.alloc(GENSALT_OUTPUT_SIZE),
      }
      break
    } catch {
      // Not at this name (or koffi cannot load it): try the next one.
    }
  }
  return binding
}

function requireBinding(method: string): Binding {
  const loaded = load()
  if (!loaded) throw problems.notImplemented(`${method} needs libxcrypt (libcrypt.so.1), which is not installed on this server`)
  return loaded
}

/** Whether libxcrypt is present and computes hashes with this setting prefix (false, never 501, where not). */
export function hasMethod(setting: string): boolean {
  const loaded = load()
  if (!loaded) return false
  const status = loaded.checksalt(setting)
  return status === CRYPT_SALT_OK || status === CRYPT_SALT_METHOD_LEGACY
}

/** Throws 501 unless this libxcrypt build computes hashes with this setting prefix. */
export function requireMethod(method: string, setting: string): Binding {
  const loaded = requireBinding(method)
  const status = loaded.checksalt(setting)
  if (status !== CRYPT_SALT_OK && status !== CRYPT_SALT_METHOD_LEGACY) {
    throw problems.notImplemented(`this server's libxcrypt was built without ${method}`)
  }
  return loaded
}

/**
 * The passphrase as crypt(3) takes it: a C string. Bytes after a NUL would be silently dropped and
 * over-long phrases are refused by libxcrypt, so both are the caller's problem, said plainly.
 */
function cString(method: string, phrase: Uint8Array): Buffer {
  if (phrase.includes(0)) {
    throw problems.unprocessable('input-not-representable', 'Input cannot be hashed by this algorithm',
      `${method} is a crypt(3) hash, which takes a C string: the input must not contain NUL bytes`)
  }
  if (phrase.length > CRYPT_MAX_PASSPHRASE_BYTES) {
    throw problems.unprocessable('input-too-long', 'Input too long for this algorithm',
      `crypt(3) accepts passphrases of at most ${CRYPT_MAX_PASSPHRASE_BYTES} bytes; this input has ${phrase.length}`)
  }
  const terminated = Buffer.alloc(phrase.length + 1)
  terminated.set(phrase)
  return terminated
}

/** What crypt_rn returned, as a hash string; null where libxcrypt refused the setting. */
function cryptResult(result: string | null): string | null {
  return result === null || result.startsWith('*') ? null : result
}

/**
 * crypt_rn(phrase, setting): the hash string, or null where libxcrypt refuses the setting (it
 * returns NULL there, where plain crypt(3) would return a string starting with `*`).
 */
export function cryptHash(method: string, phrase: Uint8Array, setting: string): string | null {
  const loaded = requireMethod(method, setting)
  const input = cString(method, phrase)
  try {
    return cryptResult(loaded.cryptRn(input, setting, loaded.data, CRYPT_DATA_SIZE))
  } finally {
    input.fill(0)
    // The output area still holds the hash; the internal area libxcrypt has already erased.
    loaded.data.fill(0, 0, 384)
  }
}

/** True when crypt(3) of `phrase` under `hash` reproduces `hash` exactly, compared in constant time. */
export function cryptVerify(method: string, phrase: Uint8Array, hash: string): boolean {
  const computed = cryptHash(method, phrase, hash)
  if (computed === null) return false
  return equalHashText(computed, hash)
}

/**
 * `cryptHash` on libuv's thread pool, so the event loop is never blocked. Called on a worker
 * thread (the pool's overflow, see workers/pool.ts) it blocks that thread instead, as before:
 * libuv's pool is one for the whole process, and a pool of more worker threads than it has
 * threads would otherwise queue there.
 */
export async function cryptHashAsync(method: string, phrase: Uint8Array, setting: string): Promise<string | null> {
  if (!isMainThread) return cryptHash(method, phrase, setting)
  const loaded = requireMethod(method, setting)
  const input = cString(method, phrase)
  // Zeroed, as <crypt.h> asks of a fresh struct crypt_data; one per call, as calls overlap.
  const data = Buffer.alloc(CRYPT_DATA_SIZE)
  try {
    return cryptResult(await new Promise<string | null>((resolve, reject) => {
      loaded.cryptRn.async(input, setting, data, CRYPT_DATA_SIZE, (error: unknown, result: string | null) => {
        if (error) reject(error instanceof Error ? error : new Error(String(error)))
        else resolve(result)
      })
    }))
  } finally {
    input.fill(0)
    data.fill(0, 0, 384)
  }
}

/** `cryptVerify` on libuv's thread pool. */
export async function cryptVerifyAsync(method: string, phrase: Uint8Array, hash: string): Promise<boolean> {
  const computed = await cryptHashAsync(method, phrase, hash)
  if (computed === null) return false
  return equalHashText(computed, hash)
}

/**
 * crypt_gensalt_rn(prefix, count, NULL, 0): a fresh setting string. With NULL random bytes
 * libxcrypt reads the OS CSPRNG (getrandom/getentropy) itself.
 */
export function gensalt(method: string, prefix: string, count: number): string {
  const loaded = requireMethod(method, prefix)
  const setting = loaded.gensaltRn(prefix, count, null, 0, loaded.gensaltOutput, GENSALT_OUTPUT_SIZE)
  if (setting === null || setting.startsWith('*')) throw new Error(`crypt_gensalt_rn refused ${prefix} with count ${count}`)
  return setting
}
