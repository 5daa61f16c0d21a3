/**
 * Argon2 (RFC 9106) in the PHC string format of the reference implementation:
 * `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, unpadded standard base64. `v=` may be absent
 * (version 0x10, as hashes from argon2 ≤ 20151206 are written); parameters may come in any order.
 *
 * @node-rs/argon2 takes the password as UTF-8 text and fails on other bytes, so passwords that are
 * not valid UTF-8 (binary input) go to hash-wasm's Argon2 instead, which takes bytes but computes
 * only version 0x13: a v=16 hash of a non-UTF-8 password is 501.
 *
 * On the event loop's thread @node-rs/argon2 is called through its promises, which run the hash on
 * libuv's thread pool: the pool (workers/pool.ts) runs UTF-8 passwords from the event loop, without
 * a worker thread of its own. On a worker thread (the pool's overflow) it blocks that thread, as
 * libuv's pool is shared by the whole process. hash-wasm computes on the calling thread, so binary
 * passwords always go to a worker thread.
 */
import { randomBytes } from 'node:crypto'
import { isMainThread } from 'node:worker_threads'
import { hash as nativeHash, hashSync, verify as nativeVerify, verifySync } from '@node-rs/argon2'
import { argon2d as wasmArgon2d, argon2i as wasmArgon2i, argon2id as wasmArgon2id } from 'hash-wasm'
import { problems } from '../../problem.js'
import { decodeB64Unpadded, encodeB64Unpadded, parseParamList, requireAtMost } from './common.js'
import { timingSafeEqual } from 'node:crypto'
import type { PasswordScheme } from '../types.js'

type Variant = 'argon2id' | 'argon2i' | 'argon2d'
/** Values of @node-rs/argon2's `Algorithm` and `Version` const enums. */
const ALGORITHM_ID: Record<Variant, 0 | 1 | 2> = { argon2d: 0, argon2i: 1, argon2id: 2 }
const VERSION_0x13 = 1

/** OWASP Password Storage Cheat Sheet: argon2id with m=19456 KiB, t=2, p=1 (or equivalents). */
const OWASP = { memoryCost: 19_456, timeCost: 2 }

const WASM_ARGON2 = { argon2id: wasmArgon2id, argon2i: wasmArgon2i, argon2d: wasmArgon2d }
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

function isUtf8(bytes: Uint8Array): boolean {
  try { strictUtf8.decode(bytes); return true } catch { return false }
}

/** Argon2 version 0x13 over raw bytes (hash-wasm), for passwords @node-rs/argon2 cannot take. */
async function rawArgon2(variant: Variant, password: Uint8Array, salt: Uint8Array, m: number, t: number, p: number, length: number): Promise<Uint8Array> {
  return WASM_ARGON2[variant]({ password, salt, memorySize: m, iterations: t, parallelism: p, hashLength: length, outputType: 'binary' })
}

const PHC = /^\$(argon2id|argon2i|argon2d)\$(?:v=(\d{1,3})\$)?([a-z=0-9,]{1,80})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{6,})$/

