/**
 * The CID `ipfs add` gives a file with kubo's defaults, without adding it (and without holding it):
 * a UnixFS file (the UnixFS spec, "unixfs.proto") in dag-pb blocks, cut by the fixed-size chunker
 * into 262,144-byte chunks and linked by the balanced layout, at most 174 links a node.
 *
 * - CIDv0 (the default): each chunk is a dag-pb leaf, `PBNode{Data: UnixFS{Type: File, Data: the
 *   chunk, filesize}}`; printed in base58btc, `Qm…`.
 * - CIDv1 (kubo's `--cid-version=1`, which implies `--raw-leaves`): each chunk is a raw block, its
 *   CID a raw-codec CIDv1; the nodes above are dag-pb CIDv1. Printed in base32, `bafy…` (a dag-pb
 *   root) or `bafk…` (a file of one chunk, whose root is its raw leaf).
 *
 * The layout is ipfs-unixfs-importer's `balanced` (the JavaScript peer of kubo's balanced builder):
 * the leaves are taken 174 at a time, each batch (the last may be shorter) becomes a parent, and
 * the parents are taken 174 at a time again until one node is left. A parent is
 * `PBNode{Links: [{Hash, Name: "", Tsize}], Data: UnixFS{Type: File, filesize, blocksizes}}`, where
 * a link's Tsize is the child's block and everything under it, and each blocksize is the file bytes
 * under that child; dag-pb's canonical form writes the Links (field 2) before the Data (field 1).
 * A file of one chunk is that chunk's leaf (`reduceSingleLeafToSelf`), and so is an empty file: one
 * empty chunk, `QmbFMke1…` in v0 and the raw CID of no bytes, `bafkreihdwd…`, in v1.
 *
 * Streaming: a batch becomes its parent as soon as it is full, so only the pending links of each
 * level of the tree are kept (fewer than 174 per level; six levels reach 40 PB), and in v0 a
 * copy of the chunk being filled, in case it is the last and shorter one. Leaves are hashed as their
 * bytes arrive: a full v0 leaf's block is the chunk between framing bytes that are the same for
 * every full chunk.
 */
import { createHash, type Hash } from 'node:crypto'
import * as dagPb from '@ipld/dag-pb'
import { UnixFS } from 'ipfs-unixfs'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { create as multihash } from 'multiformats/hashes/digest'
import { sha256 } from 'multiformats/hashes/sha2'
import type { ContentHasher } from './types.js'

/** kubo's default chunker, `size-262144`. */
export const IPFS_CHUNK_BYTES = 262_144
/** kubo's and ipfs-unixfs-importer's balanced layout: at most 174 links a node. */
export const IPFS_MAX_LINKS = 174

export type CidVersion = 0 | 1

/** A finished block as its parent links to it. */
interface DagNode {
  cid: CID
  /** The link's Tsize: this block's bytes and every block under it. */
  treeBytes: number
  /** The file bytes under it: the parent's blocksize for it. */
  fileBytes: number
}

const sha256Multihash = (bytes: Uint8Array) => multihash(sha256.code, createHash('sha256').update(bytes).digest())

/** A v0 leaf's block: ipfs-unixfs-importer's buffer importer with rawLeaves off and leafType 'file', as kubo without --raw-leaves. */
const fileLeafBlock = (data: Uint8Array): Uint8Array => dagPb.encode({ Data: new UnixFS({ type: 'file', data }).marshal(), Links: [] })

/**
 * The bytes around the data in the block of a full v0 leaf, the same for every full chunk: found by
 * encoding two full chunks that differ in every byte, so a full leaf is hashed as its bytes arrive,
 * without encoding a copy of it.
 */
const FULL_LEAF_FRAME = (() => {
  const zeros = fileLeafBlock(new Uint8Array(IPFS_CHUNK_BYTES))
  const ones = fileLeafBlock(new Uint8Array(IPFS_CHUNK_BYTES).fill(0xff))
  const start = zeros.findIndex((byte, index) => byte !== ones[index])
  const end = start + IPFS_CHUNK_BYTES
  if (start < 0 || zeros.length !== ones.length || zeros[end - 1] === ones[end - 1] || zeros[end] !== ones[end]) throw new Error('unexpected UnixFS leaf encoding')
  return { before: zeros.slice(0, start), after: zeros.slice(end), blockBytes: zeros.length }
})()

export interface IpfsCidOptions {
  /** Links per node; only the tests change it, to build deep trees from a few chunks. */
  maxLinks?: number
}

