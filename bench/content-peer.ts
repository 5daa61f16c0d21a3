/**
 * A content hash's JavaScript peer over a file, for bench/content-hashes.ts: the library the tests
 * check hashd against, run as its own process on the file (read in 1 MiB chunks, as a tool reads
 * it), printing the result so the bench can see both sides agree.
 *
 *   node dist/bench/content-peer.js crc64nvme|crc32c|ipfs FILE
 */
import { open } from 'node:fs/promises'
import { Crc32c } from '@aws-crypto/crc32c'
import { Crc64Nvme } from '@aws-sdk/crc64-nvme'
import { importer } from 'ipfs-unixfs-importer'
import type { CID } from 'multiformats/cid'

async function* chunks(path: string): AsyncGenerator<Uint8Array> {
  const file = await open(path)
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(1 << 20)
      const { bytesRead } = await file.read(buffer, 0, buffer.length)
      if (bytesRead === 0) return
      yield buffer.subarray(0, bytesRead)
    }
  } finally {
    await file.close()
  }
}

/** A blockstore that keeps nothing: the importer needs somewhere to put blocks, the CID is all we want. */
const discard = { put: async (cid: CID) => cid }

const [peer, path] = process.argv.slice(2)
if (path === undefined) {
  console.error('usage: node dist/bench/content-peer.js crc64nvme|crc32c|ipfs FILE')
  process.exit(2)
}
if (peer === 'crc64nvme') {
  const checksum = new Crc64Nvme()
  for await (const chunk of chunks(path)) checksum.update(chunk)
  console.log(Buffer.from(await checksum.digest()).toString('base64'))
} else if (peer === 'crc32c') {
  const checksum = new Crc32c()
  for await (const chunk of chunks(path)) checksum.update(chunk)
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(checksum.digest() >>> 0)
  console.log(bytes.toString('base64'))
} else if (peer === 'ipfs') {
  // kubo's `ipfs add` defaults (CIDv0, 256 KiB chunks, 174 links a node), as the tests use it.
  let root = ''
  for await (const entry of importer([{ content: chunks(path) }], discard as never, { profile: 'unixfs-v0-2015' })) root = entry.cid.toString()
  console.log(root)
} else {
  console.error(`content-peer: unknown peer ${String(peer)}`)
  process.exit(2)
}
