/**
 * HTTPS on the main port (src/tls.ts), with real clients: curl and `openssl s_client`, talking to
 * the real server on loopback. Certificates are made here with the openssl command line: a server
 * CA and a certificate for 127.0.0.1 and localhost, a client CA and a client certificate, and a
 * client certificate from another CA. Checked: answers over HTTPS (FIPS 180-2's SHA-256 of "abc"),
 * TLS 1.2 and 1.3 taken and 1.0 and 1.1 refused, client certificates required with
 * TLS_CLIENT_CA_FILE (none, or one from another CA, is refused in the handshake), a renewed
 * certificate served without a restart while a bad one is refused and the one in force kept, and
 * the start-up refusals and warnings.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { buildApp } from '../src/app.js'
import { ConfigError, loadConfig } from '../src/config.js'
import { isLoopback, plaintextWarning } from '../src/tls.js'
import { startHashd } from './helpers/process.js'
import { startServer, type TestServer } from './helpers/server.js'
import { run, skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1: SHA-256("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'

interface Outcome { code: number, stdout: string, stderr: string }

/** A program run without blocking the event loop: the server under test runs in this process. */
function runAsync(command: string, args: string[], input = ''): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
      resolve({ code, stdout, stderr })
    })
    child.stdin?.end(input)
  })
}

const HEALTHCHECK = fileURLToPath(new URL('../src/healthcheck.js', import.meta.url))

