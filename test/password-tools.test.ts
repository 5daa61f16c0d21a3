/**
 * Independent implementations, both directions, for every password format hashd generates or reads:
 * hashes hashd writes are verified by the tool, and hashes the tool writes are verified by hashd
 * without naming the algorithm. Tools: passlib (pure-Python "builtin" backends, not the system
 * crypt), python3-bcrypt, argon2-cffi, the reference `argon2` CLI, hashlib (scrypt, PBKDF2 and a
 * direct transcription of Drupal 7's _password_crypt), mkpasswd and htpasswd, and libxcrypt through
 * Python's ctypes (for yescrypt, which only libxcrypt implements; a separate route to it from
 * hashd's koffi binding). Low costs keep the file fast.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { startServer, type TestServer } from './helpers/server.js'
import { python, run, skipUnless, type ToolName } from './helpers/tools.js'
import { rfc7914 } from './vectors/password-scrypt.js'

/** The inputs every format is exercised with, as hex: empty, accented text with a check mark, emoji, and binary (no NUL: crypt(3) takes C strings). */
const INPUTS = {
  empty: '',
  text: Buffer.from('héllo wörld ✓').toString('hex'),
  emoji: Buffer.from('🔑🦀 pass').toString('hex'),
  binary: 'fffe80c3a9017f20',
}
const ALL = Object.values(INPUTS)

/**
 * One Python process runs a batch of jobs: {op: 'hash'|'verify', tool, handler, settings, pw (hex), hash}.
 * passlib's crypt handlers are pinned to their builtin (pure-Python) backends. Each module is
 * imported only when a job needs it, so a batch runs where just its own tools are installed.
 */
const PY_TOOLS = String.raw`
import sys, json, hashlib, base64, ctypes
loaded = {}
def passlib_hash():
    if 'passlib' not in loaded:
        from passlib import hash as ph
        for name in ('sha256_crypt', 'sha512_crypt', 'md5_crypt', 'des_crypt', 'bsdi_crypt'):
            getattr(ph, name).set_backend('builtin')
        loaded['passlib'] = ph
    return loaded['passlib']
def libcrypt():
    if 'libcrypt' not in loaded:
        lib = ctypes.CDLL('libcrypt.so.1')
        lib.crypt.restype = ctypes.c_char_p
        lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        loaded['libcrypt'] = lib
    return loaded['libcrypt']
ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

def drupal_encode64(data):
    # Drupal 7 includes/password.inc _password_base64_encode
    out, i, count = '', 0, len(data)
    while True:
        value = data[i]; i += 1
        out += ITOA64[value & 0x3f]
        if i < count: value |= data[i] << 8
        out += ITOA64[(value >> 6) & 0x3f]
        if i >= count: break
        i += 1
        if i < count: value |= data[i] << 16
        out += ITOA64[(value >> 12) & 0x3f]
        if i >= count: break
        i += 1
        out += ITOA64[(value >> 18) & 0x3f]
        if i >= count: break
    return out

def drupal_crypt(pw, setting):
    # Drupal 7 includes/password.inc _password_crypt('sha512', ...)
    count = 1 << ITOA64.index(setting[3])
    salt = setting[4:12].encode()
    h = hashlib.sha512(salt + pw).digest()
    for _ in range(count):
        h = hashlib.sha512(h + pw).digest()
    return (setting[:12] + drupal_encode64(h))[:55]

def run(job):
    pw = bytes.fromhex(job['pw'])
    tool, handler, op = job['tool'], job.get('handler'), job['op']
    if tool == 'passlib':
        h = getattr(passlib_hash(), handler)
        if op == 'hash':
            return h.using(**job.get('settings', {})).hash(pw)
        return h.verify(pw, job['hash'])
    if tool == 'bcrypt':
        import bcrypt as pybcrypt
        if op == 'hash':
            return pybcrypt.hashpw(pw, pybcrypt.gensalt(4)).decode()
        return pybcrypt.checkpw(pw, job['hash'].encode())
    if tool == 'argon2-cffi':
        from argon2 import PasswordHasher
        hasher = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)
        if op == 'hash':
            return hasher.hash(pw)
        try:
            return hasher.verify(job['hash'], pw)
        except Exception:
            return False
    if tool == 'libxcrypt-ctypes':
        return libcrypt().crypt(pw, job['hash'].encode()) == job['hash'].encode()
    if tool == 'drupal7':
        if op == 'hash':
            return drupal_crypt(pw, '$S$5' + 'aZ09./Qk')
        return drupal_crypt(pw, job['hash']) == job['hash']
    if tool == 'werkzeug':
        # werkzeug.security: pbkdf2:sha256:<iterations>$<salt text>$<hex of PBKDF2-HMAC-SHA256>
        salt = 'WzSaltText16char'
        return 'pbkdf2:sha256:1000$%s$%s' % (salt, hashlib.pbkdf2_hmac('sha256', pw, salt.encode(), 1000).hex())
    raise ValueError(tool)

print(json.dumps([run(job) for job in json.load(sys.stdin)]))
`

