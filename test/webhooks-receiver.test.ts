/**
 * The receiver of docs/webhooks.md ("A receiver that asks hashd"), run as the page shows it: the
 * ```js block after the `<!-- webhooks-receiver … -->` comment is written to receiver.mjs and
 * started with node against a real hashd. Webhooks signed by the providers' own libraries
 * (standardwebhooks, @octokit/webhooks-methods, stripe) are sent to it: new ones are kept and
 * answered 204, a changed byte 400, a redelivery 200 without being kept twice, and with hashd
 * unreachable 503, so the sender retries.
 */
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { sign as octokitSign } from '@octokit/webhooks-methods'
import { Webhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { startServer, type TestServer } from './helpers/server.js'

const PAGE = fileURLToPath(new URL('../../docs/webhooks.md', import.meta.url))

/** The ```js block that follows the page's `<!-- webhooks-receiver` comment. */
export function receiverSource(markdown: string): string {
  const marker = markdown.indexOf('<!-- webhooks-receiver')
  assert.ok(marker >= 0, 'docs/webhooks.md has a <!-- webhooks-receiver --> comment')
  const start = markdown.indexOf('```js\n', marker)
  const end = markdown.indexOf('\n```', start + 6)
  assert.ok(start > marker && end > start, 'a ```js block follows it')
  return markdown.slice(start + 6, end + 1)
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

describe('the receiver in docs/webhooks.md, against hashd', () => {
  let hashd: TestServer
  let dir: string
  let receiver: ChildProcess | undefined
  let url = ''
  let output = ''
  const secrets = {
    acme: `whsec_${randomBytes(32).toString('base64')}`,
    github: `github ${randomBytes(8).toString('hex')}`,
    stripe: `whsec_${randomBytes(16).toString('hex')}`,
  }
  const stripe = new Stripe('sk_test_hashd_never_used')

  const startReceiver = async (hashdUrl: string) => {
    const port = await freePort()
    receiver = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HASHD_URL: hashdUrl, PORT: String(port), ACME_WEBHOOK_SECRET: secrets.acme, GITHUB_WEBHOOK_SECRET: secrets.github, STRIPE_WEBHOOK_SECRET: secrets.stripe },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    receiver.stdout?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    receiver.stderr?.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
    url = `http://127.0.0.1:${port}`
    for (let tries = 0; ; tries++) {
      try {
        await fetch(`${url}/`)
        return
      } catch {
        if (tries > 200 || receiver.exitCode !== null) throw new Error(`the receiver did not start: ${output}`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
    }
  }
  const stopReceiver = async () => {
    if (receiver && receiver.exitCode === null) {
      const exited = new Promise((resolve) => receiver?.once('exit', resolve))
      receiver.kill('SIGTERM')
      await exited
    }
  }
  const deliver = async (path: string, body: string, headers: Record<string, string>) => {
    const response = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
    return { status: response.status, text: await response.text() }
  }
  const kept = (): Array<{ path: string, body: string }> => existsSync(join(dir, 'events.jsonl'))
    ? readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { path: string, body: string })
    : []

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-receiver-'))
    writeFileSync(join(dir, 'receiver.mjs'), receiverSource(readFileSync(PAGE, 'utf8')))
    hashd = await startServer()
    await startReceiver(hashd.url)
  })
  after(async () => {
    await stopReceiver()
    await hashd?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('keeps a new Standard Webhooks delivery (204), refuses a changed byte (400), acknowledges the retry without keeping it twice (200)', async () => {
    const id = `msg_${randomBytes(8).toString('hex')}`
    const timestamp = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ type: 'order.created', data: { id: 7, note: 'crème brûlée' } })
    const signature = new Webhook(secrets.acme).sign(id, new Date(timestamp * 1000), body)
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }
    assert.deepEqual(await deliver('/webhooks/acme', body.replace('7', '8'), headers), { status: 400, text: 'signature-mismatch\n' })
    assert.equal((await deliver('/webhooks/acme', body, headers)).status, 204)
    assert.deepEqual(await deliver('/webhooks/acme', body, headers), { status: 200, text: 'already received\n' })
    assert.deepEqual(kept().filter((event) => event.path === '/webhooks/acme').map((event) => event.body), [body])
  })

  it('GitHub (octokit) and Stripe (stripe-node) deliveries: kept once; a stale Stripe one refused', async () => {
    const githubBody = JSON.stringify({ action: 'opened', issue: { number: 1 } })
    const githubHeaders = { 'x-github-event': 'issues', 'x-hub-signature-256': await octokitSign(secrets.github, githubBody) }
    assert.equal((await deliver('/webhooks/github', githubBody, githubHeaders)).status, 204)
    assert.equal((await deliver('/webhooks/github', githubBody, githubHeaders)).status, 200)

    const stripeBody = JSON.stringify({ id: `evt_${randomBytes(6).toString('hex')}`, object: 'event', type: 'invoice.paid' })
    assert.equal((await deliver('/webhooks/stripe', stripeBody, { 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: stripeBody, secret: secrets.stripe }) })).status, 204)
    const stale = stripe.webhooks.generateTestHeaderString({ payload: stripeBody, secret: secrets.stripe, timestamp: Math.floor(Date.now() / 1000) - 900 })
    assert.deepEqual(await deliver('/webhooks/stripe', stripeBody, { 'stripe-signature': stale }), { status: 400, text: 'timestamp-too-old\n' })
    assert.deepEqual(kept().filter((event) => event.path !== '/webhooks/acme').map((event) => event.body), [githubBody, stripeBody])
    assert.equal((await fetch(`${url}/webhooks/unknown`, { method: 'POST', body: '{}' })).status, 404)
  })

  it('answers 503 when hashd cannot be reached, so the sender retries', async () => {
    await stopReceiver()
    const unreachable = `http://127.0.0.1:${await freePort()}`
    await startReceiver(unreachable)
    const id = `msg_${randomBytes(8).toString('hex')}`
    const timestamp = Math.floor(Date.now() / 1000)
    const body = '{"type":"ping"}'
    const response = await deliver('/webhooks/acme', body, { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': new Webhook(secrets.acme).sign(id, new Date(timestamp * 1000), body) })
    assert.equal(response.status, 503)
    await stopReceiver()
    await startReceiver(hashd.url)
  })
})