function runAsyncEnv(command: string, args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

let dir: string
const file = (name: string) => join(dir, name)

/** A CA (key and self-signed certificate) named `name`. */
function makeCa(name: string): void {
  run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', `/CN=hashd test ${name}`, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`)])
}

/** A key and a certificate for `name`, signed by CA `ca`, with these extensions. */
function makeCert(name: string, ca: string, subject: string, extensions: string): void {
  writeFileSync(file(`${name}.ext`), extensions)
  run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', subject,
    '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`)])
  run('openssl', ['x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${ca}.pem`), '-CAkey', file(`${ca}.key`),
    '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', file(`${name}.ext`), '-out', file(`${name}.pem`)])
}

const SERVER_EXTENSIONS = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
const CLIENT_EXTENSIONS = 'extendedKeyUsage=clientAuth\n'

const port = (server: TestServer) => new URL(server.url).port

function curl(server: TestServer, path: string, extra: string[] = []): Promise<Outcome> {
  return runAsync('curl', ['-sS', '--max-time', '20', '--cacert', file('server-ca.pem'), ...extra, `https://127.0.0.1:${port(server)}${path}`])
}

function sClient(server: TestServer, args: string[]): Promise<Outcome> {
  return runAsync('openssl', ['s_client', '-connect', `127.0.0.1:${port(server)}`, '-servername', 'localhost', '-CAfile', file('server-ca.pem'), ...args], 'Q\n')
}

describe('HTTPS with TLS_CERT_FILE and TLS_KEY_FILE', { skip: skipUnless('openssl', 'curl') }, () => {
  let server: TestServer
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-tls-'))
    makeCa('server-ca')
    makeCert('server', 'server-ca', '/CN=localhost', SERVER_EXTENSIONS)
    makeCert('renewed', 'server-ca', '/CN=localhost', SERVER_EXTENSIONS)
    makeCa('client-ca')
    makeCert('client', 'client-ca', '/CN=payments-app', CLIENT_EXTENSIONS)
    makeCa('other-ca')
    makeCert('stranger', 'other-ca', '/CN=payments-app', CLIENT_EXTENSIONS)
    writeFileSync(file('tls.pem'), readFileSync(file('server.pem')))
    writeFileSync(file('tls.key'), readFileSync(file('server.key')))
    server = await startServer({ TLS_CERT_FILE: file('tls.pem'), TLS_KEY_FILE: file('tls.key') })
  })
  after(async () => {
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('answers over HTTPS, checked against the CA, and says so at start', async () => {
    assert.match(server.url, /^https:/)
    const hashed = await curl(server, '/api/hash', ['-H', 'content-type: application/json', '-d', '{"input":"abc","algorithm":"sha256"}'])
    assert.equal(hashed.code, 0, hashed.stderr)
    assert.equal(JSON.parse(hashed.stdout).hash, SHA256_ABC)
    assert.match(server.logs(), /"msg":"TLS on"/)
    assert.match(server.logs(), /"subject":"CN=localhost"/)
    assert.doesNotMatch(server.logs(), /BEGIN|PRIVATE/)
    const plain = await runAsync('curl', ['-sS', '--max-time', '10', `http://127.0.0.1:${port(server)}/api/health`])
    assert.notEqual(plain.code, 0, 'plain HTTP is not served on the TLS port')
  })

  it('takes TLS 1.2 and 1.3, and refuses 1.1 and 1.0 in the handshake', async () => {
    for (const version of ['tls1_2', 'tls1_3']) {
      const outcome = await sClient(server, [`-${version}`])
      assert.equal(outcome.code, 0, `${version}: ${outcome.stderr}`)
      assert.match(outcome.stdout, new RegExp(`New, TLSv1\\.${version.slice(-1)}, Cipher is`), version)
      assert.match(outcome.stdout, /Verify return code: 0 \(ok\)/)
    }
    // The client is allowed the old versions (OpenSSL's security level 0), so the refusal is the server's.
    for (const version of ['tls1_1', 'tls1']) {
      const outcome = await sClient(server, [`-${version}`, '-cipher', 'DEFAULT:@SECLEVEL=0'])
      assert.notEqual(outcome.code, 0, `${version} must be refused`)
      assert.match(outcome.stdout, /New, \(NONE\), Cipher is \(NONE\)/, `${version}: no session`)
      assert.match(outcome.stderr, /alert protocol version|unsupported protocol|wrong version number/i, `${version}: ${outcome.stderr}`)
    }
  })

  it('serves a renewed certificate without a restart, and keeps the one in force when the new files do not match', async () => {
    const fingerprint = async (): Promise<string> => {
      const shown = await sClient(server, ['-tls1_3'])
      return run('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], shown.stdout)
    }
    const before = await fingerprint()
    assert.equal(before, run('openssl', ['x509', '-noout', '-fingerprint', '-sha256', '-in', file('server.pem')]))
    // A key that is not the certificate's: refused, the old pair stays, health says degraded, the log why.
    writeFileSync(file('tls.pem.new'), readFileSync(file('renewed.pem')))
    renameSync(file('tls.pem.new'), file('tls.pem'))
    // Node's fetch takes no CA of a test's own: curl reads /api/health and /metrics.
    const degraded = async () => (JSON.parse((await curl(server, '/api/health')).stdout) as { degraded: boolean }).degraded
    await waitFor(degraded)
    assert.match((await curl(server, '/metrics')).stdout, /^hashd_file_reload_failing\{source="tls"\} 1$/m)
    const warning = server.logs().split('\n').find((line) => line.includes('"source":"tls"') && line.includes('not reloaded')) ?? ''
    assert.match((JSON.parse(warning) as { reason: string }).reason, /do not make a TLS context: key values mismatch/)
    assert.equal(await fingerprint(), before, 'the certificate in force is still served')
    // The matching key arrives: the renewed certificate is served.
    writeFileSync(file('tls.key.new'), readFileSync(file('renewed.key')))
    renameSync(file('tls.key.new'), file('tls.key'))
    const renewed = run('openssl', ['x509', '-noout', '-fingerprint', '-sha256', '-in', file('renewed.pem')])
    await waitFor(async () => await fingerprint() === renewed)
    assert.match(server.logs(), /TLS certificate reloaded \(changed on disk\)/)
    assert.equal(await degraded(), false, 'the failure cleared')
  })
})

describe('client certificates with TLS_CLIENT_CA_FILE (mutual TLS)', { skip: skipUnless('openssl', 'curl') }, () => {
  let server: TestServer
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-mtls-'))
    makeCa('server-ca')
    makeCert('server', 'server-ca', '/CN=localhost', SERVER_EXTENSIONS)
    makeCa('client-ca')
    makeCert('client', 'client-ca', '/CN=payments-app', CLIENT_EXTENSIONS)
    makeCa('other-ca')
    makeCert('stranger', 'other-ca', '/CN=payments-app', CLIENT_EXTENSIONS)
    server = await startServer({ TLS_CERT_FILE: file('server.pem'), TLS_KEY_FILE: file('server.key'), TLS_CLIENT_CA_FILE: file('client-ca.pem') })
  })
  after(async () => {
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('answers a client with a certificate from the client CA', async () => {
    const outcome = await curl(server, '/api/hash', ['--cert', file('client.pem'), '--key', file('client.key'),
      '-H', 'content-type: application/json', '-d', '{"input":"abc","algorithm":"sha256"}'])
    assert.equal(outcome.code, 0, outcome.stderr)
    assert.equal(JSON.parse(outcome.stdout).hash, SHA256_ABC)
  })

  it('refuses a client without a certificate, and one whose certificate another CA signed, before reading a request', async () => {
    const requests = () => server.logs().split('\n').filter((line) => line.includes('"url":"/api/health"')).length
    const answered = requests()
    for (const [what, extra] of [['no certificate', []], ['a certificate from another CA', ['--cert', file('stranger.pem'), '--key', file('stranger.key')]]] as const) {
      const outcome = await curl(server, '/api/health', [...extra])
      assert.notEqual(outcome.code, 0, `${what}: refused`)
      assert.equal(outcome.stdout, '', `${what}: no HTTP answer`)
      // Under TLS 1.3 the client's handshake is over before the server has read its certificate:
      // the server then closes the connection, and curl sees no answer.
      assert.match(outcome.stderr, /alert|certificate|handshake|SSL|reset|Empty reply from server/i, what)
    }
    // openssl s_client over TLS 1.2: without a certificate OpenSSL's handshake fails; with one from
    // another CA, Node checks it as the handshake ends and closes the connection at once.
    const none = await sClient(server, ['-tls1_2'])
    assert.notEqual(none.code, 0)
    assert.match(none.stderr, /alert handshake failure|peer did not return a certificate|certificate required|unexpected eof/i, none.stderr)
    const stranger = await sClient(server, ['-tls1_2', '-cert', file('stranger.pem'), '-key', file('stranger.key')])
    assert.notEqual(stranger.code, 0)
    assert.match(stranger.stderr, /alert unknown ca|alert bad certificate|certificate verify failed|unexpected eof/i, stranger.stderr)
    assert.equal(requests(), answered, 'no refused connection got as far as a request')
    const good = await sClient(server, ['-tls1_2', '-cert', file('client.pem'), '-key', file('client.key')])
    assert.equal(good.code, 0, good.stderr)
    assert.match(good.stdout, /Verify return code: 0 \(ok\)/)
    assert.match(good.stdout, /Acceptable client certificate CA names\nCN = hashd test client-ca\n/)
  })
})

describe('the image\'s health check (dist/src/healthcheck.js)', { skip: skipUnless('openssl') }, () => {
  it('is healthy over HTTP, over HTTPS, and with client certificates required; unhealthy with nothing listening', async () => {
    const here = mkdtempSync(join(tmpdir(), 'hashd-healthcheck-'))
    const check = (env: Record<string, string>) => runAsyncEnv(process.execPath, [HEALTHCHECK], env)
    try {
      run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=hashd',
        '-addext', 'subjectAltName=DNS:hashd', '-keyout', join(here, 'tls.key'), '-out', join(here, 'tls.pem')])
      const tls = { TLS_CERT_FILE: join(here, 'tls.pem'), TLS_KEY_FILE: join(here, 'tls.key') }
      for (const env of [{}, tls, { ...tls, TLS_CLIENT_CA_FILE: join(here, 'tls.pem') }]) {
        const hashd = await startHashd(env)
        try {
          const outcome = await check({ ...env, PORT: new URL(hashd.url).port })
          assert.equal(outcome.code, 0, `${JSON.stringify(Object.keys(env))}: ${outcome.stderr}`)
        } finally {
          await hashd.stop()
        }
        const gone = await check({ ...env, PORT: new URL(hashd.url).port })
        assert.equal(gone.code, 1, 'nothing listening: unhealthy')
      }
    } finally {
      rmSync(here, { recursive: true, force: true })
    }
  })
})

