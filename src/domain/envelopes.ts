/**
 * Digests inside the wrappers people copy from real tools, as /api/verify reads them. The
 * meaning is always the same: the envelope holds the digest of the input, so verify computes
 * that digest of `input` and compares it, in constant time, with the bytes the envelope holds.
 *
 * | wrapper | example | the input is |
 * |---|---|---|
 * | SRI / npm `integrity` (W3C SRI §3.1) | `sha384-oqVu…` | the resource (script, tarball) |
 * | OCI / Docker digest (image-spec descriptor.md) | `sha256:6c3c…` | the blob or manifest bytes |
 * | Nix base32 (libutil hash.cc) | `sha256:1b8m…` | the file (or the NAR of a path) |
 * | OpenSSH fingerprint (ssh-keygen -l) | `SHA256:…`, `MD5:aa:bb:…` | the key blob (the .pub line's base64 field, decoded) |
 * | colon-separated hex (openssl x509 -fingerprint) | `AB:CD:…` | the DER certificate or key blob |
 *
 * Forms that no single input verifies are recognised so that verify can say why: a go.sum `h1:`
 * hash (SHA-256 of a file listing), an S3 multipart ETag (MD5 of the parts' MD5s).
 */

export interface Envelope {
  /** The wrapper, as /api/identify names it in `format`. */
  format: string
  /** The inner digest's registry name; absent where only the length says (colon hex). */
  algorithm?: string
  /** The digest bytes the envelope holds. */
  bytes: Buffer
}

export interface UnverifiableEnvelope {
  format: string
  why: string
}

/** Nix's base32 alphabet (nix libutil hash.cc `base32Chars`): no e, o, t, u. */
const NIX32 = '0123456789abcdfghijklmnpqrsvwxyz'
const NIX32_LENGTHS: Record<string, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 }

/**
 * Nix base32 (parseHash32 in libutil hash.cc): character n from the end carries bits 5n…5n+4
 * of the digest, little-endian across bytes; bits beyond the digest must be zero.
 */
export function decodeNix32(text: string, bytes: number): Buffer | null {
  if (text.length !== Math.ceil(bytes * 8 / 5)) return null
  const out = Buffer.alloc(bytes)
  for (let n = 0; n < text.length; n += 1) {
    const digit = NIX32.indexOf(text[text.length - n - 1]!)
    if (digit < 0) return null
    const bit = n * 5
    const index = bit >> 3
    const shift = bit & 7
    out[index]! |= (digit << shift) & 0xff
    const carry = digit >> (8 - shift)
    if (index + 1 < bytes) out[index + 1]! |= carry
    else if (carry !== 0) return null
  }
  return out
}

/** Canonical standard base64 (padding optional): the only form the wrappers below use. */
function base64Bytes(text: string, bytes: number): Buffer | null {
  if (!/^[A-Za-z0-9+/]{2,}={0,2}$/.test(text)) return null
  const decoded = Buffer.from(text, 'base64')
  if (decoded.length !== bytes) return null
  // Re-encoding must give the same characters: no stray bits in the last one.
  return decoded.toString('base64').replace(/={1,2}$/, '') === text.replace(/={1,2}$/, '') ? decoded : null
}

const DIGEST_BYTES: Record<string, number> = { md5: 16, sha1: 20, sha256: 32, sha384: 48, sha512: 64 }

interface EnvelopeRule {
  pattern: RegExp
  read: (match: RegExpExecArray) => Envelope | null
}

