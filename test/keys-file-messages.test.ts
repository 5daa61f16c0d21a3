/**
 * A keys file's messages name the variable, the file, the line and the field's position, and never
 * a field's content: a secret written in the wrong field (a pepper line written `<secret> k3`), a
 * key pasted where its hash belongs, a key name, an id or a version as written must not reach the
 * error that stops the server, the log, or GET /api/health (which a monitor reads, and which shows
 * the reason of the last failed reload).
 *
 * Every field of every bad line below holds a marker: a random value of the field's own shape (a
 * base64url secret, an id, a nine-digit version, an option's name and value), so a message that
 * quotes any field, or part of one, is caught. Each bad file is loaded at start (in this process,
 * the ConfigError the server prints; and for one file of each kind in a real hashd process, its
 * stderr and stdout) and on reload by SIGHUP in a real hashd process, whose stdout and stderr (its
 * log) and /api/health (asked with an API key of every scope) are searched for the markers.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes, randomInt } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ConfigError } from '../src/config.js'
import { hashKey } from '../src/keys/api-keys.js'
import { spawnHashd, startHashd, type HashdProcess } from './helpers/process.js'
import { startServer } from './helpers/server.js'

const dir = mkdtempSync(join(tmpdir(), 'hashd-keys-messages-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** Every marker made, so each check looks for all of them. */
const markers: string[] = []
const remember = (value: string): string => {
  markers.push(value)
  return value
}
const startsWell = (make: () => string): string => {
  for (;;) {
    const value = make()
    if (/^[A-Za-z0-9]/.test(value)) return remember(value)
  }
}
const lowercase = (length: number) => Array.from({ length }, () => String.fromCharCode(97 + randomInt(26))).join('')
/** A secret of 32 bytes as base64url (43 characters, a valid key name too, as a real one often is). */
const secret = () => startsWell(() => randomBytes(32).toString('base64url'))
/** A secret too short to be a key (16 bytes). */
const shortSecret = () => startsWell(() => randomBytes(16).toString('base64url'))
/** A key id or name: valid where an id goes. */
const id = () => startsWell(() => randomBytes(12).toString('base64url'))
/** A version as written: nine digits. */
const version = () => remember(String(randomInt(100_000_000, 1_000_000_000)))
/** Two versions as written, the lower first. */
const twoVersions = (): [string, string] => {
  const [a, b] = [version(), version()]
  return Number(a) < Number(b) ? [a, b] : [b, a]
}
/** Text that is no base64 and no key name. */
const junk = () => remember(`${startsWell(() => randomBytes(12).toString('base64url'))}!$`)
/** An option's name this file does not take, and a value. */
const optionName = () => remember(`zq${lowercase(12)}`)
const optionValue = () => startsWell(() => randomBytes(18).toString('base64url'))
const sha256 = () => remember(createHash('sha256').update(randomBytes(16)).digest('hex'))
const apiKey = () => remember(`hk_${randomBytes(32).toString('base64url')}`)

/**
 * The markers found in `text`: a long one by any 8 characters of it (a message that cut a secret
 * short still leaks), a short one whole.
 */
function leaked(text: string): string[] {
  return markers.filter((marker) => {
    if (marker.length < 16) return text.includes(marker)
    for (let at = 0; at + 8 <= marker.length; at++) if (text.includes(marker.slice(at, at + 8))) return true
    return false
  })
}

type Kind = 'PEPPER_KEYS_FILE' | 'HMAC_KEYS_FILE' | 'API_KEYS_FILE'
interface Case { kind: Kind, name: string, text: string, line: number }

const pepper = (name: string, text: string, line: number): Case => ({ kind: 'PEPPER_KEYS_FILE', name, text, line })
const hmac = (name: string, text: string, line: number): Case => ({ kind: 'HMAC_KEYS_FILE', name, text, line })
const api = (name: string, text: string, line: number): Case => ({ kind: 'API_KEYS_FILE', name, text, line })

