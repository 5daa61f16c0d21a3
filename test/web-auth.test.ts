/**
 * The web page against a server with API keys (API_KEYS_FILE): the page is public, the API answers
 * 401 with `WWW-Authenticate: Bearer`, the page asks for a key, keeps it in sessionStorage (this tab
 * only) and sends it as `Authorization: Bearer <key>` (RFC 6750 §2.1) from then on.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser } from 'playwright-core'
import { failedLoad, launchBrowser, openPage } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1: SHA-256("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const KEY = 'hk_web-page-test-key-0123456789abcdef'

describe('web page with API keys, in Chromium', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-auth-'))
    const file = join(dir, 'keys')
    // The file holds the key's SHA-256, never the key (plugins/auth.ts).
    writeFileSync(file, `browser ${createHash('sha256').update(KEY).digest('hex')}\n`)
    server = await startServer({ API_KEYS_FILE: file })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('asks for a key after a 401, keeps it in sessionStorage and sends it as a Bearer token', async () => {
    const watched = await openPage(browser, server.url, '/#/hash')
    const { page } = watched
    const authorizations: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/')) authorizations.push(request.headers().authorization ?? '')
    })
    // The page itself loaded without a key; the algorithm list did not, so the page asks.
    const dialog = page.getByRole('dialog', { name: 'API key' })
    await dialog.waitFor({ state: 'visible' })
    await dialog.getByLabel('API key', { exact: true }).fill(KEY)
    await dialog.getByRole('button', { name: 'Use key' }).click()
    await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })

    const hash = page.getByRole('tabpanel', { name: 'Hash', exact: true })
    await hash.getByLabel('Input', { exact: true }).fill('abc')
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    await hash.locator('#hash-result').filter({ hasText: SHA256_ABC }).waitFor()

    assert.equal(await page.evaluate('sessionStorage.getItem("hashd.apiKey")'), KEY)
    assert.ok(authorizations.includes(`Bearer ${KEY}`), 'requests after the prompt carry the key')
    assert.equal(authorizations.at(-1), `Bearer ${KEY}`)
    assert.deepEqual(watched.foreign, [], 'no request leaves the server\'s origin')
    assert.deepEqual(watched.errors.filter((error) => !error.includes(failedLoad(401))), [], 'no console errors but the expected 401')
    // Neither the key nor the Authorization header reaches the log.
    assert.ok(!server.logs().includes(KEY))
    await watched.close()
  })

  it('answers every request that met a 401 while the prompt was open, whichever came first', async () => {
    // At start the algorithm list and the HMAC tab's named keys both meet a 401. Held back until
    // the dialog is open, the second one's 401 arrives while the prompt for the first is on
    // screen: the one key entered must repeat both (a second prompt once replaced the first
    // request's, which then waited forever and left the algorithm list disabled).
    const watched = await openPage(browser, server.url, '/#/hash', {
      beforeLoad: async (page) => {
        let held = false
        await page.route('**/api/keys', async (route) => {
          if (!held) {
            held = true
            await page.getByRole('dialog', { name: 'API key' }).waitFor({ state: 'visible' })
          }
          await route.continue()
        })
      },
    })
    const { page } = watched
    const keysAnswered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/keys' && response.status() === 401)
    const dialog = page.getByRole('dialog', { name: 'API key' })
    await dialog.waitFor({ state: 'visible' })
    await keysAnswered
    const keysRepeated = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/keys' && response.ok(), { timeout: 10_000 })
    await dialog.getByLabel('API key', { exact: true }).fill(KEY)
    await dialog.getByRole('button', { name: 'Use key' }).click()
    await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached', timeout: 10_000 })
    assert.equal((await keysRepeated).request().headers().authorization, `Bearer ${KEY}`)
    assert.equal(await dialog.isVisible(), false, 'one prompt for both requests')
    await page.unrouteAll({ behavior: 'ignoreErrors' })
    await watched.close()
  })
})