interface Job { op: 'hash' | 'verify', tool: string, handler?: string, settings?: Record<string, unknown>, pw: string, hash?: string }

/** What each job tool needs installed (drupal7 and werkzeug are transcriptions over hashlib). */
const PROVIDER: Record<string, ToolName> = {
  passlib: 'passlib', bcrypt: 'python3-bcrypt', 'argon2-cffi': 'argon2-cffi', 'libxcrypt-ctypes': 'libxcrypt', drupal7: 'python3', werkzeug: 'python3',
}
const providerOf = (tool: string): ToolName => {
  const provider = PROVIDER[tool]
  if (!provider) throw new Error(`no provider listed for ${tool}`)
  return provider
}
/** The distinct providers of a table's jobs, in order: one test each, skipped when it is missing. */
const providers = (tools: string[]): ToolName[] => [...new Set(tools.map(providerOf))]

function runPython(jobs: Job[]): unknown[] {
  return JSON.parse(python(PY_TOOLS, [], JSON.stringify(jobs))) as unknown[]
}

/** What hashd generates, with low-cost options, and which tool verifies it. */
const generated: Array<{ algorithm: string, options: Record<string, number>, prefix: string, verifier: Omit<Job, 'op' | 'pw'> }> = [
  { algorithm: 'sha256-crypt', options: { rounds: 1000 }, prefix: '$5$rounds=1000$', verifier: { tool: 'passlib', handler: 'sha256_crypt' } },
  { algorithm: 'sha512-crypt', options: { rounds: 1000 }, prefix: '$6$rounds=1000$', verifier: { tool: 'passlib', handler: 'sha512_crypt' } },
  { algorithm: 'md5-crypt', options: {}, prefix: '$1$', verifier: { tool: 'passlib', handler: 'md5_crypt' } },
  { algorithm: 'apr1', options: {}, prefix: '$apr1$', verifier: { tool: 'passlib', handler: 'apr_md5_crypt' } },
  { algorithm: 'yescrypt', options: { cost: 1 }, prefix: '$y$j75$', verifier: { tool: 'libxcrypt-ctypes' } },
  { algorithm: 'gost-yescrypt', options: { cost: 1 }, prefix: '$gy$j75$', verifier: { tool: 'libxcrypt-ctypes' } },
  { algorithm: 'phpass', options: { rounds: 7 }, prefix: '$P$5', verifier: { tool: 'passlib', handler: 'phpass' } },
  { algorithm: 'drupal7', options: { rounds: 7 }, prefix: '$S$5', verifier: { tool: 'drupal7' } },
  { algorithm: 'ldap-md5', options: {}, prefix: '{MD5}', verifier: { tool: 'passlib', handler: 'ldap_md5' } },
  { algorithm: 'ldap-sha', options: {}, prefix: '{SHA}', verifier: { tool: 'passlib', handler: 'ldap_sha1' } },
  { algorithm: 'ldap-smd5', options: {}, prefix: '{SMD5}', verifier: { tool: 'passlib', handler: 'ldap_salted_md5' } },
  { algorithm: 'ldap-ssha', options: {}, prefix: '{SSHA}', verifier: { tool: 'passlib', handler: 'ldap_salted_sha1' } },
  { algorithm: 'ldap-ssha256', options: {}, prefix: '{SSHA256}', verifier: { tool: 'passlib', handler: 'ldap_salted_sha256' } },
  { algorithm: 'ldap-ssha512', options: { saltLength: 16 }, prefix: '{SSHA512}', verifier: { tool: 'passlib', handler: 'ldap_salted_sha512' } },
  { algorithm: 'scrypt', options: { N: 16, r: 8, p: 1 }, prefix: '$scrypt$ln=4,r=8,p=1$', verifier: { tool: 'passlib', handler: 'scrypt' } },
  { algorithm: 'pbkdf2-sha1', options: { iterations: 1000 }, prefix: '$pbkdf2$1000$', verifier: { tool: 'passlib', handler: 'pbkdf2_sha1' } },
  { algorithm: 'pbkdf2-sha256', options: { iterations: 1000 }, prefix: '$pbkdf2-sha256$1000$', verifier: { tool: 'passlib', handler: 'pbkdf2_sha256' } },
  { algorithm: 'pbkdf2-sha512', options: { iterations: 1000 }, prefix: '$pbkdf2-sha512$1000$', verifier: { tool: 'passlib', handler: 'pbkdf2_sha512' } },
  { algorithm: 'bcrypt', options: { cost: 4 }, prefix: '$2b$04$', verifier: { tool: 'bcrypt' } },
  { algorithm: 'argon2id', options: { memoryCost: 64, timeCost: 1, parallelism: 1 }, prefix: '$argon2id$v=19$m=64,t=1,p=1$', verifier: { tool: 'argon2-cffi' } },
  { algorithm: 'argon2i', options: { memoryCost: 64, timeCost: 1, parallelism: 1 }, prefix: '$argon2i$v=19$', verifier: { tool: 'argon2-cffi' } },
  { algorithm: 'argon2d', options: { memoryCost: 64, timeCost: 1, parallelism: 1 }, prefix: '$argon2d$v=19$', verifier: { tool: 'argon2-cffi' } },
]

