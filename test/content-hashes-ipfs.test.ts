/**
 * `ipfs-cid` against ipfs-unixfs-importer (the library `ipfs add` is built on in JavaScript) with
 * kubo's defaults: CIDv0 with dag-pb leaves, or CIDv1 with raw leaves; 256 KiB chunks; the balanced
 * layout of 174 links. The sizes straddle the chunk and the 174-link node; deeper trees are built
 * with a fan-out of 2 and 3 on both sides, since a third level at 174 links takes 7.9 GB.
 *
 * `magnet` against `rhash --magnet --btih --tth --ed2k --aich` on real files whose names need
 * percent-encoding, across the TTH, AICH, eMule and BitTorrent piece boundaries.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { MemoryBlockstore } from 'blockstore-core/memory'
import { importer, type ImporterOptions } from 'ipfs-unixfs-importer'
import { balanced } from 'ipfs-unixfs-importer/layout'
import { createContentHasher, findContentHash, type RawParameters } from '../src/content-hashes/index.js'
import { IPFS_CHUNK_BYTES, IPFS_MAX_LINKS, IpfsCid, type CidVersion } from '../src/content-hashes/ipfs.js'
import { magnetEncode } from '../src/content-hashes/magnet.js'
import { Problem } from '../src/problem.js'
import { Random } from './helpers/random.js'
import { run, skipUnless } from './helpers/tools.js'

const KiB = 1024
const MiB = 1024 * KiB
const CHUNK = IPFS_CHUNK_BYTES
const ED2K_CHUNK = 9_728_000
const AICH_BLOCK = 184_320

/** Random bytes, the same every run; every test cuts what it needs from the front. */
let bytes: Buffer
let scratch: string

before(() => {
  const random = new Random(46)
  bytes = Buffer.alloc(IPFS_MAX_LINKS * CHUNK + 4)
  for (let index = 0; index < bytes.length; index += 4) bytes.writeUInt32LE(random.next(), index)
  scratch = mkdtempSync(join(tmpdir(), 'hashd-ipfs-'))
})

after(() => rmSync(scratch, { recursive: true, force: true }))

/** Feeds the bytes in uneven chunks, as an upload arrives. */
function feed(hasher: { update(chunk: Uint8Array): void }, data: Uint8Array, step = 65_521): void {
  for (let position = 0; position < data.length; position += step) hasher.update(data.subarray(position, position + step))
}

async function registryCid(data: Uint8Array, params: RawParameters = {}): Promise<string> {
  const hasher = await createContentHasher(findContentHash('ipfs-cid')!, params)
  feed(hasher, data)
  return hasher.finish()
}

function cidWithFanOut(data: Uint8Array, version: CidVersion, maxLinks: number): string {
  const hasher = new IpfsCid(version, { maxLinks })
  feed(hasher, data)
  return hasher.finish()
}

/** kubo's `ipfs add` (and `--cid-version=1`, which implies `--raw-leaves`), as ipfs-unixfs-importer builds it. */
async function importerCid(data: Uint8Array, version: CidVersion, options: ImporterOptions = {}): Promise<string> {
  let root: string | undefined
  const kubo: ImporterOptions = { cidVersion: version, rawLeaves: version === 1, ...options }
  for await (const entry of importer([{ content: data }], new MemoryBlockstore(), kubo)) root = entry.cid.toString()
  assert.ok(root !== undefined)
  return root
}

