/**
 * The web page's addresses in Debian's Chromium against the real server: a tab's own link opens it;
 * the names people guess for a tab (`#/password` for the Password tab, whose link is `#/check`)
 * open that tab and the address becomes its own; a `#/…` address no tab has opens the Hash tab with
 * a notice saying so, never the Hash tab as if it had been asked for; an address that is no route
 * (none, `#privacy`) opens the Hash tab as it is. On load and on a change of the address alike;
 * no request to another origin, no console error, no accessibility violation.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, openPage, runAxe } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** What the page shows: the selected tab's label, the visible panel's, the address's fragment, and the notice (or null). */
async function shown(page: Page): Promise<{ tab: string | null, panel: string | null, hash: string, notice: string | null }> {
  const selected = page.locator('[role="tab"][aria-selected="true"]')
  assert.equal(await selected.count(), 1)
  const visible = page.locator('[role="tabpanel"]:not([hidden])')
  assert.equal(await visible.count(), 1)
  const notice = page.locator('main > .notice[role="status"]')
  return {
    tab: await selected.textContent(),
    panel: await page.locator(`#${await visible.getAttribute('aria-labelledby')}`).textContent(),
    hash: new URL(page.url()).hash,
    notice: await notice.count() === 0 ? null : await notice.textContent(),
  }
}

/** Changes the address as a user editing it would (a hashchange, no reload), then waits until `tab` is the selected tab and the address is `own`. */
async function goTo(page: Page, hash: string, tab: string, own: string): Promise<void> {
  await page.evaluate((value) => { (globalThis as unknown as { location: { hash: string } }).location.hash = value }, hash)
  await page.getByRole('tab', { name: tab, exact: true, selected: true }).waitFor()
  await page.waitForFunction((value) => (globalThis as unknown as { location: { hash: string } }).location.hash === value, own)
}

describe('web page: addresses', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  before(async () => {
    server = await startServer()
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it('#/password, as loaded: the Password tab, and the address becomes its own, #/check', async () => {
    const watched = await openPage(browser, server.url, '/#/password')
    const { page } = watched
    await page.getByRole('tab', { name: 'Password', exact: true, selected: true }).waitFor()
    await page.waitForFunction(() => (globalThis as unknown as { location: { hash: string } }).location.hash === '#/check')
    assert.deepEqual(await shown(page), { tab: 'Password', panel: 'Password', hash: '#/check', notice: null })
    assert.equal(await page.title(), 'Password · hashd')
    assert.deepEqual(watched.foreign, [])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('the names people guess, in any case, lead to their tab; a tab\'s own link stays as it is', async () => {
    const watched = await openPage(browser, server.url, '/#/check')
    const { page } = watched
    assert.deepEqual(await shown(page), { tab: 'Password', panel: 'Password', hash: '#/check', notice: null })
    const guesses: Array<[string, string, string]> = [
      ['#/passwords', 'Password', '#/check'], ['#/Password/', 'Password', '#/check'], ['#/password-check', 'Password', '#/check'],
      ['#/files', 'File', '#/file'], ['#/webhooks', 'Webhook', '#/webhook'], ['#/checksum', 'Checksums', '#/checksums'],
      ['#/HMAC', 'HMAC', '#/hmac'], ['#/digest', 'Hash', '#/hash'], ['#/verify', 'Verify', '#/verify'], ['#/identify', 'Identify', '#/identify'],
      ['#/store', 'Compare', '#/compare'], ['#/compare', 'Compare', '#/compare'], ['#/similarity', 'Similar', '#/similar'], ['#/PDQ', 'Similar', '#/similar'],
    ]
    for (const [address, tab, own] of guesses) {
      await goTo(page, address, tab, own)
      assert.deepEqual(await shown(page), { tab, panel: tab, hash: own, notice: null }, address)
    }
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('an address no tab has: the Hash tab with a notice that says so, the address corrected; the notice goes with the next tab', async () => {
    const watched = await openPage(browser, server.url, '/#/passwrod')
    const { page } = watched
    await page.waitForFunction(() => (globalThis as unknown as { location: { hash: string } }).location.hash === '#/hash')
    const unknown = await shown(page)
    assert.deepEqual({ ...unknown, notice: null }, { tab: 'Hash', panel: 'Hash', hash: '#/hash', notice: null })
    assert.match(unknown.notice ?? '', /^This page has no tab called “passwrod”, so here is the Hash tab\. The tabs’ links are #\/hash, #\/verify, #\/file, #\/hmac, #\/identify, #\/checksums, #\/check, #\/webhook, #\/compare, #\/similar\.$/)
    assert.deepEqual(await runAxe(page), [])

    await page.getByRole('tab', { name: 'Verify', exact: true }).click()
    assert.deepEqual(await shown(page), { tab: 'Verify', panel: 'Verify', hash: '#/verify', notice: null })

    // A change of the address to one no tab has does the same, on an open page.
    await goTo(page, '#/settings', 'Hash', '#/hash')
    assert.match((await shown(page)).notice ?? '', /no tab called “settings”/)
    await goTo(page, '#/password', 'Password', '#/check')
    assert.deepEqual(await shown(page), { tab: 'Password', panel: 'Password', hash: '#/check', notice: null })
    assert.deepEqual(watched.foreign, [])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('an address of 200,000 slashes and a letter is read in one pass: the Hash tab, the address corrected, the page still answers', async () => {
    const watched = await openPage(browser, server.url, '/#/check')
    const { page } = watched
    // recheck finds /\/+$/ polynomial on such a run (3.5 s for 50,000 slashes in Node). Chromium's V8
    // falls back to its linear engine after many backtracks, so this passes with the regex too; engines
    // without that fallback froze, and the one-pass read (main.tsx) needs none.
    await goTo(page, `#/${'/'.repeat(200_000)}x`, 'Hash', '#/hash')
    assert.deepEqual({ ...(await shown(page)), notice: null }, { tab: 'Hash', panel: 'Hash', hash: '#/hash', notice: null })
    await page.getByRole('tab', { name: 'Verify', exact: true }).click()
    assert.deepEqual(await shown(page), { tab: 'Verify', panel: 'Verify', hash: '#/verify', notice: null })
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('no route (no fragment, #privacy): the Hash tab, the address as it is, no notice', async () => {
    for (const path of ['/', '/#privacy']) {
      const watched = await openPage(browser, server.url, path)
      await watched.page.getByRole('tab', { name: 'Hash', exact: true }).waitFor()
      assert.deepEqual(await shown(watched.page), { tab: 'Hash', panel: 'Hash', hash: path === '/' ? '' : '#privacy', notice: null }, path)
      assert.deepEqual(watched.errors, [])
      await watched.close()
    }
  })
})
