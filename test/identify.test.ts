/**
 * /api/identify end to end: hashes made live by independent tools (mkpasswd, htpasswd, Debian's
 * passlib, the argon2 CLI, openssl, rhash, b3sum, xxhsum) must come back identified, structured
 * formats first and bare digests in the top 5 (md5, sha1, sha256, sha512 first for their
 * lengths). Nothing here is compared against hashd's own output.
 */
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { JsonPieces } from '../src/identify/batch.js'
import { identify } from '../src/identify/engine.js'
import { startServer, type TestServer } from './helpers/server.js'
import { hasTool, python, run, skipUnless, type ToolName } from './helpers/tools.js'

const PASSWORD = 'correct horse battery staple'

interface Match {
  algorithm: string
  confidence: number
  hashcat: number | null
  john: string | null
  params?: Record<string, number | string>
  verifiable: boolean
  variants?: Array<{ hashcat: number, displayName: string }>
}

/**
 * Structured hashes from real tools, each with the algorithm names acceptable in first place.
 * `make` runs the tool, only inside a test that `needs` says is installed.
 */
interface Case {
  tool: string
  needs: ToolName
  make: () => string
  first: string[]
}

function mkpasswd(method: string, extra: string[] = []): string {
  return run('mkpasswd', ['-m', method, ...extra, PASSWORD])
}

/** One passlib handler's hash of PASSWORD (Debian's python3-passlib). */
function passlib(handler: string, using = ''): string {
  return python(`import sys; from passlib import hash as h; print(h.${handler}${using ? `.using(${using})` : ''}.hash(sys.argv[1]${handler === 'postgres_md5' ? ", user='admin'" : ''}))`, [PASSWORD])
}

