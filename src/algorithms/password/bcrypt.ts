/**
 * bcrypt (Provos & Mazières, 1999) in OpenBSD's modular crypt format:
 * `$2b$` + two-digit cost + 22 characters of salt + 31 of hash, bcrypt's own base64 alphabet.
 * `$2b$` and `$2y$` are the same algorithm (crypt_blowfish's `$2y$` marks its fixed sign-extension
 * bug). `$2a$` is too, except that crypt_blowfish (PHP, libxcrypt) computes `$2a$` hashes of some
 * 8-bit passwords with a safety measure that makes them differ from OpenBSD's; so a `$2a$` hash of
 * an input with bytes ≥ 0x80 that does not verify the OpenBSD way is also tried the crypt_blowfish
 * way (libxcrypt). `$2x$`, crypt_blowfish's marker for hashes made by the old buggy code, is
 * verified by libxcrypt only, and always recommended for rehashing.
 *
 * `$2b$` and `$2y$` are hashed and verified by libxcrypt's crypt_blowfish where it can take the
 * input, because it is the faster of the two: 1.1–1.2 times @node-rs/bcrypt's cost-10 hashes per
 * second, and as much less CPU per hash, on the project's machine (`npm run bench` measures both
 * in one run; docs/benchmarks.md). crypt(3) takes a C string, so an input with a NUL byte stays on
 * @node-rs/bcrypt, which hashes it as bytes; so does everything on a server without libxcrypt
 * (libcrypt.so.1: Debian's libcrypt1, which perl-base and login depend on; musl systems such as
 * Alpine lack it), and `$2a$` verification (below).
 *
 * On the event loop's thread both libraries are called asynchronously (koffi's async calls,
 * @node-rs/bcrypt's promises): the work runs on libuv's thread pool, so the pool (workers/pool.ts)
 * runs bcrypt from the event loop, without a worker thread of its own (each such thread is a V8
 * isolate of 10–14 MB). On a worker thread (the pool's overflow) they block that thread, as
 * libuv's pool is shared by the whole process.
 */
import { isMainThread } from 'node:worker_threads'
import { hash as nodeRsHash, hashSync, verify as nodeRsVerify, verifySync } from '@node-rs/bcrypt'
import { problems } from '../../problem.js'
import { requireAtMost } from './common.js'
import { cryptHashAsync, cryptVerifyAsync, gensalt, hasMethod } from './libxcrypt.js'
import type { PasswordScheme } from '../types.js'

/** Only the first 72 bytes of the key reach Blowfish's key schedule. */
export const BCRYPT_MAX_BYTES = 72
const BCRYPT_FORMAT = /^\$(2[abxy])\$(\d\d)\$[./A-Za-z0-9]{53}$/
/** OWASP Password Storage Cheat Sheet: bcrypt work factor of 10 or more. */
const OWASP_MIN_COST = 10

/** Whether this thread's libxcrypt does `$2b$` (looked up once per thread). */
let blowfish: boolean | undefined

/** crypt_blowfish can take this input: libxcrypt is there and the input is a C string. */
function viaLibxcrypt(key: Uint8Array): boolean {
  blowfish ??= hasMethod('$2b$')
  return blowfish && !key.includes(0)
}