describe('ipfs-cid: published CIDs', () => {
  it('the empty file is kubo\'s QmbFMke1… (v0) and the raw CID of no bytes (v1); "hello world\\n" is QmT78zSu… and bafkreifj…', async () => {
    assert.equal(await registryCid(new Uint8Array(0)), 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH')
    assert.equal(await registryCid(new Uint8Array(0), { cidVersion: '1' }), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
    const hello = Buffer.from('hello world\n')
    assert.equal(await registryCid(hello), 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o')
    assert.equal(await registryCid(hello, { cidVersion: 1 }), 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4')
  })
})

describe('ipfs-cid: ipfs-unixfs-importer with kubo\'s defaults', () => {
  const SIZES = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 7, IPFS_MAX_LINKS * CHUNK, IPFS_MAX_LINKS * CHUNK + 1, IPFS_MAX_LINKS * CHUNK + 4]

  it('CIDv0 (dag-pb leaves, base58btc) on every size around the chunk and the 174-link node', async () => {
    for (const size of SIZES) {
      const data = bytes.subarray(0, size)
      const expected = await importerCid(data, 0)
      assert.match(expected, /^Qm/)
      assert.equal(await registryCid(data), expected, `${size} bytes`)
    }
  })

  it('CIDv1 (raw leaves, base32): bafk… for one chunk, bafy… for more', async () => {
    for (const size of SIZES) {
      const data = bytes.subarray(0, size)
      const expected = await importerCid(data, 1)
      assert.match(expected, size <= CHUNK ? /^bafk/ : /^bafy/, `${size} bytes`)
      assert.equal(await registryCid(data, { cidVersion: '1' }), expected, `${size} bytes`)
    }
  })

  it('the importer\'s own name for kubo\'s defaults, the unixfs-v0-2015 profile, gives the same CIDv0', async () => {
    for (const size of [CHUNK + 1, IPFS_MAX_LINKS * CHUNK + 1]) {
      const data = bytes.subarray(0, size)
      assert.equal(await registryCid(data), await importerCid(data, 0, { profile: 'unixfs-v0-2015' }), `${size} bytes`)
    }
  })

  it('deeper trees: with 2 and 3 links a node, the balanced layouts agree level by level, up to five levels', async () => {
    for (const maxLinks of [2, 3]) {
      const chunkCounts = maxLinks === 2 ? [2, 3, 4, 5, 8, 9, 17] : [3, 4, 9, 10, 12, 27, 28]
      for (const chunks of chunkCounts) {
        for (const size of [chunks * CHUNK, (chunks - 1) * CHUNK + 1]) {
          const data = bytes.subarray(0, size)
          for (const version of [0, 1] as const) {
            const expected = await importerCid(data, version, { layout: balanced({ maxChildrenPerNode: maxLinks }) })
            assert.equal(cidWithFanOut(data, version, maxLinks), expected, `${size} bytes, ${maxLinks} links, v${version}`)
          }
        }
      }
    }
  })

  it('the same CID however the bytes are cut, from one byte at a time to a chunk and a half', async () => {
    const data = bytes.subarray(0, 3 * CHUNK + 5)
    const random = new Random(174)
    for (const version of [0, 1] as const) {
      const whole = new IpfsCid(version)
      whole.update(data)
      const pieces = new IpfsCid(version)
      for (let position = 0; position < data.length;) {
        const step = random.range(0, random.range(0, 1) === 0 ? 3 : CHUNK + CHUNK / 2)
        pieces.update(data.subarray(position, position + step))
        position += step
      }
      assert.equal(pieces.finish(), whole.finish(), `v${version}`)
    }
  })
})

describe('ipfs-cid: bounded memory', () => {
  it('256 MiB in fresh 1 MiB pieces: after a collection, what the hasher keeps does not grow with the file', async () => {
    // A collection on demand, so that what is counted is what the hasher still holds, not garbage.
    setFlagsFromString('--expose-gc')
    const collect = runInNewContext('gc') as () => void
    const held = () => {
      collect()
      const usage = process.memoryUsage()
      return usage.arrayBuffers + usage.heapUsed
    }
    for (const version of [0, 1] as const) {
      const hasher = new IpfsCid(version)
      // A copy each time, as an upload's chunks are: a hasher that kept them (or views of them) would
      // hold 192 MiB more after 256 MiB than after the first 64. Measured between those two points,
      // so that what the first pieces leave (pools, the heap's own growth, a loaded machine's
      // collections running late: tens of MiB) falls out.
      const feed = (mebibytes: number) => { for (let fed = 0; fed < mebibytes * MiB; fed += MiB) hasher.update(Buffer.from(bytes.subarray(0, MiB))) }
      feed(64)
      const start = held()
      feed(192)
      const grew = held() - start
      assert.match(hasher.finish(), version === 0 ? /^Qm/ : /^bafy/)
      assert.ok(grew < 64 * MiB, `v${version}: ${(grew / MiB).toFixed(1)} MiB more held after 256 MiB than after 64`)
    }
  })
})

describe('ipfs-cid: parameters', () => {
  it('cidVersion is 0 by default, 0 or 1 as text or a number; anything else is a 422 naming cidVersion', async () => {
    const data = bytes.subarray(0, CHUNK + 1)
    assert.equal(await registryCid(data, { cidVersion: 0 }), await registryCid(data))
    assert.equal(await registryCid(data, { cidVersion: 1 }), await registryCid(data, { cidVersion: '1' }))
    for (const cidVersion of ['2', 'v1', '01', -1, 1.5]) {
      await assert.rejects(registryCid(data, { cidVersion }), (error: unknown) => {
        assert.ok(error instanceof Problem, String(error))
        assert.equal(error.status, 422)
        assert.equal((error.extensions.errors as { pointer: string }[])[0]?.pointer, '/query/cidVersion')
        assert.match(error.detail, /cidVersion must be one of 0, 1/)
        return true
      })
    }
  })
})

describe('magnet: the name\'s percent-encoding', () => {
  it('keeps RFC 3986\'s unreserved characters and writes every other UTF-8 byte as %xx in lower case', () => {
    assert.equal(magnetEncode('AZaz09-._~'), 'AZaz09-._~')
    assert.equal(magnetEncode('hello world.txt'), 'hello%20world.txt')
    assert.equal(magnetEncode('a&b=c?d#é%+x'), 'a%26b%3dc%3fd%23%c3%a9%25%2bx')
    assert.equal(magnetEncode('\t\x7f:@[]'), '%09%7f%3a%40%5b%5d')
  })
})

describe('magnet: rhash --magnet --btih --tth --ed2k --aich', { skip: skipUnless('rhash') }, () => {
  const NAMES = ['plain.bin', 'hello world.txt', 'a&b=c?d#é%+ ~x.bin', 'ünï cødé (1) [2] {3}.txt', "q'!$*,;:@`^|<>\"x"]
  const SIZES = [0, 1, 1025, AICH_BLOCK + 1, 16 * MiB, ED2K_CHUNK, ED2K_CHUNK + 1]
  let source: Buffer

  before(() => {
    // 16 MiB and more: the start of `bytes`, repeated (the hashes see no difference).
    source = Buffer.concat([bytes, bytes.subarray(0, ED2K_CHUNK + 1 - bytes.length)])
  })

  async function magnetOf(name: string, data: Uint8Array, params: RawParameters = {}): Promise<string> {
    const hasher = await createContentHasher(findContentHash('magnet')!, { name, ...params })
    feed(hasher, data)
    return hasher.finish()
  }

  it('agrees byte for byte on every size, RHash\'s default piece length and names that need percent-encoding', async () => {
    for (const [index, size] of SIZES.entries()) {
      const name = NAMES[index % NAMES.length] as string
      const path = join(scratch, name)
      const data = source.subarray(0, size)
      writeFileSync(path, data)
      const expected = run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', path])
      assert.equal(await magnetOf(name, readFileSync(path), { size }), expected, `${size} bytes as ${name}`)
      rmSync(path)
    }
  })

  it('every name on one small file, and a piece length given as rhash --bt-piece-length', async () => {
    const data = source.subarray(0, 3 * 16 * KiB + 1)
    for (const name of NAMES) {
      const path = join(scratch, name)
      writeFileSync(path, data)
      assert.equal(await magnetOf(name, data, { size: data.length }), run('rhash', ['--magnet', '--btih', '--tth', '--ed2k', '--aich', path]), name)
      assert.equal(await magnetOf(name, data, { pieceLength: 32 * KiB }),
        run('rhash', ['--bt-piece-length=32768', '--magnet', '--btih', '--tth', '--ed2k', '--aich', path]), `${name}, 32 KiB pieces`)
      rmSync(path)
    }
  })
})

describe('magnet: parameters, as btih\'s', () => {
  async function problemOf(params: RawParameters, data = new Uint8Array(3)): Promise<Problem> {
    try {
      const hasher = await createContentHasher(findContentHash('magnet')!, params)
      hasher.update(data)
      hasher.finish()
    } catch (error) {
      assert.ok(error instanceof Problem, String(error))
      return error
    }
    assert.fail(`magnet accepted ${JSON.stringify(params)}`)
  }
  const field = (problem: Problem) => (problem.extensions.errors as { pointer: string }[])[0]?.pointer

  it('needs a base name, and a piece length or the size up front; a stream of another size is a 422 naming size', async () => {
    assert.equal(field(await problemOf({ size: 3 })), '/query/name')
    assert.equal(field(await problemOf({ name: 'dir/file', size: 3 })), '/query/name')
    assert.equal(field(await problemOf({ name: 'file' })), '/query/size')
    assert.equal(field(await problemOf({ name: 'file', pieceLength: 8 * KiB })), '/query/pieceLength')
    assert.equal(field(await problemOf({ name: 'file', size: 4 })), '/query/size')
  })
})
