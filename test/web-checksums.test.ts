/**
 * The web page's Checksums tab and the tab strip, in Debian's Chromium against the real server.
 *
 * The tab strip is checked by geometry, since headless screenshots hide scrollbars: at 1280 and
 * 390 px no element of the tab list overflows its box (nothing for Chromium to draw a scroll
 * control for), and every tab lies whole inside the list and the window. The Checksums tab is
 * driven end to end with lists built from published vectors (FIPS 180-2 appendix B, RFC 1321) and
 * a list signed by the real minisign.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { failedLoad, launchBrowser, openPage, runAxe, type Watched } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1: SHA-256("abc"); RFC 1321 appendix A.5: MD5("abc"). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'

// Functions passed to page.evaluate run in the browser; the test build has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any
declare function getComputedStyle(element: any): any
/* eslint-enable @typescript-eslint/no-explicit-any */

interface StripGeometry {
  overflowing: string[]
  tabs: Array<{ label: string, left: number, right: number, top: number, bottom: number, clipped: boolean }>
  list: { left: number, right: number, top: number, bottom: number }
  viewport: number
}

/** Every box in the tab list, and whether any of them has more content than room. */
/* eslint-disable @typescript-eslint/no-explicit-any -- DOM elements, in code that runs in the browser */
async function stripGeometry(page: Page): Promise<StripGeometry> {
  return page.evaluate(() => {
    const list = document.querySelector('[role="tablist"]')
    const elements = [list, ...list.querySelectorAll('*')]
    const overflowing = elements
      .filter((element: any) => element.scrollWidth > element.clientWidth || element.scrollHeight > element.clientHeight)
      .map((element: any) => `${element.getAttribute('role') ?? element.tagName} "${element.textContent}" scroll ${element.scrollWidth}×${element.scrollHeight} client ${element.clientWidth}×${element.clientHeight} overflow ${getComputedStyle(element).overflow}`)
    const box = list.getBoundingClientRect()
    const tabs = [...list.querySelectorAll('[role="tab"]')].map((tab: any) => {
      const rect = tab.getBoundingClientRect()
      return { label: tab.textContent, left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom, clipped: tab.scrollWidth > tab.clientWidth }
    })
    return { overflowing, tabs, list: { left: box.left, right: box.right, top: box.top, bottom: box.bottom }, viewport: window.innerWidth }
  })
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const panel = (page: Page, name: string): Locator => page.getByRole('tabpanel', { name, exact: true })

async function ready(page: Page): Promise<void> {
  await page.locator('#checksums-algorithm:not([disabled])').waitFor({ state: 'attached' })
}

function clean(watched: Watched, allowedErrors: string[] = []): void {
  assert.deepEqual(watched.foreign, [], 'no request leaves the server\'s origin')
  assert.deepEqual(watched.errors.filter((error) => !allowedErrors.some((allowed) => error.includes(allowed))), [], 'no console errors')
}

/** The result table as text: [file, algorithm, result] per row. */
async function rows(tab: Locator): Promise<string[][]> {
  return tab.locator('table.checks tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((cell) => cell.textContent?.trim() ?? '')))
}

describe('web page: the tab strip and the Checksums tab, in Chromium', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    server = await startServer()
    browser = await launchBrowser()
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-checksums-'))
    writeFileSync(join(dir, 'abc.txt'), 'abc')
    writeFileSync(join(dir, 'changed.txt'), 'abd')
    writeFileSync(join(dir, 'extra.bin'), 'extra')
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  for (const width of [1280, 390]) {
    it(`shows every tab whole, with nothing in the tab list overflowing, at ${width} px`, async () => {
      const watched = await openPage(browser, server.url, '/#/checksums', { width, height: 800 })
      const { page } = watched
      await ready(page)
      const geometry = await stripGeometry(page)
      assert.deepEqual(geometry.overflowing, [], 'no element of the tab list overflows')
      assert.deepEqual(geometry.tabs.map((tab) => tab.label), ['Hash', 'Verify', 'File', 'HMAC', 'Identify', 'Checksums', 'Password', 'Webhook', 'Compare', 'Similar'])
      for (const tab of geometry.tabs) {
        assert.equal(tab.clipped, false, `${tab.label} is not cut`)
        assert.ok(tab.left >= geometry.list.left - 0.5 && tab.right <= geometry.list.right + 0.5, `${tab.label} lies inside the tab list horizontally`)
        assert.ok(tab.top >= geometry.list.top - 0.5 && tab.bottom <= geometry.list.bottom + 0.5, `${tab.label} lies inside the tab list vertically`)
        assert.ok(tab.left >= 0 && tab.right <= geometry.viewport, `${tab.label} is inside the ${width} px window`)
      }
      // The whole page fits the window too: no sideways scrolling.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width)
      clean(watched)
      await watched.close()
    })
  }

  it('checks pasted lists: OK, FAILED, not sent and not in the list, as text and colour', async () => {
    const watched = await openPage(browser, server.url, '/#/checksums')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'Checksums')
    await tab.getByLabel('Checksum list', { exact: true }).fill(
      `# release\n${SHA256_ABC}  abc.txt\nMD5 (abc.txt) = ${MD5_ABC}\n${SHA256_ABC}  changed.txt\n${SHA256_ABC}  missing.iso\n`)
    await tab.getByLabel('Files to check', { exact: true }).setInputFiles([join(dir, 'abc.txt'), join(dir, 'changed.txt'), join(dir, 'extra.bin')])
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    await tab.locator('table.checks').waitFor()
    assert.deepEqual(await rows(tab), [
      ['abc.txt', 'sha256 (guessed)', 'OK'],
      ['abc.txt', 'md5', 'OK'],
      ['changed.txt', 'sha256 (guessed)', 'FAILED'],
      ['missing.iso', 'sha256 (guessed)', 'Not sent'],
      ['extra.bin', '—', 'Not in the list'],
    ])
    assert.equal(await tab.getByRole('status').filter({ hasText: 'Check failed' }).textContent(), 'Check failed: 2 OK, 1 failed, 1 not sent, 1 not in the list')
    const colours = await tab.locator('table.checks td.status').evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell).color))
    assert.notEqual(colours[0], colours[2], 'OK and FAILED differ in colour')
    assert.equal(colours[0], colours[1])

    // Without the changed file, the check passes; strict makes the missing one fail it again.
    await tab.getByRole('button', { name: 'Clear files', exact: true }).click()
    await tab.getByLabel('Files to check', { exact: true }).setInputFiles([join(dir, 'abc.txt')])
    await tab.getByLabel('Checksum list', { exact: true }).fill(`${SHA256_ABC}  abc.txt\n${SHA256_ABC}  missing.iso\n`)
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    await tab.getByText('Check passed: 1 OK, 0 failed, 1 not sent').waitFor()
    await tab.getByRole('checkbox', { name: /^Strict/ }).check()
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    await tab.getByText('Check failed: 1 OK, 0 failed, 1 not sent').waitFor()
    clean(watched)
    await watched.close()
  })

  it('takes a dropped list file and dropped files, and shows a bad list\'s line beside the list', async () => {
    const watched = await openPage(browser, server.url, '/#/checksums')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'Checksums')
    const drop = (index: number, files: Array<[string, string]>) => page.evaluateHandle((entries) => {
      const data = new window.DataTransfer()
      for (const [name, content] of entries) data.items.add(new File([content], name))
      return data
    }, files).then((dataTransfer) => tab.locator('.drop').nth(index).dispatchEvent('drop', { dataTransfer }))
    await drop(0, [['B3SUMS', 'this is not a list\n']])
    await tab.getByText('List: B3SUMS').waitFor()
    await drop(1, [['abc.txt', 'abc']])
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    const error = tab.locator('#checksums-list-error')
    await error.waitFor()
    assert.match(await error.textContent() ?? '', /line 1/)
    assert.equal(await tab.getByLabel('Checksum list', { exact: true }).getAttribute('aria-invalid'), 'true')
    clean(watched, [failedLoad(422)])
    await watched.close()
  })

  it('shows a minisign signature as verified, and a changed list as not verified', { skip: skipUnless('minisign') }, async () => {
    const list = `${SHA256_ABC}  abc.txt\n`
    writeFileSync(join(dir, 'SHA256SUMS'), list)
    execFileSync('minisign', ['-G', '-W', '-p', join(dir, 'key.pub'), '-s', join(dir, 'key.sec')], { stdio: 'ignore' })
    execFileSync('minisign', ['-S', '-s', join(dir, 'key.sec'), '-m', join(dir, 'SHA256SUMS'), '-x', join(dir, 'SHA256SUMS.minisig'), '-t', 'hashd web test'], { stdio: 'ignore' })
    // Debian's minisign prints the key number without leading zeros; the page shows all 16 digits.
    const keyId = (/minisign public key ([0-9A-F]{1,16})\b/.exec(readFileSync(join(dir, 'key.pub'), 'utf8'))?.[1] ?? '').padStart(16, '0')

    const watched = await openPage(browser, server.url, '/#/checksums')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'Checksums')
    await tab.getByLabel('Checksum list', { exact: true }).fill(list)
    await tab.getByLabel('Signature file', { exact: true }).setInputFiles(join(dir, 'SHA256SUMS.minisig'))
    await tab.getByLabel('Public key', { exact: true }).fill(readFileSync(join(dir, 'key.pub'), 'utf8').trim().split('\n')[1] ?? '')
    await tab.getByLabel('Files to check', { exact: true }).setInputFiles(join(dir, 'abc.txt'))
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    const verified = tab.locator('.signature-state.match')
    await verified.waitFor()
    const text = await verified.textContent() ?? ''
    assert.match(text, /^Signature verified/)
    assert.ok(text.includes(keyId), `the key id ${keyId} is shown`)
    assert.ok(text.includes('hashd web test'), 'the trusted comment is shown')
    await tab.getByText('Check passed: 1 OK, 0 failed').waitFor()

    // One byte of the list changed: the signature fails and nothing is checked.
    await tab.getByLabel('Checksum list', { exact: true }).fill(list.replace('ba78', 'ba79'))
    await tab.getByRole('button', { name: 'Check files', exact: true }).click()
    const refused = tab.locator('.signature-state.no-match')
    await refused.waitFor()
    assert.match(await refused.textContent() ?? '', /^Signature not verified.*does not verify/)
    assert.equal(await tab.locator('table.checks').count(), 0)
    clean(watched, [failedLoad(422)])
    await watched.close()
  })

  for (const width of [1280, 390]) {
    it(`has no serious or critical axe violations on the Checksums tab with a result (${width} px)`, async () => {
      const watched = await openPage(browser, server.url, '/#/checksums', { width, height: 900 })
      const { page } = watched
      await ready(page)
      const tab = panel(page, 'Checksums')
      await tab.getByLabel('Checksum list', { exact: true }).fill(`${SHA256_ABC}  abc.txt\n${SHA256_ABC}  changed.txt\n`)
      await tab.getByLabel('Files to check', { exact: true }).setInputFiles([join(dir, 'abc.txt'), join(dir, 'changed.txt')])
      await tab.getByRole('button', { name: 'Check files', exact: true }).click()
      await tab.locator('table.checks').waitFor()
      const violations = await runAxe(page)
      assert.deepEqual(violations.map((violation) => `${violation.id}: ${violation.help} ${JSON.stringify(violation.nodes.slice(0, 3).map((node) => node.target))}`), [])
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= width, 'no sideways scrolling')
      clean(watched)
      await watched.close()
    })
  }
})
