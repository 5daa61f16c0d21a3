/**
 * The web page's HMAC tab with keys the server holds, in Debian's Chromium against the real server:
 * the key list from GET /api/keys, an HMAC under a named key checked against RFC 4231's published
 * vector (test case 6: a 131-byte key, longer than the block), a tagged HMAC, and "Check HMAC"
 * with its verdict in words; a key kept for webhooks is not offered; without server keys the tab
 * offers only your own key.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { launchBrowser, openPage } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** RFC 4231 §4.7, test case 6: key 0xaa × 131, HMAC-SHA-256. */
const RFC4231_CASE6 = {
  key: Buffer.alloc(131, 0xaa).toString('base64'),
  message: 'Test Using Larger Than Block-Size Key - Hash Key First',
  sha256: '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
}

describe('the HMAC tab with named keys, in Chromium', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let bare: TestServer
  let browser: Browser
  const dir = mkdtempSync(join(tmpdir(), 'hashd-web-keys-'))
  before(async () => {
    const file = join(dir, 'hmac-keys')
    // A key kept for webhooks first, which the tab must not offer; then RFC 4231's key as version 1
    // and a random one as version 2, current.
    writeFileSync(file, `billing 1 ${randomBytes(32).toString('base64')} purpose=webhooks\nrfc4231 1 ${RFC4231_CASE6.key}\nrfc4231 2 ${randomBytes(32).toString('base64')}\n`)
    server = await startServer({ HMAC_KEYS_FILE: file })
    bare = await startServer()
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    await bare?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('makes an HMAC under a version of a named key (RFC 4231 test case 6), tagged, and checks it', async () => {
    const watched = await openPage(browser, server.url, '/#/hmac')
    const { page } = watched
    const hmac = page.getByRole('tabpanel', { name: 'HMAC', exact: true })
    await hmac.getByLabel('Key source', { exact: true }).selectOption('server')
    assert.equal(await hmac.getByLabel('Key name', { exact: true }).inputValue(), 'rfc4231')
    assert.deepEqual(await hmac.getByLabel('Key name', { exact: true }).locator('option').allTextContents(), ['rfc4231'])
    await hmac.getByLabel('Message', { exact: true }).fill(RFC4231_CASE6.message)
    await hmac.getByLabel('Key version', { exact: true }).selectOption('1')
    await hmac.getByRole('button', { name: 'Compute HMAC', exact: true }).click()
    await hmac.locator('#hmac-result').filter({ hasText: RFC4231_CASE6.sha256 }).waitFor()
    assert.match(await hmac.locator('.result').first().textContent() ?? '', /HMAC-sha256 \(hex\), key rfc4231 v1/)

    // Tagged with its version; checked back: valid, under an older version, so make it again.
    await hmac.getByLabel(/Tagged: write it/).check()
    await hmac.getByRole('button', { name: 'Compute HMAC', exact: true }).click()
    const tag = `hashd:v1:${Buffer.from(RFC4231_CASE6.sha256, 'hex').toString('base64')}`
    await hmac.locator('#hmac-result').filter({ hasText: tag }).waitFor()
    await hmac.getByLabel('HMAC to check', { exact: true }).fill(tag)
    await hmac.getByRole('button', { name: 'Check HMAC', exact: true }).click()
    const verdict = hmac.locator('#hmac-verdict')
    await verdict.filter({ hasText: 'Valid' }).waitFor()
    assert.match(await verdict.textContent() ?? '', /rfc4231 v1.*Make it again: valid under version 1; the current version is 2/s)

    await hmac.getByLabel('Message', { exact: true }).fill('another message')
    await hmac.getByRole('button', { name: 'Check HMAC', exact: true }).click()
    await verdict.filter({ hasText: 'Not valid' }).waitFor()
    assert.deepEqual(watched.foreign, [])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('offers only your own key on a server without HMAC_KEYS_FILE', async () => {
    const watched = await openPage(browser, bare.url, '/#/hmac')
    const hmac = watched.page.getByRole('tabpanel', { name: 'HMAC', exact: true })
    await hmac.getByLabel('Key', { exact: true }).waitFor()
    assert.equal(await hmac.getByLabel('Key source', { exact: true }).count(), 0)
    await watched.close()
  })
})
