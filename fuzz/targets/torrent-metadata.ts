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
 * (canonical bencoding has one form per value). A reading holds the invariants of
 * fuzz/metadata-checks.ts (shared with the store-metadata target, which builds text in each shape).
 *
 * Expected refusals: BencodeError from the decoder; from readMetadata, Problem 413 and 422
 * `invalid-metadata` or `unknown-metadata`. Anything else is a finding.
 */
import { bdecode, BencodeDictionary, BencodeError, keyBytes, type BencodeValue } from '../../src/content-hashes/bencode.js'
import { checkReader } from '../metadata-checks.js'
import { fields, invariant } from '../support.js'

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

export function fuzz(data: Buffer): void {
  const [mode, body] = fields(data, 2) as [Buffer, Buffer]
  const which = (mode[0] ?? 0) % 3
  if (which === 0) checkDecoder(body)
  else if (which === 1) checkReader(body)
  else checkReader(body.toString('utf8'))
}
