/**
 * The web page's Compare tab ("Compare with a store", POST /api/filehash/verify) in Debian's
 * Chromium against the real server. The store's metadata is an `aws s3api head-object` answer whose
 * multipart ETag Python computes from the file's parts as AWS documents them (helpers/aws.ts), with
 * no part size in it: the server finds the one that matches, and the page shows it. A changed ETag
 * is a mismatch; metadata of no known shape is the server's 422, shown beside the field.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { awsChecksums } from './helpers/aws.js'
import { failedLoad, launchBrowser, openPage, runAxe, type Watched } from './helpers/browser.js'
import { Random } from './helpers/random.js'
import { startServer, type TestServer } from './helpers/server.js'
import { skipUnless } from './helpers/tools.js'

const MiB = 1024 * 1024
/** S3's smallest part, and one byte more: a two-part upload in 5 MiB parts, as the AWS SDK for JavaScript and rclone make. */
const PART_SIZE = 5 * MiB
const FILE_SIZE = PART_SIZE + 1

/** What `aws s3api head-object --bucket b --key k` prints for an unencrypted multipart upload. */
function headObject(etag: string, length: number): string {
  return JSON.stringify({
    AcceptRanges: 'bytes', LastModified: '2026-01-05T10:00:00+00:00', ContentLength: length, ETag: `"${etag}"`,
    ContentType: 'application/octet-stream', ServerSideEncryption: 'AES256', Metadata: {},
  }, null, 4)
}

/** The result table as text: [field, verdict, values, details] per row. */
async function rows(tab: Locator): Promise<string[][]> {
  return tab.locator('table.compare tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent?.trim() ?? '')))
}

function clean(watched: Watched, allowedErrors: string[] = []): void {
  assert.deepEqual(watched.foreign, [], 'no request leaves the server\'s origin')
  assert.deepEqual(watched.errors.filter((error) => !allowedErrors.some((allowed) => error.includes(allowed))), [], 'no console errors')
}

async function compare(page: Page, metadata: string, file: string): Promise<Locator> {
  const tab = page.getByRole('tabpanel', { name: 'Compare', exact: true })
  await tab.getByLabel('Metadata', { exact: true }).fill(metadata)
  await tab.getByLabel('File', { exact: true }).setInputFiles(file)
  await tab.getByRole('button', { name: 'Compare', exact: true }).click()
  return tab
}

describe('web page: the Compare tab, in Chromium', { skip: skipUnless('chromium', 'python3', 'crcmod') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  let file: string
  let etag: string
  before(async () => {
    server = await startServer()
    browser = await launchBrowser()
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-compare-'))
    const random = new Random(4646)
    const bytes = Buffer.alloc(FILE_SIZE)
    for (let index = 0; index + 4 <= FILE_SIZE; index += 4) bytes.writeUInt32LE(random.next(), index)
    file = join(dir, 'backup.tar')
    writeFileSync(file, bytes)
    etag = awsChecksums(file, PART_SIZE, 0).md5.etag
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('says match for an S3 multipart ETag computed from the parts, and names the part size that matched', async () => {
    assert.match(etag, /^[0-9a-f]{32}-2$/, 'Python made a two-part ETag')
    const watched = await openPage(browser, server.url, '/#/compare')
    const tab = await compare(watched.page, headObject(etag, FILE_SIZE), file)
    await tab.locator('table.compare').waitFor()
    assert.equal(await tab.getByRole('status').textContent(), 'Match: the file is what Amazon S3 describes (1 matched, 0 mismatched, 0 could not be checked)')
    assert.deepEqual(await rows(tab), [['ETag', 'Match', `expected ${etag}actual ${etag}`, 's3-etagpart size 5.00 MiB (5242880 bytes)']])
    assert.deepEqual((await runAxe(watched.page)).map((violation) => violation.id), [], 'no serious or critical axe violations with a result on screen')
    clean(watched)
    await watched.close()
  })

  it('says mismatch for an ETag the file does not give, with both values', async () => {
    const wrong = `${etag[0] === '0' ? '1' : '0'}${etag.slice(1)}`
    const watched = await openPage(browser, server.url, '/#/compare')
    const tab = await compare(watched.page, headObject(wrong, FILE_SIZE), file)
    await tab.locator('table.compare').waitFor()
    assert.match(await tab.getByRole('status').textContent() ?? '', /^Mismatch: the file is not what Amazon S3 describes/)
    const [row] = await rows(tab)
    assert.equal(row?.[0], 'ETag')
    assert.equal(row?.[1], 'Mismatch')
    assert.match(row?.[2] ?? '', new RegExp(`^expected ${wrong}actual [0-9a-f]{32}-2$`))
    const colours = await tab.locator('table.compare td.status').evaluateAll((cells) => cells.map((cell) => getComputedStyle(cell).color))
    const matchColour = await watched.page.evaluate(() => getComputedStyle(document.querySelector('.verdict-text.no-match')).color)
    assert.equal(colours[0], matchColour, 'a mismatch is in the mismatch colour, and in words')
    clean(watched)
    await watched.close()
  })

  it('shows the server\'s problem beside the metadata for a shape no reader knows', async () => {
    const watched = await openPage(browser, server.url, '/#/compare')
    const tab = await compare(watched.page, 'this is not what any store says', file)
    const error = tab.locator('#compare-metadata-error')
    await error.waitFor()
    assert.match(await error.textContent() ?? '', /^The metadata is none of the shapes hashd reads: /)
    assert.equal(await tab.getByLabel('Metadata', { exact: true }).getAttribute('aria-invalid'), 'true')
    assert.equal(await tab.locator('table.compare').count(), 0)
    clean(watched, [failedLoad(422)])
    await watched.close()
  })

  it('asks for what is missing before sending anything', async () => {
    const watched = await openPage(browser, server.url, '/#/compare')
    const tab = watched.page.getByRole('tabpanel', { name: 'Compare', exact: true })
    await tab.getByRole('button', { name: 'Compare', exact: true }).click()
    assert.match(await tab.locator('#compare-metadata-error').textContent() ?? '', /^Paste what the store reports/)
    assert.match(await tab.locator('#compare-file-error').textContent() ?? '', /^Choose the file/)
    clean(watched)
    await watched.close()
  })
})

// Functions passed to page.evaluate and evaluateAll run in the browser; the test build has no DOM types.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any
declare function getComputedStyle(element: any): any
/* eslint-enable @typescript-eslint/no-explicit-any */
