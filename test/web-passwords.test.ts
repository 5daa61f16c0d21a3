/**
 * The web page's password features in Debian's Chromium against a real server with pepper keys:
 * the Hash tab shows the pepper key of a password hash (and "Pepper" unticked makes a plain one),
 * and the Verify tab's Upgrade checkbox shows `newHash`. Hashes are checked with the independent
 * Python implementation of `$pepper$` (test/helpers/pepper.ts) and python3-bcrypt / argon2-cffi.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { launchBrowser, openPage } from './helpers/browser.js'
import { pythonCheck, pythonPepper } from './helpers/pepper.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** RFC 1321 §A.5: MD5("abc"). */
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'

const panel = (page: Page, name: string): Locator => page.getByRole('tabpanel', { name, exact: true })

describe('web page: pepper key and verify-and-upgrade', { skip: skipUnless('chromium', 'pycryptodome', 'python3-bcrypt', 'argon2-cffi') }, () => {
  const secret = randomBytes(32).toString('base64')
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-pepper-'))
    const file = join(dir, 'keys')
    writeFileSync(file, `web-k1 ${secret}\n`)
    server = await startServer({ PEPPER_KEYS_FILE: file })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('Hash shows the pepper key of a bcrypt hash; unticking Pepper makes a plain one', async () => {
    const watched = await openPage(browser, server.url, '/#/hash')
    const { page } = watched
    await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
    const hash = panel(page, 'Hash')
    await hash.getByLabel('Input', { exact: true }).fill('abc')
    await hash.getByRole('searchbox', { name: /search algorithms/i }).fill('bcrypt')
    assert.equal(await hash.getByLabel('Algorithm', { exact: true }).inputValue(), 'bcrypt')
    await hash.getByLabel('cost', { exact: true }).fill('4')
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    await hash.locator('.result .meta').filter({ hasText: /peppered with key web-k1/ }).waitFor()
    const peppered = (await hash.locator('#hash-result').textContent() ?? '').trim()
    assert.match(peppered, /^\$pepper\$v=1,k=web-k1,s=bcrypt\$/)
    assert.equal(pythonCheck(secret, peppered, 'bcrypt', 'abc').match, true)

    await hash.getByLabel(/Pepper with the server's current key/).uncheck()
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    await hash.locator('#hash-result').filter({ hasText: /^\s*\$2b\$04\$/ }).waitFor()
    assert.equal(await hash.locator('.result .meta').filter({ hasText: /peppered/ }).count(), 0)
    const plain = (await hash.locator('#hash-result').textContent() ?? '').trim()
    assert.deepEqual(pythonPepper([{ op: 'verify', scheme: 'bcrypt', pw: 'abc', hash: plain }]), [true])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('Verify with Upgrade shows a new peppered argon2id hash for an MD5 digest', async () => {
    const watched = await openPage(browser, server.url, '/#/verify')
    const { page } = watched
    await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
    const verify = panel(page, 'Verify')
    await verify.getByLabel('Input', { exact: true }).fill('abc')
    await verify.getByLabel('Hash', { exact: true }).fill(MD5_ABC)
    await verify.getByLabel(/Upgrade/).check()
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    await verify.locator('.verdict-text').filter({ hasText: /^\W*Match$/ }).waitFor()
    const newHash = (await verify.locator('#verify-new-hash').textContent() ?? '').trim()
    assert.match(newHash, /^\$pepper\$v=1,k=web-k1,s=argon2id\$/)
    assert.equal(pythonCheck(secret, newHash, 'argon2id', 'abc').match, true)

    // The new hash itself needs nothing: no newHash, and the page says so.
    await verify.getByLabel('Hash', { exact: true }).fill(newHash)
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    await verify.getByText('Nothing to upgrade').waitFor()
    assert.match(await verify.locator('dl.facts').textContent() ?? '', /Pepper key\s*web-k1/)
    assert.equal(await verify.locator('#verify-new-hash').count(), 0)
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })
})
