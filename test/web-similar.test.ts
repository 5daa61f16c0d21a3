/**
 * The web page's Similar tab in Debian's Chromium against the real server, with a
 * SIMILARITY_BANKS_DIR holding a PDQ bank made by bank:import from the PDQ reference's hashes of a
 * fixture image (and of it turned and flipped). Dropping the image shows its hashes and the entries
 * within 31 bits, as Python's Hamming distances over the bank say; a second image is compared
 * through /api/similarity/compare; a text file gets ssdeep and TLSH, and a line saying that no bank
 * of their type is there.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import type { Browser, Locator } from 'playwright-core'
import { launchBrowser, openPage, runAxe } from './helpers/browser.js'
import { startServer, type TestServer } from './helpers/server.js'
import { python, skipUnless } from './helpers/tools.js'

const here = dirname(fileURLToPath(import.meta.url))
const PDQ_FIXTURES = join(here, '..', '..', 'test', 'fixtures', 'pdq')
const expected = JSON.parse(readFileSync(join(PDQ_FIXTURES, 'expected.json'), 'utf8')) as Record<string, { hash: string, dihedral: Record<string, string> }>

const hamming = (a: string, b: string): number => Number(python('import sys; print(bin(int(sys.argv[1], 16) ^ int(sys.argv[2], 16)).count("1"))', [a, b]))

async function rows(table: Locator): Promise<string[][]> {
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent?.trim() ?? '')))
}

describe('web page: the Similar tab, in Chromium', { skip: skipUnless('chromium') }, () => {
  let server: TestServer
  let browser: Browser
  let dir: string
  const entries: Array<{ hash: string, id: string, label: string }> = []
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hashd-web-similar-'))
    const banks = join(dir, 'banks')
    mkdirSync(banks)
    const palette = expected['gen-palette-640x480.png']!
    entries.push({ hash: palette.hash, id: 'palette', label: 'known image' }, { hash: palette.dihedral.rotate180!, id: 'palette-upside-down', label: 'turned' },
      { hash: expected['gen-gray-200x300.png']!.hash, id: 'gray', label: 'other image' })
    for (let i = 0; i < 20; i++) entries.push({ hash: randomBytes(32).toString('hex'), id: `r${i}`, label: 'random' })
    writeFileSync(join(dir, 'images.csv'), entries.map((entry) => `${entry.hash},${entry.id},${entry.label}`).join('\n'))
    execFileSync(process.execPath, [join(here, '..', 'scripts', 'bank-import.js'), join(dir, 'images.csv'), join(banks, 'images.bank'), '--type', 'pdq'], { stdio: 'pipe' })
    writeFileSync(join(dir, 'notes.txt'), Array.from({ length: 300 }, (_, i) => `line ${i} of some notes`).join('\n'))
    server = await startServer({ SIMILARITY_BANKS_DIR: banks })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('shows an image\'s hashes and its matches (rotations too), and compares it with a second image', async () => {
    const watched = await openPage(browser, server.url, '/#/similar')
    const tab = watched.page.getByRole('tabpanel', { name: 'Similar', exact: true })
    await tab.getByLabel('File or image', { exact: true }).setInputFiles(join(PDQ_FIXTURES, 'gen-palette-640x480.png'))
    await tab.getByLabel('Compare with', { exact: true }).setInputFiles(join(PDQ_FIXTURES, 'gen-gray-200x300.png'))
    await tab.getByRole('button', { name: 'Find similar', exact: true }).click()
    await tab.locator('table.compared').waitFor()
    const hashes = await rows(tab.locator('.result > table.digests').first())
    assert.deepEqual(hashes.map(([name]) => name), ['ssdeep', 'TLSH', 'PDQ'])
    const pdq = /^([0-9a-f]{64}) \(quality \d+\)$/.exec(hashes[2]![1]!)?.[1]
    assert.ok(pdq, hashes[2]![1])
    // The image's own hash: the nearest entries are the reference's hash of it, and (with its rotations) of it turned upside down.
    const matches = await rows(tab.locator('table.similar'))
    const near = entries.map((entry) => ({ ...entry, distance: hamming(pdq, entry.hash) })).filter((entry) => entry.distance <= 31)
    assert.deepEqual(near.map((entry) => entry.id), ['palette'], 'hashd\'s PDQ is within 31 bits of the reference\'s')
    assert.deepEqual(matches[0], ['images', 'palette', 'known image', String(near[0]!.distance)])
    assert.deepEqual(matches.map((row) => row[1]), ['palette', 'palette-upside-down'])
    assert.match(matches[1]![3]!, /^\d+ \(rotate180\)$/)
    assert.match(await tab.locator('table.similar caption').textContent() ?? '', /^PDQ: 2 matches in bank images \(distance at most 31\)$/)
    assert.match(await tab.getByText(/^ssdeep: /).textContent() ?? '', /SIMILARITY_BANKS_DIR holds no ssdeep bank/)
    // The comparison: the distance /api/similarity/compare gives for the two hashes /api/filehash gives, as Python counts it.
    const second = await (await server.fetch('/api/filehash?algorithms=pdq', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: readFileSync(join(PDQ_FIXTURES, 'gen-gray-200x300.png')) })).json() as { hashes: { pdq: { hash: string } } }
    const distance = hamming(pdq, second.hashes.pdq.hash)
    const compared = await rows(tab.locator('table.compared'))
    assert.deepEqual(compared.find(([name]) => name === 'PDQ'), ['PDQ', `${distance <= 31 ? 'Similar' : 'Not similar'}: distance ${distance}, at most 31`])
    assert.deepEqual(compared.map(([name]) => name), ['ssdeep', 'TLSH', 'PDQ'])
    assert.deepEqual(await runAxe(watched.page), [])
    assert.deepEqual(watched.foreign, [])
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })

  it('gives a text file its ssdeep and TLSH, and says there is no bank of their type', async () => {
    const watched = await openPage(browser, server.url, '/#/similarity')
    const tab = watched.page.getByRole('tabpanel', { name: 'Similar', exact: true })
    await tab.getByLabel('File or image', { exact: true }).setInputFiles(join(dir, 'notes.txt'))
    await tab.getByRole('button', { name: 'Find similar', exact: true }).click()
    await tab.locator('.result').waitFor()
    const hashes = await rows(tab.locator('.result > table.digests').first())
    const answer = await (await server.fetch('/api/filehash?algorithms=ssdeep,tlsh', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: readFileSync(join(dir, 'notes.txt')) })).json() as { hashes: { ssdeep: string, tlsh: string } }
    assert.deepEqual(hashes, [['ssdeep', answer.hashes.ssdeep], ['TLSH', answer.hashes.tlsh]])
    assert.match(await tab.getByText(/^TLSH: /).textContent() ?? '', /SIMILARITY_BANKS_DIR holds no tlsh bank/)
    assert.deepEqual(watched.errors, [])
    await watched.close()
  })
})
