/**
 * /api/filehash over real multipart uploads: digests of real files against coreutils, b3sum,
 * RHash, xxhsum, xz, OpenSSL and Python; the form's rules (fields first, one file, at most 16
 * algorithms, no password hashes); MAX_FILE_SIZE with and without a declared length; and that an
 * upload never reaches the disk.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { closeSync, mkdtempSync, openAsBlob, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { whichever } from './helpers/events.js'
import { startServer, toTestResponse, type TestResponse, type TestServer } from './helpers/server.js'
import { hasTool, python, run, skipUnless, type ToolName } from './helpers/tools.js'

const MiB = 1024 * 1024
/** eD2k's chunk: files of exactly this size are where the red and blue eD2k hashes differ. */
const ED2K_CHUNK = 9_728_000

// Independent tools reading the file from disk, each printing lowercase hex.
const firstToken = (text: string) => text.split(/\s+/)[0] as string
const coreutils = (command: string) => (file: string) => firstToken(run(command, [file]))
const rhash = (name: string) => (file: string) => run('rhash', ['-p', `%{${name}}\\n`, file])
const xxhsum = (variant: number) => (file: string) => (/\b[0-9a-f]{8,32}\b/.exec(run('xxhsum', [`-H${variant}`, file])) as RegExpExecArray)[0]
const openssl = (name: string) => (file: string) => firstToken(run('openssl', ['dgst', `-${name}`, '-r', file]))
const pythonFile = (expression: string, imports = 'hashlib') => (file: string) =>
  python(`import sys, ${imports}; data = open(sys.argv[1], 'rb').read(); print(${expression})`, [file])
function xzCrc64(file: string): string {
  if (statSync(file).size === 0) return '0000000000000000' // xz writes no block, so no check, for an empty file
  run('xz', ['-k', '-f', '-0', '--check=crc64', file])
  const compressed = `${file}.xz`
  const fields = (run('xz', ['--robot', '--list', '-vv', compressed]).split('\n').find((line) => line.startsWith('block')) ?? '').split('\t')
  rmSync(compressed)
  return fields[fields.indexOf('CRC64') + 1] ?? ''
}

/** Two requests of 16 algorithms each, every one checked by a tool that reads the same file (and what provides it). */
type FileTool = { tool: ToolName, digest: (file: string) => string }
const sum = (command: 'sha256sum' | 'md5sum' | 'sha1sum' | 'sha224sum' | 'sha384sum' | 'sha512sum'): FileTool => ({ tool: command, digest: coreutils(command) })
const viaRhash = (name: string): FileTool => ({ tool: 'rhash', digest: rhash(name) })
const viaXxhsum = (variant: number): FileTool => ({ tool: 'xxhsum', digest: xxhsum(variant) })
const FILE_TOOLS: Array<Record<string, FileTool>> = [
  {
    sha256: sum('sha256sum'), md5: sum('md5sum'), sha1: sum('sha1sum'), sha512: sum('sha512sum'),
    blake3: { tool: 'b3sum', digest: (file) => run('b3sum', ['--no-names', file]) }, xxh64: viaXxhsum(1), xxh3: viaXxhsum(3), xxh128: viaXxhsum(2),
    crc32: viaRhash('crc32'), crc32c: viaRhash('crc32c'), ed2k: viaRhash('ed2k'), tiger: viaRhash('tiger'),
    'streebog-256': viaRhash('gost12-256'), has160: viaRhash('has160'), gost94: viaRhash('gost94'), md4: viaRhash('md4'),
  },
  {
    'streebog-512': viaRhash('gost12-512'), whirlpool: viaRhash('whirlpool'), 'sha3-256': viaRhash('sha3-256'), ripemd160: viaRhash('ripemd160'),
    'blake2b-512': viaRhash('blake2b'), 'blake2s-256': viaRhash('blake2s'), xxh32: viaXxhsum(0), 'gost94-cryptopro': viaRhash('gost94-cryptopro'),
    md2: { tool: 'pycryptodome', digest: pythonFile('MD2.new(data).hexdigest()', 'hashlib; from Cryptodome.Hash import MD2') },
    sm3: { tool: 'openssl', digest: openssl('sm3') }, crc64: { tool: 'xz', digest: xzCrc64 },
    adler32: { tool: 'python3', digest: pythonFile('"%08x" % zlib.adler32(data)', 'zlib') }, sha224: sum('sha224sum'), sha384: sum('sha384sum'),
    'keccak-256': { tool: 'pycryptodome', digest: pythonFile('keccak.new(digest_bits=256, data=data).hexdigest()', 'hashlib; from Cryptodome.Hash import keccak') },
    shake256: { tool: 'python3', digest: pythonFile('hashlib.shake_256(data).hexdigest(64)') },
  },
]

