/**
 * The pages' examples, read for test/docs-examples.test.ts (```console blocks run against a real
 * server) and test/docs-client-examples.test.ts (```ts programs compiled against @hashd/client):
 * the page parser, its `<!-- docs-examples: … -->` directives, the comparison of outputs, and the
 * servers the examples talk to (one per set of keys, started once and closed after the file).
 * What each block and directive means is said at the top of test/docs-examples.test.ts.
 */
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { fileURLToPath } from 'node:url'
import { makeCorpus } from '../../scripts/pwned-corpus.js'
import { importPwned } from '../../src/screening/import.js'
import { importBank } from '../../src/similarity/banks/index.js'
import { startServer, type TestServer } from './server.js'
import { TOOLS, type ToolName } from './tools.js'

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

export interface Example {
  command: string
  expected: string
  line: number
  /** The pepper key ids the server must have for this command (none: the default server). */
  pepperKeys: string[]
  /** The named HMAC keys the server must have, as `name:v1,v2` or `name:v1,v2:purpose` (the page's hmac-keys directive). */
  hmacKeys: string[]
  /** The server has the synthetic breached-password store (`pwned-store`). */
  pwnedStore: boolean
  /** The server's SIMILARITY_BANKS_DIR holds the example bank (the page's `similarity-banks`). */
  similarityBanks: boolean
}

export interface Page {
  examples: Example[]
  /** The ```ts programs of the page, in order. */
  programs: Program[]
  /** The tools every directive of the page names. */
  tools: ToolName[]
}

export interface Program {
  source: string
  /** The line of the opening fence. */
  line: number
  pepperKeys: string[]
  /** The named HMAC keys the server must have (the page's hmac-keys directive). */
  hmacKeys: string[]
  /** The server has the synthetic breached-password store (a pwned-store directive). */
  pwnedStore: boolean
  similarityBanks: boolean
  /** What its `console.log(…) // shown` lines say it prints, in order. */
  expected: string[]
}

/** The `// shown` comments of a program's console.log lines: what it prints. */
export function expectedPrints(source: string): string[] {
  return source.split('\n').flatMap((line) => {
    const match = /^\s*console\.log\(.*\)\s*\/\/ (.*)$/.exec(line)
    return match ? [match[1]!.trim()] : []
  })
}

const DIRECTIVE = /^<!--\s*docs-examples:\s*(.*?)\s*-->$/
const isTool = (name: string): name is ToolName => Object.hasOwn(TOOLS, name)

/** A `<!-- docs-examples: … -->` line's words; a kind or tool it does not know is an error, so a typo cannot pass. */
function directive(words: string[], where: string): { pepperKeys?: string[], hmacKeys?: string[], tools?: ToolName[], pwnedStore?: true, similarityBanks?: true } {
  const [kind, ...args] = words
  if (kind === 'pwned-store' && args.length === 0) return { pwnedStore: true }
  if (kind === 'similarity-banks' && args.length === 0) return { similarityBanks: true }
  if (kind === 'pepper-keys' && args.length > 0 && args.every((id) => /^[A-Za-z0-9._-]{1,64}$/.test(id))) return { pepperKeys: args }
  if (kind === 'hmac-keys' && args.length > 0 && args.every((key) => /^[A-Za-z0-9._-]{1,64}:\d{1,9}(?:,\d{1,9}){0,15}(?::(?:hmac|webhooks))?$/.test(key))) return { hmacKeys: args }
  if (kind === 'tools' && args.length > 0) {
    const unknown = args.filter((name) => !isTool(name))
    if (unknown.length > 0) throw new Error(`${where}: unknown tool ${unknown.join(', ')} (test/helpers/tools.ts TOOLS)`)
    return { tools: args as ToolName[] }
  }
  throw new Error(`${where}: docs-examples directive not understood: ${words.join(' ')}`)
}

