import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { algorithmSection, END, START } from '../scripts/algorithm-docs.js'
import { algorithms } from '../src/algorithms/registry.js'
import { documentFor } from './helpers/process.js'

describe('README', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const algorithmsPage = readFileSync(new URL('../../docs/algorithms.md', import.meta.url), 'utf8')

  it('lists exactly the algorithms the registry has (run `npm run docs` after changing it)', () => {
    const start = algorithmsPage.indexOf(START)
    const end = algorithmsPage.indexOf(END)
    assert.ok(start >= 0 && end > start, 'docs/algorithms.md has the algorithm markers')
    assert.equal(algorithmsPage.slice(start, end + END.length), algorithmSection())
  })

  it('gives the two set-up commands', () => {
    assert.match(readme, /npm ci && npm start/)
    assert.match(readme, /npm ci && npm test/)
  })

  it('counts the algorithms as the registry does', () => {
    const all = [...algorithms]
    const passwords = all.filter((algorithm) => algorithm.kind === 'password')
    const written = passwords.filter((algorithm) => algorithm.writes !== null)
    const stated = /(\d+) algorithms \((\d+) digests, XOFs, checksums and similarity hashes; (\d+) password-hash schemes, (\d+) of which it writes\)/.exec(readme.replace(/\s+/g, ' '))
    assert.ok(stated, 'the README says how many algorithms of each kind there are')
    assert.deepEqual(stated.slice(1).map(Number), [all.length, all.length - passwords.length, passwords.length, written.length])
    assert.match(readme, new RegExp(`the ${all.length} algorithms, their options`))
  })

  it('has a row and an example for every POST operation of the API', async () => {
    const document = await documentFor({})
    const operations = Object.entries(document.paths).filter(([path, methods]) => path.startsWith('/api/') && 'post' in methods).map(([path]) => path)
    assert.ok(operations.length >= 8)
    for (const path of operations) {
      assert.match(readme, new RegExp(`^\\| \`POST ${path}\` \\|`, 'm'), `README.md: add a row for POST ${path} to the operations table`)
      assert.ok(readme.split('\n').some((line) => line.startsWith('$ curl') && line.includes(`localhost:3000${path}`) && !line.includes(`localhost:3000${path}/`)),
        `README.md: add one example (a $ curl line and its output) for POST ${path}`)
    }
  })

  it('and the docs describe the product, not the history of its making: no issues, dated runs or commits', () => {
    const docs = new URL('../../docs/', import.meta.url)
    const pages = [['README.md', readme], ...readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => [`docs/${name}`, readFileSync(new URL(name, docs), 'utf8')])]
    for (const [name, text] of pages) {
      for (const [what, pattern] of [['an issue', /\bissues?\b/i], ['a date', /\b20\d\d-\d\d-\d\d\b/], ['a time of day', /\b\d\d:\d\d UTC\b/], ['a commit', /\bcommit `?[0-9a-f]{7}/]] as const) {
        const found = pattern.exec(text!)
        assert.equal(found, null, `${name} names ${what}: …${found ? text!.slice(Math.max(0, found.index - 60), found.index + 60) : ''}…`)
      }
    }
  })

  it('gives its figures in a table that says which way is better', () => {
    const header = readme.split('\n').findIndex((line) => /^\| figure \| hashd \| better \|/.test(line))
    assert.ok(header >= 0, 'a figures table with a "better" column')
    const rows = readme.split('\n').slice(header + 2).filter((line, index, all) => all.slice(0, index + 1).every((each) => each.startsWith('|')))
    assert.ok(rows.length >= 5, `${rows.length} figures`)
    for (const row of rows) assert.match(row.split('|')[3]!.trim(), /^(higher|lower)$/, row)
  })

  it('counts the web page\'s tabs as the page has them', () => {
    const main = readFileSync(new URL('../../web/src/main.tsx', import.meta.url), 'utf8')
    const tabs = [...main.slice(main.indexOf('const TABS'), main.indexOf('] as const')).matchAll(/\{ id: '/g)].length
    const web = readFileSync(new URL('../../docs/web.md', import.meta.url), 'utf8')
    const words = ['none', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve']
    assert.match(web, new RegExp(`in ${words[tabs]} tabs`))
    assert.match(web, new RegExp(`\\*\\*${words[tabs]![0]!.toUpperCase()}${words[tabs]!.slice(1)} tabs\\*\\*`))
  })
})
