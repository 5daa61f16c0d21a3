/**
 * The Identify tab in Debian's Chromium against the real server, with a pasted list of many lines:
 * the summary table counts lines per format, a long list gets one table row per line (user and
 * first match), a short one a card per line with its notes (what was removed, ambiguity) and the
 * next commands; and the page passes axe's WCAG checks in that state.
 *
 * The hashes are published values: MD5("abc") from RFC 1321 §A.5, and the NT hash of the empty
 * password (MD4 of the empty UTF-16LE string, RFC 1320 §A.5's MD4("")), which pwdump prints for
 * accounts without one.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { launchBrowser, openPage, runAxe } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const MD5_ABC = '900150983cd24fb0d6963f7d28e17f72'
const NT_EMPTY = '31d6cfe0d16ae931b73c59d7e0c089c0'
const LM_EMPTY = 'aad3b435b51404eeaad3b435b51404ee'

const panel = (page: Page): Locator => page.getByRole('tabpanel', { name: 'Identify', exact: true })

async function ready(page: Page): Promise<void> {
  await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
}

/** The summary table's rows as [format, hashcat mode, John format, lines]. */
async function summaryRows(identify: Locator): Promise<string[][]> {
  return identify.locator('section.identify-summary tbody tr').evaluateAll((rows) => rows.map((row) =>
    [...row.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim())))
}

describe('Identify tab with a pasted list, in Chromium', { skip: skipUnless('chromium') }, () => {
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

  it('summarizes a 25-line secretsdump-style paste and lists the first match per line', async () => {
    const watched = await openPage(browser, server.url, '/#/identify')
    const { page } = watched
    await ready(page)
    const identify = panel(page)
    const lines = [
      '[*] Dumping local SAM hashes (uid:rid:lmhash:nthash)',
      ...Array.from({ length: 22 }, (_, index) => `user${index}:${1000 + index}:${LM_EMPTY}:${NT_EMPTY}:::`),
      `"${MD5_ABC}",`, `- ${MD5_ABC}`, `\`${MD5_ABC}\``,
    ]
    await identify.getByLabel('Hash', { exact: true }).fill(lines.join('\n'))
    await identify.getByRole('button', { name: 'Identify', exact: true }).click()
    await identify.locator('section.identify-summary').waitFor()
    assert.deepEqual(await summaryRows(identify), [['NTLM', '1000', 'nt', '22'], ['MD5', '0', 'raw-md5', '3']])
    assert.match(await identify.locator('section.identify-summary .meta').textContent() ?? '', /25 lines read by first match; 1 blank or tool status line skipped/)
    // More than 20 lines: one table row per line, not a card each.
    assert.equal(await identify.locator('section.identification').count(), 0)
    const rows = identify.locator('section.identify-lines tbody tr')
    assert.equal(await rows.count(), 25)
    const cells = async (index: number): Promise<string[]> => rows.nth(index).locator('th, td').evaluateAll((all) => all.map((cell) => (cell.textContent ?? '').trim()))
    assert.deepEqual((await cells(0)).slice(0, 4), ['2', 'user0:1000:aad3b435b51404eeaad3b435b51404ee:31d…', 'user0', 'NTLM'])
    assert.deepEqual([(await cells(24))[0], (await cells(24))[1], (await cells(24))[3]], ['26', `\`${MD5_ABC}\``, 'MD5 (ambiguous)'])
    assert.deepEqual(await runAxe(page), [], 'no serious or critical axe violations')
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('shows a card per line for a short list, with what was removed and the commands to run', async () => {
    const watched = await openPage(browser, server.url, '/#/identify')
    const { page } = watched
    await ready(page)
    const identify = panel(page)
    await identify.getByLabel('Hash', { exact: true }).fill(`'${MD5_ABC}',\nAdministrator:500:${LM_EMPTY}:${NT_EMPTY}:::\n`)
    await identify.getByRole('button', { name: 'Identify', exact: true }).click()
    const cards = identify.locator('section.identification')
    await cards.nth(1).waitFor()
    assert.equal(await cards.count(), 2)
    assert.deepEqual(await summaryRows(identify), [['MD5', '0', 'raw-md5', '1'], ['NTLM', '1000', 'nt', '1']])
    const notes = await cards.nth(0).locator('.identify-notes').textContent() ?? ''
    assert.match(notes, /Removed before matching: trailing-comma, quotes/)
    assert.match(notes, /Ambiguous/)
    assert.equal(await cards.nth(0).locator('.identify-commands code').first().textContent(), 'hashcat -m 0 -a 0 hashes.txt wordlist.txt')
    assert.match(await cards.nth(1).locator('.identify-notes').textContent() ?? '', /User: Administrator/)
    assert.equal(await cards.nth(1).locator('li.candidate strong').first().textContent(), 'NTLM')
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('never shows a pasted plaintext: a potfile line without the box, one line and in a list, and with it', async () => {
    const watched = await openPage(browser, server.url, '/#/identify')
    const { page } = watched
    await ready(page)
    const identify = panel(page)
    const plain = 'Tr0ub4dor&3'
    const hint = await identify.locator('#identify-hash-hint').textContent() ?? ''
    assert.match(hint, /A plaintext is never sent back/)
    assert.doesNotMatch(hint, /potfile lines work too/)
    for (const text of [`${MD5_ABC}:${plain}`, `${MD5_ABC}:${plain}\n${NT_EMPTY}:${plain}`]) {
      await identify.getByLabel('Hash', { exact: true }).fill(text)
      await identify.getByRole('button', { name: 'Identify', exact: true }).click()
      const cards = identify.locator('section.identification')
      await cards.first().waitFor()
      await identify.getByText('not shown: read from after the last colon', { exact: false }).first().waitFor()
      const shown = await identify.locator('.result').innerText()
      assert.ok(!shown.includes(plain), `the plaintext is on the page: ${shown.slice(0, 400)}`)
      assert.match(await cards.first().locator('h3').textContent() ?? '', new RegExp(`^${MD5_ABC}:…$`))
    }
    await identify.getByRole('checkbox', { name: /Potfile/ }).check()
    await identify.getByLabel('Hash', { exact: true }).fill(`${MD5_ABC}:${plain}`)
    await identify.getByRole('button', { name: 'Identify', exact: true }).click()
    await identify.locator('section.identification li.candidate').first().waitFor()
    assert.equal(await identify.locator('section.identification h3').textContent(), MD5_ABC)
    assert.equal(await identify.locator('section.identification li.candidate strong').first().textContent(), 'MD5')
    assert.ok(!(await identify.locator('.result').innerText()).includes(plain))
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })
})
