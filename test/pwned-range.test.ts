/**
 * GET /range/{prefix}, the k-anonymity range API over the breached-password store: a synthetic
 * corpus (scripts/pwned-corpus.ts) imported by pwned:import, its range answers compared with what
 * coreutils `sort` and `grep` find in the same text, the known passwords' hashes from Python's
 * hashlib (SHA-1) and pycryptodome (NTLM's MD4), the npm `hibp` client pointed at hashd with its
 * baseUrl, and the HTTP details (ETag, padding, errors, API keys). The store itself (import,
 * damaged stores, reloads) is test/pwned-store.test.ts.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { pwnedPassword, pwnedPasswordRange } from 'hibp'
import { corpus, corpusInput, grepRange, sortedText, store, type Corpus } from './helpers/pwned.js'
import { startServer, toTestResponse, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-range-'))
const cleanups: string[] = [dir]
after(() => { for (const path of cleanups) rmSync(path, { recursive: true, force: true }) })

describe('GET /range/{prefix}', () => {
  let folder: Corpus
  let ntlmCorpus: Corpus
  let sorted: string
  let ntlmSorted: string
  let server: TestServer
  let storeFile: string
  before(async () => {
    folder = await corpus({ hashes: 6000, seed: 11 })
    ntlmCorpus = await corpus({ hashes: 3000, kind: 'ntlm', layout: 'file', seed: 12 })
    cleanups.push(folder.dir, ntlmCorpus.dir)
    sorted = sortedText(folder, dir, 'range')
    ntlmSorted = sortedText(ntlmCorpus, dir, 'range-ntlm')
    storeFile = join(dir, 'range.store')
    store(corpusInput(folder), storeFile)
    store(corpusInput(ntlmCorpus, 'file', 'ntlm'), join(dir, 'range-ntlm.store'), 'ntlm')
    server = await startServer({ PWNED_STORE: storeFile, PWNED_NTLM_STORE: join(dir, 'range-ntlm.store') })
  })
  after(async () => { await server?.close() })

  it('answers each prefix with what grep finds in the sorted text, in either case of the prefix', { skip: skipUnless('grep') }, async () => {
    const lines = readFileSync(sorted, 'utf8').split('\n')
    const prefixes = ['00000', 'FFFFF', '5BAA6', ...lines.filter((_, index) => index % 300 === 0).map((line) => line.slice(0, 5))]
    for (const prefix of prefixes) {
      const response = await server.fetch(`/range/${prefix.toLowerCase()}`)
      assert.equal(response.status, 200)
      assert.equal(response.headers.get('content-type'), 'text/plain')
      assert.equal(await response.text(), grepRange(sorted, prefix), prefix)
    }
  })

  it('answers ?mode=ntlm from PWNED_NTLM_STORE with 27-digit suffixes', { skip: skipUnless('grep') }, async () => {
    const prefix = readFileSync(ntlmSorted, 'utf8').slice(0, 5)
    const response = await server.fetch(`/range/${prefix}?mode=ntlm`)
    const text = await response.text()
    assert.equal(text, grepRange(ntlmSorted, prefix))
    assert.match(text, /^[0-9A-F]{27}:\d+(\r\n[0-9A-F]{27}:\d+)*$/)
  })

  it('gives the known passwords\' counts for their hashes from Python\'s hashlib, and the hibp client reads them', { skip: skipUnless('python3', 'grep') }, async () => {
    const known = readFileSync(join(folder.dir, 'known.tsv'), 'utf8').split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0] as string)
    const hashes = JSON.parse(python('import hashlib, json, sys\nprint(json.dumps([hashlib.sha1(p.encode()).hexdigest().upper() for p in json.loads(sys.stdin.read())]))', [], JSON.stringify(known))) as string[]
    for (const [index, password] of known.entries()) {
      const hash = hashes[index] as string
      const line = spawnSync('grep', [`^${hash}:`, sorted], { encoding: 'utf8' }).stdout.trim()
      const expected = Number(line.split(':')[1])
      assert.ok(expected > 0, `${hash} is in the corpus`)
      assert.equal(await pwnedPassword(password, { baseUrl: server.url }), expected, password)
      const range = await pwnedPasswordRange(hash.slice(0, 5), { baseUrl: server.url })
      assert.equal(range[hash.slice(5)], expected)
      const checked = await server.post('/api/passwords/check', { password })
      assert.equal(checked.body.breachCount, expected)
    }
  })

  it('gives the known passwords\' NTLM hashes from pycryptodome\'s MD4, read by the hibp client with mode ntlm', { skip: skipUnless('python3', 'pycryptodome', 'grep') }, async () => {
    const known = readFileSync(join(ntlmCorpus.dir, 'known.tsv'), 'utf8').split('\n').filter((line) => line !== '').map((line) => line.split('\t')[0] as string)
    const hashes = JSON.parse(python('import json, sys\nfrom Cryptodome.Hash import MD4\nprint(json.dumps([MD4.new(p.encode("utf-16-le")).hexdigest().upper() for p in json.loads(sys.stdin.read())]))', [], JSON.stringify(known))) as string[]
    for (const hash of hashes) {
      const line = spawnSync('grep', [`^${hash}:`, ntlmSorted], { encoding: 'utf8' }).stdout.trim()
      const range = await pwnedPasswordRange(hash.slice(0, 5), { baseUrl: server.url, mode: 'ntlm' })
      assert.equal(range[hash.slice(5)], Number(line.split(':')[1]), hash)
    }
  })

  it('pads with count-0 lines to 800–1,000 lines for Add-Padding: true, anew each time and never cached', { skip: skipUnless('grep') }, async () => {
    const prefix = readFileSync(sorted, 'utf8').slice(0, 5)
    const real = grepRange(sorted, prefix).split('\r\n')
    const padded = await pwnedPasswordRange(prefix, { baseUrl: server.url, addPadding: true })
    const entries = Object.entries(padded)
    assert.ok(entries.length >= 800 && entries.length <= 1000, `${entries.length} lines`)
    for (const line of real) assert.equal(padded[line.split(':')[0] as string], Number(line.split(':')[1]))
    assert.equal(entries.filter(([, count]) => count === 0).length, entries.length - real.length)
    const response = await server.fetch(`/range/${prefix}`, { headers: { 'add-padding': 'true' } })
    const text = await response.text()
    assert.equal(response.headers.get('cache-control'), 'no-store')
    assert.equal(response.headers.get('etag'), null)
    const suffixes = text.split('\r\n').map((line) => line.split(':')[0] as string)
    assert.deepEqual(suffixes, [...suffixes].sort(), 'padding is mixed in suffix order')
    assert.notEqual(text, await (await server.fetch(`/range/${prefix}`, { headers: { 'add-padding': 'true' } })).text())
  })

  it('has an ETag, answers If-None-Match with 304, and is cacheable for 31 days', async () => {
    const first = await server.fetch('/range/5BAA6')
    await first.arrayBuffer()
    const etag = first.headers.get('etag')
    assert.match(etag ?? '', /^"[0-9a-f]{16}-sha1-5BAA6"$/)
    assert.equal(first.headers.get('cache-control'), 'public, max-age=2678400')
    assert.equal(first.headers.get('access-control-allow-origin'), '*')
    assert.ok(first.headers.get('last-modified'))
    const again = await server.fetch('/range/5baa6', { headers: { 'if-none-match': etag ?? '' } })
    assert.equal(again.status, 304)
    assert.equal(await again.text(), '')
    const head = await server.fetch('/range/5BAA6', { method: 'HEAD' })
    assert.equal(head.status, 200)
  })

  it('refuses a prefix that is not 5 hex digits with the public API\'s message, an unknown mode, and a mode without a store', async () => {
    for (const prefix of ['5BAA', '5BAA61', 'GBAA6', '5B%20A6', '%F0%9F%94%91']) {
      const response = await server.get(`/range/${prefix}`)
      assert.equal(response.status, 400, prefix)
      assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8')
      assert.match(response.body.detail, /^The hash prefix was not in a valid format/)
    }
    await assert.rejects(pwnedPasswordRange('5BAA', { baseUrl: server.url }), /The hash prefix was not in a valid format/)
    const mode = await server.get('/range/5BAA6?mode=md5')
    assert.equal(mode.status, 400)
    assert.match(mode.body.detail, /mode must be one of sha1, ntlm/)
    const none = await startServer({})
    try {
      const response = await none.get('/range/5BAA6')
      assert.equal(response.status, 404)
      assert.match(response.body.detail, /no SHA-1 breached-password store \(PWNED_STORE is not set\)/)
      assert.equal((await none.get('/range/5BAA6?mode=ntlm')).status, 404)
    } finally {
      await none.close()
    }
  })

  it('with API keys on, needs a key with passwords:range, as /api/passwords/check needs passwords:check; rate-limited per key like every route', async () => {
    const keys = join(dir, 'api-keys')
    const sha256 = (key: string) => createHash('sha256').update(key).digest('hex')
    const [all, checker, ranger] = ['hk_0123456789abcdefghij', 'hk_checker-0123456789', 'hk_ranger-0123456789a']
    writeFileSync(keys, `someone ${sha256(all)}\nchecker ${sha256(checker)} scopes=passwords:check\nranger ${sha256(ranger)} 4 scopes=passwords:range\n`)
    const keyed = await startServer({ PWNED_STORE: storeFile, API_KEYS_FILE: keys, RATE_LIMIT_MAX: '100' })
    const as = (key: string, path: string) => keyed.fetch(path, { headers: { authorization: `Bearer ${key}` } }).then(toTestResponse)
    try {
      assert.equal((await keyed.get('/range/5BAA6')).status, 401)
      assert.equal((await as(all, '/range/5BAA6')).text, grepRange(sorted, '5BAA6'))
      const refused = await as(checker, '/range/5BAA6')
      assert.deepEqual([refused.status, refused.body.scope], [403, 'passwords:range'])
      assert.equal((await keyed.post('/api/passwords/check', { password: 'x' })).status, 401)
      assert.deepEqual([(await keyed.post('/api/passwords/check', { password: 'x' }, { authorization: `Bearer ${ranger}` })).body.scope], ['passwords:check'])
      assert.equal((await keyed.post('/api/passwords/check', { password: 'correct horse battery staple' }, { authorization: `Bearer ${checker}` })).status, 200)
      const document = (await keyed.get('/api/openapi.json')).body
      assert.deepEqual(document.paths['/range/{prefix}'].get.security, [{ apiKey: ['passwords:range'] }])
      assert.deepEqual(document.paths['/api/passwords/check'].post.security, [{ apiKey: ['passwords:check'] }])
      // The ranger's own limit, 4 a window: its refused check above counts, three answers, then 429.
      for (let index = 0; index < 3; index++) assert.equal((await as(ranger, '/range/5BAA6')).status, 200)
      const limited = await as(ranger, '/range/5BAA6')
      assert.equal(limited.status, 429)
      assert.ok(limited.headers.get('retry-after'))
    } finally {
      await keyed.close()
    }
  })
})

