/**
 * Every ```ts block in README.md and docs/*.md is a whole program that uses the client as its users
 * get it: `@hashd/client` packed and installed outside the repository (helpers/client-package.ts),
 * the block compiled with tsc (strict) and run with this Node, `localhost:3000` pointed at the test
 * server. What it prints is compared with the comments of its `console.log(…) // shown` lines, in
 * order, line by line (`…` stands for any text). The page's directives (test/docs-examples.test.ts)
 * apply to these blocks as to console ones.
 */
import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { installClient, type InstalledClient } from './helpers/client-package.js'
import { expectedPrints, pageOf, PAGES, printedLineMatches, ROOT, serverWith } from './helpers/docs-pages.js'
let client: Promise<InstalledClient> | undefined
after(() => { void client?.then((installed) => installed.remove()) })

describe('TypeScript examples in README.md and docs/', () => {
  for (const page of PAGES) {
    const { programs } = pageOf(readFileSync(join(ROOT, page), 'utf8'), page)
    if (programs.length === 0) continue
    it(`${page}: ${programs.length} programs compile against @hashd/client and print what they show`, async () => {
      client ??= installClient()
      const installed = await client
      const prefix = page.replace(/[^A-Za-z0-9]+/g, '_')
      const files: string[] = []
      try {
        for (const program of programs) {
          const server = await serverWith(program.pepperKeys, program.hmacKeys, program.pwnedStore, program.similarityBanks)
          const file = `${prefix}_${program.line}.ts`
          writeFileSync(join(installed.dir, file), program.source.replaceAll('localhost:3000', new URL(server.url).host))
          files.push(file)
        }
        await installed.compile()
        for (const [index, program] of programs.entries()) {
          const where = `${page}:${program.line}`
          assert.ok(program.expected.length > 0, `${where}: the program shows what it prints (console.log(…) // …)`)
          const outcome = await installed.run(join('out', files[index]!.replace(/\.ts$/, '.js')))
          assert.equal(outcome.code, 0, `${where}: ${outcome.stderr}`)
          const printed = outcome.stdout.trimEnd().split('\n')
          assert.equal(printed.length, program.expected.length, `${where}: printed ${JSON.stringify(printed)}, shown ${JSON.stringify(program.expected)}`)
          printed.forEach((line, at) => assert.ok(printedLineMatches(line, program.expected[at]!), `${where}: printed ${line}, shown ${program.expected[at]}`))
        }
      } finally {
        // Each page's programs are compiled on their own: the next page's compile does not see these.
        for (const file of files) rmSync(join(installed.dir, file), { force: true })
      }
    })
  }

  it('reads a program\'s shown output from its console.log comments', () => {
    assert.deepEqual(expectedPrints("const a = 1\nconsole.log(a) // 1\nconsole.log(b)\n  console.log(c, d) // x …\n"), ['1', 'x …'])
    assert.ok(printedLineMatches('$argon2id$v=19$m=19456,t=2,p=1$abc$def', '$argon2id$v=19$m=19456,t=2,p=1$…'))
    assert.ok(!printedLineMatches('x$argon2id$', '$argon2id$…'))
    assert.ok(printedLineMatches('true', 'true') && !printedLineMatches('true ', 'true'))
  })
})

