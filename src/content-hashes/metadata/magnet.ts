/**
 * Magnet links: `magnet:?xt=urn:…&xl=<size>&dn=<name>`, as RHash's `--magnet` writes them and as
 * BitTorrent clients copy them (BEP 9; the Magnet URI scheme draft for `xt`, `xl`, `dn`, and `xt.1`,
 * `xt.2`… for several exact topics). Each `xt` is one field; which hash it holds is read from its
 * URN namespace, through the table below:
 *
 * - `urn:btih:` (BEP 9: 40 hex digits, or 32 base32 characters) is a v1 info-hash. It is the btih
 *   content hash of a single-file torrent with the link's `dn` as its name; without `dn` it cannot
 *   be recomputed. A link copied from a client gives the info-hash of a torrent made with that
 *   client's piece length, which the link does not say: it is computed with RHash's default, the
 *   piece length of the links RHash writes;
 * - `urn:btmh:1220…` (BEP 52: a multihash, 0x12 0x20 for SHA-256) is a v2 info-hash, the hash of
 *   the whole info dictionary with its file tree: not a function of the file alone;
 * - `urn:tree:tiger:` (TTH), `urn:aich:` (eMule), base32; `urn:ed2k:` (hex), `urn:sha1:` (base32,
 *   as RHash and Gnutella write it, or hex), and the hex digests RHash's `-a --magnet` adds.
 */
import { invalidMetadata } from './problems.js'
import { btihParameters } from './torrent.js'
import type { ExpectedField, MetadataShape } from './types.js'
import { base32Bytes, base32Of, hexOf, sizeOf } from './values.js'

type Encoding = 'hex' | 'base32' | 'hex-or-base32'

interface UrnKind {
  /** The namespace after `urn:` (RHash's names). */
  namespace: string
  bytes: number
  encoding: Encoding
  /** A content hash of the registry, or a digest of src/algorithms. */
  contentHash?: string
  digest?: string
}

/** The URN namespaces read, as data: RHash's names (rhash -a --magnet) and the digests hashd computes for them. */
export const MAGNET_URNS: readonly UrnKind[] = [
  { namespace: 'btih', bytes: 20, encoding: 'hex-or-base32', contentHash: 'btih' },
  { namespace: 'tree:tiger', bytes: 24, encoding: 'base32', contentHash: 'tth' },
  { namespace: 'aich', bytes: 20, encoding: 'base32', contentHash: 'aich' },
  { namespace: 'ed2k', bytes: 16, encoding: 'hex', digest: 'ed2k' },
  { namespace: 'sha1', bytes: 20, encoding: 'hex-or-base32', digest: 'sha1' },
  { namespace: 'md4', bytes: 16, encoding: 'hex', digest: 'md4' },
  { namespace: 'md5', bytes: 16, encoding: 'hex', digest: 'md5' },
  { namespace: 'crc32', bytes: 4, encoding: 'hex', digest: 'crc32' },
  { namespace: 'crc32c', bytes: 4, encoding: 'hex', digest: 'crc32c' },
  { namespace: 'tiger', bytes: 24, encoding: 'hex', digest: 'tiger' },
  { namespace: 'sha224', bytes: 28, encoding: 'hex', digest: 'sha224' },
  { namespace: 'sha256', bytes: 32, encoding: 'hex', digest: 'sha256' },
  { namespace: 'sha384', bytes: 48, encoding: 'hex', digest: 'sha384' },
  { namespace: 'sha512', bytes: 64, encoding: 'hex', digest: 'sha512' },
  { namespace: 'sha3-224', bytes: 28, encoding: 'hex', digest: 'sha3-224' },
  { namespace: 'sha3-256', bytes: 32, encoding: 'hex', digest: 'sha3-256' },
  { namespace: 'sha3-384', bytes: 48, encoding: 'hex', digest: 'sha3-384' },
  { namespace: 'sha3-512', bytes: 64, encoding: 'hex', digest: 'sha3-512' },
  { namespace: 'ripemd160', bytes: 20, encoding: 'hex', digest: 'ripemd160' },
  { namespace: 'whirlpool', bytes: 64, encoding: 'hex', digest: 'whirlpool' },
  { namespace: 'blake2s', bytes: 32, encoding: 'hex', digest: 'blake2s-256' },
  { namespace: 'blake2b', bytes: 64, encoding: 'hex', digest: 'blake2b-512' },
]

const MAGNET_PREFIX = 'magnet:?'
const EXACT_TOPIC = /^xt(?:\.[0-9]{1,4})?$/
/** BEP 52's multihash prefix for SHA-256 (0x12, 32 bytes), then the digest. */
const BTMH_SHA256 = '1220'
/** A link is one line; RHash's longest (-a) is about 2 KB, and 64 KiB leaves room for many trackers. */
const MAX_LINK_CHARS = 64 * 1024

