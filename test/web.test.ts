/**
 * The web page in Debian's Chromium against the real server: every tab end to end, with results
 * checked against published vectors (FIPS 180-2 appendix B, RFC 1321, RFC 4231), never against
 * hashd's own answers; API errors beside their fields; keyboard-only use; deep links; and, on
 * every page, no request to another origin and no console error.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { failedLoad, launchBrowser, openPage, type Watched } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

/** FIPS 180-2 appendix B.1 and C.1, FIPS 180-1 appendix A, RFC 1321 A.5: the "abc" vectors. */
const ABC = {
  sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  sha512: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
  sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d',
  md5: '900150983cd24fb0d6963f7d28e17f72',
}
/** FIPS 180-2 appendix B.3 and FIPS 180-1 appendix C: one million "a". */
const MILLION_A = {
  sha256: 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
  sha1: '34aa973cd4c4daa4f61eeb2bdbad27316534016f',
}
/** RFC 4231 §4.3 (test case 2) and §4.2 (test case 1, HMAC-SHA-512). */
const RFC4231_CASE2_SHA256 = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
const RFC4231_CASE1_SHA512 = '87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854'

// Functions passed to page.evaluate run in the browser; the test build has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare const window: any
declare function getComputedStyle(element: any): { outlineStyle: string, fontWeight: string }
/* eslint-enable @typescript-eslint/no-explicit-any */

const panel = (page: Page, name: string): Locator => page.getByRole('tabpanel', { name, exact: true })

async function openTab(page: Page, name: string): Promise<Locator> {
  await page.getByRole('tab', { name, exact: true }).click()
  const tabPanel = panel(page, name)
  await tabPanel.waitFor({ state: 'visible' })
  return tabPanel
}

/** The page is ready when the algorithm list has arrived (the pickers are enabled). */
async function ready(page: Page): Promise<void> {
  await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
}

/** The accessible description of a control: its hint and, after a failed request, its error. */
async function description(control: Locator): Promise<string> {
  return control.evaluate((element) => (element.getAttribute('aria-describedby') ?? '').split(/\s+/)
    .map((id: string) => document.getElementById(id)?.textContent ?? '').join(' '))
}

function clean(watched: Watched, allowedErrors: string[] = []): void {
  assert.deepEqual(watched.foreign, [], 'no request leaves the server\'s origin')
  assert.deepEqual(watched.errors.filter((error) => !allowedErrors.some((allowed) => error.includes(allowed))), [], 'no console errors')
}

