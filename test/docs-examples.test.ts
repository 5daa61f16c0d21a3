/**
 * Every ```console example in README.md and docs/*.md is run against a real server and its output
 * compared with what the page shows, so that "the outputs below are real" stays true.
 *
 * A block is a series of `$ command` lines (a trailing `\` continues one) each followed by the
 * output shown. The commands of one page run in order in one temporary directory (a file one
 * makes, a later one reads), with `localhost:3000` pointed at the test server and `npm run apikey
 * --silent --` at the built script. Outputs are compared:
 * - JSON exactly, except what varies from run to run, compared by shape: `processingTimeMs` (a
 *   number) and a password hash made with a fresh salt (`$…$` fields the same up to the salt and
 *   checksum, whose lengths must match);
 * - JSON with `…` as shown: the parts between the ellipses must appear in the output, in order;
 * - other text line by line, with long key-like tokens (API keys, their hashes) compared by shape.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)]

interface Example { command: string, expected: string, line: number }

/** The examples of a page, in order. */
export function examplesOf(text: string): Example[] {
  const examples: Example[] = []
  const lines = text.split('\n')
  let inBlock = false
  let current: Example | null = null
  let continuing = false
  lines.forEach((line, index) => {
    if (!inBlock) {
      if (line.trim() === '```console') inBlock = true
      return
    }
    if (line.trim() === '```') {
      inBlock = false
      current = null
      return
    }
    if (continuing && current) {
      current.command += `\n${line}`
      continuing = line.endsWith('\\')
      return
    }
    if (line.startsWith('$ ')) {
      current = { command: line.slice(2), expected: '', line: index + 1 }
      examples.push(current)
      continuing = line.endsWith('\\')
      return
    }
    if (current) current.expected += current.expected === '' ? line : `\n${line}`
  })
  for (const example of examples) example.expected = example.expected.trim()
  return examples
}

/** `$argon2id$v=19$m=…$<salt>$<hash>`: everything but the last two fields exactly, those by length. */
function passwordShape(value: string): string {
  const fields = value.split('$')
  return fields.map((field, index) => (index >= fields.length - 2 ? `<${field.length}>` : field)).join('$')
}

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
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys`)
    for (const [key, value] of Object.entries(expected)) {
      const got: unknown = (actual as Record<string, unknown>)[key]
      if (key === 'processingTimeMs') assert.equal(typeof got, 'number', `${where}.${key}`)
      else if (key === 'hash' && typeof value === 'string' && value.startsWith('$') && (expected as { encoding?: string }).encoding === 'standard') {
        assert.equal(passwordShape(String(got)), passwordShape(value), `${where}.hash (a fresh salt: compared by shape)`)
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
    const compact = expected.split('\n').map((line) => line.trim()).join('')
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

let server: TestServer
before(async () => { server = await startServer() })
after(async () => { await server.close() })

describe('console examples in README.md and docs/', () => {
  for (const page of PAGES) {
    const examples = examplesOf(readFileSync(join(ROOT, page), 'utf8'))
    if (examples.length === 0) continue
    it(`${page}: ${examples.length} commands give the output shown`, { skip: skipUnless('curl', 'sha256sum') }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hashd-docs-'))
      try {
        for (const example of examples) {
          const command = example.command
            .replaceAll('localhost:3000', new URL(server.url).host)
            .replaceAll('npm run apikey --silent --', `node ${JSON.stringify(join(ROOT, 'dist/scripts/apikey.js'))}`)
          // Asynchronously: the server runs in this process and must answer meanwhile.
          const { stdout: output } = await promisify(execFile)('bash', ['-c', command], { cwd: dir, encoding: 'utf8', timeout: 60_000 })
          assertOutputMatches(output.trim(), example.expected, `${page}:${example.line} $ ${example.command.split('\n')[0]}`)
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  it('the parser reads commands, continuations and outputs', () => {
    const examples = examplesOf('text\n```console\n$ printf a > f\n$ curl x \\\n    -d y\n{"a":1}\n\n$ cat f\na\n```\n')
    assert.deepEqual(examples.map(({ command, expected }) => [command, expected]), [['printf a > f', ''], ['curl x \\\n    -d y', '{"a":1}'], ['cat f', 'a']])
  })
})
