/**
 * /api/filehash's content hashes (src/content-hashes): the parameters a request gives, each checked
 * against the requested entries and bounded by the registry, and one stage that holds the file to
 * a size given up front and either feeds every content hasher an upload's chunks or, when the hash
 * threads compute them (upload/threads.ts), hands on their results.
 */
import { contentHashes, findContentHash, resolveParameters, type ContentHash, type ContentHasher, type ParameterSpec } from '../content-hashes/index.js'
import { invalidParameter, parseByteSize } from '../content-hashes/parameters.js'

/** A parameter's value and where it was given: `/querystring` or `/body` (a form field), for the problem's pointer. */
export interface GivenParameter { value: string, pointerBase: string }

export interface ContentHashParameter {
  /** The first entry's spec: entries that share a name share its kind and bounds (`partSize`, `size`). */
  spec: ParameterSpec
  /** Each taking entry's own description, once each. */
  descriptions: string[]
  /** The entries that take it, by canonical name, in registry order. */
  takenBy: string[]
  /** For a choice, every value some entry takes (checksumType: FULL_OBJECT from every S3 CRC, COMPOSITE from some). */
  choices: string[]
}

/** Every parameter some content hash takes, read from the registry: the extra query (and form) fields of /api/filehash. */
export const CONTENT_HASH_PARAMETERS: ReadonlyMap<string, ContentHashParameter> = (() => {
  const parameters = new Map<string, ContentHashParameter>()
  for (const entry of contentHashes) {
    for (const [name, spec] of Object.entries(entry.parameters)) {
      const known = parameters.get(name) ?? { spec, descriptions: [], takenBy: [], choices: [] }
      if (!known.descriptions.includes(spec.description)) known.descriptions.push(spec.description)
      if (spec.kind === 'choice') known.choices.push(...spec.values.filter((value) => !known.choices.includes(value)))
      known.takenBy.push(entry.name)
      parameters.set(name, known)
    }
  }
  return parameters
})()

/**
 * `name` is also the file name the raw form echoes back, so it is no content-hash parameter alone:
 * it may be given without btih or magnet.
 */
const SHARED_WITH_THE_ROUTE = new Set(['name'])

export interface ContentHashContext {
  /** btih's and magnet's torrent name when no `name` is given: the multipart file part's filename. */
  fileName?: string
  /** The request body's length when the body is the file (Content-Length): `size` when none is given. */
  bodyLength?: number
}

export interface ContentHashStage {
  /** Feeds every content hasher here, if any, synchronously; each copies what it keeps, so the chunk may be freed after. */
  write(chunk: Uint8Array): void
  /** The input has ended: holds the file to the size given up front, before any hasher finishes. */
  end(): void
  /** Holds the file to the size given up front, then each content hash's text by canonical name. */
  finish(size: number): ReadonlyMap<string, string>
}

/** A content hash by its registry entry's canonical name and its resolved parameters: plain values, which a hash thread can receive. */
export interface ResolvedContentHash { name: string, params: Record<string, string | number> }

export interface ContentHashPlan {
  /** Every requested content hash, checked and resolved, in request order: for the hash threads. */
  readonly resolved: readonly ResolvedContentHash[]
  /**
   * The stage for the upload. Without `computed`, it makes the hashers and hashes here (an inline
   * upload); with it, it only holds the size, and `finish` reads the texts from `computed` (the hash
   * threads made the hashers from `resolved` and were fed the same chunks).
   */
  start(computed?: () => ReadonlyMap<string, string>): Promise<ContentHashStage>
}

/** The size the hashes were promised, and where it came from (a problem names that field). */
interface PromisedSize { bytes: number, field: string, pointerBase: string }

function sizeMismatch(promised: PromisedSize, detail: string) {
  return invalidParameter(promised.field, `${promised.field} is ${promised.bytes} bytes, and the file ${detail}: ${promised.field === 'size' ? 'give the file\'s exact size' : 'the body must be the file'}`, promised.pointerBase)
}

/**
 * Checks the parameters and fills in the registry's defaults, for hashers made here or in a hash
 * thread (see `ContentHashPlan.start`). Every
 * given parameter must be taken by a requested entry (`partSize` with only sha256 is a 422 naming
 * partSize, not silently ignored); each is validated where it was given, so a form field's problem
 * points into the body and a query parameter's into the query string.
 */
