/**
 * /api/identify on what people paste, from wherever they copy it:
 * - every wrapper (quotes of a JSON or SQL dump, backticks, typographic quotes, a list bullet, a
 *   trailing comma or semicolon, brackets, a `"hash": "…"` member, a `hash: …` YAML line, a field
 *   of an SQL `VALUES (…)` tuple, a Markdown code fence) over the whole public hashcat example
 *   corpus (../shared/data/hashcat-examples.json, read from there, never copied here) gives the
 *   same answer as the bare string, and the bare strings are read as they stand;
 * - whole dumps in the shapes the tools print them, with hashes made live by independent code
 *   (Debian's passlib for NT, LM and DCC2 hashes, Python's hmac/hashlib for NetNTLMv2 per MS-NLMP
 *   §3.3.2 and RFC 4757 RC4-HMAC for Kerberoast and AS-REP roast output, openssl for potfile
 *   digests): impacket secretsdump output, a hashcat potfile, hashcat `--username` lines,
 *   Responder's console and log lines, GetUserSPNs/GetNPUsers output.
 * Nothing is compared against hashd's own output: the wrapper test compares hashd's answer to the
 * bare string with its answer to the wrapped one, and the dumps are checked against what the
 * generating code says each line is.
 */
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipBecause, skipUnless } from './helpers/tools.js'

interface Match {
  algorithm: string
  displayName: string
  confidence: number
  hashcat: number | null
  john: string | null
  verifiable: boolean
  verifyAlgorithm?: string
  params?: Record<string, number | string>
  commands?: { hashcat?: string, john?: string }
}
interface Result { length: number, matches: Match[], ambiguous: boolean, normalized?: string[], user?: string, item?: number, line?: number, omitted?: number }
interface Batch { results: Result[], summary: Array<{ algorithm: string, displayName: string, hashcat: number | null, john: string | null, count: number }>, unidentified: number, skipped: number }

/** The corpus sits in `shared/data` beside the checkout or beside one of its parent folders. */
function findCorpus(): string | undefined {
  let directory = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
  for (;;) {
    const candidate = join(directory, 'shared', 'data', 'hashcat-examples.json')
    if (existsSync(candidate)) return candidate
    if (dirname(directory) === directory) return undefined
    directory = dirname(directory)
  }
}
const corpusPath = findCorpus()
// Like a missing tool: skipped here, a failure with HASHD_REQUIRE_TOOLS=1 (CI), so the corpus test cannot be left out unseen.
const noCorpus = corpusPath === undefined ? skipBecause('the hashcat example corpus (shared/data/hashcat-examples.json beside the checkout) is not there') : false

/** Each wrapper as people paste it, and the names `normalized` must report (in order). */
const WRAPPERS: Array<[string, (hash: string) => string, string[]]> = [
  ['double quotes (JSON dump)', (hash) => `"${hash}"`, ['quotes']],
  ['single quotes and a comma (SQL dump)', (hash) => `'${hash}',`, ['trailing-comma', 'quotes']],
  ['backticks (chat, Markdown)', (hash) => `\`${hash}\``, ['quotes']],
  ['typographic quotes', (hash) => `“${hash}”`, ['quotes']],
  ['a list bullet', (hash) => `- ${hash}`, ['bullet']],
  ['a numbered list item', (hash) => `3. ${hash}`, ['bullet']],
  ['a trailing comma', (hash) => `${hash},`, ['trailing-comma']],
  ['a trailing semicolon', (hash) => `${hash};`, ['trailing-semicolon']],
  ['square brackets', (hash) => `[${hash}]`, ['brackets']],
  ['a JSON member with its comma', (hash) => `"hash": ${JSON.stringify(hash)},`, ['trailing-comma', 'json-field']],
  ['a JSON object', (hash) => `{"password_hash":${JSON.stringify(hash)}}`, ['json-field']],
  ['a YAML line', (hash) => `hash: ${hash}`, ['yaml-field']],
  ['a YAML line, double-quoted', (hash) => `password: ${JSON.stringify(hash)}`, ['yaml-field', 'quotes']],
  ['an SQL INSERT … VALUES tuple', (hash) => `INSERT INTO \`users\` VALUES (7,'alice','${hash.replaceAll("'", "''")}','alice@example.org');`, ['sql-values']],
  ['a tuple of a multi-row VALUES list', (hash) => `(8, 'bob', '${hash.replaceAll("'", "''")}', NULL),`, ['sql-values']],
  ['a one-line code fence', (hash) => `\`\`\`${hash}\`\`\``, ['quotes']],
  ['a bullet, quotes and a comma', (hash) => `* '${hash}',`, ['bullet', 'trailing-comma', 'quotes']],
]

