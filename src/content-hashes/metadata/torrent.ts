/**
 * A `.torrent` file (bencoded; BEP 3 for v1, BEP 52 for v2, both in a hybrid), read for one file:
 *
 * - `info-hash`: the SHA-1 of the exact bytes of the `info` dictionary as the file holds them
 *   (BEP 3), which is what a client and a magnet link's `urn:btih:` show. It is the registry's
 *   `btih` of the file only when the info dictionary is the one `btih` builds: a single file,
 *   exactly `length`, `name`, `piece length` and `pieces`, encoded canonically. A torrent with
 *   more (`private`, `source`, a hybrid's `file tree`) names its content by its pieces instead;
 * - `pieces` (v1): the SHA-1 of every piece, checked one by one as a client's recheck does (the
 *   plan is in the field's `pieces`);
 * - `pieces root` (v2): the file's SHA-256 Merkle root over 16 KiB blocks, the registry's
 *   `bt2-root`; a file of length zero has none (BEP 52), which `bt2-root` gives as '';
 * - `info-hash v2`: the SHA-256 of the info dictionary (BEP 52), shown but not recomputed, since
 *   it covers the file tree and the piece length as well: the pieces root checks the content.
 *
 * A torrent of several files cannot be checked against one upload, unless it holds exactly one.
 * BEP 47 pad files count as files here: a v1 torrent with one would not hash the file's bytes alone.
 */
import { createHash } from 'node:crypto'
import { bdecode, BencodeDictionary, BencodeError, bencode, type BencodeValue } from '../bencode.js'
import { findContentHash, resolveParameters } from '../index.js'
import type { RawParameters } from '../types.js'
import { Problem } from '../../problem.js'
import { invalidMetadata } from './problems.js'
import type { ExpectedField, MetadataShape } from './types.js'

const SHA1_BYTES = 20
const SHA256_BYTES = 32
const utf8 = new TextDecoder('utf-8', { fatal: true })

const isDictionary = (value: BencodeValue | undefined): value is BencodeDictionary => value instanceof BencodeDictionary
const isBytes = (value: BencodeValue | undefined): value is Uint8Array => value instanceof Uint8Array