export function planContentHashes(entries: readonly ContentHash[], given: ReadonlyMap<string, GivenParameter>, context: ContentHashContext = {}): ContentHashPlan {
  for (const [name, { pointerBase }] of given) {
    const parameter = CONTENT_HASH_PARAMETERS.get(name)
    if (parameter === undefined) throw invalidParameter(name, `no content hash takes a parameter ${name.slice(0, 64)}`, pointerBase)
    if (SHARED_WITH_THE_ROUTE.has(name) || entries.some((entry) => Object.hasOwn(entry.parameters, name))) continue
    throw invalidParameter(name, `${name} is a parameter of ${parameter.takenBy.join(', ')}, and algorithms names none of them`, pointerBase)
  }

  const givenSize = given.get('size')
  // A given size is set below, once the registry has read and bounded it; the body's length needs neither.
  let promisedSize: PromisedSize | undefined = givenSize === undefined && context.bodyLength !== undefined
    ? { bytes: context.bodyLength, field: 'content-length', pointerBase: '/headers' }
    : undefined
  // A filename too long for a torrent's name is fixed by giving ?name=, so its problem points there.
  const fileName = context.fileName !== undefined && context.fileName.length > 0 ? { value: context.fileName, pointerBase: '/querystring' } : undefined

  const resolvedHashes: ResolvedContentHash[] = []
  for (const entry of entries) {
    const resolved: Record<string, string | number | undefined> = {}
    for (const [name, spec] of Object.entries(entry.parameters)) {
      let value = given.get(name)
      if (value === undefined && name === 'name') value = fileName
      if (value === undefined && name === 'size' && promisedSize !== undefined) value = { value: String(promisedSize.bytes), pointerBase: promisedSize.pointerBase }
      // One parameter at a time, so each problem points where that parameter was given.
      Object.assign(resolved, resolveParameters({ ...entry, parameters: { [name]: spec } }, value === undefined ? {} : { [name]: value.value }, value?.pointerBase ?? '/querystring'))
      if (name === 'size' && givenSize !== undefined && promisedSize === undefined) {
        promisedSize = { bytes: resolved[name] as number, field: 'size', pointerBase: givenSize.pointerBase }
      }
    }
    // btih's (and magnet's) piece length defaults to RHash's choice for the size, so it needs one or the other up front.
    if ('pieceLength' in resolved && resolved.pieceLength === undefined && 'size' in resolved && resolved.size === undefined) {
      throw invalidParameter('size', `${entry.name} needs pieceLength, or the file's size up front (size, or the raw body's Content-Length) to choose RHash's default piece length`, '/querystring')
    }
    // Absent optional parameters are left out: the entries read them as undefined either way.
    const params = Object.fromEntries(Object.entries(resolved).filter((pair): pair is [string, string | number] => pair[1] !== undefined))
    resolvedHashes.push({ name: entry.name, params })
  }

  // The size is checked here, before any hasher sees a byte past it, so the problem names the field it came from.
  const sizeUsed = promisedSize !== undefined && entries.some((entry) => Object.hasOwn(entry.parameters, 'size')) ? promisedSize : undefined
  const checkSize = (size: number): void => {
    if (sizeUsed !== undefined && size !== sizeUsed.bytes) throw sizeMismatch(sizeUsed, `is ${size} bytes`)
  }
  return {
    resolved: resolvedHashes,
    async start(computed) {
      const hashers: Array<[string, ContentHasher]> = []
      if (computed === undefined) {
        for (const { name, params } of resolvedHashes) hashers.push([name, await (findContentHash(name) as ContentHash).create(params)])
      }
      let seen = 0
      return {
        write(chunk) {
          seen += chunk.length
          if (sizeUsed !== undefined && seen > sizeUsed.bytes) throw sizeMismatch(sizeUsed, 'is longer')
          for (const [, hasher] of hashers) hasher.update(chunk)
        },
        end: () => checkSize(seen),
        finish(size) {
          checkSize(size)
          return computed === undefined ? new Map(hashers.map(([name, hasher]) => [name, hasher.finish()])) : computed()
        },
      }
    },
  }
}

/** Where /api/hash takes a content hash's parameters: `options`, beside the input, as it takes a digest's or a password scheme's. */
const BODY_OPTIONS = '/body/options'

/**
 * A content hash's parameters for /api/hash, which hashes an input already in memory: `options`,
 * by the same names and bounds as /api/filehash's query parameters, each problem pointing at
 * /body/options/<name>. `size` is the input's length, so it is never needed up front (git's
 * header, btih's default piece length); one given must be that length.
 */
export function contentHashOptions(entry: ContentHash, given: Readonly<Record<string, string | number>> | undefined, inputBytes: number): Record<string, string | number> {
  const raw: Record<string, string | number> = { ...given }
  if (Object.hasOwn(entry.parameters, 'size')) {
    if (raw.size !== undefined && parseByteSize(raw.size) !== inputBytes) {
      throw invalidParameter('size', `size is the input's length here, ${inputBytes} bytes: leave it out`, BODY_OPTIONS)
    }
    raw.size = inputBytes
  }
  const resolved = resolveParameters(entry, raw, BODY_OPTIONS)
  return Object.fromEntries(Object.entries(resolved).filter((pair): pair is [string, string | number] => pair[1] !== undefined))
}
