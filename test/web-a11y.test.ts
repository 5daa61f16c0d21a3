/**
 * axe-core on every tab of the web page, with a result on screen, in the light and the dark
 * scheme, at desktop (1280 px) and phone (390 px) widths: no serious or critical violations (this
 * covers WCAG AA contrast in both schemes), and no sideways scrolling at either width. Saves a screenshot of each state under
 * test-artifacts/web/ (gitignored) for a person to look at.
 */
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, openPage, runAxe } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/web/', import.meta.url))
/** RFC 1321 A.5 MD5("abc"), and hashcat's example hash for mode 3200 (bcrypt). */
const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'
const BCRYPT = '$2a$05$LhayLxezLhK1LhWvKxCyLOj0j1u.Kj0jZ0pEmm134uzrQlFvQJLF6'

/** Puts each tab into a state with a result, so the result's markup is checked too. */
async function fill(page: Page, tab: string, file: string): Promise<void> {
  const panel = page.getByRole('tabpanel', { name: tab, exact: true })
  switch (tab) {
    case 'Hash':
      await panel.getByLabel('Input', { exact: true }).fill('abc')
      await panel.getByRole('button', { name: 'Hash', exact: true }).click()
      await panel.locator('#hash-result').waitFor()
      break
    case 'Verify':
      await panel.getByLabel('Input', { exact: true }).fill('abc')
      await panel.getByLabel('Hash', { exact: true }).fill(MD5_ABC)
      await panel.getByRole('button', { name: 'Verify', exact: true }).click()
      await panel.locator('.verdict').waitFor()
      break
    case 'File':
      await panel.getByLabel('File', { exact: true }).setInputFiles(file)
      await panel.getByRole('checkbox', { name: 'md5', exact: true }).check()
      await panel.getByLabel('Expected', { exact: true }).fill(MD5_ABC)
      await panel.getByRole('button', { name: 'Hash file', exact: true }).click()
      await panel.locator('table.digests').waitFor()
      break
    case 'HMAC':
      await panel.getByLabel('Message', { exact: true }).fill('what do ya want for nothing?')
      await panel.getByLabel('Key', { exact: true }).fill('Jefe')
      await panel.getByRole('button', { name: 'Compute HMAC', exact: true }).click()
      await panel.locator('#hmac-result').waitFor()
      break
    case 'Identify':
      await panel.getByLabel('Hash', { exact: true }).fill(`${MD5_ABC}\n${BCRYPT}`)
      await panel.getByRole('button', { name: 'Identify', exact: true }).click()
      await panel.locator('section.identification').nth(1).waitFor()
      break
    case 'Compare':
      await panel.getByLabel('Metadata', { exact: true }).fill(JSON.stringify({ ContentLength: 3, ETag: `"${MD5_ABC}"` }))
      await panel.getByLabel('File', { exact: true }).setInputFiles(file)
      await panel.getByRole('button', { name: 'Compare', exact: true }).click()
      await panel.locator('table.compare').waitFor()
      break
    case 'Similar':
      // No SIMILARITY_BANKS_DIR here: the hashes, and a line saying there is no bank.
      await panel.getByLabel('File or image', { exact: true }).setInputFiles(file)
      await panel.getByRole('button', { name: 'Find similar', exact: true }).click()
      await panel.locator('.result').waitFor()
      break
  }
}

describe('web page accessibility (axe-core) and screenshots', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    server = await startServer()
    browser = await launchBrowser()
    dir = mkdtempSync(join(tmpdir(), 'hashd-a11y-'))
    writeFileSync(join(dir, 'abc.txt'), 'abc')
    mkdirSync(ARTIFACTS, { recursive: true })
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      it(`has no serious or critical axe violations on any tab (${colorScheme}, ${width} px)`, async () => {
        const watched = await openPage(browser, server.url, '/#/hash', { colorScheme, width, height: width > 500 ? 900 : 844 })
        const { page } = watched
        await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
        const found: string[] = []
        for (const tab of ['Hash', 'Verify', 'File', 'HMAC', 'Identify', 'Compare', 'Similar']) {
          await page.getByRole('tab', { name: tab, exact: true }).click()
          await fill(page, tab, join(dir, 'abc.txt'))
          for (const violation of await runAxe(page)) {
            found.push(`${tab}: ${violation.id} (${violation.impact}) ${violation.help}: ${JSON.stringify(violation.nodes.slice(0, 3).map((node) => node.target))}`)
          }
          const scrollWidth = await page.evaluate('document.documentElement.scrollWidth') as number
          if (scrollWidth > width) found.push(`${tab}: the page is ${scrollWidth} px wide in a ${width} px window`)
          await page.screenshot({ path: join(ARTIFACTS, `${tab.toLowerCase()}-${colorScheme}-${width}.png`), fullPage: true })
        }
        assert.deepEqual(found, [])
        assert.deepEqual(watched.foreign, [])
        assert.deepEqual(watched.errors, [])
        await watched.close()
      })
    }
  }
})