/** A non-negative integer that fits a JS number, or a 422 naming the key. */
function size(field: string, value: BencodeValue | undefined): number {
  if (typeof value !== 'bigint' || value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw invalidMetadata(field, 'is not a size in bytes')
  return Number(value)
}

/** A name as text; undefined when absent or not UTF-8 (old torrents wrote names in a local code page). */
function text(value: BencodeValue | undefined): string | undefined {
  if (!isBytes(value)) return undefined
  try {
    return utf8.decode(value)
  } catch {
    return undefined
  }
}

/**
 * The btih parameters for a name, piece length and size, or the reason they are none the registry
 * takes (a name with a `/`, a piece length out of its bounds): then the field cannot be checked.
 */
export function btihParameters(parameters: RawParameters): { parameters: RawParameters } | { cannotCheck: string } {
  try {
    resolveParameters(findContentHash('btih') as NonNullable<ReturnType<typeof findContentHash>>, parameters)
    return { parameters }
  } catch (error) {
    if (error instanceof Problem) return { cannotCheck: `btih cannot be computed for these values: ${error.detail}` }
    throw error
  }
}

interface V2File {
  length: number
  piecesRoot: Uint8Array | undefined
}

/**
 * The files of a BEP 52 file tree: a dictionary of path components, where a file is the component
 * whose value holds the key '' (empty), mapping to `{length, pieces root}`. Walked with a stack (the
 * decoder bounds the depth and the count); stops at the second file, which is all the answer needs.
 */
function v2Files(tree: BencodeDictionary): V2File[] {
  const files: V2File[] = []
  const pending: BencodeDictionary[] = [tree]
  while (pending.length > 0 && files.length < 2) {
    const directory = pending.pop() as BencodeDictionary
    for (const [key, value] of directory.entries) {
      if (!isDictionary(value)) throw invalidMetadata('file tree', 'holds a path component that is not a dictionary')
      const leaf = key === '' ? value : undefined
      if (leaf !== undefined) {
        const root = leaf.get('pieces root')
        if (root !== undefined && (!isBytes(root) || root.length !== SHA256_BYTES)) throw invalidMetadata('pieces root', 'is not 32 bytes')
        files.push({ length: size('length', leaf.get('length')), piecesRoot: root as Uint8Array | undefined })
      } else {
        pending.push(value)
      }
    }
  }
  return files
}

function readTorrent(bytes: Uint8Array) {
  let root: BencodeValue
  try {
    root = bdecode(bytes)
  } catch (error) {
    if (error instanceof BencodeError) throw invalidMetadata('torrent', error.message)
    throw error
  }
  const info = isDictionary(root) ? root.get('info') : undefined
  if (!isDictionary(info)) throw invalidMetadata('info', 'is missing: a .torrent is a dictionary with an info dictionary')
  const infoBytes = bytes.subarray(info.start, info.end)
  const name = text(info.get('name.utf-8')) ?? text(info.get('name'))
  const pieceLength = size('piece length', info.get('piece length'))
  const v2 = info.get('meta version') === 2n
  const pieces = info.get('pieces')
  const v1 = pieces !== undefined
  if (!v1 && !v2) throw invalidMetadata('info', 'has neither pieces (v1) nor meta version 2 (v2)')

  const fields: ExpectedField[] = []
  let fileLength: number | undefined
  if (v1) {
    if (!isBytes(pieces) || pieces.length % SHA1_BYTES !== 0) throw invalidMetadata('pieces', 'is not a string of 20-byte SHA-1s')
    const files = info.get('files')
    const single = files === undefined
    let length: number | undefined
    if (single) length = size('length', info.get('length'))
    else if (Array.isArray(files) && files.length === 1 && isDictionary(files[0])) length = size('files.length', files[0].get('length'))
    else if (!Array.isArray(files)) throw invalidMetadata('files', 'is not a list')
    const infoHash = createHash('sha1').update(infoBytes).digest('hex')
    if (length === undefined) {
      fields.push({ field: 'info-hash', contentHash: 'btih', parameters: {}, expected: infoHash, cannotCheck: `a torrent of ${(files as BencodeValue[]).length} files: one upload is one file` })
    } else {
      fileLength = length
      const count = pieceLength === 0 ? -1 : Math.ceil(length / pieceLength)
      if (count !== pieces.length / SHA1_BYTES) throw invalidMetadata('pieces', `holds ${pieces.length / SHA1_BYTES} piece hashes, and ${length} bytes in pieces of ${pieceLength} make ${Math.max(count, 0)}`)
      fields.push({ field: 'info-hash', contentHash: 'btih', expected: infoHash, ...infoHashCheck(info, infoBytes, single, name, pieceLength, length) })
      fields.push({
        field: 'pieces', contentHash: null, parameters: {}, expected: `${count} SHA-1 piece hashes, pieces of ${pieceLength} bytes`,
        pieces: { algorithm: 'sha1', pieceLength, length, hashes: pieces },
      })
    }
  }
  if (v2) {
    const tree = info.get('file tree')
    if (!isDictionary(tree)) throw invalidMetadata('file tree', 'is missing: a v2 torrent lists its files in a file tree')
    const files = v2Files(tree)
    const infoHashV2 = createHash('sha256').update(infoBytes).digest('hex')
    fields.push({ field: 'info-hash v2', contentHash: null, parameters: {}, expected: infoHashV2, cannotCheck: 'a v2 info-hash covers the file tree, the name and the piece length; the content is checked through its pieces root' })
    const [file] = files
    if (files.length !== 1 || file === undefined) {
      fields.push({ field: 'pieces root', contentHash: 'bt2-root', parameters: {}, expected: '', cannotCheck: `a torrent of ${files.length === 0 ? 'no file' : 'several files'}: one upload is one file` })
    } else {
      if (fileLength !== undefined && fileLength !== file.length) throw invalidMetadata('file tree', 'gives the file another length than the v1 part of this hybrid torrent')
      fileLength = file.length
      if (file.piecesRoot === undefined && file.length > 0) throw invalidMetadata('pieces root', 'is missing for a file that is not empty (BEP 52)')
      fields.push({ field: 'pieces root', contentHash: 'bt2-root', parameters: {}, expected: file.piecesRoot ? Buffer.from(file.piecesRoot).toString('hex') : '' })
    }
  }
  return { shape: 'torrent' as const, ...(fileLength !== undefined ? { size: fileLength } : {}), ...(name !== undefined ? { name } : {}), fields }
}

/** Whether the registry's btih rebuilds these exact info bytes, and its parameters if so. */
function infoHashCheck(info: BencodeDictionary, infoBytes: Uint8Array, single: boolean, name: string | undefined, pieceLength: number, length: number): { parameters: RawParameters, cannotCheck?: string } {
  const keys = [...info.entries.keys()].sort().join(',')
  if (!single || keys !== 'length,name,piece length,pieces' || name === undefined) {
    return { parameters: {}, cannotCheck: 'the info dictionary holds more than a single file\'s length, name, piece length and pieces: the content is checked through its pieces' }
  }
  const rebuilt = bencode({ length, name, 'piece length': pieceLength, pieces: info.get('pieces') as Uint8Array })
  if (Buffer.compare(Buffer.from(rebuilt), Buffer.from(infoBytes.buffer, infoBytes.byteOffset, infoBytes.byteLength)) !== 0) {
    return { parameters: {}, cannotCheck: 'the info dictionary is not in canonical bencoding (BEP 3: keys sorted, no leading zeros): the content is checked through its pieces' }
  }
  const btih = btihParameters({ name, pieceLength, size: length })
  return 'cannotCheck' in btih ? { parameters: {}, cannotCheck: btih.cannotCheck } : btih
}

/** `d` and, early on, the `4:info` key every torrent has: a bencoded dictionary, not text. */
const INFO_KEY = Buffer.from('4:info')

export const torrentMetadata: MetadataShape = {
  name: 'torrent',
  accepts: 'a .torrent file (v1, v2 or hybrid; one file)',
  matches: ({ bytes }) => bytes[0] === 0x64 && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(INFO_KEY),
  read: ({ bytes }) => readTorrent(bytes),
}
