/**
 * Every ```console example in README.md and docs/*.md is run against a real server and its output
 * compared with what the page shows, so that "the outputs below are real" stays true.
 *
 * A block is a series of `$ command` lines (a trailing `\` continues one) each followed by the
 * output shown. The commands of one page run in order in one temporary directory (a file one
 * makes, a later one reads), with `localhost:3000` pointed at the test server and `npm run apikey
 * --silent --` at the built script. Outputs are compared:
 * - JSON exactly, keys in the order the server writes them, except what varies from run to run,
 *   compared by shape: `processingTimeMs` (a number); a password hash made with a fresh salt
 *   (`hash` of a standard-encoded answer and `newHash`: `$…$` fields the same up to the salt and
 *   checksum, whose lengths must match); and `keyId`/`fingerprint` of a signing key an example
 *   generated (the same length and alphabet);
 * - with `…` as shown: the parts between the ellipses must appear in the output, in order (JSON,
 *   pretty-printed over lines, is joined first; other text keeps its line ends);
 * - other text line by line, with long key-like tokens (API keys, their hashes) compared by shape.
 *
 * What a page needs beyond curl and coreutils it says in an HTML comment (invisible when rendered):
 *
 *     <!-- docs-examples: tools minisign signify gpg -->    the page's test is skipped (naming the
 *                                                           Debian package) when one is missing; a
 *                                                           failure with HASHD_REQUIRE_TOOLS=1
 *     <!-- docs-examples: pepper-keys k1 -->               the commands talk to a server whose
 *                                                           PEPPER_KEYS_FILE has these key ids (the
 *                                                           last current), with random 32-byte secrets
 *                                                           (one per id for the run)
 *     <!-- docs-examples: hmac-keys orders:1,2 -->         (page-wide only) the server's HMAC_KEYS_FILE
 *                                                           has these keys and versions (the highest
 *                                                           current), each secret the SHA-256 of
 *                                                           "hashd docs-examples <name> <version>", so
 *                                                           the HMACs a page shows are the same every
 *                                                           run; `billing:1,2:webhooks` writes
 *                                                           purpose=webhooks on each line of the key
 *     <!-- docs-examples: pwned-store -->                  … and whose PWNED_STORE holds a synthetic
 *                                                           corpus (scripts/pwned-corpus.ts, seed 1,
 *                                                           20,000 hashes and its known passwords)
 *     <!-- docs-examples: similarity-banks -->             (page-wide) … and whose SIMILARITY_BANKS_DIR
 *                                                           holds the bank `photos` of docs/similarity.md
 *                                                           (helpers/docs-pages.ts exampleBankFolder)
 *
 * A comment on the line just before a ```console fence applies to that block only; anywhere else, to
 * the whole page (a block's own pepper-keys win over the page's). Tools are needed by the whole page
 * either way, as its commands run in sequence. Every command also runs with GNUPGHOME set to an
 * empty directory of the page's own, so a gpg example never reads or writes the user's keyring.
 *
 * Every ```ts block is a program compiled and run against the client: test/docs-client-examples.test.ts.
 * The parser, the directives and the comparison are in helpers/docs-pages.ts.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { assertOutputMatches, examplesOf, pageOf, PAGES, ROOT, serverWith } from './helpers/docs-pages.js'
import { hasTool, skipUnless } from './helpers/tools.js'
describe('console examples in README.md and docs/', () => {
  for (const page of PAGES) {
    const { examples, tools } = pageOf(readFileSync(join(ROOT, page), 'utf8'), page)
    if (examples.length === 0) continue
    it(`${page}: ${examples.length} commands give the output shown`, { skip: skipUnless('curl', 'sha256sum', ...tools) }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hashd-docs-'))
      // A keyring of the page's own: gpg examples never touch the user's.
      const gnupgHome = join(dir, '.gnupg')
      mkdirSync(gnupgHome, { mode: 0o700 })
      const env = { ...process.env, GNUPGHOME: gnupgHome }
      try {
        for (const example of examples) {
          const server = await serverWith(example.pepperKeys, example.hmacKeys, example.pwnedStore, example.similarityBanks)
          let command = example.command
            .replaceAll('localhost:3000', new URL(server.url).host)
            .replaceAll('npm run apikey --silent --', `node ${JSON.stringify(join(ROOT, 'dist/scripts/apikey.js'))}`)
          for (const script of ['corpus', 'import', 'verify']) command = command.replaceAll(`npm run pwned:${script} --`, `node ${JSON.stringify(join(ROOT, `dist/scripts/pwned-${script}.js`))}`)
          // Asynchronously: the server runs in this process and must answer meanwhile.
          const { stdout: output } = await promisify(execFile)('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 })
          assertOutputMatches(output.trim(), example.expected, `${page}:${example.line} $ ${example.command.split('\n')[0]}`)
        }
      } finally {
        // gpg starts an agent for the keyring; stop it before its directory goes.
        if (tools.includes('gpg') && hasTool('gpg')) await promisify(execFile)('gpgconf', ['--kill', 'all'], { env }).catch(() => undefined)
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  it('the parser reads commands, continuations and outputs', () => {
    const examples = examplesOf('text\n```console\n$ printf a > f\n$ curl x \\\n    -d y\n{"a":1}\n\n$ cat f\na\n```\n')
    assert.deepEqual(examples.map(({ command, expected }) => [command, expected]), [['printf a > f', ''], ['curl x \\\n    -d y', '{"a":1}'], ['cat f', 'a']])
  })

  it('reads the directives: page-wide and per block, tools for the whole page, typos refused', () => {
    const text = [
      '<!-- docs-examples: tools minisign -->', '# Page', '<!-- docs-examples: pepper-keys k1 -->', 'text',
      '```console', '$ a', '```', '', '<!-- docs-examples: pepper-keys k1 k2 -->', '', '```console', '$ b', '```',
      '<!-- docs-examples: tools gpg -->', '```console', '$ c', '```',
    ].join('\n')
    const page = pageOf(text)
    assert.deepEqual(page.examples.map(({ command, pepperKeys }) => [command, pepperKeys]), [['a', ['k1']], ['b', ['k1', 'k2']], ['c', ['k1']]])
    assert.deepEqual(page.tools.sort(), ['gpg', 'minisign'])
    assert.throws(() => pageOf('<!-- docs-examples: tools minisgn -->'), /unknown tool minisgn/)
    assert.throws(() => pageOf('<!-- docs-examples: pepper-key k1 -->'), /not understood/)
  })
})