/** The examples of a page, in order, and what the page's directives ask for. */
export function pageOf(text: string, name = 'page'): Page {
  const examples: Example[] = []
  const programs: Program[] = []
  let program: Program | null = null
  const tools = new Set<ToolName>()
  const lines = text.split('\n')
  let pagePepperKeys: string[] = []
  let pageHmacKeys: string[] = []
  let blockPepperKeys: string[] | undefined
  let pending: string[] | undefined
  let pagePwned = false
  let pageBanks = false
  let blockPwned = false
  let pendingPwned = false
  let inBlock = false
  let current: Example | null = null
  let continuing = false
  // Directives first: a page-wide one applies to blocks above it too.
  lines.forEach((line, index) => {
    const match = DIRECTIVE.exec(line.trim())
    if (!match) return
    const found = directive(match[1]!.split(/\s+/), `${name}:${index + 1}`)
    for (const tool of found.tools ?? []) tools.add(tool)
    const next = lines.slice(index + 1).find((each) => each.trim() !== '')
    if (found.pepperKeys && next?.trim() !== '```console') pagePepperKeys = found.pepperKeys
    if (found.hmacKeys) pageHmacKeys = found.hmacKeys
    if (found.pwnedStore && next?.trim() !== '```console') pagePwned = true
    if (found.similarityBanks) pageBanks = true
  })
  lines.forEach((line, index) => {
    if (program) {
      if (line.trim() === '```') {
        program.expected = expectedPrints(program.source)
        programs.push(program)
        program = null
      } else {
        program.source += `${line}\n`
      }
      return
    }
    if (!inBlock) {
      const match = DIRECTIVE.exec(line.trim())
      if (match) {
        const found = directive(match[1]!.split(/\s+/), `${name}:${index + 1}`)
        pending = found.pepperKeys ?? pending
        pendingPwned ||= found.pwnedStore === true
      } else if (line.trim() === '```console') {
        inBlock = true
        blockPepperKeys = pending
        blockPwned = pendingPwned
      } else if (line.trim() === '```ts' || line.trim() === '```typescript') {
        program = { source: '', line: index + 1, pepperKeys: pending ?? pagePepperKeys, hmacKeys: pageHmacKeys, expected: [], pwnedStore: pendingPwned || pagePwned, similarityBanks: pageBanks }
      }
      if (line.trim() !== '' && !match) { pending = undefined; pendingPwned = false }
      return
    }
    if (line.trim() === '```') {
      inBlock = false
      current = null
      blockPepperKeys = undefined
      return
    }
    if (continuing && current) {
      current.command += `\n${line}`
      continuing = line.endsWith('\\')
      return
    }
    if (line.startsWith('$ ')) {
      current = { command: line.slice(2), expected: '', line: index + 1, pepperKeys: blockPepperKeys ?? pagePepperKeys, hmacKeys: pageHmacKeys, pwnedStore: blockPwned || pagePwned, similarityBanks: pageBanks }
      examples.push(current)
      continuing = line.endsWith('\\')
      return
    }
    if (current) current.expected += current.expected === '' ? line : `\n${line}`
  })
  for (const example of examples) example.expected = example.expected.trim()
  return { examples, programs, tools: [...tools] }
}

export const examplesOf = (text: string): Example[] => pageOf(text).examples

/** `$argon2id$v=19$m=…$<salt>$<hash>`: everything but the last two fields exactly, those by length. */
function passwordShape(value: string): string {
  const fields = value.split('$')
  return fields.map((field, index) => (index >= fields.length - 2 ? `<${field.length}>` : field)).join('$')
}

/** A generated key's id: its length and alphabet (upper or lower hex). */
const keyShape = (value: string) => `${/^[0-9A-F]+$/.test(value) ? 'HEX' : /^[0-9a-f]+$/.test(value) ? 'hex' : 'other'} ${value.length}`

