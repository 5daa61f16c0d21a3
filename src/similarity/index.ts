/**
 * The similarity hashes as registry entries (kind `similarity`): streaming hashers behind the one
 * `Hasher` interface, so /api/hash and the upload pipeline (inline or on the hash threads) run them
 * beside the digests in the same single pass; the hashers are fast.ts's, whose per-byte work runs in
 * WebAssembly (ssdeep.ts and tlsh.ts state the same algorithms in TypeScript). Their raw digest is the bytes of the text form (ssdeep)
 * or the reference's 35 bytes (TLSH); `format` gives the form their tools print. They are compared
 * by score or distance (compare.ts), so verify and HMAC refuse them (algorithms/registry.ts).
 */
import type { DigestAlgorithm } from '../algorithms/types.js'
import { combineTlshShares, FastSsdeepHasher, FastTlshHasher, FastTlshShareHasher } from './fast.js'
import { formatTlsh } from './tlsh.js'

const HAND_WRITTEN = 'hashd (src/similarity, C compiled to WebAssembly)'

const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')

/** TLSH's 35 bytes in the reference's order (checksum, length, ratios, code), as the hex after `T1` reads. */
const TLSH_BYTES = 35

export const similarityAlgorithms: DigestAlgorithm[] = [
  {
    kind: 'similarity', name: 'ssdeep', displayName: 'ssdeep', aliases: ['ctph', 'spamsum', 'fuzzy'],
    // The longest text form: a 10-digit block size, 64 and 32 characters, two colons.
    outputBytes: 108,
    reference: 'libfuzzy 2.14 (ssdeep-project/ssdeep fuzzy.c); Kornblum, "Identifying almost identical files using context triggered piecewise hashing" (DFRWS 2006)',
    implementation: HAND_WRITTEN,
    create: () => {
      const hasher = new FastSsdeepHasher()
      return { update: (data) => hasher.update(data), digest: () => Buffer.from(hasher.digest(), 'latin1') }
    },
    format: latin1,
  },
  {
    kind: 'similarity', name: 'tlsh', displayName: 'TLSH', aliases: ['trendmicro-tlsh'],
    outputBytes: TLSH_BYTES,
    reference: 'TLSH 4 (trendmicro/tlsh, 128 buckets, 1-byte checksum); Oliver, Cheng and Chen, "TLSH – A Locality Sensitive Hash" (CTC 2013)',
    implementation: HAND_WRITTEN,
    create: () => {
      const hasher = new FastTlshHasher()
      return { update: (data) => hasher.update(data), digest: () => Buffer.from(hasher.digest().slice(2), 'hex') }
    },
    // One thread counts TLSH a little slower than the reference does; the shares of a large upload's hash threads count it faster.
    split: {
      share: (index, count) => new FastTlshShareHasher(index, count),
      combine: (states) => Buffer.from(formatTlsh(combineTlshShares(states)).slice(2), 'hex'),
    },
    format: (digest) => `T1${Buffer.from(digest).toString('hex').toUpperCase()}`,
  },
]
