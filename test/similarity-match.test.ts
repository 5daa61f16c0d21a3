/**
 * POST /api/similarity/match and the bank folder (src/similarity/bank-folder.ts, match.ts,
 * routes/similarity-match.ts) on the real server, with a SIMILARITY_BANKS_DIR of banks made by
 * `bank:import` from entries this test generates. Every answer is checked against a linear scan
 * done outside hashd: Debian's Python for PDQ's Hamming distances, libfuzzy's fuzzy_compare (through
 * Python's ctypes) for ssdeep, the TLSH reference's distances committed in test/fixtures/tlsh, and
 * the digests as written. Then reloads (a replaced bank, a corrupt one, a removed one), /api/health,
 * API-key scopes and banks=, every bad input, batches, limit and truncated, and the rate limit.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { PLUGIN_TIMEOUT_MS } from '../src/app.js'
import { hashKey } from '../src/keys/api-keys.js'
import { flipBits } from './helpers/bank-inputs.js'
import { Random } from './helpers/random.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const here = dirname(fileURLToPath(import.meta.url))
const BANK_IMPORT = join(here, '..', 'scripts', 'bank-import.js')
const FIXTURES = join(here, '..', '..', 'test', 'fixtures')

const dir = mkdtempSync(join(tmpdir(), 'hashd-match-'))
const banksDir = join(dir, 'banks')
mkdirSync(banksDir)
after(() => rmSync(dir, { recursive: true, force: true }))

interface Entry { hash: string, id: string, label: string | null }

/** Writes `hash,id,label` lines (labels quoted as RFC 4180 says) and runs bank:import into the folder, through a temporary name as an operator would. */
function importBank(name: string, type: string, entries: readonly Entry[], folder = banksDir): void {
  const input = join(dir, `${name}.csv`)
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`
  writeFileSync(input, entries.map((entry) => `${entry.hash},${quote(entry.id)}${entry.label === null ? '' : `,${quote(entry.label)}`}`).join('\n') + '\n')
  execFileSync(process.execPath, [BANK_IMPORT, input, join(folder, `${name}.bank`), '--type', type], { stdio: 'pipe' })
}

const random = new Random(4501)
const keys = { admin: `hk_${randomBytes(24).toString('base64url')}`, limited: `hk_${randomBytes(24).toString('base64url')}`, compareOnly: `hk_${randomBytes(24).toString('base64url')}` }
const auth = (key: string) => ({ authorization: `Bearer ${key}` })

// PDQ: two banks of random hashes, with near-duplicates of a few needles planted in both at 0 to 40 bits.
const needles = Array.from({ length: 6 }, () => randomBytes(32).toString('hex'))
function pdqEntries(prefix: string, count: number): Entry[] {
  const entries: Entry[] = []
  for (let i = 0; i < count; i++) entries.push({ hash: randomBytes(32).toString('hex'), id: `${prefix}-${i}`, label: i % 3 === 0 ? null : `random, ${i}` })
  needles.forEach((needle, n) => {
    for (let copy = 0; copy < 12; copy++) {
      const bits = copy === 0 ? 0 : random.range(1, 40)
      entries.push({ hash: bits === 0 ? needle : flipBits(random, needle, bits), id: `${prefix}-needle${n}-${copy}`, label: `needle "${n}" at ${bits} bits` })
    }
  })
  return entries
}
const photos = pdqEntries('photos', 1500)
const photos2 = pdqEntries('photos2', 400)

type PdqOracleMatch = { bank: string, id: string, label: string | null, distance: number, variant: number }

/**
 * For each case, every entry of the banks within `max` of the nearest of its `queries`, in the
 * answer's order: distance, bank, hash, id. One Python run for all the cases.
 */
function pdqOracleMany(banks: Record<string, readonly Entry[]>, cases: ReadonlyArray<{ queries: readonly string[], max: number }>): PdqOracleMatch[][] {
  const script = `
import json, sys
data = json.load(sys.stdin)
banks = [(bank, [(int(e['hash'], 16), e) for e in entries]) for bank, entries in data['banks'].items()]
answers = []
for case in data['cases']:
    queries = [int(q, 16) for q in case['queries']]
    out = []
    for bank, entries in banks:
        for h, e in entries:
            best = None
            for i, q in enumerate(queries):
                d = bin(h ^ q).count('1')
                if best is None or d < best[0]:
                    best = (d, i)
            if best[0] <= case['max']:
                out.append({'bank': bank, 'id': e['id'], 'label': e['label'], 'distance': best[0], 'variant': best[1], 'hash': e['hash'].lower()})
    out.sort(key=lambda m: (m['distance'], m['bank'], bytes.fromhex(m['hash']), m['id'].encode('utf-8')))
    for m in out:
        del m['hash']
    answers.append(out)
print(json.dumps(answers))
`
  return JSON.parse(python(script, [], JSON.stringify({ banks, cases }))) as PdqOracleMatch[][]
}

/** Every entry of the banks within `maxDistance` of the nearest of `queries` (pdqOracleMany of one case). */
const pdqOracle = (banks: Record<string, readonly Entry[]>, queries: readonly string[], maxDistance: number): PdqOracleMatch[] =>
  pdqOracleMany(banks, [{ queries, max: maxDistance }])[0]!

// TLSH: for a few hashes of the reference's fixtures, a bank of the hashes it was compared with (and itself).
const tlshRows = readFileSync(join(FIXTURES, 'tlsh', 'distances.tsv'), 'utf8').trim().split('\n')
  .map((line) => line.split('\t')).filter((fields) => fields[0]!.startsWith('T1') && fields[1]!.startsWith('T1'))
  .map(([a, b, withLength, withoutLength]) => ({ a: a!, b: b!, distance: Number(withLength), xlen: Number(withoutLength) }))
const tlshQueries = [...new Set(tlshRows.map((row) => row.a))]
  .map((a) => ({ a, partners: tlshRows.filter((row) => row.a === a) }))
  .filter((query) => new Set(query.partners.map((row) => row.b)).size === query.partners.length)
  .sort((x, y) => y.partners.length - x.partners.length).slice(0, 2)

// ssdeep: the hashes of the libfuzzy fixture.
const ssdeepHashes = [...new Set(readFileSync(join(FIXTURES, 'ssdeep', 'compare.txt'), 'utf8').split('\n')
  .filter((line) => line !== '' && !line.startsWith('#')).flatMap((line) => line.split(' ').slice(0, 2)))]
const fuzzy: Entry[] = ssdeepHashes.map((hash, i) => ({ hash, id: `f${i}`, label: null }))

/** libfuzzy's fuzzy_compare of each query with every entry (Debian's libfuzzy2 through ctypes). */
function ssdeepScores(queries: readonly string[], entries: readonly Entry[]): number[][] {
  const script = `
import ctypes, json, sys
lib = ctypes.CDLL('libfuzzy.so.2')
lib.fuzzy_compare.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
data = json.load(sys.stdin)
print(json.dumps([[lib.fuzzy_compare(q.encode(), e.encode()) for e in data['entries']] for q in data['queries']]))
`
  return JSON.parse(python(script, [], JSON.stringify({ queries, entries: entries.map((entry) => entry.hash) }))) as number[][]
}

const digestEntries = (algorithm: string, count: number): Entry[] =>
  Array.from({ length: count }, (_, i) => ({ hash: createHash(algorithm).update(`file ${i}`).digest('hex'), id: `${algorithm}-${i}`, label: `file ${i}` }))
const md5s = digestEntries('md5', 50)
const sha256s = digestEntries('sha256', 50)

/** The file's data SHA-256 as an outside tool reads it: everything after the 256-byte header (Python's hashlib). */
const dataSha256 = (file: string) => python('import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()[256:]).hexdigest())', [file])

let server: TestServer
const post = (body: unknown, key = keys.admin) => server.post('/api/similarity/match', body, auth(key))
const health = async () => (await server.fetch('/api/health', { headers: auth(keys.admin) }).then((response) => response.json())) as { degraded: boolean, similarity?: { banks: Array<{ name: string, state: string, type?: string, count?: number, dataSha256?: string, lastError?: { reason: string } }> } }
const bankInHealth = async (name: string) => (await health()).similarity?.banks.find((bank) => bank.name === name)

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail(`timed out waiting for ${what}`)
}

/** The ssdeep oracle is libfuzzy (Debian's libfuzzy2); PDQ's is Python's own integers. */
const oracleSkip = skipUnless('libfuzzy')

describe('POST /api/similarity/match', { skip: oracleSkip }, () => {
  before(async () => {
    importBank('photos', 'pdq', photos)
    importBank('photos2', 'pdq', photos2)
    tlshQueries.forEach((query, q) => importBank(`tlsh-${q}`, 'tlsh', [{ hash: query.a, id: 'self', label: null }, ...query.partners.map((row, i) => ({ hash: row.b, id: `p${i}`, label: `partner ${i}` }))]))
    importBank('fuzzy', 'ssdeep', fuzzy)
    importBank('md5s', 'md5', md5s)
    importBank('sha256s', 'sha256', sha256s)
    writeFileSync(join(banksDir, 'README.txt'), 'not a bank\n')
    const keysFile = join(dir, 'api-keys')
    writeFileSync(keysFile, `admin ${hashKey(keys.admin)}\nlimited ${hashKey(keys.limited)} scopes=similarity:match,health banks=photos2,md5s\ncompare ${hashKey(keys.compareOnly)} scopes=similarity\n`)
    server = await startServer({ SIMILARITY_BANKS_DIR: banksDir, API_KEYS_FILE: keysFile, FILE_RELOAD_POLL_MS: '200' })
  })
  after(async () => { await server?.close() })

  it('waits for its banks to open past avvio\'s default 10 s (a 10 M-hash bank takes 10–25 s to index)', () => {
    // A bank large enough to pass 10 s is too slow to make here: bench:banks-http at 10 M starts the
    // server on one (it failed to start with the default); this holds the setting it needs.
    assert.equal(server.app.initialConfig.pluginTimeout, PLUGIN_TIMEOUT_MS)
    assert.ok(PLUGIN_TIMEOUT_MS >= 600_000)
  })

  it('lists each bank in /api/health with its type, count and data SHA-256 (read by Python)', async () => {
    const listed = (await health()).similarity?.banks ?? []
    const expected = [['fuzzy', 'ssdeep', fuzzy.length], ['md5s', 'md5', md5s.length], ['photos', 'pdq', photos.length], ['photos2', 'pdq', photos2.length], ['sha256s', 'sha256', sha256s.length],
      ...tlshQueries.map((query, q) => [`tlsh-${q}`, 'tlsh', query.partners.length + 1])]
    assert.deepEqual(listed.map(({ name, type, count, state }) => [name, type, count, state]), expected.map(([name, type, count]) => [name, type, count, 'serving']))
    for (const bank of listed) assert.equal(bank.dataSha256, dataSha256(join(banksDir, `${bank.name}.bank`)), bank.name)
    assert.equal((await health()).degraded, false)
  })

  it('finds every PDQ entry within the default distance (31) in every pdq bank, as a linear scan in Python does', async () => {
    for (const needle of needles.slice(0, 3)) {
      const response = await post({ algorithm: 'pdq', hash: needle })
      assert.equal(response.status, 200, response.text)
      const oracle = pdqOracle({ photos, photos2 }, [needle], 31)
      assert.ok(oracle.length > 2)
      assert.deepEqual(response.body.banks, ['photos', 'photos2'])
      assert.equal(response.body.maxDistance, 31)
      assert.equal(response.body.truncated, false)
      assert.deepEqual(response.body.matches, oracle.map(({ bank, id, label, distance }) => ({ bank, id, label, distance })))
    }
  })

  it('answers items in order, each against its own oracle, at other distances and in one named bank', async () => {
    const cases = [
      { algorithm: 'pdq', hash: needles[3]!, maxDistance: 0 },
      { algorithm: 'PDQ', hash: needles[4]!.toUpperCase(), maxDistance: 12, banks: ['photos2'] },
      { hash: needles[5]!, maxDistance: 64 },
      { hash: randomBytes(32).toString('hex'), maxDistance: 20 },
    ]
    const response = await post({ algorithm: 'pdq', items: cases.map((item, i) => ({ ...item, reference: `r${i}` })) })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.results.length, cases.length)
    cases.forEach((item, i) => {
      const oracle = pdqOracle(item.banks ? { photos2 } : { photos, photos2 }, [item.hash], item.maxDistance)
      const result = response.body.results[i]
      assert.equal(result.reference, `r${i}`)
      assert.deepEqual(result.matches, oracle.map(({ bank, id, label, distance }) => ({ bank, id, label, distance })), `item ${i}`)
    })
  })

  it('cuts at limit and says truncated; the kept entries are the nearest', async () => {
    const oracle = pdqOracle({ photos, photos2 }, [needles[0]!], 64)
    assert.ok(oracle.length > 5)
    const response = await post({ algorithm: 'pdq', hash: needles[0], maxDistance: 64, limit: 5 })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.truncated, true)
    assert.deepEqual(response.body.matches, oracle.slice(0, 5).map(({ bank, id, label, distance }) => ({ bank, id, label, distance })))
    const exact = await post({ algorithm: 'pdq', hash: needles[0], maxDistance: 64, limit: oracle.length })
    assert.equal(exact.body.truncated, false)
    assert.equal(exact.body.matches.length, oracle.length)
  })

  it('matches PDQ\'s dihedral hashes: each entry once, at its least distance, naming the nearest variant', async () => {
    // The "image" hash is unrelated; its rotation is near needle 1 and its flip near needle 2.
    const dihedral = { rotate90: flipBits(random, needles[1]!, 3), flipX: flipBits(random, needles[2]!, 5) }
    const original = randomBytes(32).toString('hex')
    const response = await post({ algorithm: 'pdq', hash: original, dihedral })
    assert.equal(response.status, 200, response.text)
    const names = ['original', 'rotate90', 'flipX']
    const oracle = pdqOracle({ photos, photos2 }, [original, dihedral.rotate90, dihedral.flipX], 31)
    assert.ok(oracle.some((match) => match.variant === 1) && oracle.some((match) => match.variant === 2))
    assert.deepEqual(response.body.matches, oracle.map(({ bank, id, label, distance, variant }) => ({ bank, id, label, distance, variant: names[variant] })))
  })

  it('finds TLSH entries at the reference\'s distances, with and without the length term', async () => {
    assert.ok(tlshQueries.length === 2 && tlshQueries.every((query) => query.partners.length >= 3))
    for (const [q, query] of tlshQueries.entries()) {
      for (const [maxDistance, lengthTerm] of [[30, true], [100, true], [100, false], [400, true]] as const) {
        const response = await post({ algorithm: 'tlsh', hash: query.a, banks: [`tlsh-${q}`], maxDistance, lengthTerm, limit: 1000 })
        assert.equal(response.status, 200, response.text)
        const expected = [{ id: 'self', distance: 0 }, ...query.partners.map((row, i) => ({ id: `p${i}`, distance: lengthTerm ? row.distance : row.xlen }))]
          .filter((entry) => entry.distance <= maxDistance)
        const got = response.body.matches as Array<{ id: string, distance: number }>
        assert.deepEqual(got.map(({ id, distance }) => ({ id, distance })).sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1)),
          expected.sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1)), `tlsh-${q} at ${maxDistance} lengthTerm ${lengthTerm}`)
        assert.ok(got.every((match, i) => i === 0 || got[i - 1]!.distance <= match.distance), 'sorted by distance')
      }
    }
  })

  it('finds every ssdeep entry at or above minScore, with libfuzzy\'s scores', async () => {
    const queries = [fuzzy[0]!.hash, fuzzy[7]!.hash, fuzzy[40]!.hash, '3:abcdefgh:abcd']
    const scores = ssdeepScores(queries, fuzzy)
    // The fixture's pairs are near-copies: each of the first three queries has partners above 50.
    for (let q = 0; q < 3; q++) assert.ok(scores[q]!.filter((score) => score >= 50).length >= 2, `query ${q} has partners`)
    for (const minScore of [50, 1, 90]) {
      const response = await post({ algorithm: 'ssdeep', minScore, limit: 1000, items: queries.map((hash) => ({ hash })) })
      assert.equal(response.status, 200, response.text)
      queries.forEach((_query, q) => {
        const expected = fuzzy.map((entry, i) => ({ id: entry.id, score: scores[q]![i]! })).filter((entry) => entry.score >= minScore)
        const got = response.body.results[q].matches as Array<{ id: string, score: number, bank: string }>
        assert.deepEqual(got.map(({ id, score }) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)),
          expected.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)), `query ${q} at ${minScore}`)
        assert.ok(got.every((match, i) => i === 0 || got[i - 1]!.score >= match.score), 'sorted by score')
        assert.equal(response.body.results[q].minScore, minScore)
      })
    }
  })

  it('matches exact digests (distance 0 only), whatever the hex case; a 64-hex sha256 is not searched in the pdq banks', async () => {
    const known = md5s[7]!
    const found = await post({ algorithm: 'md5', hash: known.hash.toUpperCase() })
    assert.equal(found.status, 200, found.text)
    assert.deepEqual(found.body.matches, [{ bank: 'md5s', id: known.id, label: known.label, distance: 0 }])
    const unknown = await post({ algorithm: 'md5', hash: createHash('md5').update('no such file').digest('hex') })
    assert.deepEqual([unknown.body.matches, unknown.body.banks], [[], ['md5s']])
    const sha = await post({ algorithm: 'sha256', hash: sha256s[3]!.hash, maxDistance: 0 })
    assert.deepEqual([sha.body.banks, sha.body.matches.map((match: { id: string }) => match.id)], [['sha256s'], [sha256s[3]!.id]])
  })

  it('refuses each bad input with a problem naming the field, the bank or the reason', async () => {
    const problem = async (body: unknown, status: number, pointer?: string, detail?: RegExp, type?: string) => {
      const response = await post(body)
      assert.equal(response.status, status, `${JSON.stringify(body).slice(0, 120)}: ${response.text}`)
      assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/)
      if (pointer !== undefined) assert.ok((response.body.errors as Array<{ pointer: string }>).some((error) => error.pointer === pointer), `${pointer} in ${response.text}`)
      if (detail) assert.match(response.body.detail, detail)
      if (type) assert.equal(response.body.type, `urn:hashd:problem:${type}`)
      return response.body
    }
    await problem({ algorithm: 'pdq', hash: 'abc' }, 400, '/body/hash', /not a pdq hash/)
    await problem({ algorithm: 'pdq', hash: 'g'.repeat(64) }, 400, '/body/hash')
    await problem({ algorithm: 'tlsh', hash: needles[0] }, 400, '/body/hash', /not a tlsh hash/)
    await problem({ algorithm: 'md5', hash: sha256s[0]!.hash }, 400, '/body/hash')
    await problem({ hash: needles[0] }, 400, '/body/algorithm', /algorithm is required/)
    await problem({ algorithm: 'whirlpool', hash: needles[0] }, 400, '/body/algorithm')
    await problem({ algorithm: 'pdq', hash: needles[0], minScore: 50 }, 400, '/body/minScore')
    await problem({ algorithm: 'pdq', hash: needles[0], maxDistance: 257 }, 400, '/body/maxDistance')
    await problem({ algorithm: 'ssdeep', hash: fuzzy[0]!.hash, maxDistance: 3 }, 400, '/body/maxDistance')
    await problem({ algorithm: 'md5', hash: md5s[0]!.hash, maxDistance: 1 }, 400, '/body/maxDistance', /only be 0/)
    await problem({ algorithm: 'pdq', hash: needles[0], lengthTerm: false }, 400, '/body/lengthTerm')
    await problem({ algorithm: 'tlsh', hash: tlshQueries[0]!.a, dihedral: { rotate90: needles[0] } }, 400, '/body/dihedral')
    await problem({ algorithm: 'pdq', hash: needles[0], dihedral: { rotate90: 'xyz' } }, 400, '/body/dihedral/rotate90')
    await problem({ algorithm: 'pdq', hash: needles[0], limit: 1001 }, 400, '/body/limit')
    await problem({ algorithm: 'pdq', hash: needles[0], limit: 0 }, 400, '/body/limit')
    await problem({ algorithm: 'pdq', hash: needles[0], banks: ['bad/name'] }, 400, '/body/banks/0')
    const unknown = await problem({ algorithm: 'pdq', hash: needles[0], banks: ['photos', 'nosuch'] }, 404, '/body/banks/1', /nosuch/, 'unknown-bank')
    assert.equal(unknown.bank, 'nosuch')
    const mismatch = await problem({ algorithm: 'pdq', hash: needles[0], banks: ['sha256s'] }, 422, '/body/banks/0', /sha256s holds sha256 hashes/, 'bank-type-mismatch')
    assert.equal(mismatch.bank, 'sha256s')
    await problem({ algorithm: 'pdq', items: Array.from({ length: 1001 }, () => ({ hash: needles[0] })) }, 400, '/body/items')
    // In a batch, an item's problem is that item's, its pointer under the item; the others are answered.
    const batch = await post({ algorithm: 'pdq', items: [{ hash: needles[0] }, { hash: needles[1] }, { hash: needles[2] }, { hash: 'nope' }, { hash: needles[0], banks: ['nosuch'] }] })
    assert.equal(batch.status, 200, batch.text)
    assert.equal(batch.body.results[3].problem.status, 400)
    assert.deepEqual(batch.body.results[3].problem.errors.map((error: { pointer: string }) => error.pointer), ['/body/items/3/hash'])
    assert.equal(batch.body.results[4].problem.status, 404)
    assert.ok(Array.isArray(batch.body.results[2].matches))
    // An unknown algorithm, or an unknown bank or one of another type, at the top is the whole batch's.
    await problem({ algorithm: 'whirlpool', items: [{ hash: needles[0] }] }, 400, '/body/algorithm')
    await problem({ banks: ['nosuch'], items: [{ algorithm: 'pdq', hash: needles[0] }] }, 404, '/body/banks/0', /nosuch/, 'unknown-bank')
    await problem({ algorithm: 'pdq', banks: ['md5s'], items: [{ hash: needles[0] }] }, 422, '/body/banks/0', undefined, 'bank-type-mismatch')
  })

  it('needs the similarity:match scope; a key with banks= searches only its banks and gets 403 naming another', async () => {
    const refused = await post({ algorithm: 'pdq', hash: needles[0] }, keys.compareOnly)
    assert.equal(refused.status, 403)
    assert.equal(refused.body.scope, 'similarity:match')
    const mine = await post({ algorithm: 'pdq', hash: needles[0] }, keys.limited)
    assert.equal(mine.status, 200, mine.text)
    assert.deepEqual(mine.body.banks, ['photos2'])
    assert.deepEqual(mine.body.matches, pdqOracle({ photos2 }, [needles[0]!], 31).map(({ bank, id, label, distance }) => ({ bank, id, label, distance })))
    const other = await post({ algorithm: 'pdq', hash: needles[0], banks: ['photos2', 'photos'] }, keys.limited)
    assert.equal(other.status, 403)
    assert.equal(other.body.scope, 'banks')
    assert.match(other.body.detail, /bank photos:/)
    assert.deepEqual(other.body.errors.map((error: { pointer: string }) => error.pointer), ['/body/banks/1'])
    // A bank the key may not search is refused whether or not it exists: 403, not 404.
    assert.equal((await post({ algorithm: 'pdq', hash: needles[0], banks: ['nosuch'] }, keys.limited)).status, 403)
    const none = await post({ algorithm: 'tlsh', hash: tlshQueries[0]!.a }, keys.limited)
    assert.equal(none.status, 422)
    assert.equal(none.body.type, 'urn:hashd:problem:no-banks')
    assert.match(none.body.detail, /no tlsh bank that this API key may search/)
  })

  it('swaps a replaced bank in, keeps the old one when the new file is corrupt, and drops a removed one', async () => {
    // Replaced: bank:import writes a temporary file and renames it over the bank.
    const grown = [...photos2, ...pdqEntries('grown', 50).filter((entry) => entry.id.includes('needle'))]
    importBank('photos2', 'pdq', grown)
    await until(async () => (await bankInHealth('photos2'))?.count === grown.length, 'photos2 to be reloaded')
    const after = await post({ algorithm: 'pdq', hash: needles[0], banks: ['photos2'] })
    assert.deepEqual(after.body.matches, pdqOracle({ photos2: grown }, [needles[0]!], 31).map(({ bank, id, label, distance }) => ({ bank, id, label, distance })))
    assert.equal((await bankInHealth('photos2'))?.dataSha256, dataSha256(join(banksDir, 'photos2.bank')))

    // Corrupt: a truncated copy, then one with a byte of its data changed. The version in force stays.
    const md5File = join(banksDir, 'md5s.bank')
    const good = readFileSync(md5File)
    const before = await bankInHealth('md5s')
    for (const bad of [good.subarray(0, good.length - 7), Buffer.concat([good.subarray(0, 300), Buffer.from([good[300]! ^ 1]), good.subarray(301)])]) {
      writeFileSync(`${md5File}.tmp`, bad)
      renameSync(`${md5File}.tmp`, md5File)
      await until(async () => (await bankInHealth('md5s'))?.lastError?.reason.includes(md5File) === true, 'md5s to be refused')
      const listed = await bankInHealth('md5s')
      assert.equal(listed?.state, 'serving')
      assert.equal(listed?.dataSha256, before?.dataSha256)
      assert.equal((await health()).degraded, true)
      assert.match(server.logs(), /similarity bank refused: the version in force stays/)
      const metrics = await (await server.fetch('/metrics', { headers: auth(keys.admin) })).text()
      assert.match(metrics, /^hashd_similarity_bank_refused\{bank="md5s"\} 1$/m)
      assert.match(metrics, new RegExp(`^hashd_similarity_bank_entries\\{bank="md5s",type="md5"\\} ${md5s.length}$`, 'm'))
      assert.match(metrics, /^hashd_similarity_bank_refused\{bank="photos"\} 0$/m)
      const still = await post({ algorithm: 'md5', hash: md5s[1]!.hash })
      assert.deepEqual(still.body.matches.map((match: { id: string }) => match.id), [md5s[1]!.id])
      writeFileSync(`${md5File}.tmp`, good)
      renameSync(`${md5File}.tmp`, md5File)
      await until(async () => (await bankInHealth('md5s'))?.lastError === undefined, 'md5s to be whole again')
    }
    assert.equal((await health()).degraded, false)

    // A new name whose file is corrupt: refused, listed as such, and 404 to a match.
    writeFileSync(join(banksDir, 'broken.bank'), good.subarray(0, 100))
    await until(async () => (await bankInHealth('broken'))?.state === 'refused', 'broken to be refused')
    assert.match((await bankInHealth('broken'))?.lastError?.reason ?? '', /broken\.bank/)
    assert.equal((await post({ algorithm: 'md5', hash: md5s[1]!.hash, banks: ['broken'] })).status, 404)
    rmSync(join(banksDir, 'broken.bank'))

    // Removed: gone from health and from matches.
    rmSync(join(banksDir, 'sha256s.bank'))
    await until(async () => (await bankInHealth('sha256s')) === undefined, 'sha256s to be removed')
    assert.equal((await post({ algorithm: 'sha256', hash: sha256s[0]!.hash, banks: ['sha256s'] })).status, 404)
    const noBank = await post({ algorithm: 'sha256', hash: sha256s[0]!.hash })
    assert.equal(noBank.status, 422)
    assert.match(noBank.body.detail, /holds no sha256 bank/)
  })

  it('hashes an upload and matches its PDQ (dihedral too) in the same call', async () => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'pdq', 'expected.json'), 'utf8')) as Record<string, { hash: string, dihedral: Record<string, string> }>
    const palette = expected['gen-palette-640x480.png']!
    const images: Entry[] = [
      { hash: palette.hash, id: 'palette', label: 'the reference\'s hash' },
      { hash: flipBits(random, palette.dihedral.rotate90!, 4), id: 'palette-turned', label: null },
      { hash: flipBits(random, palette.dihedral.flipY!, 9), id: 'palette-flipped', label: null },
      { hash: expected['gen-gray-200x300.png']!.hash, id: 'gray', label: null },
      ...Array.from({ length: 30 }, (_, i) => ({ hash: randomBytes(32).toString('hex'), id: `r${i}`, label: null })),
    ]
    importBank('images', 'pdq', images)
    await until(async () => (await bankInHealth('images'))?.count === images.length, 'images to be opened')
    const image = readFileSync(join(FIXTURES, 'pdq', 'gen-palette-640x480.png'))
    for (const dihedral of [false, true]) {
      const response = await server.fetch(`/api/similarity/match/file?algorithms=pdq&banks=images&dihedral=${dihedral}&name=p.png`, { method: 'POST', headers: { ...auth(keys.admin), 'content-type': 'application/octet-stream' }, body: image })
      const body = await response.json() as { name: string, hashes: { pdq: { hash: string, dihedral?: Record<string, string> } }, matches: { pdq: { banks: string[], matches: Array<{ id: string, variant?: string }> } } }
      assert.equal(response.status, 200, JSON.stringify(body))
      assert.equal(body.name, 'p.png')
      const names = ['original', 'rotate90', 'rotate180', 'rotate270', 'flipX', 'flipY', 'flipPlus1', 'flipMinus1']
      const queries = dihedral ? names.map((name) => (name === 'original' ? body.hashes.pdq.hash : body.hashes.pdq.dihedral![name]!)) : [body.hashes.pdq.hash]
      const oracle = pdqOracle({ images }, queries, 31)
      assert.deepEqual(body.matches.pdq.banks, ['images'])
      assert.deepEqual(body.matches.pdq.matches, oracle.map(({ bank, id, label, distance, variant }) => ({ bank, id, label, distance, ...(dihedral ? { variant: names[variant] } : {}) })))
      // hashd's PDQ is within 8 bits of the reference's on a PNG, so the image finds the reference's hash, and turned and flipped copies with dihedral.
      assert.deepEqual(oracle.map((match) => match.id).sort(), dihedral ? ['palette', 'palette-flipped', 'palette-turned'] : ['palette'])
    }
  })

  it('hashes a multipart upload with ssdeep and TLSH and matches each (a type without a bank answers banks: [])', { skip: skipUnless('ssdeep') }, async () => {
    const words = ['match', 'bank', 'hash', 'fuzzy', 'piece', 'block', 'entry', 'the', 'of', 'and', '\n']
    const text = (length: number) => { let out = ''; while (out.length < length) out += `${random.pick(words)} `; return Buffer.from(out) }
    const base = text(30_000)
    const files = [base, Buffer.concat([base.subarray(0, 12_000), text(500), base.subarray(12_000)]), text(30_000), Buffer.concat([base.subarray(0, 20_000), text(9_000)])]
    files.forEach((data, i) => writeFileSync(join(dir, `doc${i}`), data))
    // Debian's ssdeep hashes the bank's entries and the upload.
    const ssdeepOf = (file: string) => execFileSync('ssdeep', ['-s', '-b', file], { encoding: 'utf8' }).trim().split('\n')[1]!.split(',')[0]!
    const docs: Entry[] = files.slice(1).map((_, i) => ({ hash: ssdeepOf(join(dir, `doc${i + 1}`)), id: `doc${i + 1}`, label: null }))
    importBank('docs', 'ssdeep', docs)
    await until(async () => (await bankInHealth('docs'))?.count === docs.length, 'docs to be opened')
    const boundary = 'match-boundary'
    const form = Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="algorithms"\r\n\r\nssdeep,tlsh\r\n`),
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="doc0.txt"\r\ncontent-type: text/plain\r\n\r\n`), base,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ])
    const response = await server.fetch('/api/similarity/match/file?banks=docs&ssdeepMinScore=1', { method: 'POST', headers: { ...auth(keys.admin), 'content-type': `multipart/form-data; boundary=${boundary}` }, body: form })
    const body = await response.json() as { name: string, size: number, hashes: { ssdeep: string, tlsh: string }, matches: { ssdeep: { banks: string[], matches: Array<{ id: string, score: number }> }, tlsh: { banks: string[], matches: unknown[] } } }
    assert.equal(response.status, 200, JSON.stringify(body))
    assert.deepEqual([body.name, body.size], ['doc0.txt', base.length])
    assert.equal(body.hashes.ssdeep, ssdeepOf(join(dir, 'doc0')))
    const scores = ssdeepScores([body.hashes.ssdeep], docs)[0]!
    const expected = docs.map((entry, i) => ({ id: entry.id, score: scores[i]! })).filter((entry) => entry.score >= 1).sort((a, b) => b.score - a.score)
    assert.ok(expected.length >= 2, 'the near copies score')
    assert.deepEqual(body.matches.ssdeep.matches.map(({ id, score }) => ({ id, score })), expected)
    assert.deepEqual(body.matches.ssdeep.banks, ['docs'])
    assert.deepEqual([body.matches.tlsh.banks, body.matches.tlsh.matches], [[], []])
    // The same hashes through the JSON route give the same matches.
    const again = await post({ algorithm: 'ssdeep', hash: body.hashes.ssdeep, minScore: 1, banks: ['docs'] })
    assert.deepEqual(again.body.matches, body.matches.ssdeep.matches)
  })

  it('refuses a bad upload match before reading it, and a non-image sent to PDQ', async () => {
    const send = async (query: string, body: Buffer, key = keys.admin) => {
      const response = await server.fetch(`/api/similarity/match/file?${query}`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/octet-stream' }, body })
      return { status: response.status, type: response.headers.get('content-type'), body: await response.json() as { type: string, detail: string, errors?: Array<{ pointer: string }>, bank?: string } }
    }
    const data = randomBytes(5000)
    const bad = await send('algorithms=ssdeep,md5', data)
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body.errors?.map((error) => error.pointer), ['/querystring/algorithms'])
    const unknown = await send('banks=docs,nosuch', data)
    assert.deepEqual([unknown.status, unknown.body.type, unknown.body.bank], [404, 'urn:hashd:problem:unknown-bank', 'nosuch'])
    assert.match(unknown.type ?? '', /^application\/problem\+json/)
    const mismatch = await send('algorithms=pdq&banks=md5s', data)
    assert.deepEqual([mismatch.status, mismatch.body.type], [422, 'urn:hashd:problem:bank-type-mismatch'])
    const forbidden = await send('algorithms=pdq&banks=photos', data, keys.limited)
    assert.equal(forbidden.status, 403)
    assert.match(forbidden.body.detail, /bank photos:/)
    const notImage = await send('algorithms=pdq', data)
    assert.deepEqual([notImage.status, notImage.body.type], [422, 'urn:hashd:problem:not-an-image'])
    const tooShort = await send('algorithms=tlsh', Buffer.from('short'))
    assert.deepEqual([tooShort.status, tooShort.body.type], [422, 'urn:hashd:problem:tlsh-input'])
  })
})

describe('batches over a PDQ bank large enough to be indexed', { skip: oracleSkip }, () => {
  // 70,000 hashes: the bank is searched by multi-index hashing (19 slices of 13 bits), and a batch's searches are gathered
  // and run together (MatchGatherer, PdqSearcher.searchMany); each answer must still be its scan's.
  const big = pdqEntries('big', 70_000)
  const folder = join(dir, 'indexed')
  let indexed: TestServer
  before(async () => {
    mkdirSync(folder)
    importBank('big', 'pdq', big, folder)
    indexed = await startServer({ SIMILARITY_BANKS_DIR: folder })
  })
  after(async () => { await indexed?.close() })

  it('answers every item of a batch as a linear scan in Python does, with a bad item among them', async () => {
    const queries = [
      ...needles,
      ...needles.map((needle) => flipBits(random, needle, 9)),
      ...Array.from({ length: 20 }, () => randomBytes(32).toString('hex')),
      ...big.slice(0, 10).map((entry) => flipBits(random, entry.hash, 5)),
    ]
    const items: Array<{ hash: string, maxDistance?: number }> = queries.map((hash, i) => ({ hash, ...(i % 4 === 1 ? { maxDistance: 20 } : {}) }))
    items.splice(7, 0, { hash: 'not a hash' })
    const response = await indexed.post('/api/similarity/match', { algorithm: 'pdq', limit: 1000, items })
    assert.equal(response.status, 200, response.text)
    assert.equal(response.body.results.length, items.length)
    assert.deepEqual(response.body.results[7].problem.errors.map((error: { pointer: string }) => error.pointer), ['/body/items/7/hash'])
    let matched = 0
    const oracles = pdqOracleMany({ big }, items.map((item, i) => ({ queries: [i === 7 ? needles[0]! : item.hash], max: item.maxDistance ?? 31 })))  // item 7 is the bad one, not checked
    items.forEach((item, i) => {
      if (i === 7) return
      const oracle = oracles[i]!
      matched += oracle.length
      assert.deepEqual(response.body.results[i].matches, oracle.map(({ bank, id, label, distance }) => ({ bank, id, label, distance })), `item ${i}`)
    })
    assert.ok(matched > 40, `planted near-duplicates were found (${matched})`)
  })

  it('matches dihedral items in a batch at each entry\'s least distance, naming the variant', async () => {
    const [a, b, c] = [needles[0]!, needles[1]!, needles[2]!]
    const items = [
      { hash: a, dihedral: { rotate90: b, flipX: flipBits(random, c, 4) } },
      { hash: randomBytes(32).toString('hex'), dihedral: { rotate180: a } },
    ]
    const response = await indexed.post('/api/similarity/match', { algorithm: 'pdq', limit: 1000, items })
    assert.equal(response.status, 200, response.text)
    items.forEach((item, i) => {
      const names = ['original', ...Object.keys(item.dihedral)]
      const oracle = pdqOracle({ big }, [item.hash, ...Object.values(item.dihedral)], 31)
      const strip = (matches: Array<{ id: string, distance: number }>) => matches.map(({ id, distance }) => `${id}:${distance}`)
      assert.deepEqual(strip(response.body.results[i].matches), strip(oracle), `item ${i}`)
      // Ties between variants may name either; a variant named is one at the entry's distance.
      for (const match of response.body.results[i].matches as Array<{ id: string, variant: string, distance: number }>) {
        const best = oracle.find((entry) => entry.id === match.id)!
        assert.ok(names.includes(match.variant), match.variant)
        if (names[best.variant] !== match.variant) {
          const query = [item.hash, ...Object.values(item.dihedral)][names.indexOf(match.variant)]!
          assert.equal(pdqOracle({ big: big.filter((entry) => entry.id === match.id) }, [query], 256)[0]!.distance, match.distance)
        }
      }
    })
  })
})

describe('match without banks, and the rate limit', () => {
  it('is 422 no-banks on a server without SIMILARITY_BANKS_DIR (no empty answer that looks like "no match")', async () => {
    const bare = await startServer()
    try {
      const response = await bare.post('/api/similarity/match', { algorithm: 'pdq', hash: needles[0] })
      assert.equal(response.status, 422)
      assert.equal(response.body.type, 'urn:hashd:problem:no-banks')
      assert.match(response.body.detail, /SIMILARITY_BANKS_DIR is not set/)
    } finally {
      await bare.close()
    }
  })

  it('starts with a corrupt bank refused (naming the file) and the others serving; a folder that cannot be read stops it', async () => {
    const folder = join(dir, 'at-start')
    mkdirSync(folder)
    importBank('good', 'md5', md5s.slice(0, 5), folder)
    writeFileSync(join(folder, 'bad.bank'), readFileSync(join(folder, 'good.bank')).subarray(0, 200))
    const started = await startServer({ SIMILARITY_BANKS_DIR: folder })
    try {
      const refusal = started.logs().split('\n').find((line) => line.includes('"msg":"similarity bank refused"'))
      assert.ok(refusal?.includes(`"reason":"SIMILARITY_BANKS_DIR ${join(folder, 'bad.bank')}: it is 200 bytes long`), refusal)
      const good = await started.post('/api/similarity/match', { algorithm: 'md5', hash: md5s[2]!.hash })
      assert.deepEqual([good.status, good.body.banks, good.body.matches.map((match: { id: string }) => match.id)], [200, ['good'], [md5s[2]!.id]])
      assert.equal((await started.post('/api/similarity/match', { algorithm: 'md5', hash: md5s[2]!.hash, banks: ['bad'] })).status, 404)
      assert.equal((await started.get('/api/health')).body.degraded, true)
    } finally {
      await started.close()
    }
    await assert.rejects(startServer({ SIMILARITY_BANKS_DIR: join(dir, 'no-such-folder') }), /SIMILARITY_BANKS_DIR .*no-such-folder cannot be read as a folder \(ENOENT\)/)
  })

  it('counts each item against the items budget', async () => {
    const folder = join(dir, 'small')
    mkdirSync(folder)
    importBank('few', 'md5', md5s.slice(0, 5), folder)
    const limited = await startServer({ SIMILARITY_BANKS_DIR: folder, RATE_LIMIT_MAX: '100', RATE_LIMIT_ITEMS_MAX: '10' })
    try {
      const items = (count: number) => ({ algorithm: 'md5', items: Array.from({ length: count }, (_, i) => ({ hash: md5s[i % 5]!.hash })) })
      const fits = await limited.post('/api/similarity/match', items(8))
      assert.equal(fits.status, 200, fits.text)
      assert.deepEqual(fits.body.results.map((result: { matches: Array<{ id: string }> }) => result.matches[0]?.id), Array.from({ length: 8 }, (_, i) => md5s[i % 5]!.id))
      const over = await limited.post('/api/similarity/match', items(3))
      assert.equal(over.status, 429)
    } finally {
      await limited.close()
    }
  })
})
