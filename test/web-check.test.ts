/**
 * The web page's "Check a password" panel in Debian's Chromium against a real server with a
 * breached-password store: the verdict and the reasons' messages, the context words, the password
 * sent to this server only (no other origin is ever asked) and never written into the page's URL,
 * and no accessibility violations (axe-core).
 */
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { launchBrowser, openPage, runAxe } from './helpers/browser.js'
import { corpus, store } from './helpers/pwned.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

describe('web page: Check a password', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  before(async () => {
    const source = await corpus({ hashes: 1000, seed: 61 })
    dir = source.dir
    store(source.dir, join(dir, 'web.store'))
    server = await startServer({ PWNED_STORE: join(dir, 'web.store') })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const submit = async (page: Page, password: string, context = '') => {
    const panel = page.getByRole('tabpanel', { name: 'Password', exact: true })
    await panel.getByLabel('Password', { exact: true }).fill(password)
    await panel.getByLabel(/User name, e-mail/).fill(context)
    await panel.getByRole('button', { name: 'Check', exact: true }).click()
    return panel
  }

  it('says why a password is refused, accepts a good one, and sends it to this server only', async () => {
    const watched = await openPage(browser, server.url, '/#/check')
    const { page } = watched
    let panel = await submit(page, 'correct horse battery staple')
    await panel.locator('.verdict-text').filter({ hasText: /Not acceptable$/ }).waitFor()
    assert.match(await panel.locator('.reasons').textContent() ?? '', /has appeared 384 times in data breaches/)
    assert.equal(await panel.getByLabel('Password', { exact: true }).getAttribute('type'), 'password')

    panel = await submit(page, 'BobbyTables2024!!!', 'bobby.tables@example.org')
    await panel.locator('.reasons').filter({ hasText: /your user name, e-mail address/ }).waitFor()

    panel = await submit(page, 'violet tractor humming under seven lanterns')
    await panel.locator('.verdict-text').filter({ hasText: /Acceptable$/ }).waitFor()
    assert.match(await panel.locator('.meta').last().textContent() ?? '', /Compared with: length, common passwords, breached passwords\. Not found among breached passwords\./)

    assert.deepEqual(watched.foreign, [])
    assert.ok(!page.url().includes('violet'))
    assert.deepEqual(await runAxe(page), [])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })
})
