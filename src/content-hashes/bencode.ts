/**
 * Bencoding (BEP 3, "The BitTorrent Protocol Specification", section "bencoding"): integers as
 * `i<n>e`, byte strings as `<length>:<bytes>`, lists as `l…e`, dictionaries as `d…e` with their
 * keys as raw byte strings in sorted order. Only the encoder lives here: it is all an info-hash
 * needs.
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