function argon2Scheme(variant: Variant): PasswordScheme {
  return {
    kind: 'password',
    name: variant,
    displayName: variant === 'argon2id' ? 'Argon2id' : variant === 'argon2i' ? 'Argon2i' : 'Argon2d',
    family: 'argon2',
    aliases: [],
    reference: 'RFC 9106; PHC string format (P-H-C/phc-string-format)',
    implementation: '@node-rs/argon2 (native, RustCrypto argon2)',
    reads: [`$${variant}$ (v=19 and v=16)`],
    writes: `$${variant}$v=19$`,
    options: {
      memoryCost: { default: OWASP.memoryCost, min: 8, max: 4_194_304, description: 'memory in KiB (m)', cap: (caps) => caps.argon2MemoryKiB },
      timeCost: { default: OWASP.timeCost, min: 1, max: 1000, description: 'passes over memory (t)', cap: (caps) => caps.argon2TimeCost },
      parallelism: { default: 1, min: 1, max: 255, description: 'lanes (p)', cap: (caps) => caps.argon2Parallelism },
      hashLength: { default: 32, min: 4, max: 1024, description: 'tag length in bytes' },
      saltLength: { default: 16, min: 8, max: 64, description: 'salt length in bytes (RFC 9106 §3.1 recommends 16)' },
    },
    claims: (hash) => hash.startsWith(`$${variant}$`),
    parse(hash) {
      const match = PHC.exec(hash)
      if (!match || match[1] !== variant) throw problems.malformedHash(variant, `expected $${variant}$v=19$m=…,t=…,p=…$salt$hash`)
      const [, , version, paramText, salt, tag] = match as unknown as [string, string, string | undefined, string, string, string]
      if (version !== undefined && version !== '19' && version !== '16') throw problems.malformedHash(variant, `unknown version v=${version}`)
      const params = parseParamList(variant, paramText, ['m', 't', 'p', 'keyid', 'data'])
      const { m, t, p } = params
      if (m === undefined || t === undefined || p === undefined) throw problems.malformedHash(variant, 'm, t and p are all required')
      if (p < 1 || p > 255 || t < 1 || m < 8 * p) throw problems.malformedHash(variant, 'parameters out of range (p 1–255, t ≥ 1, m ≥ 8·p)')
      const saltBytes = decodeB64Unpadded(salt)
      const tagBytes = decodeB64Unpadded(tag)
      if (!saltBytes || saltBytes.length < 8) throw problems.malformedHash(variant, 'salt must be at least 8 bytes of base64')
      if (!tagBytes || tagBytes.length < 4) throw problems.malformedHash(variant, 'hash must be at least 4 bytes of base64')
      return {
        scheme: variant,
        params: { memoryCost: m, timeCost: t, parallelism: p, version: version === undefined ? 16 : Number(version) },
        // The string's own prefix, as the policy's `format` writes it: `$argon2id$v=19$` (no version
        // field means 0x10, and the prefix is then `$argon2id$`).
        format: version === undefined ? `$${variant}$` : `$${variant}$v=${version}$`,
      }
    },
    checkCaps(params, caps) {
      // RFC 9106 §3.1: m ≥ 8·p KiB (the implementations refuse less, which would otherwise be a 500).
      const { memoryCost = OWASP.memoryCost, parallelism = 1 } = params
      if (memoryCost < 8 * parallelism) {
        throw problems.invalidOption('memoryCost', `${variant} memoryCost must be at least 8·parallelism KiB (RFC 9106 §3.1): ${8 * parallelism} for parallelism ${parallelism}`)
      }
      requireAtMost(variant, 'memoryCost', params.memoryCost ?? 0, caps.argon2MemoryKiB)
      requireAtMost(variant, 'timeCost', params.timeCost ?? 0, caps.argon2TimeCost)
      requireAtMost(variant, 'parallelism', params.parallelism ?? 0, caps.argon2Parallelism)
    },
    rehashReason(parsed) {
      const { memoryCost = 0, timeCost = 0, version = 19 } = parsed.params
      if (variant !== 'argon2id') return `OWASP recommends argon2id over ${variant}`
      if (version !== 19) return 'argon2 version 0x10 is superseded by 0x13'
      // OWASP lists equivalent trade-offs (m=47104,t=1 … m=7168,t=5): require m·t at least 19456·2.
      if (memoryCost * timeCost < OWASP.memoryCost * OWASP.timeCost) {
        return `argon2id m=${memoryCost}, t=${timeCost} is below the OWASP minimum (m=19456 KiB, t=2 or an equivalent)`
      }
      return null
    },
    blocksCaller: (input) => !isUtf8(input),
    async hash(input, options) {
      const salt = randomBytes(options.saltLength ?? 16)
      if (!isUtf8(input)) {
        const { memoryCost = OWASP.memoryCost, timeCost = OWASP.timeCost, parallelism = 1, hashLength = 32 } = options
        const tag = await rawArgon2(variant, input, salt, memoryCost, timeCost, parallelism, hashLength)
        return `$${variant}$v=19$m=${memoryCost},t=${timeCost},p=${parallelism}$${encodeB64Unpadded(salt)}$${encodeB64Unpadded(tag)}`
      }
      const settings = {
        algorithm: ALGORITHM_ID[variant],
        version: VERSION_0x13,
        memoryCost: options.memoryCost,
        timeCost: options.timeCost,
        parallelism: options.parallelism,
        outputLen: options.hashLength,
        salt,
      }
      return isMainThread ? nativeHash(input, settings) : hashSync(input, settings)
    },
    async verify(input, hash) {
      if (isUtf8(input)) return isMainThread ? nativeVerify(hash, input) : verifySync(hash, input)
      const [, , version, paramText, saltText, tagText] = PHC.exec(hash) as unknown as [string, string, string | undefined, string, string, string]
      const { m = 0, t = 0, p = 0, keyid, data } = parseParamList(variant, paramText, ['m', 't', 'p', 'keyid', 'data'])
      if (version !== '19' || keyid !== undefined || data !== undefined) {
        throw problems.notImplemented('hashd verifies Argon2 version 0x10 (and keyid/data) hashes only for passwords that are valid UTF-8')
      }
      const expected = decodeB64Unpadded(tagText) as Buffer
      const tag = await rawArgon2(variant, input, decodeB64Unpadded(saltText) as Buffer, m, t, p, expected.length)
      return timingSafeEqual(tag, expected)
    },
  }
}

export const argon2id = argon2Scheme('argon2id')
export const argon2i = argon2Scheme('argon2i')
export const argon2d = argon2Scheme('argon2d')