function structuredCases(): Case[] {
  return [
    { tool: 'mkpasswd -m yescrypt', needs: 'mkpasswd', make: () => mkpasswd('yescrypt'), first: ['yescrypt'] },
    { tool: 'mkpasswd -m gost-yescrypt', needs: 'mkpasswd', make: () => mkpasswd('gost-yescrypt'), first: ['gost-yescrypt'] },
    { tool: 'mkpasswd -m sha512crypt', needs: 'mkpasswd', make: () => mkpasswd('sha512crypt'), first: ['sha512-crypt'] },
    { tool: 'mkpasswd -m sha512crypt -R 10000', needs: 'mkpasswd', make: () => mkpasswd('sha512crypt', ['-R', '10000']), first: ['sha512-crypt'] },
    { tool: 'mkpasswd -m sha256crypt', needs: 'mkpasswd', make: () => mkpasswd('sha256crypt'), first: ['sha256-crypt'] },
    { tool: 'mkpasswd -m md5crypt', needs: 'mkpasswd', make: () => mkpasswd('md5crypt'), first: ['md5-crypt'] },
    { tool: 'mkpasswd -m descrypt', needs: 'mkpasswd', make: () => mkpasswd('descrypt'), first: ['des-crypt'] },
    { tool: 'mkpasswd -m bsdicrypt', needs: 'mkpasswd', make: () => mkpasswd('bsdicrypt'), first: ['bsdi-crypt'] },
    { tool: 'mkpasswd -m bcrypt', needs: 'mkpasswd', make: () => mkpasswd('bcrypt'), first: ['bcrypt'] },
    { tool: 'mkpasswd -m bcrypt-a', needs: 'mkpasswd', make: () => mkpasswd('bcrypt-a'), first: ['bcrypt'] },
    { tool: 'mkpasswd -m scrypt', needs: 'mkpasswd', make: () => mkpasswd('scrypt'), first: ['scrypt'] },
    { tool: 'mkpasswd -m sunmd5', needs: 'mkpasswd', make: () => mkpasswd('sunmd5'), first: ['sun-md5-crypt'] },
    { tool: 'mkpasswd -m nt', needs: 'mkpasswd', make: () => mkpasswd('nt'), first: ['nt-crypt'] },
    { tool: 'htpasswd -nbm', needs: 'htpasswd', make: () => run('htpasswd', ['-nbm', 'alice', PASSWORD]), first: ['apr1'] },
    { tool: 'htpasswd -nbB', needs: 'htpasswd', make: () => run('htpasswd', ['-nbB', 'alice', PASSWORD]), first: ['bcrypt'] },
    { tool: 'htpasswd -nbs', needs: 'htpasswd', make: () => run('htpasswd', ['-nbs', 'alice', PASSWORD]), first: ['ldap-sha'] },
    { tool: 'argon2 -id', needs: 'argon2', make: () => run('argon2', ['saltsaltsalt', '-id', '-t', '2', '-m', '12', '-p', '2', '-e'], PASSWORD), first: ['argon2id'] },
    { tool: 'argon2 -i', needs: 'argon2', make: () => run('argon2', ['saltsaltsalt', '-i', '-e'], PASSWORD), first: ['argon2i'] },
    { tool: 'argon2 -d', needs: 'argon2', make: () => run('argon2', ['saltsaltsalt', '-d', '-e'], PASSWORD), first: ['argon2d'] },
    ...([
      ['md5_crypt', 'md5-crypt'], ['apr_md5_crypt', 'apr1'], ['sha256_crypt', 'sha256-crypt'], ['sha512_crypt', 'sha512-crypt'],
      ['bcrypt', 'bcrypt'], ['argon2', 'argon2id'], ['scrypt', 'scrypt'], ['phpass', 'phpass'], ['bsdi_crypt', 'bsdi-crypt'],
      ['des_crypt', 'des-crypt'], ['sha1_crypt', 'sha1-crypt'], ['sun_md5_crypt', 'sun-md5-crypt'],
      ['pbkdf2_sha1', 'pbkdf2-sha1'], ['pbkdf2_sha256', 'pbkdf2-sha256'], ['pbkdf2_sha512', 'pbkdf2-sha512'],
      ['bcrypt_sha256', 'bcrypt-sha256'], ['cta_pbkdf2_sha1', 'cta-pbkdf2-sha1'], ['fshp', 'fshp'],
      ['django_pbkdf2_sha256', 'pbkdf2-sha256'], ['django_pbkdf2_sha1', 'pbkdf2-sha1'], ['django_bcrypt_sha256', 'django-bcrypt-sha256'],
      ['django_bcrypt', 'django-bcrypt'], ['django_argon2', 'django-argon2'], ['django_salted_sha1', 'django-sha1'],
      ['ldap_md5', 'ldap-md5'], ['ldap_salted_md5', 'ldap-smd5'], ['ldap_sha1', 'ldap-sha'], ['ldap_salted_sha1', 'ldap-ssha'],
      ['ldap_salted_sha256', 'ldap-ssha256'], ['ldap_salted_sha512', 'ldap-ssha512'], ['ldap_md5_crypt', 'ldap-crypt'],
      ['ldap_sha512_crypt', 'ldap-crypt'], ['ldap_pbkdf2_sha256', 'ldap-pbkdf2-sha256'], ['ldap_pbkdf2_sha512', 'ldap-pbkdf2-sha512'],
      ['atlassian_pbkdf2_sha1', 'atlassian-pbkdf2-sha1'], ['grub_pbkdf2_sha512', 'grub2'], ['mysql41', 'mysql41'],
      ['postgres_md5', 'postgres-md5'], ['mssql2000', 'mssql-2000'], ['mssql2005', 'mssql-2005'], ['oracle11', 'oracle11-s'],
    ] as const).map(([handler, name]): Case => ({ tool: `passlib ${handler}`, needs: 'passlib', make: () => passlib(handler), first: [name] })),
    // Django's SaltedMD5PasswordHasher and old Werkzeug's HMAC-MD5 share the md5$salt$hex syntax.
    { tool: 'passlib django_salted_md5', needs: 'passlib', make: () => passlib('django_salted_md5'), first: ['werkzeug-md5', 'django-salted-md5'] },
    // Werkzeug's generate_password_hash format (werkzeug/security.py), built with hashlib.
    {
      tool: 'Werkzeug pbkdf2:sha256 (hashlib)',
      needs: 'python3',
      make: () => python('import hashlib, sys; salt = "Zl2bOkoTQW3vRkBa"; print("pbkdf2:sha256:600000$" + salt + "$" + hashlib.pbkdf2_hmac("sha256", sys.argv[1].encode(), salt.encode(), 600000).hex())', [PASSWORD]),
      first: ['pbkdf2-sha256'],
    },
    {
      tool: 'Werkzeug scrypt (hashlib)',
      needs: 'python3',
      make: () => python('import hashlib, sys; salt = "Zl2bOkoTQW3vRkBa"; print("scrypt:32768:8:1$" + salt + "$" + hashlib.scrypt(sys.argv[1].encode(), salt=salt.encode(), n=32768, r=8, p=1, maxmem=64*1024*1024, dklen=64).hex())', [PASSWORD]),
      first: ['werkzeug-scrypt'],
    },
  ]
}