/** What the Python tools generate, and the scheme hashd must detect it as. */
const toolMade: Array<{ algorithm: string, job: Omit<Job, 'op' | 'pw'>, inputs?: string[] }> = [
  { algorithm: 'sha256-crypt', job: { tool: 'passlib', handler: 'sha256_crypt', settings: { rounds: 1000 } } },
  { algorithm: 'sha512-crypt', job: { tool: 'passlib', handler: 'sha512_crypt', settings: { rounds: 1000 } } },
  { algorithm: 'sha512-crypt', job: { tool: 'passlib', handler: 'sha512_crypt', settings: { rounds: 5000 } } },
  { algorithm: 'md5-crypt', job: { tool: 'passlib', handler: 'md5_crypt' } },
  { algorithm: 'apr1', job: { tool: 'passlib', handler: 'apr_md5_crypt' } },
  { algorithm: 'des-crypt', job: { tool: 'passlib', handler: 'des_crypt' } },
  { algorithm: 'bsdi-crypt', job: { tool: 'passlib', handler: 'bsdi_crypt', settings: { rounds: 5001 } } },
  // FreeBSD's NT crypt widens bytes to UTF-16 one by one; passlib encodes text as UTF-16: they agree on ASCII.
  { algorithm: 'nt-crypt', job: { tool: 'passlib', handler: 'bsd_nthash' }, inputs: ['', Buffer.from('Passw0rd ascii').toString('hex')] },
  { algorithm: 'phpass', job: { tool: 'passlib', handler: 'phpass', settings: { rounds: 8 } } },
  { algorithm: 'phpass', job: { tool: 'passlib', handler: 'phpass', settings: { rounds: 8, ident: 'H' } } },
  { algorithm: 'drupal7', job: { tool: 'drupal7' } },
  { algorithm: 'ldap-md5', job: { tool: 'passlib', handler: 'ldap_md5' } },
  { algorithm: 'ldap-sha', job: { tool: 'passlib', handler: 'ldap_sha1' } },
  { algorithm: 'ldap-smd5', job: { tool: 'passlib', handler: 'ldap_salted_md5' } },
  { algorithm: 'ldap-ssha', job: { tool: 'passlib', handler: 'ldap_salted_sha1' } },
  { algorithm: 'ldap-ssha256', job: { tool: 'passlib', handler: 'ldap_salted_sha256', settings: { salt_size: 16 } } },
  { algorithm: 'ldap-ssha512', job: { tool: 'passlib', handler: 'ldap_salted_sha512' } },
  { algorithm: 'ldap-crypt', job: { tool: 'passlib', handler: 'ldap_sha512_crypt', settings: { rounds: 1000 } } },
  { algorithm: 'ldap-crypt', job: { tool: 'passlib', handler: 'ldap_md5_crypt' } },
  { algorithm: 'scrypt', job: { tool: 'passlib', handler: 'scrypt', settings: { rounds: 4 } } },
  { algorithm: 'pbkdf2-sha1', job: { tool: 'passlib', handler: 'pbkdf2_sha1', settings: { rounds: 1000 } } },
  { algorithm: 'pbkdf2-sha256', job: { tool: 'passlib', handler: 'pbkdf2_sha256', settings: { rounds: 1000 } } },
  { algorithm: 'pbkdf2-sha512', job: { tool: 'passlib', handler: 'pbkdf2_sha512', settings: { rounds: 1000 } } },
  { algorithm: 'pbkdf2-sha256', job: { tool: 'passlib', handler: 'django_pbkdf2_sha256', settings: { rounds: 1000 } } },
  { algorithm: 'pbkdf2-sha256', job: { tool: 'werkzeug' } },
  { algorithm: 'bcrypt', job: { tool: 'bcrypt' } },
  { algorithm: 'argon2id', job: { tool: 'argon2-cffi' } },
]

