/**
 * @hashd/client from a tarball, outside the repository: `npm pack` in clients/typescript, the
 * tarball installed with npm in a fresh folder of the system's temporary directory, and programs
 * there (plain JavaScript, and TypeScript compiled against the package's declarations) calling the
 * real server, with this process's Node: CI runs the suite on Node 20 and on Node 24. Expected
 * values are published vectors: FIPS 180-2 B.1 (SHA-256 "abc"), RFC 1321 A.5 (MD5 "abc"), RFC 4231
 * test case 2 (HMAC-SHA-256, key "Jefe").
 */
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { clientPackageVersion, installClient, type InstalledClient } from './helpers/client-package.js'
import { startServer, type TestServer } from './helpers/server.js'

const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'
const HMAC_JEFE = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'

let server: TestServer
let client: InstalledClient

before(async () => {
  server = await startServer({ LOG_LEVEL: 'warn' })
  client = await installClient()
})
after(async () => {
  await server?.close()
  client?.remove()
})

describe('@hashd/client, packed and installed outside the repository', () => {
  it('is a package of JavaScript and declarations, versioned as the API', async () => {
    assert.deepEqual(client.files, ['LICENSE', 'README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/schema.d.ts', 'dist/schema.js', 'openapi.json', 'package.json'])
    const installed = JSON.parse(await (await import('node:fs/promises')).readFile(join(client.dir, 'node_modules', '@hashd', 'client', 'package.json'), 'utf8')) as Record<string, unknown>
    const document = (await server.get('/api/openapi.json')).body as { info: { version: string } }
    assert.equal(installed.version, document.info.version, 'the package\'s version is the API\'s')
    assert.equal(installed.version, clientPackageVersion())
    assert.equal(installed.private, undefined, 'publishable')
    assert.deepEqual(installed.exports, { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './openapi.json': './openapi.json', './package.json': './package.json' })
  })

  it('works from plain JavaScript: every kind of call, errors as problems', async () => {
    writeFileSync(join(client.dir, 'plain.mjs'), `
import { createHashdClient, isProblem, multipartUpload, rawUpload, API_VERSION } from '@hashd/client'
const hashd = createHashdClient({ baseUrl: process.env.HASHD_URL })
const hashed = await hashd.POST('/api/hash', { body: { input: 'abc', algorithm: 'sha256' } })
const verified = await hashd.POST('/api/verify', { body: { input: 'abc', hash: '${MD5_ABC}' } })
const mac = await hashd.POST('/api/hmac', { body: { message: 'what do ya want for nothing?', key: 'Jefe', algorithm: 'sha256' } })
const identified = await hashd.POST('/api/identify', { body: { hash: '${SHA256_ABC}' } })
const form = await hashd.POST('/api/filehash', multipartUpload(new Blob(['abc']), 'abc.txt', { algorithms: 'sha256,md5' }))
const raw = await hashd.PUT('/api/filehash', { params: { query: { algorithms: 'md5', name: 'abc.txt' } }, ...rawUpload(new TextEncoder().encode('abc')) })
const refused = await hashd.POST('/api/verify', { body: { input: 'abc', hash: '$2b$04$short', algorithm: 'bcrypt' } })
console.log(JSON.stringify({
  version: API_VERSION, hash: hashed.data.hash, match: verified.data.match, detected: verified.data.algorithm, hmac: mac.data.hmac,
  identified: identified.data.matches[0].algorithm, form: form.data.hashes, raw: raw.data.hashes,
  problem: isProblem(refused.error) ? [refused.response.status, refused.error.type] : null,
}))
`)
    const outcome = await client.run('plain.mjs', { HASHD_URL: server.url })
    assert.equal(outcome.code, 0, outcome.stderr)
    assert.deepEqual(JSON.parse(outcome.stdout), {
      version: clientPackageVersion(), hash: SHA256_ABC, match: true, detected: 'md5', hmac: HMAC_JEFE, identified: 'sha256',
      form: { sha256: SHA256_ABC, md5: MD5_ABC }, raw: { md5: MD5_ABC }, problem: [422, 'urn:hashd:problem:malformed-hash'],
    })
  })

  it('types every call from its declarations: TypeScript compiles against the package, and refuses what the API does not have', async () => {
    writeFileSync(join(client.dir, 'typed.ts'), `
import { createHashdClient, isProblem, type Problem } from '@hashd/client'
const hashd = createHashdClient({ baseUrl: process.env.HASHD_URL ?? '' })
const { data, error } = await hashd.POST('/api/hash', { body: { input: 'abc', algorithm: 'sha256' } })
if (error) throw new Error(error.title)
// /api/hash also takes batches, so its answer is one result or \`results\`: narrowed by a field.
if (!('hash' in data)) throw new Error('a batch answer')
const hash: string = data.hash
// What the types refuse (compiled, never run): each line below must be an error for tsc.
export async function refused(): Promise<void> {
  // @ts-expect-error: the client's methods are POST, GET, PUT…, as openapi-fetch names them
  await hashd.post('/api/hash', { input: 'abc' })
  // @ts-expect-error: not an algorithm of /api/hash
  await hashd.POST('/api/hash', { body: { input: 'abc', algorithm: 'sha-265' } })
  // @ts-expect-error: no such operation
  await hashd.POST('/api/hashes', { body: {} })
}
const bad = await hashd.POST('/api/verify', { body: { input: 'abc', hash: 'not a hash', algorithm: 'bcrypt' } })
const problem: Problem | undefined = isProblem(bad.error) ? bad.error : undefined
console.log(hash, problem?.type)
`)
    await client.compile()
    const outcome = await client.run('out/typed.js', { HASHD_URL: server.url })
    assert.equal(outcome.code, 0, outcome.stderr)
    assert.equal(outcome.stdout.trim(), `${SHA256_ABC} urn:hashd:problem:malformed-hash`)
  })
})