/** The wrappers verify reads, one rule each; the first whose pattern matches decides. */
const RULES: EnvelopeRule[] = [
  {
    // W3C SRI: hash-algo "-" base64-value; npm's ssri also wrote sha1- in lockfile v1.
    pattern: /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/]{27,86}={0,2})$/,
    read: ([, algorithm = '', payload = '']) => {
      const bytes = base64Bytes(payload, DIGEST_BYTES[algorithm]!)
      return bytes && { format: 'sri', algorithm, bytes }
    },
  },
  {
    // OCI descriptor digest: registered algorithms sha256 and sha512, lowercase hex.
    pattern: /^(sha256|sha512):([0-9a-f]{64}|[0-9a-f]{128})$/,
    read: ([, algorithm = '', hex = '']) => (hex.length === DIGEST_BYTES[algorithm]! * 2 ? { format: 'oci-digest', algorithm, bytes: Buffer.from(hex, 'hex') } : null),
  },
  {
    pattern: /^(md5|sha1|sha256|sha512):([0-9a-df-np-sv-z]{26,103})$/,
    read: ([, algorithm = '', text = '']) => {
      const bytes = decodeNix32(text, NIX32_LENGTHS[algorithm]!)
      return bytes && { format: 'nix-base32', algorithm, bytes }
    },
  },
  {
    // ssh-keygen -l: SHA256: + unpadded base64 (sshkey.c fingerprint_b64).
    pattern: /^SHA256:([A-Za-z0-9+/]{43})$/,
    read: ([, payload = '']) => {
      const bytes = base64Bytes(payload, 32)
      return bytes && { format: 'openssh-fingerprint', algorithm: 'sha256', bytes }
    },
  },
  {
    // ssh-keygen -l -E md5: MD5: + colon hex (sshkey.c fingerprint_hex).
    pattern: /^MD5:((?:[0-9a-fA-F]{2}:){15}[0-9a-fA-F]{2})$/,
    read: ([, hex = '']) => ({ format: 'openssh-fingerprint', algorithm: 'md5', bytes: Buffer.from(hex.replaceAll(':', ''), 'hex') }),
  },
  {
    // Nix base32 SHA-256 without its prefix, as older Nix expressions write it (sha256 = "…").
    pattern: /^[01][0-9a-df-np-sv-z]{51}$/,
    read: ([text = '']) => {
      // All hex digits: hex wins, as it does for every bare digest (decodeDigestText).
      if (/^[0-9a-f]+$/.test(text)) return null
      const bytes = decodeNix32(text, 32)
      return bytes && { format: 'nix-base32', algorithm: 'sha256', bytes }
    },
  },
  {
    // Colon-separated hex pairs, either case (openssl x509 -fingerprint, old ssh-keygen): the
    // algorithm is whatever digest has that many bytes.
    pattern: /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){3,127}$/,
    read: ([text = '']) => ({ format: 'colon-hex', bytes: Buffer.from(text.replaceAll(':', ''), 'hex') }),
  },
]

const UNVERIFIABLE: Array<{ pattern: RegExp, format: string, why: string }> = [
  {
    pattern: /^h1:[A-Za-z0-9+/]{43}=$/,
    format: 'go-sum-h1',
    why: 'a go.sum h1: hash is the SHA-256 of a summary listing every file of the module with its own SHA-256 (golang.org/x/mod/sumdb/dirhash), not the digest of one input',
  },
  {
    pattern: /^"?[0-9a-f]{32}-[1-9]\d{0,4}"?$/,
    format: 's3-multipart-etag',
    why: 'an S3 multipart ETag is the MD5 of the concatenated MD5s of the parts, and the part boundaries are not in the string',
  },
]

/** The digest a wrapped hash string holds, or null when the string is no wrapper verify reads. */
export function unwrapDigest(hash: string): Envelope | null {
  if (hash.length > 600) return null
  for (const rule of RULES) {
    const match = rule.pattern.exec(hash)
    if (match) return rule.read(match)
  }
  return null
}

/** A wrapper identify recognises but no single input can verify, with the reason. */
export function unverifiableEnvelope(hash: string): UnverifiableEnvelope | null {
  if (hash.length > 600) return null
  const found = UNVERIFIABLE.find((rule) => rule.pattern.test(hash))
  return found ? { format: found.format, why: found.why } : null
}