/** mkpasswd (whois) methods, the scheme each must be detected as, and the -R count to keep it cheap. */
const mkpasswdMethods: Array<[method: string, algorithm: string, rounds?: string]> = [
  ['yescrypt', 'yescrypt', '1'],
  ['gost-yescrypt', 'gost-yescrypt', '1'],
  ['sha512crypt', 'sha512-crypt', '1000'],
  ['sha256crypt', 'sha256-crypt', '1000'],
  ['md5crypt', 'md5-crypt'],
  ['descrypt', 'des-crypt'],
  ['bsdicrypt', 'bsdi-crypt', '725'],
  ['nt', 'nt-crypt'],
  ['scrypt', 'scrypt', '6'],
  ['bcrypt', 'bcrypt', '4'],
]

describe('password hashes: independent tools, both directions', () => {
  let server: TestServer
  before(async () => { server = await startServer() })
  after(async () => { await server.close() })

  const verifyDetected = async (hash: string, pw: string, algorithm: string): Promise<void> => {
    const response = await server.post('/api/verify', { input: pw, inputEncoding: 'hex', hash })
    assert.equal(response.status, 200, `${hash}: ${response.text}`)
    assert.equal(response.body.algorithm, algorithm, hash)
    assert.equal(response.body.match, true, `${hash} should match input ${pw}`)
  }

  for (const provider of providers(generated.map(({ verifier }) => verifier.tool))) {
    it(`hashd hashes every generated format; the independent tool verifies each, for every input (${provider})`, { skip: skipUnless(provider) }, async () => {
      const jobs: Job[] = []
      const mine = generated.filter(({ verifier }) => providerOf(verifier.tool) === provider)
      await Promise.all(mine.flatMap(({ algorithm, options, prefix, verifier }) => ALL.map(async (pw) => {
        const response = await server.post('/api/hash', { input: pw, inputEncoding: 'hex', algorithm, options })
        assert.equal(response.status, 200, `${algorithm}: ${response.text}`)
        assert.ok(response.body.hash.startsWith(prefix), `${algorithm} wrote ${response.body.hash}`)
        jobs.push({ op: 'verify', ...verifier, pw, hash: response.body.hash })
        // A different password must not verify in the tool either.
        jobs.push({ op: 'verify', ...verifier, pw: `78${pw}`, hash: response.body.hash })
      })))
      const results = runPython(jobs)
      jobs.forEach((job, i) => {
        const expected = !job.pw.startsWith('78') || ALL.includes(job.pw)
        assert.equal(results[i], expected, `${job.tool} ${job.handler ?? ''} on ${job.hash} with ${job.pw}`)
      })
    })
  }

  for (const provider of providers(toolMade.map(({ job }) => job.tool))) {
    it(`the tools hash every format hashd reads; hashd detects and verifies each (${provider})`, { skip: skipUnless(provider) }, async () => {
      const jobs: Array<Job & { algorithm: string }> = toolMade.filter(({ job }) => providerOf(job.tool) === provider).flatMap(({ algorithm, job, inputs }) =>
        (inputs ?? ALL).map((pw) => ({ op: 'hash' as const, ...job, pw, algorithm })))
      const hashes = runPython(jobs) as string[]
      await Promise.all(jobs.map(async (job, i) => verifyDetected(hashes[i] as string, job.pw, job.algorithm)))
    })
  }

  it('mkpasswd (libxcrypt via whois) hashes verify in hashd', { skip: skipUnless('mkpasswd') }, async () => {
    await Promise.all(mkpasswdMethods.flatMap(([method, algorithm, rounds]) => [INPUTS.text, INPUTS.binary, INPUTS.empty].map(async (pw) => {
      const hash = run('mkpasswd', ['-s', '-m', method, ...(rounds ? ['-R', rounds] : [])], Buffer.from(pw, 'hex'))
      await verifyDetected(hash, pw, algorithm)
    })))
  })

  it('htpasswd: apr1, bcrypt $2y$ and {SHA} verify in hashd, and htpasswd verifies hashd\'s apr1 and bcrypt', { skip: skipUnless('htpasswd') }, async () => {
    const pw = 'héllo wörld ✓'
    const hex = Buffer.from(pw).toString('hex')
    for (const [flag, algorithm] of [['-nbm', 'apr1'], ['-nbB', 'bcrypt'], ['-nbs', 'ldap-sha']] as const) {
      const line = run('htpasswd', [flag, ...(flag === '-nbB' ? ['-C', '4'] : []), 'user', pw])
      await verifyDetected(line.slice('user:'.length), hex, algorithm)
    }
    const directory = mkdtempSync(join(tmpdir(), 'hashd-htpasswd-'))
    try {
      for (const [algorithm, options] of [['apr1', {}], ['bcrypt', { cost: 4 }]] as const) {
        const made = await server.post('/api/hash', { input: pw, algorithm, options })
        const file = join(directory, algorithm)
        writeFileSync(file, `user:${made.body.hash}\n`)
        // htpasswd -v exits 0 only when the password is correct.
        run('htpasswd', ['-vb', file, 'user', pw])
        assert.throws(() => execFileSync('htpasswd', ['-vb', file, 'user', `${pw}!`], { stdio: 'ignore' }))
      }
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('the reference argon2 CLI: argon2id/i/d, v=19 and v=16, and parameters in another order', { skip: skipUnless('argon2') }, async () => {
    const cases: Array<[flags: string[], algorithm: string]> = [
      [['-id'], 'argon2id'], [['-i'], 'argon2i'], [['-d'], 'argon2d'], [['-i', '-v', '10'], 'argon2i'], [['-id', '-v', '10'], 'argon2id'],
    ]
    for (const [flags, algorithm] of cases) {
      // hashd computes v=16 only through @node-rs/argon2, which takes UTF-8 text (binary + v=16 is 501, below).
      for (const pw of flags.includes('10') ? [INPUTS.text, INPUTS.emoji] : [INPUTS.text, INPUTS.binary]) {
        const hash = run('argon2', ['somesaltSOMESALT', ...flags, '-t', '2', '-m', '6', '-p', '2', '-e'], Buffer.from(pw, 'hex'))
        await verifyDetected(hash, pw, algorithm)
        // The PHC string format does not fix the order of m, t and p.
        const reordered = hash.replace(/m=(\d+),t=(\d+),p=(\d+)/, 't=$2,p=$3,m=$1')
        assert.notEqual(reordered, hash)
        await verifyDetected(reordered, pw, algorithm)
        if (flags.includes('10')) {
          // Hashes from argon2 releases before 1.3 carry no v= at all; they mean version 0x10.
          await verifyDetected(hash.replace('$v=16', ''), pw, algorithm)
        }
      }
    }
  })

  it('argon2 v=16 of a password that is not UTF-8 is 501, not a wrong answer', { skip: skipUnless('argon2') }, async () => {
    const hash = run('argon2', ['somesaltSOMESALT', '-id', '-v', '10', '-t', '2', '-m', '6', '-p', '1', '-e'], Buffer.from(INPUTS.binary, 'hex'))
    const response = await server.post('/api/verify', { input: INPUTS.binary, inputEncoding: 'hex', hash })
    assert.equal(response.status, 501, response.text)
  })

  it('RFC 7914 §12: hashlib.scrypt reproduces the published keys, and hashd verifies them in passlib form', { skip: skipUnless('python3') }, async () => {
    for (const vector of rfc7914.filter((entry) => entry.N <= 16384)) {
      const dk = python('import hashlib,sys; print(hashlib.scrypt(sys.argv[1].encode(), salt=sys.argv[2].encode(), n=int(sys.argv[3]), r=int(sys.argv[4]), p=int(sys.argv[5]), maxmem=2**26, dklen=64).hex())',
        [vector.password, vector.salt, String(vector.N), String(vector.r), String(vector.p)])
      assert.equal(dk, vector.dk)
      const b64 = (bytes: Buffer): string => bytes.toString('base64').replace(/=+$/, '')
      const hash = `$scrypt$ln=${Math.log2(vector.N)},r=${vector.r},p=${vector.p}$${b64(Buffer.from(vector.salt))}$${b64(Buffer.from(vector.dk, 'hex'))}`
      await verifyDetected(hash, Buffer.from(vector.password).toString('hex'), 'scrypt')
    }
  })
})
