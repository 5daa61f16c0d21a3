/**
 * The upload pipeline's hashing stage on its own (src/upload): the threaded fan-out against the
 * one-thread path and against RHash and Python's hashlib reading the same file, on random
 * chunkings (with a small ring, so chunks wrap around it and wait for the slowest thread), on
 * empty and one-byte inputs; that an abort hands every thread back at once; and that rings, one
 * per thread for its life, are reused by upload after upload (aborted ones too) without mixing data.
 * The random pieces sit at random offsets, so most are moved into step with the ring's words
 * (threads.ts #put) and some wrap it. Through HTTP: a large raw upload with several algorithms (the
 * threaded path) against the tools, files at the limit, a client that goes away mid-upload leaving
 * the threads free for the next one, and forms and raw bodies whose chunks fall out of step with
 * the ring, against coreutils.
 */
import assert from 'node:assert/strict'
import { randomBytes, randomInt } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { digestNamed } from '../src/algorithms/registry.js'
import type { DigestAlgorithm } from '../src/algorithms/types.js'
import { inlineSink, type DigestSink } from '../src/upload/sink.js'
import { HashThreads } from '../src/upload/threads.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless } from './helpers/tools.js'

const ALGORITHMS = ['sha256', 'md5', 'sha1', 'sha512', 'tiger', 'crc32', 'blake2b-512', 'whirlpool']
/** RHash's names for the algorithms above, printing lowercase hex. */
const RHASH = { sha256: 'sha-256', md5: 'md5', sha1: 'sha1', sha512: 'sha-512', tiger: 'tiger', crc32: 'crc32', 'blake2b-512': 'blake2b', whirlpool: 'whirlpool' } as Record<string, string>

let directory: string
before(() => { directory = mkdtempSync(join(tmpdir(), 'hashd-parallel-')) })
after(() => { rmSync(directory, { recursive: true, force: true }) })

function rhashFile(data: Uint8Array, names: string[]): Record<string, string> {
  const file = join(directory, `f-${randomBytes(4).toString('hex')}`)
  writeFileSync(file, data)
  const format = names.map((name) => `%{${RHASH[name] ?? name}}`).join(' ')
  const fields = run('rhash', ['-p', `${format}\\n`, file]).trim().split(' ')
  rmSync(file)
  return Object.fromEntries(names.map((name, index) => [name, (fields[index] ?? '').toLowerCase()]))
}

/** Feeds `data` to a sink in random pieces (some empty), honouring its backpressure. */
async function feed(sink: DigestSink, data: Uint8Array, maxPiece: number): Promise<Record<string, string>> {
  let offset = 0
  while (offset < data.length) {
    const piece = randomInt(0, maxPiece + 1)
    const wait = sink.write(data.subarray(offset, offset + piece))
    offset += piece
    if (wait) await wait
  }
  const digests = await sink.finish()
  return Object.fromEntries([...digests].map(([name, digest]) => [name, Buffer.from(digest).toString('hex')]))
}

const algorithms = (): DigestAlgorithm[] => ALGORITHMS.map((name) => digestNamed(name))

describe('upload fan-out: threads against one thread and against RHash', { skip: skipUnless('rhash') }, () => {
  let threads: HashThreads
  // A 64 KiB ring: most inputs here wrap it many times and wait on the slowest thread.
  before(() => { threads = new HashThreads({ threads: 3, ringBytes: 64 * 1024, idleMs: 1_000 }) })
  after(async () => { await threads.close() })

  for (const [label, size, maxPiece] of [
    ['empty', 0, 1], ['one byte', 1, 1], ['a block less one', 63, 7], ['1 MiB in pieces up to 3 KiB', 1024 * 1024, 3000],
    ['3 MiB in pieces up to 100 KiB (larger than half the ring)', 3 * 1024 * 1024, 100_000], ['random size in random pieces', randomInt(1, 2_000_000), randomInt(1, 200_000)],
  ] as Array<[string, number, number]>) {
    it(`${label}: every algorithm matches`, async () => {
      const data = randomBytes(size)
      const sink = threads.sink(algorithms())
      assert.ok(sink, 'three idle threads give a threaded sink')
      const threaded = await feed(sink, data, maxPiece)
      const inline = await feed(await inlineSink(algorithms()), data, maxPiece)
      const expected = rhashFile(data, ALGORITHMS)
      assert.deepEqual(threaded, expected, 'threaded path vs RHash')
      assert.deepEqual(inline, expected, 'one-thread path vs RHash')
    })
  }

  it('an abort hands every thread back at once, and the next upload is right', async () => {
    const sink = threads.sink(algorithms())
    assert.ok(sink)
    assert.equal(threads.available, 0, 'all three threads are lent out')
    // Fill the ring so writes wait, then drop the upload.
    const pending = sink.write(randomBytes(512 * 1024))
    sink.abort()
    assert.equal(threads.available, 3, 'the threads are free right after the abort')
    await pending?.catch(() => {})
    const data = randomBytes(300_000)
    const next = threads.sink(algorithms())
    assert.ok(next)
    assert.deepEqual(await feed(next, data, 50_000), rhashFile(data, ALGORITHMS))
  })

  it('uploads one after another reuse the threads\' rings, and two at once on two-thread splits each stay right', async () => {
    // Four threads, two algorithms: each upload leads with its own first thread's ring. An aborted
    // upload's thread reads stale ranges from a ring the next upload is already filling.
    const two = [digestNamed('sha256'), digestNamed('md5')]
    const four = new HashThreads({ threads: 4, ringBytes: 64 * 1024, idleMs: 1_000 })
    try {
      for (let round = 0; round < 6; round++) {
        const dropped = four.sink(two)
        assert.ok(dropped)
        const waiting = dropped.write(randomBytes(200_000))
        dropped.abort()
        await waiting?.catch(() => {})
        const [a, b] = [four.sink(two), four.sink(two)]
        assert.ok(a && b, 'four threads give two two-thread sinks')
        const [dataA, dataB] = [randomBytes(randomInt(1, 400_000)), randomBytes(randomInt(1, 400_000))]
        const [gotA, gotB] = await Promise.all([feed(a, dataA, 30_000), feed(b, dataB, 30_000)])
        assert.deepEqual(gotA, rhashFile(dataA, ['sha256', 'md5']), `round ${round}, first upload`)
        assert.deepEqual(gotB, rhashFile(dataB, ['sha256', 'md5']), `round ${round}, second upload`)
      }
    } finally {
      await four.close()
    }
  })

  it('two uploads at once with threads for only one: the second gets no threaded sink', () => {
    const first = threads.sink(algorithms())
    assert.ok(first)
    assert.equal(threads.sink(algorithms()), null, 'no threads free: the caller hashes inline')
    first.abort()
  })
})