export const bcrypt: PasswordScheme = {
  kind: 'password',
  name: 'bcrypt',
  displayName: 'bcrypt',
  family: 'bcrypt',
  aliases: ['bcrypt-2b', 'blowfish-crypt', '2b'],
  reference: 'Provos & Mazières, "A Future-Adaptable Password Scheme" (USENIX 1999); OpenBSD bcrypt(3)',
  implementation: 'libxcrypt crypt_blowfish (native, through koffi), the faster of the two (`npm run bench`); @node-rs/bcrypt for inputs with NUL bytes, $2a$, and servers without libxcrypt',
  reads: ['$2a$', '$2b$', '$2y$', '$2x$ (crypt_blowfish, via libxcrypt)'],
  writes: '$2b$',
  maxInputBytes: BCRYPT_MAX_BYTES,
  options: {
    cost: { default: 12, min: 4, max: 31, description: 'log2 of the number of rounds', cap: (caps) => caps.bcryptCost },
  },
  claims: (hash) => /^\$2[abxy]\$/.test(hash),
  parse(hash) {
    const match = BCRYPT_FORMAT.exec(hash)
    if (!match) throw problems.malformedHash('bcrypt', 'expected $2a$, $2b$, $2y$ or $2x$, a two-digit cost and 53 characters of ./A-Za-z0-9')
    const cost = Number(match[2])
    if (cost < 4 || cost > 31) throw problems.malformedHash('bcrypt', 'cost must be between 04 and 31')
    return { scheme: 'bcrypt', params: { cost }, format: `$${match[1]}$` }
  },
  checkCaps(params, caps) {
    requireAtMost('bcrypt', 'cost', params.cost ?? 0, caps.bcryptCost)
  },
  rehashReason(parsed) {
    const cost = parsed.params.cost ?? 0
    if (parsed.format === '$2x$') return 'a $2x$ hash was made by crypt_blowfish\'s sign-extension bug; rehash with argon2id'
    return cost < OWASP_MIN_COST ? `bcrypt cost ${cost} is below the OWASP minimum of ${OWASP_MIN_COST}` : null
  },
  verifyWarnings(input) {
    return input.length > BCRYPT_MAX_BYTES
      ? [`bcrypt uses only the first ${BCRYPT_MAX_BYTES} bytes of the input; the remaining ${input.length - BCRYPT_MAX_BYTES} bytes did not affect the result`]
      : []
  },
  blocksCaller: () => false,
  async hash(input, options) {
    const cost = options.cost ?? 12
    // Over 72 bytes crypt_blowfish would drop the rest silently; the domain refuses such input
    // before it gets here, and @node-rs/bcrypt refuses it too, as before.
    if (input.length <= BCRYPT_MAX_BYTES && viaLibxcrypt(input)) {
      // crypt_gensalt_rn draws the 16-byte salt from the OS CSPRNG and writes OpenBSD's `$2b$`.
      const hash = await cryptHashAsync('bcrypt', input, gensalt('bcrypt', '$2b$', cost))
      if (hash !== null) return hash
    }
    // @node-rs/bcrypt 1.x writes crypt_blowfish's `$2y$` with a fresh 16-byte salt (inputs over 72
    // bytes were refused before). `$2y$` and OpenBSD's `$2b$` name the same corrected algorithm and
    // give identical hashes for every input (crypt_blowfish 1.3 and OpenBSD bcrypt(3)), so only the
    // label changes: `$2b$` is what OpenBSD, passlib and python-bcrypt write.
    const hash = isMainThread ? await nodeRsHash(input, cost) : hashSync(input, cost)
    return hash.startsWith('$2y$') ? `$2b$${hash.slice(4)}` : hash
  },
  async verify(input, hash) {
    // The standard: only the first 72 bytes count, so hashes made elsewhere keep verifying.
    const key = input.subarray(0, BCRYPT_MAX_BYTES)
    if (hash.startsWith('$2x$')) return cryptVerifyAsync('bcrypt $2x$', key, hash)
    // `$2b$` and `$2y$` are one algorithm in crypt_blowfish and OpenBSD alike; `$2a$` is not (above).
    if (!hash.startsWith('$2a$') && viaLibxcrypt(key)) return cryptVerifyAsync('bcrypt', key, hash)
    if (isMainThread ? await nodeRsVerify(key, hash) : verifySync(key, hash)) return true
    // crypt_blowfish's $2a$ safety measure (see above); a C string cannot hold NUL, so such keys stop here.
    return hash.startsWith('$2a$') && key.some((byte) => byte >= 0x80) && !key.includes(0) && cryptVerifyAsync('bcrypt $2a$', key, hash)
  },
}