/** JSON equality with the varying fields compared by shape. */
function assertSameJson(actual: unknown, expected: unknown, where: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${where}: not an array`)
    assert.equal(actual.length, expected.length, `${where}: length`)
    expected.forEach((item, index) => assertSameJson(actual[index], item, `${where}[${index}]`))
    return
  }
  if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object' && !Array.isArray(actual), `${where}: not an object`)
    // In the order the server writes them, too: a page shows the answer as it comes.
    assert.deepEqual(Object.keys(actual), Object.keys(expected), `${where}: keys, in order`)
    for (const [key, value] of Object.entries(expected)) {
      const got: unknown = (actual as Record<string, unknown>)[key]
      if (key === 'processingTimeMs') assert.equal(typeof got, 'number', `${where}.${key}`)
      else if (typeof value === 'string' && value.startsWith('$') && (key === 'newHash' || (key === 'hash' && (expected as { encoding?: string }).encoding === 'standard'))) {
        assert.equal(passwordShape(String(got)), passwordShape(value), `${where}.${key} (a fresh salt: compared by shape)`)
      } else if ((key === 'keyId' || key === 'fingerprint') && typeof value === 'string') {
        assert.equal(keyShape(String(got)), keyShape(value), `${where}.${key} (a key made by the example: compared by shape)`)
      } else assertSameJson(got, value, `${where}.${key}`)
    }
    return
  }
  assert.deepEqual(actual, expected, where)
}

/** Long tokens of key alphabets, by class and length: `hk_<43>`, `<64 hex>`. */
const tokenShape = (line: string) => line.replace(/[A-Za-z0-9_-]{16,}/g, (token) => /^[0-9a-f]+$/.test(token) ? `<hex ${token.length}>` : `<token ${token.length}>`)

export function assertOutputMatches(actual: string, expected: string, where: string): void {
  if (expected.includes('…')) {
    // Shown abridged: the pieces between the ellipses, in order (the JSON shown is pretty-printed over lines).
    const json = /^[[{]/.test(expected)
    const compact = json ? expected.split('\n').map((line) => line.trim()).join('') : expected
    let from = 0
    for (const piece of compact.split(/\s*…\s*/).filter((each) => each !== '')) {
      const at = actual.indexOf(piece, from)
      assert.ok(at >= 0, `${where}: the output lacks ${piece.slice(0, 200)} (after offset ${from}); output: ${actual.slice(0, 1500)}`)
      from = at + piece.length
    }
    return
  }
  let expectedJson: unknown
  try { expectedJson = JSON.parse(expected) } catch { expectedJson = undefined }
  if (expectedJson !== undefined && expected !== '') {
    let actualJson: unknown
    try { actualJson = JSON.parse(actual) } catch { assert.fail(`${where}: the output is not JSON: ${actual.slice(0, 500)}`) }
    assertSameJson(actualJson, expectedJson, where)
    return
  }
  assert.deepEqual(actual.trim().split('\n').map(tokenShape), expected.split('\n').map(tokenShape), where)
}

/**
 * One server per set of pepper keys a page asks for, started when first needed. A key id has one
 * random secret for the whole run, so a hash made under `k1` opens on the `k1 k2` server: a page can
 * show a rotation.
 */
const servers = new Map<string, Promise<TestServer>>()
const secrets = new Map<string, string>()
const secretOf = (id: string) => secrets.get(id) ?? secrets.set(id, randomBytes(32).toString('base64')).get(id)!
const keysDir = mkdtempSync(join(tmpdir(), 'hashd-docs-keys-'))
/** The documented secret of an example HMAC key: the same every run, so a page's HMACs are too. */
export const docsHmacSecret = (name: string, version: string) => createHash('sha256').update(`hashd docs-examples ${name} ${version}`).digest('base64')
let pwnedStore: Promise<string> | undefined
/** The synthetic store of `pwned-store` pages, made once for the run. */
function syntheticStore(): Promise<string> {
  pwnedStore ??= (async () => {
    const dir = join(keysDir, 'pwned-corpus')
    await makeCorpus({ dir, hashes: 20_000, kind: 'sha1', layout: 'folder', seed: 1 })
    const file = join(keysDir, 'pwned.store')
    importPwned(dir, file, { kind: 'sha1', allowMissing: true })
    return file
  })()
  return pwnedStore
}
let exampleBanks: Promise<string> | undefined
/**
 * The folder of `similarity-banks` pages, made by bank:import once for the run: the bank `photos`
 * of docs/similarity.md's example (three PDQ hashes), and `files` of README's (two ssdeep hashes).
 */
function exampleBankFolder(): Promise<string> {
  exampleBanks ??= (async () => {
    const folder = join(keysDir, 'banks')
    mkdirSync(folder)
    const input = join(keysDir, 'photos.csv')
    writeFileSync(input, [
      'hash,id,label',
      'f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22,case-1041,"seized, batch 7"',
      'f8f8f0cce0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b23,case-1042,',
      '0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f,case-2001,unrelated',
    ].join('\n'))
    await importBank(input, join(folder, 'photos.bank'), 'pdq')
    // ssdeep -b of `seq 1 4800` and of `seq 1 2500; seq 2600 5000`: near copies of README's numbers.txt.
    const files = join(keysDir, 'files.csv')
    writeFileSync(files, [
      '384:+YWv11iDCQIZYkmt6ptaG+7gbVzCI720BglDFl2ZeH8Ou8fieYtYFJiz810+Fh8g:FhmbZzmt6ptaG7bVzN72sCuYJu8qyizy,report-v2,',
      '384:+YWv11iDCQIZYkmt6ptaG+7gbVzCI720BglDFl2ZeHqieYtYFJiz810+Fh8B9tBl:FhmbZzmt6ptaG7bVzN72sCuY3yizGaBT,report-trimmed,',
    ].join('\n'))
    await importBank(files, join(folder, 'files.bank'), 'ssdeep')
    return folder
  })()
  return exampleBanks
}
export function serverWith(pepperKeys: string[], hmacKeys: string[] = [], pwned = false, banks = false): Promise<TestServer> {
  const name = `${pepperKeys.join(' ')}|${hmacKeys.join(' ')}${pwned ? ' +pwned' : ''}${banks ? ' +banks' : ''}`
  let started = servers.get(name)
  if (started === undefined) {
    const env: Record<string, string> = {}
    if (pepperKeys.length > 0) {
      env.PEPPER_KEYS_FILE = join(keysDir, `pepper-${servers.size}`)
      writeFileSync(env.PEPPER_KEYS_FILE, pepperKeys.map((id) => `${id} ${secretOf(id)}\n`).join(''), { mode: 0o600 })
    }
    if (hmacKeys.length > 0) {
      env.HMAC_KEYS_FILE = join(keysDir, `hmac-${servers.size}`)
      const lines = hmacKeys.flatMap((spec) => {
        const [keyName = '', versions = '', purpose] = spec.split(':')
        return versions.split(',').map((version) => `${keyName} ${version} ${docsHmacSecret(keyName, version)}${purpose ? ` purpose=${purpose}` : ''}\n`)
      })
      writeFileSync(env.HMAC_KEYS_FILE, lines.join(''), { mode: 0o600 })
    }
    started = (async () => {
      if (pwned) env.PWNED_STORE = await syntheticStore()
      if (banks) env.SIMILARITY_BANKS_DIR = await exampleBankFolder()
      return startServer(env)
    })()
    servers.set(name, started)
  }
  return started
}
after(async () => {
  for (const started of servers.values()) await (await started).close()
  rmSync(keysDir, { recursive: true, force: true })
})

/** A printed line against the shown one: equal, or with `…` standing for any text. */
export function printedLineMatches(actual: string, shown: string): boolean {
  const pieces = shown.split('…')
  if (pieces.length === 1) return actual === shown
  let at = 0
  for (const [index, piece] of pieces.entries()) {
    const found = actual.indexOf(piece, at)
    if (found < 0 || (index === 0 && found !== 0)) return false
    at = found + piece.length
  }
  return pieces.at(-1) === '' || actual.endsWith(pieces.at(-1)!)
}