describe('TLS configuration at start', () => {
  it('refuses half a configuration, with the variable named', () => {
    assert.throws(() => loadConfig({ TLS_CERT_FILE: '/etc/hashd/tls.pem' }), (error: unknown) => error instanceof ConfigError && /TLS_CERT_FILE is set without TLS_KEY_FILE/.test(error.message))
    assert.throws(() => loadConfig({ TLS_KEY_FILE: '/etc/hashd/tls.key' }), /TLS_KEY_FILE is set without TLS_CERT_FILE/)
    assert.throws(() => loadConfig({ TLS_CLIENT_CA_FILE: '/etc/hashd/ca.pem' }), /TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE/)
  })

  it('refuses files that do not make a context, naming them and never quoting them', { skip: skipUnless('openssl') }, async () => {
    const here = mkdtempSync(join(tmpdir(), 'hashd-tls-bad-'))
    try {
      run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=a', '-keyout', join(here, 'a.key'), '-out', join(here, 'a.pem')])
      run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=b', '-keyout', join(here, 'b.key'), '-out', join(here, 'b.pem')])
      const build = (env: Record<string, string>) => buildApp(loadConfig({ LOG_LEVEL: 'silent', ...env }))
      await assert.rejects(build({ TLS_CERT_FILE: join(here, 'a.pem'), TLS_KEY_FILE: join(here, 'b.key') }), (error: unknown) =>
        error instanceof ConfigError && /do not make a TLS context: key values mismatch/.test(error.message) && !/BEGIN/.test(error.message))
      await assert.rejects(build({ TLS_CERT_FILE: join(here, 'a.key'), TLS_KEY_FILE: join(here, 'a.key') }), /TLS_CERT_FILE .* holds no PEM certificate/)
      await assert.rejects(build({ TLS_CERT_FILE: join(here, 'a.pem'), TLS_KEY_FILE: join(here, 'missing.key') }), /TLS_KEY_FILE .*missing\.key cannot be read \(ENOENT\)/)
    } finally {
      rmSync(here, { recursive: true, force: true })
    }
  })

  it('warns when it listens beyond loopback over plain HTTP while holding a pepper or HMAC keys', async () => {
    const here = mkdtempSync(join(tmpdir(), 'hashd-tls-warn-'))
    try {
      writeFileSync(join(here, 'pepper'), `k1 ${randomBytes(32).toString('base64')}\n`)
      const pepper = { PEPPER_KEYS_FILE: join(here, 'pepper') }
      const logged = async (env: Record<string, string>): Promise<string> => {
        let text = ''
        const app = await buildApp(loadConfig({ LOG_LEVEL: 'warn', ...env }), { logStream: new Writable({ write(chunk, _encoding, done) { text += String(chunk); done() } }) })
        await app.close()
        return text
      }
      const warned = await logged({ ...pepper, HOST: '0.0.0.0' })
      assert.match(warned, /listening on 0\.0\.0\.0 over plain HTTP with PEPPER_KEYS_FILE set: passwords and keys cross the network unencrypted/)
      assert.match(warned, /"level":40/)
      assert.doesNotMatch(await logged({ ...pepper, HOST: '127.0.0.1' }), /plain HTTP/)
      assert.doesNotMatch(await logged({ HOST: '0.0.0.0' }), /plain HTTP/, 'no secrets held: no warning')
      const config = loadConfig({ HOST: '10.1.2.3', HMAC_KEYS_FILE: '/etc/hashd/hmac' })
      assert.match(plaintextWarning(config) ?? '', /with HMAC_KEYS_FILE set/)
      assert.equal(plaintextWarning({ ...config, tls: { certFile: 'a', keyFile: 'b', clientCaFile: null } }), null)
      for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) assert.equal(isLoopback(host), true, host)
      for (const host of ['0.0.0.0', '::', '10.0.0.5', 'hashd.internal', '128.0.0.1']) assert.equal(isLoopback(host), false, host)
    } finally {
      rmSync(here, { recursive: true, force: true })
    }
  })
})

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the reload')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