export class IpfsCid implements ContentHasher {
  readonly #version: CidVersion
  readonly #maxLinks: number
  /** Per level of the tree, from the leaves up: the nodes not yet given a parent. */
  readonly #levels: DagNode[][] = [[]]
  /** v0: the chunk being filled, for a last chunk that is not full, whose block's framing differs. */
  readonly #chunk: Buffer | undefined
  /** The leaf being hashed: the raw chunk in v1; in v0 the block of a full leaf, framing included. */
  #leaf: Hash
  #fill = 0
  #leaves = 0

  constructor(version: CidVersion, { maxLinks = IPFS_MAX_LINKS }: IpfsCidOptions = {}) {
    if (!Number.isSafeInteger(maxLinks) || maxLinks < 2) throw new RangeError('maxLinks must be at least 2')
    this.#version = version
    this.#maxLinks = maxLinks
    if (version === 0) this.#chunk = Buffer.allocUnsafe(IPFS_CHUNK_BYTES)
    this.#leaf = this.#newLeaf()
  }

  #newLeaf(): Hash {
    const hash = createHash('sha256')
    return this.#version === 0 ? hash.update(FULL_LEAF_FRAME.before) : hash
  }

  update(chunk: Uint8Array): void {
    let position = 0
    while (position < chunk.length) {
      const take = Math.min(IPFS_CHUNK_BYTES - this.#fill, chunk.length - position)
      const part = chunk.subarray(position, position + take)
      this.#chunk?.set(part, this.#fill)
      this.#leaf.update(part)
      this.#fill += take
      position += take
      if (this.#fill === IPFS_CHUNK_BYTES) this.#endLeaf()
    }
  }

  #endLeaf(): void {
    let leaf: DagNode
    if (this.#version === 1) {
      leaf = { cid: CID.create(1, raw.code, multihash(sha256.code, this.#leaf.digest())), treeBytes: this.#fill, fileBytes: this.#fill }
    } else if (this.#fill === IPFS_CHUNK_BYTES) {
      const digest = this.#leaf.update(FULL_LEAF_FRAME.after).digest()
      leaf = { cid: CID.create(0, dagPb.code, multihash(sha256.code, digest)), treeBytes: FULL_LEAF_FRAME.blockBytes, fileBytes: this.#fill }
    } else {
      const block = fileLeafBlock((this.#chunk as Buffer).subarray(0, this.#fill))
      leaf = { cid: CID.create(0, dagPb.code, sha256Multihash(block)), treeBytes: block.length, fileBytes: this.#fill }
    }
    this.#leaf = this.#newLeaf()
    this.#fill = 0
    this.#leaves += 1
    this.#add(0, leaf)
  }

  /** Adds a node to a level; a full batch becomes its parent on the level above at once. */
  #add(level: number, node: DagNode): void {
    const pending = this.#levels[level] as DagNode[]
    pending.push(node)
    if (pending.length < this.#maxLinks) return
    this.#levels[level] = []
    if (this.#levels.length === level + 1) this.#levels.push([])
    this.#add(level + 1, this.#parent(pending))
  }

  /** ipfs-unixfs-importer's file reducer: a UnixFS file node linking the children, in order. */
  #parent(children: readonly DagNode[]): DagNode {
    const data = new UnixFS({ type: 'file', blockSizes: children.map((child) => BigInt(child.fileBytes)) }).marshal()
    const links = children.map((child) => ({ Hash: child.cid, Name: '', Tsize: child.treeBytes }))
    const block = dagPb.encode(dagPb.prepare({ Data: data, Links: links }))
    const treeBytes = children.reduce((sum, child) => sum + child.treeBytes, block.length)
    const fileBytes = children.reduce((sum, child) => sum + child.fileBytes, 0)
    return { cid: CID.create(this.#version, dagPb.code, sha256Multihash(block)), treeBytes, fileBytes }
  }

  /** The root: the one node left after every level's last, shorter batch has become a parent. */
  #root(): DagNode {
    for (let level = 0; ; level++) {
      const pending = this.#levels[level] as DagNode[]
      const topmost = level === this.#levels.length - 1
      // A level with a single node and nothing above it is the root: a lone leaf (a file of one chunk) included.
      if (topmost && pending.length === 1) return pending[0] as DagNode
      if (pending.length > 0) {
        this.#levels[level] = []
        if (topmost) this.#levels.push([])
        this.#add(level + 1, this.#parent(pending))
      }
    }
  }

  finish(): string {
    // The chunker's last chunk: the tail, or the one empty chunk of an empty file.
    if (this.#fill > 0 || this.#leaves === 0) this.#endLeaf()
    const root = this.#root().cid
    // kubo prints CIDv0 in base58btc and CIDv1 in base32, which are also multiformats' defaults.
    return root.toString()
  }
}
