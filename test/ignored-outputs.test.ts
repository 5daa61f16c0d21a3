/**
 * What the documented commands write in a checkout is ignored by git, so that `git status` stays
 * clean after following the pages and a keys file is never committed by accident. The outputs
 * are read from the pages themselves (the client's tarball, the synthetic corpus and the store
 * `npm run pwned:*` make, the keys files the examples write), and git itself judges them
 * (`git check-ignore`); no file the repository tracks may be ignored.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const page = (name: string) => readFileSync(join(ROOT, name), 'utf8')
const checkout = existsSync(join(ROOT, '.git')) ? false : 'not a git checkout'

/** The first capture of `pattern` on `name`, which must be there: the page says what is written. */
function written(name: string, pattern: RegExp): string {
  const found = pattern.exec(page(name))?.[1]
  assert.ok(found, `${name} no longer shows ${pattern}; update this test with the page`)
  return found
}

/** `git check-ignore`'s verdict on a path that need not exist (0: ignored, 1: not). */
const ignored = (path: string) => spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: ROOT }).status === 0

describe('the documented commands leave nothing git would show', { skip: checkout }, () => {
  it('their outputs, as the pages name them, are ignored', () => {
    const store = written('docs/passwords.md', /\$ npm run pwned:import -- \S+ (\S+)/)
    const outputs = [
      // (cd clients/typescript && npm pack)            # builds dist/, writes hashd-client-0.1.0.tgz
      `clients/typescript/${written('docs/client.md', /npm pack\)\s+# builds dist\/, writes (\S+\.tgz)/)}`,
      'clients/typescript/dist/index.js',
      `${written('docs/passwords.md', /\$ npm run pwned:corpus -- (\S+)/)}/00000.txt`,
      store,
      // pwned:import writes its temporary file beside the store (src/screening/import.ts).
      `.${store}.importing-12345`,
      written('docs/operations.md', /npm run apikey --silent -- \S+ 2>\/dev\/null \| tail -n 1 >> (\S+)/),
      written('docs/deployment.md', /base64 -d > (\S+keys\S*)/),
      'dist/src/server.js',
      'test-artifacts/fuzz/multipart.log',
    ]
    const shown = outputs.filter((path) => !ignored(path))
    assert.deepEqual(shown, [], `not in .gitignore: ${shown.join(', ')}`)
  })

  it('no tracked file is ignored', () => {
    assert.equal(execFileSync('git', ['ls-files', '--cached', '--ignored', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }), '')
  })
})
