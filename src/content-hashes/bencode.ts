/**
 * Bencoding (BEP 3, "The BitTorrent Protocol Specification", section "bencoding"): integers as
 * `i<n>e`, byte strings as `<length>:<bytes>`, lists as `l…e`, dictionaries as `d…e` with their
 * keys as raw byte strings in sorted order. The encoder makes info dictionaries (btih); the decoder
 * reads `.torrent` files a client pastes, so it is strict about form and bounded in every way:
 *
 * - integers as BEP 3 writes them: no leading zero and no `-0` ("i03e" and "i-0e" are invalid),
 *   and within a signed 64-bit integer, as libtorrent's bdecode (it fails larger ones with
 *   "integer overflow"); byte-string lengths without leading zeros and never past the input's end;
 * - dictionary keys are byte strings. BEP 3 says they "appear in sorted order"; libtorrent 2.0
 *   (bdecode and torrent_info) nevertheless loads a torrent whose info keys are out of order, and
 *   its info-hash is the SHA-1 of those bytes as they are, so unsorted keys are accepted and each
 *   dictionary says whether its keys were sorted. A key twice in one dictionary is refused:
 *   libtorrent reads the first and a Python dict the last, so two readers would disagree on what
 *   the torrent says, and a verifier must not pick one silently;
 * - nesting at most 100 deep (libtorrent's bdecode `depth_limit` default), at most 1,000,000
 *   values (libtorrent's `token_limit` is 2,000,000 tokens, about two per value), the input at
 *   most `BENCODE_MAX_INPUT_BYTES`, and nothing after the top value;
 * - no recursion: one loop over the input with an explicit stack, each byte read a bounded number
 *   of times, so the time is linear in the input.
 *
 * Every refusal is a `BencodeError` naming the byte offset; it never quotes the input.
 */
export type Bencodable = number | bigint | string | Uint8Array | readonly Bencodable[] | { readonly [key: string]: Bencodable }

const encoder = new TextEncoder()

function write(value: Bencodable, out: Uint8Array[]): void {
  if (typeof value === 'number' || typeof value === 'bigint') {
    if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError('bencode integers must be whole numbers')
    out.push(encoder.encode(`i${value}e`))
  } else if (typeof value === 'string') {
    write(encoder.encode(value), out)
  } else if (value instanceof Uint8Array) {
    out.push(encoder.encode(`${value.length}:`), value)
  } else if (Array.isArray(value)) {
    out.push(encoder.encode('l'))
    for (const item of value as readonly Bencodable[]) write(item, out)
    out.push(encoder.encode('e'))
  } else {
    // BEP 3: "Keys must be strings and appear in sorted order (sorted as raw strings, not alphanumerics)."
    const entries = Object.entries(value as { readonly [key: string]: Bencodable })
      .map(([key, item]) => [Buffer.from(key, 'utf8'), item] as const)
      .sort(([a], [b]) => Buffer.compare(a, b))
    out.push(encoder.encode('d'))
    for (const [key, item] of entries) {
      write(key, out)
      write(item, out)
    }
    out.push(encoder.encode('e'))
  }
}

export function bencode(value: Bencodable): Uint8Array {
  const out: Uint8Array[] = []
  write(value, out)
  return Buffer.concat(out)
}

/** The largest input the decoder reads: a `.torrent` of a 1 TiB file in 16 KiB v1 pieces holds 1.3 MB of piece hashes, and real ones stay far below 16 MiB. */
export const BENCODE_MAX_INPUT_BYTES = 16 * 1024 * 1024
/** libtorrent's bdecode `depth_limit` default. */
export const BENCODE_MAX_DEPTH = 100
/** Values of all kinds; a v1 torrent of 100,000 files has about 500,000. */
export const BENCODE_MAX_VALUES = 1_000_000
/** `-9223372036854775808` has 20 characters: a longer integer is out of range whatever its digits. */
const INTEGER_MAX_CHARS = 20
/** A byte-string length has at most 8 digits, since the input is at most 16 MiB. */
const LENGTH_MAX_DIGITS = 8
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

const E = 0x65 // 'e'
const I = 0x69 // 'i'
const L = 0x6c // 'l'
const D = 0x64 // 'd'
const COLON = 0x3a
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

/** A refusal of the decoder: what was wrong, and the offset of the byte where it was found. */
export class BencodeError extends Error {
  override name = 'BencodeError'
  readonly offset: number
  readonly reason: string

  constructor(reason: string, offset: number) {
    super(`not valid bencode: ${reason} at byte ${offset}`)
    this.reason = reason
    this.offset = offset
  }
}

/**
 * A decoded dictionary. Keys are byte strings; they are held as `latin1` text, one character per
 * byte, so any key survives (`keyBytes` gives the bytes back). `start` and `end` are the offsets
 * of its `d` and one past its `e`: `input.subarray(start, end)` is its exact encoding, which is
 * what an info-hash hashes.
 */
export class BencodeDictionary {
  readonly entries = new Map<string, BencodeValue>()
  /** Whether the keys came in BEP 3's order (raw bytes, ascending). */
  sorted = true

  constructor(readonly start: number, public end: number) {}

  /** The value under a key given as text (UTF-8, as BEP 3 and BEP 52 write key names). */
  get(key: string): BencodeValue | undefined {
    return this.entries.get(Buffer.from(key, 'utf8').toString('latin1'))
  }
}

export type BencodeValue = bigint | Uint8Array | BencodeValue[] | BencodeDictionary

/** A dictionary key as the bytes it was. */
export const keyBytes = (key: string): Buffer => Buffer.from(key, 'latin1')

export interface BencodeLimits {
  maxInputBytes?: number
  maxDepth?: number
  maxValues?: number
}

