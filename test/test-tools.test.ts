/**
 * The outside-tools rule itself (test/helpers/tools.ts): a missing tool is a skip whose reason names
 * the Debian package, HASHD_REQUIRE_TOOLS=1 turns it into a failure, HASHD_TEST_TOOLS=none pretends
 * nothing is installed, and scripts/install-test-tools.sh installs every package the map names.
 * Each case runs the helper in a child Node with its own environment; no outside tool is needed.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { TOOLS } from './helpers/tools.js'

const HELPER = new URL('./helpers/tools.js', import.meta.url).href

/** Runs `code` (with `tools` imported from the helper) in a child Node and returns what it printed. */
function withEnv(env: Record<string, string>, code: string): { status: number | null, stdout: string, stderr: string } {
  const script = `import * as tools from ${JSON.stringify(HELPER)}\n${code}`
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr }
}

describe('test tools: one rule for outside programs', () => {
  it('scripts/install-test-tools.sh installs the Debian package of every tool in the map', () => {
    const script = readFileSync(new URL('../../scripts/install-test-tools.sh', import.meta.url), 'utf8')
    const list = /packages=\(([^)]*)\)/.exec(script)?.[1]
    assert.ok(list, 'the script has a packages=( … ) list')
    const installed = new Set(list.split(/\s+/).filter(Boolean))
    const missing = [...new Set(Object.values(TOOLS).map((tool) => tool.debian))].filter((name) => !installed.has(name))
    assert.deepEqual(missing, [])
  })

  it('HASHD_TEST_TOOLS=none: every tool is missing, and the reason names its package', () => {
    const { status, stdout, stderr } = withEnv({ HASHD_TEST_TOOLS: 'none', HASHD_REQUIRE_TOOLS: '1' },
      'console.log(JSON.stringify([tools.hasTool("openssl"), tools.skipUnless("b3sum", "passlib")]))')
    assert.equal(status, 0, stderr)
    assert.deepEqual(JSON.parse(stdout), [false, 'b3sum not installed (Debian: b3sum); passlib not installed (Debian: python3-passlib)'])
  })

  it('a tool that is not on PATH is skipped with a reason, or throws under HASHD_REQUIRE_TOOLS=1', () => {
    // An empty PATH hides every command; absolute paths (Debian's python3, chromium) are unaffected.
    const skipped = withEnv({ PATH: '' }, 'console.log(JSON.stringify(tools.skipUnless("rhash")))')
    assert.equal(skipped.status, 0, skipped.stderr)
    assert.equal(JSON.parse(skipped.stdout), 'rhash not installed (Debian: rhash)')
    const required = withEnv({ PATH: '', HASHD_REQUIRE_TOOLS: '1' }, 'tools.skipUnless("rhash")')
    assert.notEqual(required.status, 0)
    assert.match(required.stderr, /HASHD_REQUIRE_TOOLS=1 and rhash not installed \(Debian: rhash\)/)
  })
})