async function upload(server: TestServer, parts: Array<[string, string | Blob, string?]>, query = ''): Promise<TestResponse> {
  const form = new FormData()
  for (const [name, value, filename] of parts) {
    if (typeof value === 'string') form.append(name, value)
    else form.append(name, value, filename)
  }
  return toTestResponse(await fetch(`${server.url}/api/filehash${query}`, { method: 'POST', body: form }))
}

/**
 * A multipart upload written by hand over node:http, so the test controls the framing: with a
 * declared Content-Length or chunked without one, and optionally slowly, chunk by chunk. It stops
 * sending as soon as the server answers (a 413 arrives while the body is still streaming).
 */
function rawUpload(url: string, options: { fields: Record<string, string>, file: Buffer, chunked: boolean, chunkBytes?: number, delayMs?: number, whileSending?: () => void }): Promise<{ status: number, body: string }> {
  const boundary = `hashd-test-${randomBytes(8).toString('hex')}`
  const head = Buffer.from(Object.entries(options.fields).map(([name, value]) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const body = Buffer.concat([head, options.file, tail])
  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` }
  if (!options.chunked) headers['content-length'] = String(body.length)
  return new Promise((resolvePromise, reject) => {
    let answered = false
    const req = httpRequest(`${url}/api/filehash`, { method: 'POST', headers }, (response) => {
      answered = true
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => { text += chunk })
      response.on('end', () => resolvePromise({ status: response.statusCode ?? 0, body: text }))
    })
    req.on('error', (error) => { if (!answered) reject(error) })
    const chunkBytes = options.chunkBytes ?? 256 * 1024
    void (async () => {
      for (let offset = 0; offset < body.length && !answered; offset += chunkBytes) {
        const more = req.write(body.subarray(offset, offset + chunkBytes))
        if (options.delayMs) {
          await new Promise((wait) => setTimeout(wait, options.delayMs))
          options.whileSending?.()
        } else if (!more) {
          await whichever(req, 'drain', 'close')
        }
      }
      if (!answered) req.end()
    })().catch(() => { /* the server may close the connection after answering early */ })
  })
}

/** Files under `root` changed at or after `since` (bounded walk: depth, count, size). */
function recentlyChanged(root: string, since: number, skip: Set<string>, limits = { depth: 8, files: 20_000, bytes: 64 * MiB }): string[] {
  const found: string[] = []
  let seen = 0
  const walk = (directory: string, depth: number) => {
    if (depth > limits.depth || seen > limits.files) return
    let entries: string[]
    try { entries = readdirSync(directory) } catch { return }
    for (const entry of entries) {
      const path = join(directory, entry)
      if (skip.has(path)) continue
      let stats: Stats
      try { stats = statSync(path) } catch { continue }
      seen++
      if (stats.isDirectory()) walk(path, depth + 1)
      else if (stats.isFile() && stats.mtimeMs >= since && stats.size <= limits.bytes) found.push(path)
    }
  }
  walk(root, 0)
  return found
}

/** Where each open file descriptor of this process (which hosts the server) points. */
function openFiles(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try { return [readlinkSync(`/proc/self/fd/${fd}`)] } catch { return [] }
  })
}

describe('/api/filehash', () => {
  let server: TestServer
  let directory: string
  const files: Record<string, string> = {}

  before(async () => {
    server = await startServer()
    directory = mkdtempSync(join(tmpdir(), 'hashd-filehash-'))
    const make = (name: string, bytes: Buffer) => { files[name] = join(directory, name); writeFileSync(files[name] as string, bytes) }
    make('empty.bin', Buffer.alloc(0))
    make('one-byte.bin', Buffer.from([0x61]))
    make('one-mib.bin', randomBytes(MiB))
    make('twenty-mib.bin', randomBytes(20 * MiB + 12345))
    make('ed2k-chunk.bin', randomBytes(ED2K_CHUNK))
    make('ed2k-chunk-plus-one.bin', randomBytes(ED2K_CHUNK + 1))
  })
  after(async () => {
    await server.close()
    rmSync(directory, { recursive: true, force: true })
  })

  describe('digests of real files match the tools that read the same file', () => {
    const FILES = ['empty.bin', 'one-byte.bin', 'one-mib.bin', 'twenty-mib.bin']
    // Every installed tool reads the files first, so the uploads then follow one another without a
    // pause: the tools block this process (which hosts the server too) for seconds on 20 MiB, long
    // enough for a kept-alive connection to reach the server's keep-alive timeout as it is reused.
    const expected = new Map<string, string>()
    before(() => {
      for (const name of FILES) {
        for (const [algorithm, { tool, digest }] of FILE_TOOLS.flatMap((tools) => Object.entries(tools))) {
          if (hasTool(tool)) expected.set(`${name} ${algorithm}`, digest(files[name] as string))
        }
      }
    })

    for (const name of FILES) {
      it(name, async (t) => {
        const path = files[name] as string
        for (const tools of FILE_TOOLS) {
          const skips = Object.entries(tools).map(([algorithm, { tool }]) => [algorithm, skipUnless(tool)] as const)
          // With none of these tools here (a bare machine), the upload would be compared with nothing.
          if (skips.every(([, skip]) => skip !== false)) {
            for (const [algorithm, skip] of skips) await t.test(algorithm, { skip }, () => {})
            continue
          }
          const response = await upload(server, [['algorithms', Object.keys(tools).join(',')], ['file', await openAsBlob(path), name]])
          assert.equal(response.status, 200, response.text)
          assert.equal(response.body.name, name)
          assert.equal(response.body.size, statSync(path).size)
          assert.deepEqual(Object.keys(response.body.hashes), Object.keys(tools))
          // One subtest per algorithm, so a missing tool skips only its own comparison.
          for (const [algorithm, skip] of skips) {
            await t.test(algorithm, { skip }, () => {
              assert.equal(response.body.hashes[algorithm], expected.get(`${name} ${algorithm}`), `${algorithm} of ${name}`)
            })
          }
        }
      })
    }

    it('eD2k at one chunk and one chunk plus a byte follows RHash (the red hash at exact multiples)', { skip: skipUnless('rhash') }, async () => {
      for (const name of ['ed2k-chunk.bin', 'ed2k-chunk-plus-one.bin']) {
        const path = files[name] as string
        const response = await upload(server, [['algorithms', 'ed2k,md4'], ['file', await openAsBlob(path), name]])
        assert.equal(response.status, 200, response.text)
        assert.equal(response.body.hashes.ed2k, rhash('ed2k')(path), name)
        assert.equal(response.body.hashes.md4, rhash('md4')(path), name)
        // Past one chunk eD2k is a hash of chunk hashes, no longer the file's MD4.
        assert.notEqual(response.body.hashes.ed2k, response.body.hashes.md4)
      }
    })
  })

  describe('the form', () => {
    it('collapses duplicates, echoes canonical names, and keeps the order asked', { skip: skipUnless('sha256sum', 'rhash') }, async () => {
      const path = files['one-byte.bin'] as string
      const response = await upload(server, [['algorithms', 'SHA-256, md5,sha_256,MD5,GOST12-256,Tiger192,HAS-160,eDonkey'], ['file', await openAsBlob(path), 'a.txt']])
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(Object.keys(response.body.hashes), ['sha256', 'md5', 'streebog-256', 'tiger', 'has160', 'ed2k'])
      assert.equal(response.body.hashes.sha256, coreutils('sha256sum')(path))
      assert.equal(response.body.hashes['streebog-256'], rhash('gost12-256')(path))
    })

    it('answers base64 when asked, in a field or in the query string', { skip: skipUnless('sha256sum', 'b3sum') }, async () => {
      const path = files['one-mib.bin'] as string
      const expected = { sha256: Buffer.from(coreutils('sha256sum')(path), 'hex').toString('base64'), blake3: Buffer.from(run('b3sum', ['--no-names', path]), 'hex').toString('base64') }
      const viaField = await upload(server, [['algorithms', 'sha256,blake3'], ['encoding', 'base64'], ['file', await openAsBlob(path), 'f']])
      assert.deepEqual(viaField.body.hashes, expected)
      const viaQuery = await upload(server, [['file', await openAsBlob(path), 'f']], '?algorithms=sha256,blake3&encoding=base64')
      assert.deepEqual(viaQuery.body.hashes, expected)
    })

    it('defaults to sha256', { skip: skipUnless('sha256sum') }, async () => {
      const path = files['one-byte.bin'] as string
      const response = await upload(server, [['file', await openAsBlob(path), 'f']])
      assert.deepEqual(response.body.hashes, { sha256: coreutils('sha256sum')(path) })
    })

    it('takes 16 algorithms and refuses 17 with 400', async () => {
      const seventeen = ['md2', 'md4', 'md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'sha3-256', 'blake3', 'crc32', 'xxh3', 'tiger', 'has160', 'gost94', 'streebog-256', 'whirlpool']
      const file = new Blob([Buffer.from('x')])
      assert.equal((await upload(server, [['algorithms', seventeen.slice(0, 16).join(',')], ['file', file, 'f']])).status, 200)
      const refused = await upload(server, [['algorithms', seventeen.join(',')], ['file', file, 'f']])
      assert.equal(refused.status, 400, refused.text)
      assert.match(refused.headers.get('content-type') ?? '', /application\/problem\+json/)
    })

    it('refuses password hashes, unknown names, a form without a file, two files, and fields after the file with 400', async () => {
      const file = new Blob([Buffer.from('x')])
      const cases: Array<[string, Array<[string, string | Blob, string?]>]> = [
        ['a password hash', [['algorithms', 'sha256,bcrypt'], ['file', file, 'f']]],
        ['an unknown algorithm', [['algorithms', 'sha256,sha257'], ['file', file, 'f']]],
        ['no file part', [['algorithms', 'sha256']]],
        ['two file parts', [['algorithms', 'sha256'], ['file', file, 'f'], ['file', file, 'g']]],
        ['a field after the file', [['file', file, 'f'], ['algorithms', 'md5']]],
        ['an unknown encoding', [['encoding', 'hexadecimal'], ['file', file, 'f']]],
      ]
      for (const [label, parts] of cases) {
        const response = await upload(server, parts)
        assert.equal(response.status, 400, `${label}: ${response.text}`)
        assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/, label)
      }
    })

    it('refuses a body that is not multipart with 415', async () => {
      const json = await server.post('/api/filehash', { file: 'x' })
      assert.equal(json.status, 415, json.text)
      const text = await toTestResponse(await fetch(`${server.url}/api/filehash`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }))
      assert.equal(text.status, 415, text.text)
    })
  })

  describe('MAX_FILE_SIZE', () => {
    let small: TestServer
    before(async () => { small = await startServer({ MAX_FILE_SIZE: String(MiB) }) })
    after(async () => { await small.close() })

    it('takes a file of exactly MAX_FILE_SIZE bytes', { skip: skipUnless('sha256sum') }, async () => {
      const path = files['one-mib.bin'] as string
      const response = await upload(small, [['algorithms', 'sha256'], ['file', await openAsBlob(path), 'f']])
      assert.equal(response.status, 200, response.text)
      assert.equal(response.body.hashes.sha256, coreutils('sha256sum')(path))
    })

    it('answers 413 to a larger upload with a declared Content-Length', async () => {
      const response = await rawUpload(small.url, { fields: { algorithms: 'sha256' }, file: randomBytes(3 * MiB), chunked: false })
      assert.equal(response.status, 413, response.body)
    })

    it('answers 413 to a declared length within the envelope allowance but a file one byte too large', async () => {
      const response = await rawUpload(small.url, { fields: { algorithms: 'sha256' }, file: randomBytes(MiB + 1), chunked: false })
      assert.equal(response.status, 413, response.body)
    })

    it('answers 413 to a larger upload streamed chunked, without Content-Length', async () => {
      const response = await rawUpload(small.url, { fields: { algorithms: 'sha256,md5' }, file: randomBytes(3 * MiB), chunked: true, chunkBytes: 64 * 1024 })
      assert.equal(response.status, 413, response.body)
      assert.match(response.body, /MAX_FILE_SIZE/)
    })
  })

  describe('an upload never touches the disk', () => {
    it('leaves no file containing the upload in the temp directory or the working directory', async () => {
      // A marker that exists nowhere but in this process's memory and the request body.
      const marker = `hashd-no-disk-${randomBytes(24).toString('hex')}`
      const content = Buffer.from(marker.repeat(Math.ceil((MiB + 4096) / marker.length)))
      assert.ok(content.length >= MiB)
      const started = Date.now() - 1000
      const response = await upload(server, [['algorithms', 'sha256,blake3'], ['file', new Blob([content]), 'marker.bin']])
      assert.equal(response.status, 200, response.text)

      // A control file written now must be found by the same scan, or the scan proves nothing.
      const control = join(tmpdir(), `hashd-control-${randomBytes(8).toString('hex')}.bin`)
      writeFileSync(control, 'control')
      const skip = new Set([resolve('node_modules'), resolve('.git'), directory])
      const candidates = [...recentlyChanged(tmpdir(), started, skip), ...recentlyChanged(process.cwd(), started, skip)]
      rmSync(control)
      assert.ok(candidates.includes(control), 'the scan sees files written during the test')
      const containing = candidates.filter((path) => {
        try { return readFileSync(path).includes(marker) } catch { return false }
      })
      assert.deepEqual(containing, [], 'files written during the upload that contain it')
    })

    it('opens no file in the temp directory or the working directory while a slow upload is in flight', async () => {
      const outside = (path: string) => path.startsWith(tmpdir()) || path.startsWith(process.cwd())
      // Control: a file this process opens in the temp directory shows up in /proc/self/fd.
      const controlFd = openSync(join(directory, 'control.bin'), 'w')
      const controlSeen = openFiles().includes(join(directory, 'control.bin'))
      closeSync(controlFd)
      assert.ok(controlSeen, '/proc/self/fd lists files opened in the temp directory')
      const before = new Set(openFiles().filter(outside))
      const during: string[][] = []
      const response = await rawUpload(server.url, {
        fields: { algorithms: 'sha256,streebog-512' }, file: randomBytes(2 * MiB), chunked: true, chunkBytes: 128 * 1024, delayMs: 25,
        whileSending: () => { during.push(openFiles()) },
      })
      assert.equal(response.status, 200, response.body)
      assert.ok(during.length >= 10, `sampled ${during.length} times while the body was streaming`)
      const opened = [...new Set(during.flat())].filter((path) => outside(path) && !before.has(path))
      assert.deepEqual(opened, [])
    })
  })
})