/** A 1–3-layer wrapper may reach the bare string by more than one path; the set of layers is what must match. */
const sameLayers = (actual: string[] | undefined, expected: string[]): boolean =>
  actual !== undefined && [...actual].sort().join(',') === [...expected].sort().join(',')

describe('/api/identify: what people paste', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const batch = async (body: Record<string, unknown>): Promise<Batch> => {
    const response = await server.post('/api/identify', body)
    assert.equal(response.status, 200, response.text.slice(0, 500))
    return response.body
  }
  const single = async (body: Record<string, unknown>): Promise<Result> => {
    const response = await server.post('/api/identify', body)
    assert.equal(response.status, 200, response.text.slice(0, 500))
    return response.body
  }

  describe('every wrapper over the whole hashcat example corpus gives the bare string\'s answer', { skip: noCorpus }, () => {
    let corpus: string[] = []
    let bare: Result[] = []
    before(async () => {
      corpus = (JSON.parse(readFileSync(corpusPath!, 'utf8')) as Array<{ hash: string }>).map((entry) => entry.hash)
      bare = (await batch({ hashes: corpus })).results
    })

    it('reads every bare corpus string as it stands (nothing normalized)', () => {
      assert.equal(bare.length, corpus.length)
      const normalized = bare.flatMap((result, index) => (result.normalized ? [`${corpus[index]} → ${result.normalized.join(',')}`] : []))
      assert.deepEqual(normalized, [])
      assert.ok(bare.filter((result) => result.matches.length > 0).length >= 450, 'the corpus identifies when bare')
    })

    for (const [name, wrap, layers] of WRAPPERS) {
      it(name, async () => {
        const wrapped = (await batch({ hashes: corpus.map(wrap) })).results
        const differing: string[] = []
        wrapped.forEach((result, index) => {
          const { normalized, ...answer } = result
          if (bare[index]!.matches.length === 0) return
          if (JSON.stringify(answer) !== JSON.stringify(bare[index]) || !sameLayers(normalized, layers)) {
            differing.push(`${wrap(corpus[index]!).slice(0, 70)} → ${answer.matches[0]?.algorithm ?? 'nothing'} [${normalized?.join(',') ?? ''}], bare → ${bare[index]!.matches[0]?.algorithm}`)
          }
        })
        assert.deepEqual(differing.slice(0, 10), [], `${differing.length} of ${corpus.length} differ`)
      })
    }
  })

  it('keeps formats that contain quotes, braces, brackets or commas whole', { skip: skipUnless('openssl') }, async () => {
    // RFC 2307 schemes (OpenLDAP slappasswd), Lotus Notes' parenthesised hash, hashcat's {x-issha, N} form.
    const sha = run('sh', ['-c', 'printf %s abc | openssl dgst -sha1 -binary | base64'])
    const ldap = await single({ hash: `{SHA}${sha}` })
    assert.equal(ldap.matches[0]!.algorithm, 'ldap-sha')
    assert.equal(ldap.normalized, undefined)
    const quoted = await single({ hash: `"{SHA}${sha}",` })
    assert.equal(quoted.matches[0]!.algorithm, 'ldap-sha')
    assert.deepEqual(quoted.normalized, ['trailing-comma', 'quotes'])
  })

  it('reads impacket secretsdump output: users kept, chatter skipped, NT/DCC2 counted', { skip: skipUnless('passlib') }, async () => {
    // Shapes from impacket's examples/secretsdump.py: SAM (uid:rid:lmhash:nthash:::), cached
    // domain logons (domain/user:$DCC2$…), NTDS via DRSUAPI (domain\user:rid:lm:nt::: with
    // -user-status), Kerberos keys (user:etype:key). Hashes from passlib.
    const made = JSON.parse(python([
      'import json, sys',
      'from passlib.hash import nthash, msdcc2',
      'print(json.dumps({"admin": nthash.hash("Winter2024!"), "jdoe": nthash.hash("Summer2025"), "krbtgt": nthash.hash("x" * 40),',
      '  "dcc2": "$DCC2$10240#jdoe#" + msdcc2.hash("Summer2025", user="jdoe")}))',
    ].join('\n'))) as Record<string, string>
    const EMPTY_LM = 'aad3b435b51404eeaad3b435b51404ee'
    const EMPTY_NT = '31d6cfe0d16ae931b73c59d7e0c089c0' // MD4 of the empty UTF-16LE string
    const dump = [
      'Impacket v0.12.0 - Copyright Fortra, LLC and its affiliated companies',
      '',
      '[*] Target system bootKey: 0x4b2cb2a3c9e2d8e0f0f7d76c3a9b2a11',
      '[*] Dumping local SAM hashes (uid:rid:lmhash:nthash)',
      `Administrator:500:${EMPTY_LM}:${made.admin}:::`,
      `Guest:501:${EMPTY_LM}:${EMPTY_NT}:::`,
      '[*] Dumping cached domain logon information (domain/username:hash)',
      `CORP.LOCAL/jdoe:${made.dcc2}`,
      '[*] Dumping Domain Credentials (domain\\uid:rid:lmhash:nthash)',
      '[*] Using the DRSUAPI method to get NTDS.DIT secrets',
      `CORP.LOCAL\\jdoe:1104:${EMPTY_LM}:${made.jdoe}::: (status=Enabled)`,
      `krbtgt:502:${EMPTY_LM}:${made.krbtgt}::: (status=Disabled)`,
      '[*] Kerberos keys grabbed',
      `krbtgt:rc4_hmac:${made.krbtgt}`,
      '[*] Cleaning up... ',
    ].join('\r\n')
    const answer = await batch({ hashes: [dump] })
    assert.equal(answer.skipped, 8, 'the blank line and the seven [*] lines')
    assert.equal(answer.unidentified, 1, 'only the banner line is not a hash')
    const byUser = new Map(answer.results.filter((result) => result.user).map((result) => [result.user, result]))
    for (const [user, line] of [['Administrator', 5], ['Guest', 6], ['CORP.LOCAL\\jdoe', 11], ['krbtgt', 12]] as const) {
      const result = answer.results.find((entry) => entry.line === line)!
      assert.equal(result.user, user)
      assert.equal(result.matches[0]!.algorithm, 'ntlm', `line ${line}`)
      assert.equal(result.item, 0)
    }
    assert.equal(byUser.get('CORP.LOCAL/jdoe')!.matches[0]!.algorithm, 'mscash2')
    assert.equal(byUser.get('CORP.LOCAL/jdoe')!.matches[0]!.commands?.hashcat, 'hashcat -m 2100 -a 0 --username hashes.txt wordlist.txt')
    const nt = answer.results.find((entry) => entry.line === 5)!.matches[0]!
    assert.equal(nt.commands?.hashcat, 'cut -d: -f4 hashes.txt > hashcat.txt && hashcat -m 1000 -a 0 hashcat.txt wordlist.txt')
    assert.equal(nt.commands?.john, 'john --format=nt --wordlist=wordlist.txt hashes.txt')
    const summary = Object.fromEntries(answer.summary.map((row) => [`${row.algorithm}/${row.hashcat}/${row.john}`, row.count]))
    assert.deepEqual(summary, { 'ntlm/1000/nt': 5, 'mscash2/2100/mscash2': 1 })
  })

  it('reads a hashcat potfile and never returns a plaintext', { skip: skipUnless('openssl', 'mkpasswd') }, async () => {
    // hashcat's potfile is `hash:plain`, with `$HEX[…]` for plaintexts it cannot write as they are.
    const plains = ['Tr0ub4dor&3-potfile', 'pass:with:colons-potfile', 'Ünïcödé-potfile']
    const md5 = (plain: string): string => run('openssl', ['dgst', '-md5', '-r'], plain).split(' ')[0]!
    const sha1 = run('openssl', ['dgst', '-sha1', '-r'], plains[0]!).split(' ')[0]!
    const sha512crypt = run('mkpasswd', ['-m', 'sha512crypt', plains[0]!])
    const potfile = [
      `${md5(plains[0]!)}:${plains[0]}`,
      `${sha1}:${plains[0]}`,
      `${sha512crypt}:${plains[0]}`,
      `${md5(plains[2]!)}:$HEX[${Buffer.from(plains[2]!).toString('hex')}]`,
      '',
    ].join('\n')
    const response = await server.post('/api/identify', { hashes: [potfile], potfile: true })
    assert.equal(response.status, 200)
    for (const plain of plains) {
      assert.ok(!response.text.includes(plain) && !response.text.includes(Buffer.from(plain).toString('hex')), 'no plaintext in the response')
      assert.ok(!server.logs().includes(plain), 'no plaintext in the logs')
    }
    const answer = response.body as Batch
    assert.deepEqual(answer.results.map((result) => result.matches[0]!.algorithm), ['md5', 'sha1', 'sha512-crypt', 'md5'])
    assert.ok(answer.results.every((result) => result.normalized?.[0] === 'potfile-plaintext'))
    assert.deepEqual(answer.results.map((result) => result.length), [32, 40, sha512crypt.length, 32])
    // One line as `hash`, with the option: the same reading. A plaintext with the separator is
    // written $HEX[…] by hashcat (src/convert.c need_hexify: matches_separator).
    const one = await server.post('/api/identify', { hash: `${md5(plains[1]!)}:$HEX[${Buffer.from(plains[1]!).toString('hex')}]`, potfile: true })
    assert.equal(one.status, 200)
    assert.ok(!one.text.includes(Buffer.from(plains[1]!).toString('hex')), 'no $HEX plaintext either')
    assert.equal(one.body.matches[0].algorithm, 'md5')
    const bare = await server.post('/api/identify', { hash: `${md5(plains[0]!)}:${plains[0]}`, potfile: true })
    assert.ok(!bare.text.includes(plains[0]!))
    assert.equal(bare.body.matches[0].algorithm, 'md5')
    // Without the option, only the $HEX[…] line is known to be a potfile line.
    const guessed = await batch({ hashes: [potfile] })
    assert.equal(guessed.results[3]!.normalized?.[0], 'potfile-plaintext')
    assert.equal(guessed.results[0]!.normalized, undefined)
  })

  it('reads hashcat --username lines, keeping each user', { skip: skipUnless('mkpasswd', 'openssl') }, async () => {
    const md5 = run('openssl', ['dgst', '-md5', '-r'], 'hunter2').split(' ')[0]!
    const lines = [`alice:${run('mkpasswd', ['-m', 'bcrypt', 'hunter2'])}`, `bob:${run('mkpasswd', ['-m', 'sha256crypt', 'hunter2'])}`, `carol:${md5}`]
    const answer = await batch({ hashes: [lines.join('\n') + '\n'] })
    assert.deepEqual(answer.results.map((result) => [result.user, result.matches[0]!.algorithm]), [['alice', 'bcrypt'], ['bob', 'sha256-crypt'], ['carol', 'md5']])
    assert.equal(answer.results[0]!.matches[0]!.commands?.hashcat, 'hashcat -m 3200 -a 0 --username hashes.txt wordlist.txt')
  })

  it('reads Responder NetNTLMv1/v2 captures (log file and console) and Kerberoast / AS-REP roast output', { skip: skipUnless('passlib') }, async () => {
    // NetNTLMv2 per MS-NLMP §3.3.2 (NTOWFv2, NTProofStr, the blob) and NetNTLMv1 per §3.3.1,
    // printed as Responder writes them (user::domain:challenge:NTProofStr:blob and
    // user::domain:lm:nt:challenge); RC4-HMAC per RFC 4757 §4 (K1 from the key
    // usage, checksum, K3, RC4) over a dummy ticket, printed as impacket's GetUserSPNs and
    // GetNPUsers print it.
    const made = JSON.parse(python([
      'import hmac, hashlib, json, os',
      'from passlib.hash import nthash',
      'nt = bytes.fromhex(nthash.hash("Spring2025!"))',
      'user, domain = "jdoe", "CORP"',
      'v2 = hmac.new(nt, (user.upper() + domain).encode("utf-16-le"), "md5").digest()',
      'server = bytes.fromhex("1122334455667788")',
      '# RespType, HiRespType, reserved, timestamp, client challenge, reserved, AV pairs (MsvAvNbDomainName, MsvAvEOL), reserved',
      'blob = bytes.fromhex("01010000") + bytes(4) + bytes.fromhex("0090d336b734c301") + os.urandom(8) + bytes(4) + bytes.fromhex("02000800") + domain.encode("utf-16-le") + bytes(4) + bytes(4)',
      'proof = hmac.new(v2, server + blob, "md5").digest()',
      'def rc4(key, data):',
      '  s = list(range(256)); j = 0',
      '  for i in range(256): j = (j + s[i] + key[i % len(key)]) % 256; s[i], s[j] = s[j], s[i]',
      '  out = bytearray(); i = j = 0',
      '  for b in data: i = (i + 1) % 256; j = (j + s[i]) % 256; s[i], s[j] = s[j], s[i]; out.append(b ^ s[(s[i] + s[j]) % 256])',
      '  return bytes(out)',
      'def rc4hmac(key, usage, plain):',
      '  k1 = hmac.new(key, usage.to_bytes(4, "little"), "md5").digest()',
      '  data = os.urandom(8) + plain',
      '  checksum = hmac.new(k1, data, "md5").digest()',
      '  return checksum.hex(), rc4(hmac.new(k1, checksum, "md5").digest(), data).hex()',
      '# NetNTLMv1 (MS-NLMP §3.3.1): DES of the server challenge under the NT (LM) hash padded to 21 bytes, in three 7-byte keys',
      'from passlib.crypto.des import des_encrypt_block',
      'from passlib.hash import lmhash',
      'lm = bytes.fromhex(lmhash.hash("Spring2025!"))',
      'v1 = lambda h: b"".join(des_encrypt_block((h + bytes(5))[i:i + 7], server) for i in (0, 7, 14)).hex()',
      'tgs = rc4hmac(nt, 2, os.urandom(600))',
      'asrep = rc4hmac(nt, 3, os.urandom(300))',
      'print(json.dumps({"v2": f"{user}::{domain}:{server.hex()}:{proof.hex()}:{blob.hex()}", "v1": f"{user}::{domain}:{v1(lm)}:{v1(nt)}:{server.hex()}",',
      '  "tgs": f"$krb5tgs$23$*sqlsvc$CORP.LOCAL$CORP.LOCAL/sqlsvc*${tgs[0]}${tgs[1]}",',
      '  "asrep": f"$krb5asrep$23$jdoe@CORP.LOCAL:{asrep[0]}${asrep[1]}"}))',
    ].join('\n'))) as Record<string, string>
    const responder = [
      '[SMB] NTLMv2-SSP Client   : 10.0.0.5',
      '[SMB] NTLMv2-SSP Username : CORP\\jdoe',
      `[SMB] NTLMv2-SSP Hash     : ${made.v2}`,
    ].join('\n')
    const answer = await batch({ hashes: [responder, made.v2, `${made.tgs}\n${made.asrep}\n`, made.v1] })
    assert.equal(answer.skipped, 3, 'Responder\'s Client and Username lines, and the blank line after the final newline')
    const [fromConsole, fromLog, tgs, asrep, v1] = answer.results
    assert.equal(fromConsole!.matches[0]!.algorithm, 'netntlmv2')
    assert.deepEqual(fromConsole!.normalized, ['log-prefix'])
    assert.equal(fromConsole!.user, 'jdoe')
    assert.equal(fromLog!.matches[0]!.hashcat, 5600)
    assert.equal(fromLog!.item, undefined, 'a string without line breaks is one entry, as before')
    assert.equal(tgs!.matches[0]!.hashcat, 13100)
    assert.equal(asrep!.matches[0]!.hashcat, 18200)
    assert.equal(asrep!.user, 'jdoe@CORP.LOCAL')
    assert.equal(v1!.matches[0]!.hashcat, 5500)
    assert.equal(v1!.user, 'jdoe')
    // Most frequent first, then by name (krb5asrep-23, krb5tgs-23, netntlmv1).
    assert.deepEqual(answer.summary.map((row) => [row.hashcat, row.count]), [[5600, 2], [18200, 1], [13100, 1], [5500, 1]])
  })

  it('counts a 10,000-line dump per format, within the documented limits', { skip: skipUnless('passlib') }, async () => {
    const hashes = JSON.parse(python('import json\nfrom passlib.hash import nthash\nprint(json.dumps([nthash.hash("pw%d" % i) for i in range(2000)]))')) as string[]
    const lines = Array.from({ length: 10_000 }, (_, index) => `CORP\\user${index}:${1000 + index}:aad3b435b51404eeaad3b435b51404ee:${hashes[index % hashes.length]}:::`)
    const answer = await batch({ hashes: [lines.join('\n')] })
    assert.equal(answer.results.length, 10_000)
    assert.deepEqual(answer.summary.map((row) => [row.algorithm, row.count]), [['ntlm', 10_000]])
    assert.equal(answer.results[9_999]!.user, 'CORP\\user9999')
    assert.equal(answer.results[9_999]!.line, 10_000)
    const tooMany = await server.post('/api/identify', { hashes: [lines.join('\n') + '\nCORP\\extra:1:aad3b435b51404eeaad3b435b51404ee:' + hashes[0] + ':::'] })
    assert.equal(tooMany.status, 413)
    assert.match(tooMany.headers.get('content-type') ?? '', /application\/problem\+json/)
  })
})