/** A query value: `+` is a space, then percent-decoding (a bad escape is the link's fault). */
function decoded(name: string, value: string): string {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '))
  } catch {
    throw invalidMetadata(name, 'has a percent escape that is not UTF-8')
  }
}

function valueOf(field: string, kind: UrnKind, value: string): string {
  const hex = kind.encoding === 'hex' || (kind.encoding === 'hex-or-base32' && value.length === kind.bytes * 2)
  if (hex) return hexOf(field, value, kind.bytes)
  // TTH and AICH are printed in base32, as the registry does; an info-hash or a SHA-1 in hex.
  if (kind.encoding === 'base32') return base32Of(field, value, kind.bytes)
  return Buffer.from(base32Bytes(field, value, kind.bytes)).toString('hex')
}

function topicField(urn: string, name: string | undefined, size: number | undefined): ExpectedField {
  const lower = urn.toLowerCase()
  if (lower.startsWith('urn:btmh:')) {
    const multihash = urn.slice('urn:btmh:'.length)
    if (!multihash.toLowerCase().startsWith(BTMH_SHA256)) throw invalidMetadata('xt=urn:btmh', 'is not a SHA-256 multihash (1220 and 64 hex digits)')
    return {
      field: 'xt=urn:btmh', contentHash: null, parameters: {}, expected: hexOf('xt=urn:btmh', multihash.slice(BTMH_SHA256.length), 32),
      cannotCheck: 'a v2 info-hash is the hash of the whole info dictionary (file tree, piece length, name): it needs the .torrent, whose pieces root is checked instead',
    }
  }
  // The longest namespace that prefixes the URN: `tree:tiger` before `tiger` cannot clash, as each ends in `:`.
  const kind = MAGNET_URNS.find((candidate) => lower.startsWith(`urn:${candidate.namespace}:`))
  if (kind === undefined) {
    const namespace = lower.startsWith('urn:') ? lower.slice(4, lower.indexOf(':', 4) === -1 ? undefined : lower.indexOf(':', 4)).slice(0, 32) : ''
    return { field: `xt=urn:${namespace}`, contentHash: null, parameters: {}, expected: urn.slice(0, 256), cannotCheck: 'a topic of a kind hashd does not compute' }
  }
  const field = `xt=urn:${kind.namespace}`
  const expected = valueOf(field, kind, urn.slice(`urn:${kind.namespace}:`.length))
  if (kind.digest !== undefined) return { field, contentHash: null, digest: kind.digest, parameters: {}, expected }
  if (kind.contentHash === 'btih') {
    if (name === undefined) {
      return { field, contentHash: 'btih', parameters: {}, expected, cannotCheck: 'the link has no dn, and a v1 info-hash covers the file\'s name' }
    }
    const btih = btihParameters(size === undefined ? { name } : { name, size })
    return 'cannotCheck' in btih ? { field, contentHash: 'btih', parameters: {}, expected, cannotCheck: btih.cannotCheck } : { field, contentHash: 'btih', parameters: btih.parameters, expected }
  }
  return { field, contentHash: kind.contentHash as string, parameters: {}, expected }
}

export const magnetMetadata: MetadataShape = {
  name: 'magnet',
  accepts: 'a magnet link (magnet:?xt=urn:btih:…, urn:tree:tiger:, urn:aich:, urn:ed2k:, xl, dn)',
  matches: ({ text }) => text !== null && text.slice(0, MAGNET_PREFIX.length).toLowerCase() === MAGNET_PREFIX,
  read: ({ text }) => {
    const link = text ?? ''
    if (link.length > MAX_LINK_CHARS || link.includes('\n')) throw invalidMetadata('magnet', `must be one link of at most ${MAX_LINK_CHARS} characters`)
    const topics: string[] = []
    let name: string | undefined
    let size: number | undefined
    for (const pair of link.slice(MAGNET_PREFIX.length).split('&')) {
      const equals = pair.indexOf('=')
      const key = (equals === -1 ? pair : pair.slice(0, equals)).toLowerCase()
      const value = equals === -1 ? '' : pair.slice(equals + 1)
      if (EXACT_TOPIC.test(key)) topics.push(decoded(key, value))
      else if (key === 'dn') name = decoded('dn', value)
      else if (key === 'xl') size = sizeOf('xl', decoded('xl', value))
    }
    if (topics.length === 0) throw invalidMetadata('xt', 'is missing: the magnet link names no content')
    const fields = topics.map((urn) => topicField(urn, name, size))
    return { shape: 'magnet', ...(size !== undefined ? { size } : {}), ...(name !== undefined ? { name } : {}), fields }
  },
}
