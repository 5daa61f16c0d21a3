/**
 * /api/identify's ranking rules that read a discriminating feature of the string (not its mere
 * syntax), each checked on hashes made live by an independent tool or built the way the cited
 * source says the application writes them:
 * - CRC32/CRC32C in hashcat's `checksum:initial value` form: the standard CRC (Python's
 *   zlib.crc32) has initial value 00000000; a non-zero one points to a seeded or keyed mode;
 * - SAP BCODE and PASSCODE read through RFC_READ_TABLE come back zero-filled after their first 4
 *   (10) bytes, which is hashcat -m 7701 (7801), not -m 7700 (7800);
 * - passlib's pbkdf2_sha256 with its default 16-byte salt is passlib; with a 32-byte salt the
 *   same syntax is more likely NetIQ SSPR (hashcat -m 32060);
 * - 16 letters and nothing else are OpenEdge's ENCODE (hashcat -m 26200 accepts A-Z a-z only),
 *   while a 16-character crypt64 string with a digit, `.` or `/` is Cisco-PIX (passlib cisco_pix);
 *   a letters-only DES crypt string (passlib des_crypt) stays DES crypt with its full confidence.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const PASSWORD = 'correct horse battery staple'

interface Match {
  algorithm: string
  hashcat: number | null
  variants?: Array<{ hashcat: number }>
}

const modesOf = (match: Match): Array<number | null> => [match.hashcat, ...(match.variants ?? []).map((variant) => variant.hashcat)]
/** The flattened rank (1-based) of a hashcat mode: each match, then its variants, one rank each. */
const flatRank = (matches: Match[], mode: number): number => matches.flatMap(modesOf).indexOf(mode) + 1

describe('/api/identify ranking clues', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const identify = async (hash: string): Promise<Match[]> => {
    const response = await server.post('/api/identify', { hash })
    assert.equal(response.status, 200, response.text)
    return response.body.matches
  }

  it('reads checksum:00000000 as the standard CRC-32 and a non-zero initial value as a seeded or keyed mode', { skip: skipUnless('python3') }, async () => {
    // zlib.crc32 is the standard CRC-32 (initial value 0); crc32(data, start) continues from start.
    const standard = python('import sys, zlib; print("%08x:00000000" % zlib.crc32(sys.argv[1].encode()))', [PASSWORD])
    const first = (await identify(standard))[0]!
    assert.equal(first.hashcat, 11500, `${standard} → ${modesOf(first).join(',')}`)
    assert.ok(modesOf(first).includes(27900), 'CRC32C reads the same syntax')

    const seeded = python('import sys, zlib; s = int(sys.argv[2], 16); print("%08x:%08x" % (zlib.crc32(sys.argv[1].encode(), s), s))', [PASSWORD, '5eed1234'])
    const matches = await identify(seeded)
    assert.ok([25700, 27800, 14900].includes(matches[0]!.hashcat ?? -1), `${seeded} → ${matches.map((match) => match.hashcat).join(',')}`)
    const crc = flatRank(matches, 11500)
    assert.ok(crc > 1 && crc <= 5, `CRC32 with a custom initial value stays a candidate (rank ${crc})`)
  })

  it('tells SAP hashes read through RFC_READ_TABLE (zero-filled tail) from full ones', async () => {
    // Shapes from hashcat's modules 7700/7701/7800/7801: `user$` + 16 uppercase hex (BCODE) or 40
    // hex (PASSCODE); RFC_READ_TABLE keeps the first 4 (10) bytes and zero-fills the rest, which
    // is all -m 7701 (7801) compares (OpenCL/m07701_a0-optimized.cl, m07801_a0-optimized.cl).
    const bcode = randomBytes(8).toString('hex').toUpperCase().replace(/0{8}$/, '00000001')
    const passcode = randomBytes(20).toString('hex').replace(/0{20}$/, '1'.padStart(20, '0'))
    const cases: Array<[string, number, number]> = [
      [`DDIC$${bcode}`, 7700, 7701],
      [`DDIC$${bcode.slice(0, 8)}00000000`, 7701, 7700],
      [`SAP*$${passcode}`, 7800, 7801],
      [`SAP*$${passcode.slice(0, 20)}${'0'.repeat(20)}`, 7801, 7800],
    ]
    for (const [hash, mode, other] of cases) {
      const matches = await identify(hash)
      assert.equal(matches[0]!.hashcat, mode, `${hash} → ${matches.map((match) => match.hashcat).join(',')}`)
      assert.equal(flatRank(matches, other), 0, `${hash}: the two forms have disjoint syntaxes`)
    }
  })

  it('reads passlib pbkdf2_sha256 with its default salt as passlib, and with a 32-byte salt as NetIQ SSPR first', { skip: skipUnless('passlib') }, async () => {
    const make = (using: string): string => python(`import sys; from passlib.hash import pbkdf2_sha256 as h; print(h${using}.hash(sys.argv[1]))`, [PASSWORD])
    const passlibDefault = make('')
    assert.equal(passlibDefault.split('$')[3]!.length, 22, 'passlib draws a 16-byte salt by default')
    assert.equal((await identify(passlibDefault))[0]!.hashcat, 20300)

    const wideSalt = make('.using(salt_size=32)')
    const matches = await identify(wideSalt)
    assert.deepEqual(matches.slice(0, 2).map((match) => match.hashcat), [32060, 20300], wideSalt)
  })

  it('reads 16 letters as OpenEdge ENCODE and 16 crypt64 characters with a digit or symbol as Cisco-PIX', { skip: skipUnless('passlib') }, async () => {
    // Cisco-PIX made by passlib: the first of a few passwords whose hash is not letters only (about
    // 1 in 28 is letters only, and then it could be either).
    const pix = python('import sys\nfrom passlib.hash import cisco_pix\nfor i in range(50):\n    h = cisco_pix.hash(sys.argv[1][:12] + str(i))\n    if not h.isalpha():\n        print(h); break', [PASSWORD])
    assert.equal(pix.length, 16)
    assert.equal((await identify(pix))[0]!.hashcat, 2400, pix)
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
    const encode = [...randomBytes(16)].map((byte) => letters[byte % letters.length]).join('')
    assert.equal((await identify(encode))[0]!.hashcat, 26200, encode)
  })

  it('keeps a letters-only DES crypt string (about 1 in 15 of them) first and confident', { skip: skipUnless('passlib') }, async () => {
    // The letters-only clue boosts letters-only rows; it must not drain a 13-character DES crypt,
    // which no letters-only row matches, into the unknown mass.
    const des = python('import sys\nfrom passlib.hash import des_crypt\nfor i in range(2000):\n    h = des_crypt.hash(sys.argv[1] + str(i))\n    if h.isalpha():\n        print(h); break', [PASSWORD])
    assert.match(des, /^[A-Za-z]{13}$/)
    const response = await server.post('/api/identify', { hash: des })
    const first = response.body.matches[0]
    assert.equal(first.algorithm, 'des-crypt', des)
    assert.ok(first.confidence >= 0.5, `${des}: confidence ${first.confidence}`)
  })
})