const cases: Case[] = [
  pepper('written the wrong way round, secret first', `${id()} ${secret()}\n${id()} ${secret()}\n${secret()} ${id()}\n`, 3),
  pepper('a secret too short', `${id()} ${shortSecret()}\n`, 1),
  pepper('a secret that is not base64', `${id()} ${junk()}\n`, 1),
  pepper('a bad key id', `${junk()} ${secret()}\n`, 1),
  pepper('a repeated key id', (() => { const same = id(); return `${same} ${secret()}\n${same} ${secret()}\n` })(), 2),
  pepper('an unknown option', `${id()} ${secret()} ${optionName()}=${optionValue()}\n`, 1),
  pepper('a bad state', `${id()} ${secret()} state=${optionValue()}\n`, 1),
  pepper('an option given twice', `${id()} ${secret()} state=staged state=retired\n`, 1),
  pepper('a field too many', `${id()} ${secret()} ${secret()}\n`, 1),
  pepper('every key staged', `${id()} ${secret()} state=staged\n${id()} ${secret()} state=retired\n`, 2),
  pepper('two keys marked current', `${id()} ${secret()} state=current\n${id()} ${secret()} state=current\n`, 2),

  hmac('written secret first', `${secret()} ${version()} ${id()}\n`, 1),
  hmac('the version and secret swapped', `${id()} ${secret()} ${version()}\n`, 1),
  hmac('a secret where the name goes, the version left out', `${secret()} ${secret()} ${id()}\n`, 1),
  hmac('a secret too short', `${id()} ${version()} ${shortSecret()}\n`, 1),
  hmac('a secret that is not base64', `${id()} ${version()} ${junk()}\n`, 1),
  hmac('a bad name', `${junk()} ${version()} ${secret()}\n`, 1),
  hmac('a repeated version', (() => { const [name, same] = [id(), version()]; return `${name} ${same} ${secret()}\n${name} ${same} ${secret()}\n` })(), 2),
  hmac('an unknown option', `${id()} ${version()} ${secret()} ${optionName()}=${optionValue()}\n`, 1),
  hmac('a bad state', `${id()} ${version()} ${secret()} state=${optionValue()}\n`, 1),
  hmac('an option given twice', `${id()} ${version()} ${secret()} state=staged state=staged\n`, 1),
  hmac('a bad algorithms=', `${id()} ${version()} ${secret()} algorithms=sha256,${optionValue()}\n`, 1),
  hmac('algorithms= that differ between versions', (() => { const name = id(); return `${name} 1 ${secret()} algorithms=sha256\n${name} 2 ${secret()} algorithms=sha512\n` })(), 2),
  hmac('a bad min-verify-version', `${id()} ${version()} ${secret()} min-verify-version=${optionValue()}\n`, 1),
  hmac('min-verify-version that differ', (() => { const name = id(); return `${name} 1 ${secret()} min-verify-version=1\n${name} 2 ${secret()} min-verify-version=2\n` })(), 2),
  hmac('a floor above the current version', (() => { const [name, [low, high]] = [id(), twoVersions()]; return `${name} ${low} ${secret()}\n${name} ${high} ${secret()} state=staged min-verify-version=${high}\n` })(), 2),
  hmac('two versions marked current', (() => { const [name, [low, high]] = [id(), twoVersions()]; return `${name} ${low} ${secret()} state=current\n${name} ${high} ${secret()} state=current\n` })(), 2),
  hmac('no version that can be current', (() => { const name = id(); return `${name} 1 ${secret()} state=retired\n${name} 2 ${secret()} state=staged\n` })(), 2),
  hmac('a bad purpose=', `${id()} ${version()} ${secret()} purpose=${optionValue()}\n`, 1),
  hmac('purpose= that differs between versions', (() => { const name = id(); return `${name} 1 ${secret()} purpose=webhooks\n${name} 2 ${secret()}\n` })(), 2),
  hmac('a field too many', `${id()} ${version()} ${secret()} ${secret()}\n`, 1),

  api('the key pasted where its hash goes', `${id()} ${apiKey()}\n`, 1),
  api('written hash first', `${sha256()} ${id()}\n`, 1),
  api('a bad name', `${junk()} ${sha256()}\n`, 1),
  api('a bad limit', `${id()} ${sha256()} ${junk()}\n`, 1),
  api('a repeated name', (() => { const name = id(); return `${name} ${sha256()}\n${name} ${sha256()}\n` })(), 2),
  api('a repeated hash', (() => { const hash = sha256(); return `${id()} ${hash}\n${id()} ${hash}\n` })(), 2),
  api('an unknown scope', `${id()} ${sha256()} scopes=hash,${optionValue()}\n`, 1),
  api('a bad hmac-keys=', `${id()} ${sha256()} hmac-keys=${optionValue()},\n`, 1),
  api('an unknown option', `${id()} ${sha256()} ${optionName()}=${optionValue()}\n`, 1),
  api('an option after which a field comes', `${id()} ${sha256()} scopes=hash ${version()}\n`, 1),
]