describe('upload fan-out over HTTP', { skip: skipUnless('rhash', 'python3') }, () => {
  const LIMIT = 3 * 1024 * 1024 + 17
  let server: TestServer
  before(async () => { server = await startServer({ MAX_FILE_SIZE: String(LIMIT) }) })
  after(async () => { await server.close() })

  const put = async (body: Uint8Array, query: string) => {
    const response = await fetch(`${server.url}/api/filehash?${query}`, { method: 'PUT', body })
    return { status: response.status, body: await response.json() as { size: number, hashes: Record<string, string> } }
  }

  it('a file at the limit, four algorithms (threaded): RHash and hashlib agree', async () => {
    const data = randomBytes(LIMIT)
    const { status, body } = await put(data, 'algorithms=sha256,md5,sha1,sha512')
    assert.equal(status, 200)
    assert.equal(body.size, LIMIT)
    const file = join(directory, 'limit.bin')
    writeFileSync(file, data)
    assert.deepEqual(body.hashes, rhashFile(data, ['sha256', 'md5', 'sha1', 'sha512']))
    const py = python('import sys, hashlib; d = open(sys.argv[1], "rb").read(); print(hashlib.sha512(d).hexdigest())', [file])
    assert.equal(body.hashes.sha512, py)
  })

  it('one byte past the limit is 413', async () => {
    const response = await fetch(`${server.url}/api/filehash?algorithms=sha256,md5`, { method: 'PUT', body: randomBytes(LIMIT + 1) })
    assert.equal(response.status, 413)
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
  })

  it('a client that leaves mid-upload frees the threads: the next threaded upload is right', async () => {
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${server.url}/api/filehash?algorithms=sha256,md5,sha1,sha512`, {
        method: 'PUT', headers: { 'content-length': String(LIMIT) },
      })
      request.on('error', () => resolve())
      request.write(randomBytes(2 * 1024 * 1024), () => setTimeout(() => { request.destroy(); resolve() }, 100))
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const data = randomBytes(2 * 1024 * 1024 + 5)
    const { status, body } = await put(data, 'algorithms=sha256,md5,sha1,sha512')
    assert.equal(status, 200)
    assert.deepEqual(body.hashes, rhashFile(data, ['sha256', 'md5', 'sha1', 'sha512']))
  })
})

describe('threaded uploads whose chunks are out of step with the ring, over HTTP', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const sums = (data: Uint8Array): Record<string, string> => {
    const file = join(directory, `sum-${randomBytes(4).toString('hex')}`)
    writeFileSync(file, data)
    try {
      return Object.fromEntries(['sha256', 'md5', 'sha1', 'sha512'].map((name) => [name, run(`${name}sum`, [file]).split(' ')[0] as string]))
    } finally {
      rmSync(file)
    }
  }

  it('a form\'s file (it starts wherever its part headers end) and a raw body of an odd length, four algorithms each, against coreutils', async () => {
    for (const size of [2 * 1024 * 1024 + 4099, 3 * 1024 * 1024 + 1]) {
      const data = randomBytes(size)
      const expected = sums(data)
      const raw = await fetch(`${server.url}/api/filehash?algorithms=sha256,md5,sha1,sha512`, { method: 'PUT', body: data })
      assert.equal(raw.status, 200)
      const rawBody = await raw.json() as { size: number, hashes: Record<string, string> }
      assert.deepEqual({ size: rawBody.size, hashes: rawBody.hashes }, { size, hashes: expected }, `raw, ${size} bytes`)
      const form = new FormData()
      form.append('algorithms', 'sha256,md5,sha1,sha512')
      // A name of odd length moves the file's first byte off a word boundary.
      form.append('file', new Blob([data]), `out-of-step-${size}.bin`)
      const multipart = await fetch(`${server.url}/api/filehash`, { method: 'POST', body: form })
      assert.equal(multipart.status, 200)
      const body = await multipart.json() as { size: number, hashes: Record<string, string> }
      assert.deepEqual({ size: body.size, hashes: body.hashes }, { size, hashes: expected }, `multipart, ${size} bytes`)
    }
  })
})
