/**
 * The bencode decoder (src/content-hashes/bencode.ts) and the metadata readers over it
 * (src/content-hashes/metadata/: the shape detector, S3, Cloud Storage, Azure, Dropbox, OneDrive,
 * `.torrent`, magnet links, `git ls-tree`). Bencode is a classic fuzz target: length prefixes,
 * nesting, integers of any length.
 *
 * Input: a mode byte (its value modulo 3: 0 decodes the rest as bencode, 1 reads it as metadata
 * bytes, as a `.torrent` upload arrives, 2 as metadata text, as a pasted form field), then the rest.
 *
 * Invariants: the decoder refuses with a BencodeError whose offset lies within the input, or
 * answers with dictionaries whose spans start with `d` and end with `e` inside the input; when
 * every dictionary's keys were sorted, encoding the answer again gives the input byte for byte
 * (canonical bencoding has one form per value). A reading has fields; each names a content hash of
 * the registry or a digest of src/algorithms (or is a v1 torrent's piece plan, or cannot be
 * checked); the parameters of a field that can be checked are ones the registry accepts, with each
 * candidate part size; a piece plan holds one 20-byte hash per piece of its length.
 *
 * Expected refusals: BencodeError from the decoder; from readMetadata, Problem 413 and 422
 * `invalid-metadata` or `unknown-metadata`. Anything else is a finding.
 */
import { findAlgorithm } from '../../src/algorithms/registry.js'
import { bdecode, BencodeDictionary, BencodeError, keyBytes, type BencodeValue } from '../../src/content-hashes/bencode.js'
import { findContentHash, resolveParameters } from '../../src/content-hashes/index.js'
import { readMetadata } from '../../src/content-hashes/metadata/index.js'
import { S3_MAX_PART_BYTES, S3_MIN_PART_BYTES } from '../../src/content-hashes/parts.js'
import { fields, invariant, isProblem, refusing } from '../support.js'

const METADATA_REFUSALS = ['urn:hashd:problem:invalid-metadata', 'urn:hashd:problem:unknown-metadata']

/** Canonical bencoding of a decoded value, keys in the order decoded (written here, apart from the encoder under test). */
function encode(value: BencodeValue, out: Buffer[]): void {
  if (typeof value === 'bigint') out.push(Buffer.from(`i${value}e`))
  else if (value instanceof Uint8Array) out.push(Buffer.from(`${value.length}:`), Buffer.from(value))
  else if (Array.isArray(value)) {
    out.push(Buffer.from('l'))
    for (const item of value) encode(item, out)
    out.push(Buffer.from('e'))
  } else {
    out.push(Buffer.from('d'))
    for (const [key, item] of value.entries) {
      encode(keyBytes(key), out)
      encode(item, out)
    }
    out.push(Buffer.from('e'))
  }
}

/** Every dictionary of the value (with a stack: the value may be 100 deep). */
function dictionaries(root: BencodeValue): BencodeDictionary[] {
  const found: BencodeDictionary[] = []
  const pending: BencodeValue[] = [root]
  while (pending.length > 0) {
    const value = pending.pop() as BencodeValue
    if (Array.isArray(value)) for (const item of value) pending.push(item)
    else if (value instanceof BencodeDictionary) {
      found.push(value)
      for (const item of value.entries.values()) pending.push(item)
    }
  }
  return found
}

function checkDecoder(input: Buffer): void {
  let value: BencodeValue
  try {
    value = bdecode(input)
  } catch (error) {
    if (!(error instanceof BencodeError)) throw error
    invariant(error.offset >= 0 && error.offset <= Math.max(input.length, 0), `a BencodeError at offset ${error.offset} of ${input.length} bytes`)
    return
  }
  const all = dictionaries(value)
  for (const dictionary of all) {
    invariant(dictionary.start >= 0 && dictionary.end <= input.length && dictionary.start < dictionary.end, 'a dictionary span outside the input')
    invariant(input[dictionary.start] === 0x64 && input[dictionary.end - 1] === 0x65, 'a dictionary span that is not d…e')
  }
  if (all.every((dictionary) => dictionary.sorted)) {
    const out: Buffer[] = []
    encode(value, out)
    invariant(Buffer.concat(out).equals(input), 'a sorted decoding that does not encode back to its input')
  }
}

function checkReader(input: Buffer | string): void {
  const reading = refusing(() => readMetadata(input), (error) => isProblem(error, [413]) || isProblem(error, [422], METADATA_REFUSALS))
  if (reading === undefined) return
  invariant(reading.fields.length > 0, `a ${reading.shape} reading without fields`)
  for (const field of reading.fields) {
    invariant(typeof field.expected === 'string' && field.field.length > 0, 'a field without a name or an expected string')
    const entry = field.contentHash === null ? undefined : findContentHash(field.contentHash)
    invariant(field.contentHash === null || entry !== undefined, `a field names the unknown content hash ${field.contentHash}`)
    if (field.digest !== undefined) invariant(findAlgorithm(field.digest)?.kind !== 'password' && findAlgorithm(field.digest) !== undefined, `a field names the unknown digest ${field.digest}`)
    if (field.pieces !== undefined) {
      const { pieceLength, length, hashes } = field.pieces
      invariant(pieceLength > 0 && hashes.length === Math.ceil(length / pieceLength) * 20, 'a piece plan whose hashes do not fit its length')
    }
    for (const size of field.partSizeCandidates ?? []) invariant(size >= S3_MIN_PART_BYTES && size <= S3_MAX_PART_BYTES, `a candidate part size ${size} S3 does not allow`)
    if (field.cannotCheck !== undefined) continue
    invariant(entry !== undefined || field.digest !== undefined || field.pieces !== undefined, `the field ${field.field} can be checked, by nothing`)
    if (entry === undefined) continue
    for (const partSize of field.partSizeCandidates ?? [undefined]) {
      // As the route will: a candidate part size, and the upload's size where the entry needs one and the store gave none.
      const size = field.parameters.size ?? (Object.hasOwn(entry.parameters, 'size') ? reading.size ?? 0 : undefined)
      const parameters = { ...field.parameters, ...(partSize === undefined ? {} : { partSize }), ...(size === undefined ? {} : { size }) }
      const resolved = refusing(() => resolveParameters(entry, parameters), () => true)
      invariant(resolved !== undefined, `the registry refuses the parameters of ${field.field}`)
    }
  }
}

export function fuzz(data: Buffer): void {
  const [mode, body] = fields(data, 2) as [Buffer, Buffer]
  const which = (mode[0] ?? 0) % 3
  if (which === 0) checkDecoder(body)
  else if (which === 1) checkReader(body)
  else checkReader(body.toString('utf8'))
}