/**
 * Bare digests from openssl/rhash/b3sum/xxhsum: [tool, what provides it, a thunk running it, expected name, required rank].
 * Rank 1 means first; 5 means top 5. Sixteen digests have 64 hex characters and no tool can put
 * them all in the top 5: the rarest ones here (SM3, SHA-512/256, Streebog) must be in the top 10.
 */
function digestCases(): Array<[string, ToolName, () => string, string, number]> {
  const openssl = (name: string): string => run('openssl', ['dgst', `-${name}`, '-r'], PASSWORD).split(' ')[0]!
  const rhash = (flag: string): string => run('rhash', [flag, '-'], PASSWORD).split(' ')[0]!
  return [
    ['openssl md5', 'openssl', () => openssl('md5'), 'md5', 1],
    ['openssl sha1', 'openssl', () => openssl('sha1'), 'sha1', 1],
    ['openssl sha256', 'openssl', () => openssl('sha256'), 'sha256', 1],
    ['openssl sha512', 'openssl', () => openssl('sha512'), 'sha512', 1],
    ['openssl sha224', 'openssl', () => openssl('sha224'), 'sha224', 1],
    ['openssl sha384', 'openssl', () => openssl('sha384'), 'sha384', 1],
    ['openssl sha3-256', 'openssl', () => openssl('sha3-256'), 'sha3-256', 5],
    ['openssl sha3-512', 'openssl', () => openssl('sha3-512'), 'sha3-512', 5],
    ['openssl blake2b512', 'openssl', () => openssl('blake2b512'), 'blake2b-512', 5],
    ['openssl blake2s256', 'openssl', () => openssl('blake2s256'), 'blake2s-256', 5],
    ['openssl sm3', 'openssl', () => openssl('sm3'), 'sm3', 10],
    ['openssl sha512-256', 'openssl', () => openssl('sha512-256'), 'sha512-256', 10],
    ['rhash --ripemd160', 'rhash', () => rhash('--ripemd160'), 'ripemd160', 5],
    ['rhash --whirlpool', 'rhash', () => rhash('--whirlpool'), 'whirlpool', 5],
    ['rhash --md4', 'rhash', () => rhash('--md4'), 'md4', 5],
    ['rhash --printf=%c (CRC-32)', 'rhash', () => run('rhash', ['--printf=%c', '-'], PASSWORD), 'crc32', 1],
    ['rhash --gost12-256', 'rhash', () => rhash('--gost12-256'), 'streebog-256', 10],
    ['b3sum', 'b3sum', () => run('b3sum', ['--no-names'], PASSWORD), 'blake3', 5],
    ['xxhsum -H1', 'xxhsum', () => run('xxhsum', ['-H1'], PASSWORD).split(' ')[0]!, 'xxh64', 5],
    // The NT hash of the password, as Python computes it (MD4 of UTF-16LE), uppercased the way
    // pwdump-style tools print it: uppercase hex must put NTLM first.
    ['NT hash, uppercase (hashlib md4 via passlib nthash)', 'passlib', () => passlib('nthash').toUpperCase(), 'ntlm', 1],
  ]
}

