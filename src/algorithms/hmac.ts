/**
 * HMAC under a key the server holds, prepared once. Named HMAC keys (src/keys/hmac.ts) keep one
 * prepared HMAC per version and algorithm, so a request or a batch item pays for its message only.
 *
 * RFC 2104 §2: HMAC(K, m) = H((K' ⊕ opad) ‖ H((K' ⊕ ipad) ‖ m)), K' being the key zero-padded to
 * the hash's block (or its hash, when longer). The padded key blocks are made once; each message
 * then costs two one-shot hashes (node:crypto `hash`, OpenSSL's digest in one call each): the
 * inner one comes back as a 'binary' (latin1) string, one character a byte, which a few lines of
 * JavaScript copy into the outer one's input, instead of a Buffer made in C++; a short ASCII
 * message is copied behind the inner key block the same way. That is two crossings into native
 * code per message where `createHmac(…).update(m).digest()`
 * makes an OpenSSL MAC context, hashes both key blocks again and crosses four times: about twice
 * as fast for a short message (`npm run bench`, the batch row, compares the two). The output comes
 * straight in the encoding asked for (hex, base64, base64url), so nothing is encoded twice.
 *
 * Digests without an OpenSSL name have no prepared form (null): they take the general path
 * (workers/tasks.ts `hmac`, over the registry's streaming hashers). test/hmac-keys.test.ts checks
 * the prepared HMACs against Python's hmac.
 */
import { createHmac, hash } from 'node:crypto'
import type { DigestAlgorithm } from './types.js'
import { asciiInto, type OutputEncoding } from '../domain/encoding.js'

/** The HMAC of a message under a fixed key; synchronous. */
export interface PreparedHmac {
  /** The HMAC's bytes (the caller's to keep). */
  mac(message: Uint8Array): Buffer
  /** The HMAC written in `encoding`, without the bytes in between. */
  text(message: Uint8Array, encoding: OutputEncoding): string
  /**
   * The same for a message given as text, hashed as UTF-8 (the caller has checked it is well-formed
   * Unicode), written straight into the buffer behind the key block. Null when the text may not
   * fit there: use `text` with its bytes.
   */
  textOfUtf8(message: string, encoding: OutputEncoding): string | null
  /** How many bytes of UTF-8 the last textOfUtf8 hashed (a field, not an object per call: batches call it per item). */
  lastUtf8Bytes: number
}

/** A message up to this long is copied behind the inner key block of a buffer made once; a longer one gets a buffer of its own. */
const SCRATCH_BYTES = 4096

/**
 * Writes a digest given as a latin1 string (each character one byte, as node:crypto writes it) into
 * `target` at `offset`, in JavaScript: no crossing and no Buffer for 20 to 64 bytes. Half the
 * characters of hex and no table.
 */
function bytesInto(text: string, target: Uint8Array, offset: number): void {
  for (let index = 0; index < text.length; index++) target[offset + index] = text.charCodeAt(index)
}

/** A message up to this many characters is copied by `asciiInto`; a longer one by Buffer#write. */
const ASCII_LOOP_MAX = 64

/** Whether `algorithm` has a prepared form (the rest need the worker task's general HMAC). */
export function canPrepareHmac(algorithm: DigestAlgorithm): boolean {
  return algorithm.opensslName !== undefined && algorithm.blockBytes !== undefined && algorithm.kind === 'digest' && algorithm.format === undefined
}

