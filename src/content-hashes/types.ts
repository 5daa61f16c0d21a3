/**
 * The shapes of the content-hash registry (index.ts). A content hash is what a storage service or
 * a peer-to-peer protocol reports for a file's bytes: an S3 ETag, a Dropbox `content_hash`, a
 * torrent's info-hash. Each is a pure streaming function of the bytes and a few parameters, and
 * its result is a string printed exactly as the store or protocol shows it.
 */

/** One streaming computation: bytes in any chunking, then the text the store shows. */
export interface ContentHasher {
  update(chunk: Uint8Array): void
  /** Finishes the computation; the hasher must not be used afterwards. */
  finish(): string
}

/** A size in bytes: a number, or text with a unit (`8MiB`, `5 MiB`, `16KiB`, `1GiB`). */
export interface ByteSizeParameter {
  kind: 'bytes'
  description: string
  /** Absent: the parameter is required, unless `optional`. */
  default?: number
  /** The entry computes a default of its own when this is absent (RHash's piece length). */
  optional?: boolean
  min: number
  max: number
}

export interface ChoiceParameter {
  kind: 'choice'
  description: string
  values: readonly string[]
  default: string
}

/** Text, bounded by its UTF-8 length, since that is what the protocol stores (a torrent's `name`). */
export interface TextParameter {
  kind: 'text'
  description: string
  default?: string
  minBytes: number
  maxBytes: number
  /** Characters the value may not contain, each with the reason. */
  forbidden?: readonly { pattern: RegExp, reason: string }[]
}

export type ParameterSpec = ByteSizeParameter | ChoiceParameter | TextParameter

/** What a caller passes: numbers or text, straight from a query string or a JSON body. */
export type RawParameters = Readonly<Record<string, string | number | undefined>>

/** Parameters after validation: byte sizes are numbers, the others text; optional ones may be absent. */
export type ResolvedParameters = Readonly<Record<string, string | number | undefined>>

/**
 * How the result is written: the encoding of its bytes, and any suffix the store adds; `multibase`
 * is a CID in its version's base (base58btc or base32), `uri` a link that carries several hashes.
 */
export type OutputForm = 'hex' | 'base64' | 'base32' | 'multibase' | 'uri'

export interface ContentHash {
  /** Canonical name: lowercase, what responses echo (`s3-etag`). */
  name: string
  displayName: string
  /** The store or protocol that reports it, and the field it reports it in. */
  store: string
  output: OutputForm
  /** How the output reads, for the docs: `hex, with -N for a multipart upload`. */
  outputNote: string
  /** The specification or the documentation cited for users and reviewers. */
  reference: string
  /** Which code computes it. */
  implementation: string
  parameters: Readonly<Record<string, ParameterSpec>>
  /**
   * A fresh hasher for validated parameters (see `resolveParameters`). May be async: hash-wasm
   * instantiates its WASM module per hasher.
   */
  create(params: ResolvedParameters): ContentHasher | Promise<ContentHasher>
  /**
   * The same hash split by data (segments.ts), for hash threads to share; absent, or undefined for
   * some parameters, where the hash is one sequential digest.
   */
  split?(params: ResolvedParameters): DataSplit | undefined
}

/** A hash split by data: a share of it, made in a hash thread, and how the shares' texts are put together on the main thread. */
export interface DataSplit {
  share(index: number, count: number): Promise<ContentHasher>
  combine(texts: readonly string[]): Promise<string>
}