describe('web page in Chromium', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    server = await startServer()
    browser = await launchBrowser()
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-'))
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('hashes "abc" with SHA-256, finds SHA-512 by an alias, and shows all digests', async () => {
    const watched = await openPage(browser, server.url, '/#/hash')
    const { page } = watched
    await ready(page)
    const hash = panel(page, 'Hash')
    await hash.getByLabel('Input', { exact: true }).fill('abc')
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    await assert.doesNotReject(hash.locator('#hash-result').filter({ hasText: ABC.sha256 }).waitFor())

    await hash.getByRole('button', { name: /^Copy/ }).click()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), ABC.sha256)

    await hash.getByRole('searchbox', { name: /search algorithms/i }).fill('SHA-512')
    assert.equal(await hash.getByLabel('Algorithm', { exact: true }).inputValue(), 'sha512')
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    await hash.locator('#hash-result').filter({ hasText: ABC.sha512 }).waitFor()

    await hash.getByRole('button', { name: 'All digests' }).click()
    const table = hash.locator('table.digests')
    await table.waitFor()
    for (const [name, digest] of Object.entries(ABC)) {
      assert.equal((await table.getByRole('row', { name: new RegExp(`^${name} `) }).locator('td').first().textContent())?.trim(), digest, name)
    }
    assert.ok(await table.getByRole('row').count() > 30, 'every digest the server offers')
    clean(watched)
    await watched.close()
  })

  it('shows a password scheme\'s options with the bounds of /api/algorithms', async () => {
    const watched = await openPage(browser, server.url, '/#/hash')
    const { page } = watched
    await ready(page)
    const catalogue = (await server.get('/api/algorithms')).body.algorithms as Array<{ name: string, options: Record<string, { default: number, min: number, max: number }> }>
    const bcrypt = catalogue.find((algorithm) => algorithm.name === 'bcrypt')!
    const hash = panel(page, 'Hash')
    await hash.getByLabel('Algorithm', { exact: true }).selectOption('bcrypt')
    const cost = hash.getByLabel('cost', { exact: true })
    assert.equal(await cost.inputValue(), String(bcrypt.options.cost!.default))
    assert.equal(await cost.getAttribute('min'), String(bcrypt.options.cost!.min))
    assert.equal(await cost.getAttribute('max'), String(bcrypt.options.cost!.max))
    assert.equal(await hash.getByLabel('Encoding', { exact: true }).count(), 0, 'no output encoding for a password hash')
    clean(watched)
    await watched.close()
  })

  it('verifies: Match and No match as text, with the detected format and rehash advice', async () => {
    const watched = await openPage(browser, server.url, '/#/verify')
    const { page } = watched
    await ready(page)
    const verify = panel(page, 'Verify')
    await verify.getByLabel('Input', { exact: true }).fill('abc')
    await verify.getByLabel('Hash', { exact: true }).fill(ABC.sha256.toUpperCase())
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    const verdict = verify.locator('.verdict-text')
    await verdict.filter({ hasText: /^\W*Match$/ }).waitFor()
    assert.match(await verify.locator('dl.facts').textContent() ?? '', /sha256/)

    await verify.getByLabel('Input', { exact: true }).fill('abd')
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    await verdict.filter({ hasText: 'No match' }).waitFor()

    await verify.getByLabel('Input', { exact: true }).fill('abc')
    await verify.getByLabel('Hash', { exact: true }).fill(ABC.md5)
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    await verdict.filter({ hasText: /^\W*Match$/ }).waitFor()
    assert.match(await verify.locator('.advice').textContent() ?? '', /Rehash recommended/)
    clean(watched)
    await watched.close()
  })

  it('hashes a real file with two algorithms, with progress, and says which digest the Expected checksum matches', async () => {
    const file = join(dir, 'million-a.txt')
    writeFileSync(file, 'a'.repeat(1_000_000))
    const watched = await openPage(browser, server.url, '/#/file')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'File')
    await tab.getByLabel('File', { exact: true }).setInputFiles(file)
    await tab.getByRole('checkbox', { name: 'sha1', exact: true }).check()
    assert.equal(await tab.getByRole('checkbox', { name: 'sha256', exact: true }).isChecked(), true)
    // As a user pastes it from a SHA256SUMS file, in upper case.
    await tab.getByLabel('Expected', { exact: true }).fill(`${MILLION_A.sha256.toUpperCase()}  million-a.txt`)
    await tab.getByRole('button', { name: 'Hash file', exact: true }).click()
    await tab.getByText('Expected checksum matches sha256').waitFor()
    const rows = tab.locator('table.digests tbody tr')
    assert.equal(await rows.count(), 2)
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((cell) => cell.textContent?.trim()))), [
      ['sha256', MILLION_A.sha256, 'Match'],
      ['sha1', MILLION_A.sha1, 'No match'],
    ])
    const progress = tab.getByRole('progressbar', { name: 'Upload progress' })
    assert.equal(await progress.getAttribute('value'), await progress.getAttribute('max'), 'the bar reached the end')
    assert.match(await tab.locator('.progress .meta').textContent() ?? '', /of 976\.6 KiB · .*\/s/)
    assert.equal(await tab.getByRole('button', { name: /^Copy/ }).count(), 2)

    const wrong = MILLION_A.sha1.slice(0, -1) + (MILLION_A.sha1.endsWith('0') ? '1' : '0')
    await tab.getByLabel('Expected', { exact: true }).fill(wrong)
    await tab.getByRole('button', { name: 'Hash file', exact: true }).click()
    await tab.getByText('Expected checksum matches none of the digests').waitFor()
    assert.deepEqual(await tab.locator('table.digests tbody td.no-match').allTextContents(), ['No match', 'No match'])
    clean(watched)
    await watched.close()
  })

  it('takes a file dropped on the drop zone', async () => {
    const watched = await openPage(browser, server.url, '/#/file')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'File')
    const dataTransfer = await page.evaluateHandle('(() => { const data = new DataTransfer(); data.items.add(new File(["abc"], "dropped.txt")); return data })()')
    await tab.locator('.drop').dispatchEvent('drop', { dataTransfer })
    await tab.getByText('Selected: dropped.txt, 3 bytes').waitFor()
    await tab.getByRole('button', { name: 'Hash file', exact: true }).click()
    await tab.locator('table.digests td.mono').filter({ hasText: ABC.sha256 }).waitFor()
    clean(watched)
    await watched.close()
  })

  it('cancels an upload, and the next one still works', async () => {
    const big = join(dir, 'big.bin')
    // Sparse, so it costs no disk; large enough that the upload is still running when Cancel is pressed.
    const handle = await import('node:fs/promises').then((fs) => fs.open(big, 'w'))
    await handle.truncate(512 * 1024 * 1024)
    await handle.close()
    const watched = await openPage(browser, server.url, '/#/file')
    const { page } = watched
    await ready(page)
    const tab = panel(page, 'File')
    await tab.getByLabel('File', { exact: true }).setInputFiles(big)
    await tab.getByRole('button', { name: 'Hash file', exact: true }).click()
    await tab.getByRole('button', { name: 'Cancel', exact: true }).click()
    await tab.getByText('Upload cancelled.').waitFor()
    assert.equal(await tab.locator('table.digests').count(), 0)

    writeFileSync(join(dir, 'abc.txt'), 'abc')
    await tab.getByLabel('File', { exact: true }).setInputFiles(join(dir, 'abc.txt'))
    await tab.getByRole('button', { name: 'Hash file', exact: true }).click()
    await tab.locator('table.digests td.mono').filter({ hasText: ABC.sha256 }).waitFor()
    clean(watched)
    await watched.close()
  })

  it('computes RFC 4231 HMACs, with a hex key', async () => {
    const watched = await openPage(browser, server.url, '/#/hmac')
    const { page } = watched
    await ready(page)
    const hmac = panel(page, 'HMAC')
    await hmac.getByLabel('Message', { exact: true }).fill('what do ya want for nothing?')
    await hmac.getByLabel('Key', { exact: true }).fill('Jefe')
    await hmac.getByRole('button', { name: 'Compute HMAC', exact: true }).click()
    await hmac.locator('#hmac-result').filter({ hasText: RFC4231_CASE2_SHA256 }).waitFor()

    await hmac.getByLabel('Message', { exact: true }).fill('Hi There')
    await hmac.getByLabel('Key', { exact: true }).fill('0b'.repeat(20))
    await hmac.getByLabel('Key encoding', { exact: true }).selectOption('hex')
    await hmac.getByLabel('Algorithm', { exact: true }).selectOption('sha512')
    await hmac.getByRole('button', { name: 'Compute HMAC', exact: true }).click()
    await hmac.locator('#hmac-result').filter({ hasText: RFC4231_CASE1_SHA512 }).waitFor()
    clean(watched)
    await watched.close()
  })

  it('identifies several hashes with confidence meters, and "Verify with this" opens Verify filled in', async () => {
    const watched = await openPage(browser, server.url, '/#/identify')
    const { page } = watched
    await ready(page)
    const identify = panel(page, 'Identify')
    // hashcat's example hash for mode 3200 (bcrypt) and MD5("abc").
    const bcrypt = '$2a$05$LhayLxezLhK1LhWvKxCyLOj0j1u.Kj0jZ0pEmm134uzrQlFvQJLF6'
    await identify.getByLabel('Hash', { exact: true }).fill(`${ABC.md5}\n${bcrypt}`)
    await identify.getByRole('button', { name: 'Identify', exact: true }).click()
    const results = identify.locator('section.identification')
    await results.nth(1).waitFor()
    assert.equal(await results.count(), 2)

    const md5 = results.nth(0).locator('li.candidate').first()
    assert.equal(await md5.locator('strong').textContent(), 'MD5')
    assert.match(await md5.locator('dl.facts').textContent() ?? '', /hashcat mode0John formatraw-md5/)
    const meters = results.nth(0).getByRole('meter')
    const values = await meters.evaluateAll((elements) => elements.map((element) => Number(element.getAttribute('aria-valuenow'))))
    assert.ok(values.length >= 2)
    assert.ok(values.every((value) => value > 0 && value <= 100), String(values))
    assert.deepEqual([...values].sort((a, b) => b - a), values, 'ranked by confidence')
    assert.match(await results.nth(0).getByText(/variants with the same syntax/).textContent() ?? '', /^\d+ variants/)

    const top = results.nth(1).locator('li.candidate').first()
    assert.match(await top.locator('dl.facts').textContent() ?? '', /hashcat mode3200John formatbcrypt/)
    assert.ok(Number(await top.getByRole('meter').getAttribute('aria-valuenow')) > 50)

    await md5.getByRole('button', { name: /Verify with this/ }).click()
    await page.waitForURL(/#\/verify$/)
    const verify = panel(page, 'Verify')
    assert.equal(await verify.getByLabel('Hash', { exact: true }).inputValue(), ABC.md5)
    assert.equal(await verify.getByLabel('Algorithm', { exact: true }).inputValue(), 'md5')
    await verify.getByLabel('Input', { exact: true }).fill('abc')
    await verify.getByRole('button', { name: 'Verify', exact: true }).click()
    await verify.locator('.verdict-text').filter({ hasText: /^\W*Match$/ }).waitFor()
    clean(watched)
    await watched.close()
  })

  it('shows API errors next to the field they concern (errors[].pointer)', async () => {
    const watched = await openPage(browser, server.url, '/#/hash')
    const { page } = watched
    await ready(page)
    const hash = panel(page, 'Hash')
    await hash.getByLabel('Input encoding', { exact: true }).selectOption('hex')
    await hash.getByLabel('Input', { exact: true }).fill('not hex')
    await hash.getByRole('button', { name: 'Hash', exact: true }).click()
    const input = hash.getByLabel('Input', { exact: true })
    await hash.locator('#hash-input-error').waitFor()
    assert.equal(await input.getAttribute('aria-invalid'), 'true')
    assert.match(await description(input), /input is not valid hex/)

    const file = await openTab(page, 'File')
    writeFileSync(join(dir, 'abc.txt'), 'abc')
    await file.getByLabel('File', { exact: true }).setInputFiles(join(dir, 'abc.txt'))
    await file.getByLabel('Expected', { exact: true }).fill('not a checksum!')
    await file.getByRole('button', { name: 'Hash file', exact: true }).click()
    await file.locator('#file-expected-error').waitFor()
    assert.match(await description(file.getByLabel('Expected', { exact: true })), /expected must be a digest/)
    clean(watched, [failedLoad(400)])
    await watched.close()
  })

  it('says when to retry after a 429', async () => {
    const limited = await startServer({ RATE_LIMIT_MAX: '8', RATE_LIMIT_WINDOW_MS: '60000' })
    try {
      const watched = await openPage(browser, limited.url, '/#/hash')
      const { page } = watched
      await ready(page)
      // Use up the rest of this client's allowance the way curl would.
      for (let answer = await limited.get('/api/health'); ;) {
        answer = await fetch(`${limited.url}/api/algorithms`).then((response) => ({ status: response.status }) as typeof answer)
        if (answer.status === 429) break
      }
      const hash = panel(page, 'Hash')
      await hash.getByLabel('Input', { exact: true }).fill('abc')
      await hash.getByRole('button', { name: 'Hash', exact: true }).click()
      const alert = hash.locator('.form-error').filter({ hasText: 'Too many requests' })
      await alert.waitFor()
      assert.match(await alert.textContent() ?? '', /try again in \d+ s \(at .+\)/)
      clean(watched, [failedLoad(429)])
      await watched.close()
    } finally {
      await limited.close()
    }
  })

  it('works from the keyboard alone on the HMAC tab, with a visible focus ring', async () => {
    const watched = await openPage(browser, server.url, '/')
    const { page } = watched
    await ready(page)
    const focused = () => page.evaluate(() => {
      const element = document.activeElement
      const label = element.id ? document.querySelector(`label[for="${element.id}"]`)?.textContent : null
      return { name: label ?? element.getAttribute('aria-label') ?? element.textContent?.trim() ?? '', outline: getComputedStyle(element).outlineStyle }
    })
    const tabTo = async (name: string) => {
      for (let presses = 0; presses < 25; presses++) {
        await page.keyboard.press('Tab')
        const now = await focused()
        if (now.name === name) {
          assert.notEqual(now.outline, 'none', `${name} shows where the focus is`)
          return
        }
      }
      assert.fail(`Tab never reached ${name}`)
    }
    await tabTo('Hash')
    for (let step = 0; step < 3; step++) await page.keyboard.press('ArrowRight')
    assert.equal((await focused()).name, 'HMAC')
    await page.waitForURL(/#\/hmac$/)
    await tabTo('Message')
    await page.keyboard.type('what do ya want for nothing?')
    await tabTo('Key')
    await page.keyboard.type('Jefe')
    await tabTo('Compute HMAC')
    await page.keyboard.press('Enter')
    await panel(page, 'HMAC').locator('#hmac-result').filter({ hasText: RFC4231_CASE2_SHA256 }).waitFor()
    clean(watched)
    await watched.close()
  })

  it('deep-links to each tab and keeps inputs when switching tabs', async () => {
    const watched = await openPage(browser, server.url, '/#/identify')
    const { page } = watched
    await ready(page)
    assert.equal(await page.getByRole('tab', { name: 'Identify', exact: true }).getAttribute('aria-selected'), 'true')
    const hash = await openTab(page, 'Hash')
    await page.waitForURL(/#\/hash$/)
    await hash.getByLabel('Input', { exact: true }).fill('kept')
    await openTab(page, 'Verify')
    assert.equal(await hash.isVisible(), false)
    await openTab(page, 'Hash')
    assert.equal(await hash.getByLabel('Input', { exact: true }).inputValue(), 'kept')
    await page.goBack()
    await page.waitForURL(/#\/verify$/)
    assert.equal(await page.getByRole('tab', { name: 'Verify', exact: true }).getAttribute('aria-selected'), 'true')
    assert.match(await page.getByText(/not stored and not logged/).textContent() ?? '', /goes only to this server/)
    clean(watched)
    await watched.close()
  })

  it('waits for the algorithm list: no tab\'s button works while its picker says Loading…', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    const watched = await openPage(browser, server.url, '/#/hash', {
      beforeLoad: (page) => page.route('**/api/algorithms', async (route) => { await held; await route.continue() }),
    })
    const { page } = watched
    const buttons: Array<[string, string, string]> = [
      ['Hash', 'Hash', '#hash-algorithm'], ['Verify', 'Verify', '#verify-algorithm'], ['HMAC', 'Compute HMAC', '#hmac-algorithm'],
      ['File', 'Hash file', ''], ['Checksums', 'Check files', '#checksums-algorithm'],
    ]
    for (const [tab, button, picker] of buttons) {
      const tabPanel = await openTab(page, tab)
      if (picker !== '') assert.match(await page.locator(picker).textContent() ?? '', /Loading…/, `${tab}: the picker is loading`)
      assert.equal(await tabPanel.getByRole('button', { name: button, exact: true }).isDisabled(), true, `${tab}: ${button} waits for the list`)
    }
    release()
    await ready(page)
    for (const [tab, button] of buttons) {
      const tabPanel = await openTab(page, tab)
      assert.equal(await tabPanel.getByRole('button', { name: button, exact: true }).isDisabled(), false, `${tab}: ${button} once the list is here`)
    }
    clean(watched)
    await watched.close()
  })

  it('keeps the page still when a tab needs a scrollbar and the one before did not', async () => {
    const withScrollbars = await launchBrowser({ scrollbars: true })
    try {
      const watched = await openPage(withScrollbars, server.url, '/#/hmac', { width: 1000, height: 700 })
      const { page } = watched
      await ready(page)
      const fits = await page.evaluate(() => document.documentElement.scrollHeight)
      await page.setViewportSize({ width: 1000, height: fits + 20 })
      const left = () => page.evaluate(() => document.getElementById('app').getBoundingClientRect().left as number)
      const before = await left()
      await openTab(page, 'Checksums')
      const tall = await page.evaluate(() => document.documentElement.scrollHeight)
      assert.ok(tall > fits + 20, `the Checksums tab is taller than the window (${tall} > ${fits + 20}), so it scrolls`)
      const scrollbar = await page.evaluate(() => window.innerWidth - document.documentElement.clientWidth)
      assert.ok(scrollbar > 0, `the scrollbar takes room in this browser (${scrollbar} px)`)
      assert.equal(await left(), before, 'the page does not move sideways by the scrollbar\'s width')
      clean(watched)
    } finally {
      await withScrollbars.close()
    }
  })

  it('writes the Strict option in the weight of the other options, not as a field\'s bold label', async () => {
    const watched = await openPage(browser, server.url, '/#/checksums')
    const { page } = watched
    await ready(page)
    const weight = await page.locator('label:has(#checksums-strict)').evaluate((label) => getComputedStyle(label).fontWeight)
    assert.equal(weight, '400')
    clean(watched)
    await watched.close()
  })
})