describe('/api/identify', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  // Each tool runs once, and only in a test its case does not skip; the hashes are kept for reuse.
  const madeBy = new Map<string, string>()
  const made = (key: string, make: () => string): string => {
    const hash = madeBy.get(key) ?? make()
    madeBy.set(key, hash)
    return hash
  }

  const identifyOver = async (hash: string): Promise<{ length: number, matches: Match[] }> => {
    const response = await server.post('/api/identify', { hash })
    assert.equal(response.status, 200, response.text)
    return response.body
  }

  describe('puts the right format first for structured hashes made by real tools', () => {
    for (const { tool, needs, make, first } of structuredCases()) {
      it(tool, { skip: skipUnless(needs) }, async () => {
        const hash = made(tool, make)
        const { matches } = await identifyOver(hash)
        assert.ok(matches.length > 0, `${tool}: no match for ${hash}`)
        assert.ok(first.includes(matches[0]!.algorithm), `${tool}: ${hash} → ${matches.slice(0, 3).map((match) => match.algorithm).join(', ')}`)
        assert.ok(matches[0]!.confidence >= 0.5, `${tool}: a structured match should carry most of the mass`)
      })
    }
  })

  describe('puts bare digests from real tools in the top 5, md5/sha1/sha256/sha512 first', () => {
    for (const [tool, needs, make, name, required] of digestCases()) {
      it(tool, { skip: skipUnless(needs) }, async () => {
        const { matches } = await identifyOver(made(tool, make))
        const rank = matches.findIndex((match) => match.algorithm === name) + 1
        assert.ok(rank >= 1 && rank <= required, `${tool}: ${name} ranked ${rank}, needs ≤ ${required} (${matches.slice(0, 6).map((match) => match.algorithm).join(', ')})`)
      })
    }
  })

  it('lists the hashcat modes that share a syntax as variants of one match', { skip: skipUnless('python3', 'mkpasswd') }, async () => {
    // md5($salt.$pass) and sha256(HMAC) built with Python's hashlib/hmac: hashcat reads `hex:salt`
    // the same way for some twenty modes, so one match carries them (its own mode or variants).
    const modesOf = (match: Match): number[] => [match.hashcat ?? -1, ...(match.variants ?? []).map((variant) => variant.hashcat)]
    const md5SaltPass = python('import hashlib, sys; print(hashlib.md5(b"q8ZkP0wX4" + sys.argv[1].encode()).hexdigest() + ":q8ZkP0wX4")', [PASSWORD])
    const md5Top = (await identifyOver(md5SaltPass)).matches[0]!
    for (const mode of [10, 20, 50, 60, 3710, 12]) assert.ok(modesOf(md5Top).includes(mode), `md5 hex:salt → ${modesOf(md5Top).join(',')} lacks ${mode}`)
    const hmacSha256 = python('import hashlib, hmac, sys; print(hmac.new(b"k3y-s4lt", sys.argv[1].encode(), hashlib.sha256).hexdigest() + ":k3y-s4lt")', [PASSWORD])
    const sha256Top = (await identifyOver(hmacSha256)).matches[0]!
    assert.ok(modesOf(sha256Top).includes(1460), `HMAC-SHA256 (key = $salt) → ${modesOf(sha256Top).join(',')}`)
    // md5(md5($pass)) is an MD5 output: the md5 match itself lists hashcat -m 2600.
    const doubleMd5 = python('import hashlib, sys; print(hashlib.md5(hashlib.md5(sys.argv[1].encode()).hexdigest().encode()).hexdigest())', [PASSWORD])
    const md5 = (await identifyOver(doubleMd5)).matches[0]!
    assert.equal(md5.algorithm, 'md5')
    assert.ok(modesOf(md5).includes(2600))
    // bcrypt over a digest (hashcat 25600, 30600…) is bcrypt's own syntax.
    const bcrypt = (await identifyOver(mkpasswd('bcrypt'))).matches[0]!
    assert.equal(bcrypt.algorithm, 'bcrypt')
    assert.ok(modesOf(bcrypt).includes(25600) && modesOf(bcrypt).includes(30600))
  })

  it('reads the salt lengths and alphabets applications use (vBulletin, osCommerce, Joomla, IPB, MyBB)', { skip: skipUnless('python3', 'passlib') }, async () => {
    // Each built with hashlib as the application does it; the salt is what the application draws:
    // vBulletin < 3.8.5 fetch_user_salt(3) and ≥ 3.8.5 (30), osCommerce tep_encrypt_password (2),
    // Joomla < 2.5.18 JUserHelper::genRandomPassword(32), IPB generatePasswordSalt(5), MyBB random_str(8).
    const md5 = (expression: string, salt: string): string =>
      python(`import hashlib, sys; md5 = lambda b: hashlib.md5(b).hexdigest().encode(); p = sys.argv[1].encode(); s = sys.argv[2].encode(); print(hashlib.md5(${expression}).hexdigest() + ":" + sys.argv[2])`, [PASSWORD, salt])
    const cases: Array<[string, string, number]> = [
      ['vBulletin < 3.8.5', md5('md5(p) + s', '9K#'), 2611],
      ['vBulletin ≥ 3.8.5', md5('md5(p) + s', 'e4]v@Vh,P~!yQ0z+7j*KqM5sX=2cRb'), 2711],
      ['osCommerce', md5('s + p', '3f'), 21],
      ['Joomla < 2.5.18', md5('p + s', 'Hq3BnVx7pL0sWz2dK9mR4tY6uE8cA1fJ'), 11],
      ['IPB 2+', md5('md5(md5(s) + md5(p))', 'a}4=Q'), 2811],
      ['MyBB 1.2+', md5('md5(md5(s) + md5(p))', 'x7Kp2QmZ'), 2811],
    ]
    for (const [application, hash, mode] of cases) {
      const { matches } = await identifyOver(hash)
      assert.equal(matches[0]!.hashcat, mode, `${application}: ${hash} → ${matches.slice(0, 3).map((match) => match.hashcat).join(', ')}`)
    }
    // MySQL's OLD_PASSWORD() masks each word to 31 bits: passlib's mysql323 comes first, and a
    // 16-hex string whose halves start with 8-f cannot be MySQL323 at all.
    const mysql323 = passlib('mysql323')
    assert.equal((await identifyOver(mysql323)).matches[0]!.algorithm, 'mysql323')
    const flipped = (await identifyOver(`f${mysql323.slice(1)}`)).matches
    assert.ok(!flipped.some((match) => match.algorithm === 'mysql323'))
  })

  it('marks as verifiable exactly what /api/verify then accepts', { skip: skipUnless('passlib') }, async () => {
    const hash = passlib('pbkdf2_sha256', 'rounds=1000')
    const { matches } = await identifyOver(hash)
    assert.equal(matches[0]!.algorithm, 'pbkdf2-sha256')
    assert.equal(matches[0]!.verifiable, true)
    const verified = await server.post('/api/verify', { input: PASSWORD, hash, algorithm: matches[0]!.algorithm })
    assert.equal(verified.status, 200, verified.text)
    assert.equal(verified.body.match, true)
  })

  it('reports the parameters structured formats carry', { skip: skipUnless('htpasswd', 'argon2', 'mkpasswd', 'passlib') }, async () => {
    const bcrypt = (await identifyOver(run('htpasswd', ['-nbB', '-C', '6', 'alice', PASSWORD]))).matches[0]!
    assert.equal(bcrypt.params?.cost, 6)
    const argon = (await identifyOver(run('argon2', ['saltsaltsalt', '-id', '-t', '3', '-m', '12', '-p', '2', '-e'], PASSWORD))).matches[0]!
    assert.deepEqual([argon.params?.memory, argon.params?.time, argon.params?.parallelism, argon.params?.version], [4096, 3, 2, 19])
    const shaCrypt = (await identifyOver(mkpasswd('sha512crypt', ['-R', '10000']))).matches[0]!
    assert.equal(shaCrypt.params?.rounds, 10000)
    const django = (await identifyOver(passlib('django_pbkdf2_sha256', 'rounds=12345'))).matches[0]!
    assert.equal(django.params?.rounds, 12345)
    assert.equal(django.hashcat, 10000)
  })

  it('rejects strings that only look like a format (bcrypt cost 99, 54-character body)', { skip: skipUnless('mkpasswd') }, async () => {
    const valid = mkpasswd('bcrypt')
    for (const fake of [valid.replace(/^\$2b\$\d\d/, '$2b$99'), valid + 'a']) {
      const { matches } = await identifyOver(fake)
      assert.ok(!matches.some((match) => match.algorithm === 'bcrypt'), fake)
    }
  })

  it('gives confidences in [0, 1], sorted, summing to at most 1, the same every time', async () => {
    // Whatever the installed tools can make, plus strings that need none (this test compares against no tool).
    const inputs = [
      ...structuredCases().filter(({ needs }) => hasTool(needs)).map(({ tool, make }) => made(tool, make)),
      ...digestCases().filter(([, needs]) => hasTool(needs)).map(([tool, , make]) => made(tool, make)),
      '$3$$8846f7eaee8fb117ad06bdd830b7586c', '5f4dcc3b5aa765d61d8327deb882cf99', 'not a hash at all', 'abc:def',
    ]
    for (const input of inputs) {
      const first = await identifyOver(input)
      const second = await identifyOver(input)
      assert.deepEqual(second, first, `deterministic for ${input}`)
      let sum = 0
      first.matches.forEach((match, index) => {
        assert.ok(match.confidence >= 0 && match.confidence <= 1)
        if (index > 0) assert.ok(first.matches[index - 1]!.confidence >= match.confidence, 'sorted by confidence')
        sum += match.confidence
      })
      assert.ok(sum <= 1, `confidences of ${input} sum to ${sum}`)
    }
  })

  it('identifies a JWT (RFC 7519) as such, hashcat 16500', { skip: skipUnless('python3') }, async () => {
    // An HS256 token signed with Python's hmac (RFC 7515 §3 compact serialization).
    const token = python([
      'import base64, hashlib, hmac, json',
      'b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()',
      'signing_input = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64(json.dumps({"sub": "1234567890", "name": "John Doe"}).encode())',
      'print(signing_input + "." + b64(hmac.new(b"secret", signing_input.encode(), hashlib.sha256).digest()))',
    ].join('\n'))
    const top = (await identifyOver(token)).matches[0]!
    assert.equal(top.algorithm, 'jwt')
    assert.equal(top.hashcat, 16500)
    assert.equal(top.params?.alg, 'HS256')
  })

  it('reads user:hash, /etc/shadow and htpasswd lines, surrounding whitespace and a 0x prefix', { skip: skipUnless('mkpasswd', 'openssl', 'passlib') }, async () => {
    const sha512crypt = mkpasswd('sha512crypt')
    const shadow = `root:${sha512crypt}:19700:0:99999:7:::`
    assert.equal((await identifyOver(shadow)).matches[0]!.algorithm, 'sha512-crypt')
    const yescrypt = mkpasswd('yescrypt')
    assert.equal((await identifyOver(`  alice:${yescrypt}  \n`)).matches[0]!.algorithm, 'yescrypt')
    const md5 = run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]!
    const prefixed = await identifyOver(`0x${md5}`)
    assert.equal(prefixed.matches[0]!.algorithm, 'md5')
    assert.equal(prefixed.length, 34)
    // pwdump (user:rid:LM:NT:::) puts the NT hash in the fourth field.
    const nt = passlib('nthash')
    assert.equal((await identifyOver(`Administrator:500:aad3b435b51404eeaad3b435b51404ee:${nt}:::`)).matches[0]!.algorithm, 'ntlm')
  })

  it('answers the batch form in order, and refuses more than 10,000 strings or both forms', { skip: skipUnless('mkpasswd', 'openssl') }, async () => {
    const md5 = run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]!
    const hashes = [mkpasswd('bcrypt'), md5, mkpasswd('yescrypt'), '???']
    const response = await server.post('/api/identify', { hashes })
    assert.equal(response.status, 200, response.text)
    assert.deepEqual(response.body.results.map((result: { matches: Match[] }) => result.matches[0]?.algorithm), ['bcrypt', 'md5', 'yescrypt', undefined])
    assert.deepEqual(response.body.results.map((result: { length: number }) => result.length), hashes.map((hash) => hash.length))
    const thousand = await server.post('/api/identify', { hashes: Array.from({ length: 1000 }, () => md5) })
    assert.equal(thousand.status, 200)
    assert.equal(thousand.body.results.length, 1000)
    // More strings than the 10,000 entries a request may hold: refused by the schema (maxItems).
    assert.equal((await server.post('/api/identify', { hashes: Array.from({ length: 10_001 }, () => md5) })).status, 400)
    assert.equal((await server.post('/api/identify', { hash: md5, hashes: [md5] })).status, 400)
    assert.equal((await server.post('/api/identify', {})).status, 400)
  })

  it('answers concurrent batches each with its own lines, while the memory of sent answers is reused', { skip: skipUnless('openssl') }, async () => {
    // Each answer is written into 64 KiB pieces that later batches reuse once it has been sent
    // (src/identify/batch.ts). Every line carries a user name unique to its request and line, in
    // one- to four-byte UTF-8 (so texts cross piece boundaries at every width), and the answer must
    // echo exactly its own, in order. One client drops its connection mid-answer, which must leave
    // the others whole.
    const md5 = run('openssl', ['dgst', '-md5', '-r'], PASSWORD).split(' ')[0]!
    const users = (request: number) => Array.from({ length: 300 }, (_, line) => `r${request}-é${line}-€-🔑${'x'.repeat(line % 7)}`)
    const batch = (request: number) => users(request).map((user) => `${user}:${md5}`)
    const check = (request: number, response: { status: number, text: string, body: { results: Array<{ user?: string, length: number, matches: Match[] }> } }) => {
      assert.equal(response.status, 200, response.text)
      assert.equal(response.text, JSON.stringify(JSON.parse(response.text)), 'the answer is one compact JSON text')
      assert.deepEqual(response.body.results.map((result) => result.user), users(request), `request ${request} got its own users`)
      response.body.results.forEach((result, line) => {
        assert.equal(result.length, batch(request)[line]!.length)
        assert.equal(result.matches[0]?.algorithm, 'md5')
      })
    }
    const aborted = new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ hashes: batch(99) })
      const request = httpRequest(`${server.url}/api/identify`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
        response.once('data', () => { request.destroy(); resolve() })
      })
      request.on('error', (error: NodeJS.ErrnoException) => { if (error.code !== 'ECONNRESET') reject(error) })
      request.end(body)
    })
    for (let round = 0; round < 2; round++) {
      const requests = Array.from({ length: 12 }, (_, index) => round * 12 + index)
      const responses = await Promise.all([...requests.map((request) => server.post('/api/identify', { hashes: batch(request) })), ...(round === 0 ? [aborted] : [])])
      requests.forEach((request, index) => check(request, responses[index] as Parameters<typeof check>[1]))
    }
  })

  it('writes a batch\'s JSON texts into reused 64 KiB pieces, comma-separated, whatever their UTF-8 width', () => {
    // JsonPieces (src/identify/batch.ts) directly: texts of 1–4-byte characters that end near and
    // across piece boundaries, and one text longer than a piece, read back as the joined text.
    const texts = Array.from({ length: 400 }, (_, index) => JSON.stringify({ index, text: ['a', 'é', '€', '🔑'][index % 4]!.repeat(50 + (index * 37) % 900) }))
    texts.splice(200, 0, JSON.stringify({ long: 'ü'.repeat(40_000) }))
    const first = new JsonPieces()
    for (const text of texts) first.add(text)
    const pieces = first.finish()
    assert.ok(pieces.length > 5)
    assert.ok(pieces.every((piece) => piece.length <= 64 * 1024 || piece.toString() === `,${texts[200]}`))
    assert.equal(Buffer.concat(pieces).toString(), texts.join(','))
    const used = new Set(pieces.map((piece) => piece.buffer))
    first.release()
    const second = new JsonPieces()
    second.add(texts[1]!)
    assert.ok(used.has(second.finish()[0]!.buffer), 'a released piece is used again')
  })

  it('answers 64 KiB adversarial inputs without catastrophic backtracking, and 413 above 64 KiB', async () => {
    const adversarial = [
      '$'.repeat(65000), 'a'.repeat(65536), '$2b$' + 'a'.repeat(65000), '0x' + 'f'.repeat(65534),
      ':'.repeat(65536), 'a:'.repeat(32768), '$krb5tgs$23$*' + '*'.repeat(65000), 'eyJ' + 'a.'.repeat(32000),
      'user:' + '$6$'.repeat(21000), '{SSHA}' + 'A'.repeat(65000), 'x'.repeat(32) + ':' + 'y'.repeat(65000),
      // Wrappers people paste (unwrap.ts peels strings up to 16 KiB): nested brackets, an SQL tuple
      // of thousands of fields, an unclosed code fence, quotes within quotes.
      '('.repeat(8000) + ')'.repeat(8000), 'INSERT INTO t VALUES (' + '1,'.repeat(8000) + "'x')", '```' + ' '.repeat(16000),
      '"' + '\\"'.repeat(8000) + '"', '- '.repeat(8000) + '"' + 'a'.repeat(100) + '",',
    ]
    for (const input of adversarial) {
      identify(input) // warm-up: the first call compiles the regexes involved
      // The least of three runs: a catastrophic backtrack is slow every time, while a GC pause or
      // a loaded machine's descheduling slows one run.
      let milliseconds = Infinity
      for (let run = 0; run < 3; run++) {
        const started = process.hrtime.bigint()
        identify(input)
        milliseconds = Math.min(milliseconds, Number(process.hrtime.bigint() - started) / 1e6)
      }
      // A catastrophic backtrack on 64 KiB takes seconds to hours; linear matching, well under a
      // millisecond. The bound sits between the two with room for a loaded machine.
      assert.ok(milliseconds < 250, `${input.slice(0, 16)}… (${input.length} chars) took ${milliseconds.toFixed(2)} ms`)
      assert.equal((await server.post('/api/identify', { hash: input })).status, 200)
    }
    const tooLarge = await server.post('/api/identify', { hash: 'a'.repeat(64 * 1024 + 1) })
    assert.equal(tooLarge.status, 413)
    assert.match(tooLarge.headers.get('content-type') ?? '', /application\/problem\+json/)
    assert.equal((await server.post('/api/identify', { hashes: ['a', 'é'.repeat(40000)] })).status, 413)
  })
})