let files = 0
const file = (text: string) => {
  const path = join(dir, `keys-${files++}`)
  writeFileSync(path, text, { mode: 0o600 })
  return path
}
/**
 * Replaces a file's contents in one step (a new file renamed over it), as a keys file should be
 * changed: hashd reloads a file when it changes, and a write in place could be read half done.
 */
const replace = (path: string, text: string): void => {
  writeFileSync(`${path}.new`, text, { mode: 0o600 })
  renameSync(`${path}.new`, path)
}
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

describe('a bad keys file at start: the error names the line, never a field', () => {
  for (const each of cases) {
    it(`${each.kind}: ${each.name}`, async () => {
      const path = file(each.text)
      await assert.rejects(startServer({ [each.kind]: path }), (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error))
        assert.match(error.message, new RegExp(`^${each.kind} ${escaped(path)} line ${each.line}\\b`))
        assert.deepEqual(leaked(error.message), [], error.message)
        return true
      })
    })
  }

  it('a real hashd prints the reason, and no field, on stderr and stdout', async () => {
    for (const kind of ['PEPPER_KEYS_FILE', 'HMAC_KEYS_FILE', 'API_KEYS_FILE'] as const) {
      const first = cases.find((each) => each.kind === kind)!
      const path = file(first.text)
      const hashd = spawnHashd({ [kind]: path })
      const { code } = await hashd.exited
      assert.notEqual(code, 0)
      assert.match(hashd.stderr(), new RegExp(`^hashd: ${kind} ${escaped(path)} line ${first.line}, field \\d`))
      assert.deepEqual(leaked(hashd.stderr() + hashd.stdout()), [], hashd.stderr())
    }
  })
})

describe('a bad keys file on reload (SIGHUP): the log and /api/health name the line, never a field', () => {
  const key = `hk_${randomBytes(32).toString('base64url')}`
  const good: Record<Kind, string> = {
    PEPPER_KEYS_FILE: `k1 ${randomBytes(32).toString('base64')}\n`,
    HMAC_KEYS_FILE: `orders 1 ${randomBytes(32).toString('base64')}\n`,
    // No scopes=: every scope, so /api/health shows every detail it has.
    API_KEYS_FILE: `monitor ${hashKey(key)}\n`,
  }
  const paths = { PEPPER_KEYS_FILE: file(good.PEPPER_KEYS_FILE), HMAC_KEYS_FILE: file(good.HMAC_KEYS_FILE), API_KEYS_FILE: file(good.API_KEYS_FILE) }
  const source: Record<Kind, string> = { PEPPER_KEYS_FILE: 'pepper-keys', HMAC_KEYS_FILE: 'hmac-keys', API_KEYS_FILE: 'api-keys' }
  const what: Record<Kind, string> = { PEPPER_KEYS_FILE: 'pepper keys', HMAC_KEYS_FILE: 'HMAC keys', API_KEYS_FILE: 'API keys' }
  let hashd: HashdProcess
  before(async () => { hashd = await startHashd(paths) })
  after(async () => { await hashd.stop() })

  for (const each of cases) {
    it(`${each.kind}: ${each.name}`, async () => {
      const path = paths[each.kind]
      try {
        replace(path, each.text)
        const from = hashd.lines()
        hashd.child.kill('SIGHUP')
        await hashd.logged(new RegExp(`^${what[each.kind]} not reloaded \\(SIGHUP\\)`), from)
        const health = await hashd.get('/api/health', { authorization: `Bearer ${key}` })
        assert.equal(health.status, 200, health.text)
        const failing = (health.body.files as Array<{ source: string, lastError?: { reason: string } }>).find((entry) => entry.source === source[each.kind])
        assert.match(failing?.lastError?.reason ?? '', new RegExp(`^${each.kind} ${escaped(path)} line ${each.line}\\b`), health.text)
        assert.deepEqual(leaked(health.text), [], health.text)
        assert.deepEqual(leaked(hashd.stdout() + hashd.stderr()), [], hashd.stdout().split('\n').slice(from).join('\n'))
      } finally {
        replace(path, good[each.kind])
      }
    })
  }
})
