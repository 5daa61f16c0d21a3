/**
 * Adapters that put each implementation behind the one `Hasher` interface (types.ts).
 * OpenSSL (node:crypto) comes first wherever it has the algorithm, because it is the fastest;
 * hash-wasm and native packages fill the gaps, as RHash plugs OpenSSL into its own table.
 */
import { createHash, hash } from 'node:crypto'
import type { IHasher } from 'hash-wasm/dist/lib/WASMInterface.js'
import type { Algorithm, Hasher } from './types.js'

/**
 * The OpenSSL name of a fixed-length digest that OpenSSL computes as it is, with no text format of
 * its own around it (not mysql41's `*HEX`, say), or undefined. Such a digest can skip the generic
 * hasher: one-shot `crypto.hash` for /api/hash, a bare `createHash` in an upload thread.
 */
export function plainOpensslName(algorithm: Algorithm): string | undefined {
  return algorithm.kind === 'digest' && algorithm.format === undefined ? algorithm.opensslName : undefined
}

/** node:crypto under its OpenSSL name; XOFs take `outputLength` (bytes). */
export function opensslHasher(opensslName: string, xof = false) {
  return (outputBytes: number): Hasher => {
    const hash = createHash(opensslName, xof ? { outputLength: outputBytes } : undefined)
    return {
      update: (data) => { hash.update(data) },
      digest: () => hash.digest(),
    }
  }
}

/** A whole short input through OpenSSL in one call (crypto.hash, Node ≥ 20.12), written in `encoding`. */
export function oneShotDigest(opensslName: string, input: Uint8Array, encoding: 'hex' | 'base64' | 'base64url'): string {
  return hash(opensslName, input, encoding)
}

/** hash-wasm: each call instantiates its own WASM memory, so concurrent streams never share state. */
export function wasmHasher(factory: (outputBytes: number) => Promise<IHasher>) {
  return async (outputBytes: number): Promise<Hasher> => {
    const hasher = await factory(outputBytes)
    hasher.init()
    return {
      update: (data) => { hasher.update(data) },
      digest: () => hasher.digest('binary'),
    }
  }
}

/** Digest of a digest: mysql41 is SHA1(SHA1(x)), ed2k-style constructions compose the same way. */
export function composed(inner: Hasher, outer: (digest: Uint8Array) => Uint8Array): Hasher {
  return {
    update: (data) => inner.update(data),
    digest: () => outer(inner.digest()),
  }
}

/**
 * Feeds the UTF-16LE form of UTF-8 input to `inner` (NTLM hashes UTF-16LE text, per MS-NLMP §3.3.1).
 * A streaming, fatal TextDecoder keeps multi-byte characters that straddle chunks intact and
 * rejects bytes that are not UTF-8, rather than hashing U+FFFD in their place.
 */
export function utf16leOf(inner: Hasher): Hasher {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  const feed = (text: string) => { if (text.length > 0) inner.update(Buffer.from(text, 'utf16le')) }
  return {
    update: (data) => feed(decoder.decode(data, { stream: true })),
    digest: () => { feed(decoder.decode()); return inner.digest() },
  }
}