/** The prepared HMAC of `algorithm` under `key`, or null when it has none. The key is not kept, only its padded blocks. */
export function prepareHmac(algorithm: DigestAlgorithm, key: Uint8Array): PreparedHmac | null {
  const { opensslName, blockBytes, outputBytes } = algorithm
  if (!canPrepareHmac(algorithm) || opensslName === undefined || blockBytes === undefined) return null
  const padded = Buffer.alloc(blockBytes)
  padded.set(key.length > blockBytes ? hash(opensslName, key, 'buffer') : key)
  /** K' ⊕ ipad, then room for a message. */
  const inner = Buffer.alloc(blockBytes + SCRATCH_BYTES)
  /** K' ⊕ opad, then the inner hash. */
  const outer = Buffer.alloc(blockBytes + outputBytes)
  for (let index = 0; index < blockBytes; index++) {
    inner[index] = padded[index]! ^ 0x36
    outer[index] = padded[index]! ^ 0x5c
  }
  padded.fill(0)
  const ipadBlock = inner.subarray(0, blockBytes)
  /** Views of `inner` by message length, made once each: batches are mostly of one length. */
  const views: Array<Buffer | undefined> = []
  const innerOf = (length: number): Buffer => views[length] ??= inner.subarray(0, blockBytes + length)

  const innerBytes = (message: Uint8Array): string => {
    if (message.length <= SCRATCH_BYTES) {
      inner.set(message, blockBytes)
      return hash(opensslName, innerOf(message.length), 'binary')
    }
    return hash(opensslName, Buffer.concat([ipadBlock, message]), 'binary')
  }
  const text = (message: Uint8Array, encoding: OutputEncoding): string => {
    bytesInto(innerBytes(message), outer, blockBytes)
    return hash(opensslName, outer, encoding)
  }
  return {
    text,
    lastUtf8Bytes: 0,
    textOfUtf8(message, encoding) {
      // A UTF-16 code unit is at most three bytes of UTF-8.
      if (message.length * 3 > SCRATCH_BYTES) return null
      const bytes = asciiInto(message, inner, blockBytes, ASCII_LOOP_MAX) ?? inner.write(message, blockBytes, 'utf8')
      this.lastUtf8Bytes = bytes
      bytesInto(hash(opensslName, innerOf(bytes), 'binary'), outer, blockBytes)
      return hash(opensslName, outer, encoding)
    },
    mac(message) {
      bytesInto(innerBytes(message), outer, blockBytes)
      const bytes = Buffer.alloc(outputBytes)
      bytesInto(hash(opensslName, outer, 'binary'), bytes, 0)
      return bytes
    },
  }
}

/**
 * Whether one HMAC under a key used once (a caller's own key, a webhook's secret) is cheaper as two
 * one-shot hashes (hmacOnce) than as createHmac. It depends on the OpenSSL Node is built with:
 * createHmac of 2 KB took 19–30 µs with OpenSSL 3.5 (Node 24) against 5–7 for the two hashes, and
 * with OpenSSL 3.0 (Node 20) 4.4–5.4 µs against 5.5–6.7 (`npm run bench:hmac-once`).
 */
const [opensslMajor = 0, opensslMinor = 0] = process.versions.openssl.split('.').map(Number)
const ONE_SHOT_HMAC = opensslMajor > 3 || (opensslMajor === 3 && opensslMinor >= 5)

/**
 * HMAC (RFC 2104) of `pieces`, in order, as one message, under a key used for this call only:
 * the key blocks are made here and wiped after use. Null for an algorithm with no prepared form.
 */
export function hmacOnce(algorithm: DigestAlgorithm, key: Uint8Array, pieces: readonly Uint8Array[]): Buffer | null {
  const { opensslName, blockBytes, outputBytes } = algorithm
  if (!canPrepareHmac(algorithm) || opensslName === undefined || blockBytes === undefined) return null
  const padded = key.length > blockBytes ? hash(opensslName, key, 'buffer') : key
  let total = blockBytes
  for (const piece of pieces) total += piece.length
  const inner = Buffer.allocUnsafe(total)
  const outer = Buffer.allocUnsafe(blockBytes + outputBytes)
  for (let index = 0; index < blockBytes; index++) {
    const byte = padded[index] ?? 0
    inner[index] = byte ^ 0x36
    outer[index] = byte ^ 0x5c
  }
  let offset = blockBytes
  for (const piece of pieces) {
    inner.set(piece, offset)
    offset += piece.length
  }
  outer.set(hash(opensslName, inner, 'buffer'), blockBytes)
  inner.fill(0, 0, blockBytes)
  const mac = hash(opensslName, outer, 'buffer')
  outer.fill(0, 0, blockBytes)
  // A key longer than the block stands for its hash, which is as good as the key.
  if (padded !== key) padded.fill(0)
  return mac
}

/**
 * HMAC of `pieces`, in order, as one message, under a key used once, on this thread: whichever of
 * hmacOnce and createHmac is cheaper with this OpenSSL (ONE_SHOT_HMAC). `algorithm` must have an
 * OpenSSL name.
 */
export function hmacOfPieces(algorithm: DigestAlgorithm, key: Uint8Array, pieces: readonly Uint8Array[]): Buffer {
  const once = ONE_SHOT_HMAC ? hmacOnce(algorithm, key, pieces) : null
  if (once !== null) return once
  const hmac = createHmac(algorithm.opensslName as string, key)
  for (const piece of pieces) hmac.update(piece)
  return hmac.digest()
}
