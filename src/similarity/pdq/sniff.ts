/**
 * What kind of file an upload is, from its first bytes: the four image formats PDQ decodes, and a
 * few common others by name, so that a refusal can say what was sent instead ("a PDF", "a ZIP
 * archive"). Only fixed signatures are compared; nothing here is a regular expression.
 */
export type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp'

interface Signature {
  readonly name: string
  readonly format?: ImageFormat
  /** Bytes expected at `offset`; null matches any byte. */
  readonly bytes: readonly (number | null)[]
  readonly offset?: number
}

const ascii = (text: string): number[] => [...text].map((character) => character.charCodeAt(0))

const SIGNATURES: readonly Signature[] = [
  { name: 'a JPEG image', format: 'jpeg', bytes: [0xff, 0xd8, 0xff] },
  { name: 'a PNG image', format: 'png', bytes: [0x89, ...ascii('PNG\r\n\x1a\n')] },
  { name: 'a GIF image', format: 'gif', bytes: ascii('GIF87a') },
  { name: 'a GIF image', format: 'gif', bytes: ascii('GIF89a') },
  { name: 'a WebP image', format: 'webp', bytes: [...ascii('RIFF'), null, null, null, null, ...ascii('WEBP')] },
  { name: 'a TIFF image', bytes: ascii('II*\0') },
  { name: 'a TIFF image', bytes: ascii('MM\0*') },
  { name: 'a BMP image', bytes: ascii('BM') },
  { name: 'an ICO image', bytes: [0, 0, 1, 0] },
  { name: 'a HEIF or AVIF image', bytes: ascii('ftyp'), offset: 4 },
  { name: 'a JPEG XL image', bytes: [0xff, 0x0a] },
  { name: 'a PDF document', bytes: ascii('%PDF-') },
  { name: 'a ZIP archive', bytes: ascii('PK\x03\x04') },
  { name: 'a gzip stream', bytes: [0x1f, 0x8b] },
  { name: 'an ELF executable', bytes: ascii('\x7fELF') },
  { name: 'a RIFF file that is not WebP', bytes: ascii('RIFF') },
]

export interface Sniffed {
  /** Set when the bytes start like one of the formats PDQ decodes. */
  readonly format: ImageFormat | null
  /** What the bytes look like, for a refusal's detail: "a PDF document", "text", "an empty file". */
  readonly description: string
}

function matches(bytes: Uint8Array, signature: Signature): boolean {
  const offset = signature.offset ?? 0
  if (bytes.length < offset + signature.bytes.length) return false
  return signature.bytes.every((byte, index) => byte === null || bytes[offset + index] === byte)
}

/** Printable ASCII, tabs and line ends, or bytes ≥ 0x80 (UTF-8), over the first 512 bytes. */
function looksLikeText(bytes: Uint8Array): boolean {
  const end = Math.min(bytes.length, 512)
  for (let i = 0; i < end; i++) {
    const byte = bytes[i] as number
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false
    if (byte === 0x7f) return false
  }
  return true
}

export function sniffImage(bytes: Uint8Array): Sniffed {
  if (bytes.length === 0) return { format: null, description: 'an empty file' }
  for (const signature of SIGNATURES) {
    if (matches(bytes, signature)) return { format: signature.format ?? null, description: signature.name }
  }
  if (looksLikeText(bytes)) {
    const start = Buffer.from(bytes.subarray(0, 256)).toString('latin1').trimStart()
    return { format: null, description: start.startsWith('<') ? 'text (SVG, HTML or XML; not decoded)' : 'text' }
  }
  return { format: null, description: 'binary data of no known image format' }
}
