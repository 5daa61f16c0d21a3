import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { algorithmSection, END, START } from '../scripts/algorithm-docs.js'

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
})
