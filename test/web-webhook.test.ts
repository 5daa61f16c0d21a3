/**
 * The web page's "Check a webhook" panel (the Webhook tab), in Debian's Chromium against the real
 * server: webhooks signed by the providers' own libraries (standardwebhooks, octokit, stripe-node)
 * are pasted as a receiver would get them and shown valid; a changed byte, a stale one and a
 * malformed header are shown not valid with their reason in words; a check by hand does not spend
 * the webhook's id; a bad secret's problem appears beside the key field; axe finds nothing serious
 * in light and dark, wide and narrow.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { sign as octokitSign } from '@octokit/webhooks-methods'
import type { Browser, Locator, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { failedLoad, launchBrowser, openPage, runAxe, type Watched } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const nowSeconds = () => Math.floor(Date.now() / 1000)
const headerLines = (headers: Record<string, string>) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\n')

function standardWebhook(secret: string, timestamp = nowSeconds()) {
  const id = `msg_${randomBytes(10).toString('hex')}`
  const payload = JSON.stringify({ type: 'user.created', data: { id: 42, name: 'Zoë' } }, null, 2)
  return { payload, headers: { 'Webhook-Id': id, 'Webhook-Timestamp': String(timestamp), 'Webhook-Signature': new Webhook(secret).sign(id, new Date(timestamp * 1000), payload), 'Content-Type': 'application/json' } }
}

function clean(watched: Watched, allowedErrors: string[] = []): void {
  assert.deepEqual(watched.foreign, [], 'no request leaves the server\'s origin')
  assert.deepEqual(watched.errors.filter((error) => !allowedErrors.some((allowed) => error.includes(allowed))), [], 'no console errors')
}

describe('web page: Check a webhook, in Chromium', { skip: skipUnless('chromium') }, () => {
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

  const open = async (): Promise<{ watched: Watched, tab: Locator, page: Page }> => {
    const watched = await openPage(browser, server.url, '/#/webhook')
    const tab = watched.page.getByRole('tabpanel', { name: 'Webhook', exact: true })
    await tab.getByRole('heading', { name: 'Check a webhook' }).waitFor()
    return { watched, tab, page: watched.page }
  }
  const fill = async (tab: Locator, values: { sender?: string, headers: string, body: string, encoding?: string, keyKind?: string, key: string, receivedAt?: string }) => {
    if (values.sender) await tab.getByLabel('Sender', { exact: true }).selectOption({ label: values.sender })
    await tab.getByLabel('Headers', { exact: true }).fill(values.headers)
    await tab.getByLabel('Body', { exact: true }).fill(values.body)
    await tab.getByLabel('Body encoding', { exact: true }).selectOption(values.encoding ?? 'utf8')
    if (values.keyKind) await tab.getByLabel('Key', { exact: true }).selectOption({ label: values.keyKind })
    await tab.locator('#webhook-key').fill(values.key)
    await tab.getByLabel('Received at (optional)', { exact: true }).fill(values.receivedAt ?? '')
  }
  const check = async (tab: Locator): Promise<string> => {
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    const verdict = tab.locator('.verdict')
    await verdict.waitFor()
    return (await verdict.locator('.verdict-text').textContent() ?? '').trim()
  }

  it('shows a Standard Webhooks delivery valid without spending its id, and a changed byte not valid with its reason', async () => {
    const { watched, tab } = await open()
    const secret = `whsec_${randomBytes(24).toString('base64')}`
    const webhook = standardWebhook(secret)
    await fill(tab, { headers: headerLines(webhook.headers), body: webhook.payload, key: secret })
    assert.equal(await check(tab), '✓ Valid')
    assert.match(await tab.locator('.verdict .facts').textContent() ?? '', new RegExp(`Signed at.*\\(${webhook.headers['Webhook-Timestamp']}\\).*Seen before\\s*no`))
    // Checked by hand, not remembered: the receiver's own check still accepts it.
    const receiver = await server.post('/api/webhooks/verify', { profile: 'standard-webhooks', payload: webhook.payload, secret, headers: webhook.headers })
    assert.equal(receiver.body.valid, true)
    // Now that the receiver has it, the panel says it was seen.
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    await tab.getByText('Not valid: Already seen (a replay)').waitFor()

    await tab.getByLabel('Body', { exact: true }).fill(webhook.payload.replace('42', '43'))
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    await tab.getByText('Not valid: The signature does not match').waitFor()
    assert.match(await tab.locator('.webhook-detail').textContent() ?? '', /webhook-signature/)
    clean(watched)
    await watched.close()
  })

  it('GitHub and Stripe deliveries from their libraries; a stale one, a malformed header, a body as base64', async () => {
    const { watched, tab } = await open()
    const githubSecret = 'octocat secret'
    const payload = '{"action":"opened","number":1}'
    await fill(tab, { sender: 'GitHub', headers: `X-GitHub-Event: issues\nX-Hub-Signature-256: ${await octokitSign(githubSecret, payload)}`, body: payload, key: githubSecret })
    assert.equal(await check(tab), '✓ Valid')
    await tab.getByLabel('Headers', { exact: true }).fill('X-Hub-Signature-256: sha1=abc')
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    await tab.getByText('Not valid: A header is malformed').waitFor()

    const stripe = new Stripe('sk_test_hashd_never_used')
    const stripeSecret = `whsec_${randomBytes(16).toString('hex')}`
    const signedAt = nowSeconds() - 3600
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret, timestamp: signedAt })
    await fill(tab, { sender: 'Stripe', headers: `Stripe-Signature: ${header}`, body: Buffer.from(payload).toString('base64'), encoding: 'base64', key: stripeSecret })
    assert.equal(await check(tab), '✗ Not valid: Too old')
    // Read from a queue: received 10 s after it was signed, given as a date.
    await tab.getByLabel('Received at (optional)', { exact: true }).fill(new Date((signedAt + 10) * 1000).toISOString())
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    await tab.getByText('✓ Valid').waitFor()
    clean(watched)
    await watched.close()
  })

  it('puts a bad secret\'s problem beside the key field, and a header line that is not "Name: value" beside the headers', async () => {
    const { watched, tab } = await open()
    await fill(tab, { headers: 'webhook-id: msg_1\nwebhook-timestamp: 1\nwebhook-signature: v1,x', body: '{}', key: 'whsec_not base64!' })
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    const keyError = tab.locator('#webhook-key-error')
    await keyError.waitFor()
    assert.match(await keyError.textContent() ?? '', /secret is not in the form Standard Webhooks hands out/)
    assert.equal(await tab.locator('#webhook-key').getAttribute('aria-invalid'), 'true')
    await tab.getByLabel('Headers', { exact: true }).fill('this line has no colon')
    await tab.getByRole('button', { name: 'Check webhook', exact: true }).click()
    await tab.locator('#webhook-headers-error').getByText('Line 1 is not "Name: value"').waitFor()
    clean(watched, [failedLoad(400)])
    await watched.close()
  })

  for (const [colorScheme, width] of [['light', 1280], ['dark', 390]] as const) {
    it(`has no serious or critical axe violations with a result on screen (${colorScheme}, ${width} px)`, async () => {
      const watched = await openPage(browser, server.url, '/#/webhook', { colorScheme, width, height: 900 })
      const tab = watched.page.getByRole('tabpanel', { name: 'Webhook', exact: true })
      const secret = `whsec_${randomBytes(24).toString('base64')}`
      const webhook = standardWebhook(secret, nowSeconds() - 600)
      await fill(tab, { headers: headerLines(webhook.headers), body: webhook.payload, key: secret })
      await check(tab)
      const violations = await runAxe(watched.page)
      assert.deepEqual(violations.map((violation) => `${violation.id}: ${violation.help}`), [])
      assert.ok(await watched.page.evaluate('document.documentElement.scrollWidth') as number <= width, 'no sideways scrolling')
      clean(watched)
      await watched.close()
    })
  }
})