interface Frame {
  container: BencodeValue[] | BencodeDictionary
  /** In a dictionary: the key read, waiting for its value. */
  key: string | null
  lastKey: Buffer | null
}

function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= ZERO && byte <= NINE
}

/** `i<n>e` at `at`; the value and the offset after it. */
function readInteger(input: Uint8Array, at: number): [bigint, number] {
  let end = at + 1
  const limit = Math.min(input.length, at + 2 + INTEGER_MAX_CHARS)
  while (end < limit && input[end] !== E) end++
  if (end >= input.length) throw new BencodeError('an integer without its end', at)
  if (input[end] !== E) throw new BencodeError('an integer outside the signed 64-bit range', at)
  const negative = input[at + 1] === MINUS
  const first = at + 1 + (negative ? 1 : 0)
  if (first === end) throw new BencodeError('an integer without digits', at)
  for (let index = first; index < end; index++) {
    if (!isDigit(input[index])) throw new BencodeError('an integer with a character that is not a digit', index)
  }
  if (input[first] === ZERO && end - first > 1) throw new BencodeError('an integer with a leading zero (BEP 3: i03e is invalid)', at)
  if (negative && input[first] === ZERO) throw new BencodeError('a negative zero (BEP 3: i-0e is invalid)', at)
  const value = BigInt(Buffer.from(input.buffer, input.byteOffset + at + 1, end - at - 1).toString('latin1'))
  if (value < INT64_MIN || value > INT64_MAX) throw new BencodeError('an integer outside the signed 64-bit range', at)
  return [value, end + 1]
}

/** `<length>:<bytes>` at `at`: a view of the bytes (no copy) and the offset after them. */
function readString(input: Uint8Array, at: number): [Uint8Array, number] {
  let colon = at
  let length = 0
  while (colon < input.length && isDigit(input[colon])) {
    if (colon - at === LENGTH_MAX_DIGITS) throw new BencodeError('a byte string longer than the input', at)
    length = length * 10 + ((input[colon] as number) - ZERO)
    colon++
  }
  if (colon >= input.length) throw new BencodeError('a byte-string length without its colon', at)
  if (input[colon] !== COLON) throw new BencodeError('a byte-string length followed by something other than a colon', colon)
  if (input[at] === ZERO && colon - at > 1) throw new BencodeError('a byte-string length with a leading zero', at)
  const start = colon + 1
  if (length > input.length - start) throw new BencodeError(`a byte string of ${length} bytes that runs past the end of the input`, at)
  return [input.subarray(start, start + length), start + length]
}

/**
 * Decodes one bencoded value that fills the whole input. Byte strings are views into `input`
 * (keep it alive and unchanged while the result is in use).
 */
export function bdecode(input: Uint8Array, limits: BencodeLimits = {}): BencodeValue {
  const maxInputBytes = limits.maxInputBytes ?? BENCODE_MAX_INPUT_BYTES
  const maxDepth = limits.maxDepth ?? BENCODE_MAX_DEPTH
  const maxValues = limits.maxValues ?? BENCODE_MAX_VALUES
  if (input.length > maxInputBytes) throw new BencodeError(`an input of more than ${maxInputBytes} bytes`, maxInputBytes)
  if (input.length === 0) throw new BencodeError('an empty input', 0)

  const stack: Frame[] = []
  let values = 0
  let at = 0
  let root: BencodeValue | undefined

  /** Places a finished value in its container, or makes it the result. */
  const place = (value: BencodeValue): void => {
    const top = stack[stack.length - 1]
    if (top === undefined) root = value
    else if (Array.isArray(top.container)) top.container.push(value)
    else {
      top.container.entries.set(top.key as string, value)
      top.key = null
    }
  }
  const count = (offset: number): void => {
    if (++values > maxValues) throw new BencodeError(`more than ${maxValues} values`, offset)
  }

  while (root === undefined) {
    if (at >= input.length) throw new BencodeError(stack.length ? 'a list or dictionary without its end' : 'an empty input', at)
    const byte = input[at] as number
    const top = stack[stack.length - 1]
    if (byte === E && top !== undefined) {
      if (top.key !== null) throw new BencodeError('a dictionary key without a value', at)
      if (top.container instanceof BencodeDictionary) top.container.end = at + 1
      stack.pop()
      at++
      place(top.container)
    } else if (top !== undefined && top.key === null && top.container instanceof BencodeDictionary) {
      if (!isDigit(byte)) throw new BencodeError('a dictionary key that is not a byte string', at)
      const [key, next] = readString(input, at)
      const bytes = Buffer.from(key.buffer, key.byteOffset, key.byteLength)
      const text = bytes.toString('latin1')
      if (top.container.entries.has(text)) throw new BencodeError('a key that appears twice in one dictionary', at)
      if (top.lastKey !== null && Buffer.compare(top.lastKey, bytes) > 0) top.container.sorted = false
      top.lastKey = bytes
      top.key = text
      at = next
    } else if (byte === I) {
      count(at)
      const [value, next] = readInteger(input, at)
      at = next
      place(value)
    } else if (isDigit(byte)) {
      count(at)
      const [value, next] = readString(input, at)
      at = next
      place(value)
    } else if (byte === L || byte === D) {
      count(at)
      if (stack.length >= maxDepth) throw new BencodeError(`nesting deeper than ${maxDepth} levels`, at)
      stack.push({ container: byte === L ? [] : new BencodeDictionary(at, at), key: null, lastKey: null })
      at++
    } else {
      throw new BencodeError('a byte that starts no bencoded value', at)
    }
  }
  if (at !== input.length) throw new BencodeError('data after the end of the bencoded value', at)
  return root
}
