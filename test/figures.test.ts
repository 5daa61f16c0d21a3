/**
 * The page check of hashd's figures (bench/figures.ts): each measured figure lives once, in
 * bench/figures.json, and pages show it only through the blocks generated from it (the table in
 * docs/benchmarks.md, the README's short table, inline quotes). It fails when a block differs from
 * what the file renders (so two pages cannot disagree), and when a page states a figure of the file
 * anywhere else, in prose or in a table of its own: it should link to docs/benchmarks.md#figures.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { benchmarksTable, docsPages, fill, FIGURES_END, FIGURES_START, INLINE, loadFigures, README_END, README_START, renderPage, type Figure } from '../bench/figures.js'

const root = new URL('../../', import.meta.url)
const read = (name: string) => readFileSync(new URL(name, root), 'utf8')
const figures = loadFigures()

/** A range written as a value ("0.86–0.91", "2.8–6.5"): only the table states it. */
const RANGE = /\d\s?[–-]\s?\d/
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The patterns that find `figure` stated: its own `mentions`, and each of its ranges as written. */
function patterns(figure: Figure): RegExp[] {
  const ranges = Object.values(figure.values).filter((value) => typeof value === 'string' && RANGE.test(value))
    .map((value) => `(?<![\\d.])${escape(String(value)).replace(/\\s\?|–|-/g, '\\s?[–-]\\s?')}(?![\\d.])`)
  return [...figure.mentions, ...ranges].map((source) => new RegExp(source, 'iu'))
}

/**
 * A page as passages to search: paragraphs with their lines joined, and each table row with its
 * header's names before its cells (`peak: 220 MB`), without the generated blocks, inline quotes,
 * fenced code (a program's sample output), HTML comments, and a passage right after a line
 * `<!-- figures: … -->` that says why its figures are not the table's (another program's memory, a
 * setting compared with another).
 */
function passages(text: string): Array<{ line: number, text: string }> {
  const blanked = text
    // A passage marked as other measurements (a fuzzer's own memory, a flag compared): up to the next blank line.
    .replace(/^<!-- figures: [^>]*-->\n(?:[^\n]*\S[^\n]*(?:\n|$))+/gm, (block) => block.replace(/[^\n]/g, ''))
    .replace(new RegExp(`${escape(FIGURES_START)}[\\s\\S]*?${escape(FIGURES_END)}`, 'g'), (block) => block.replace(/[^\n]/g, ''))
    .replace(new RegExp(`${escape(README_START)}[\\s\\S]*?${escape(README_END)}`, 'g'), (block) => block.replace(/[^\n]/g, ''))
    .replace(INLINE, '')
    .replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''))
    .replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ''))
  const found: Array<{ line: number, text: string }> = []
  let paragraph: string[] = []
  let from = 0
  let header: string[] | null = null
  const cells = (line: string) => line.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((cell) => cell.trim())
  const lines = blanked.split('\n')
  const flush = () => {
    if (paragraph.length > 0) found.push({ line: from + 1, text: paragraph.join(' ') })
    paragraph = []
  }
  lines.forEach((line, index) => {
    if (line.trimStart().startsWith('|')) {
      flush()
      if (header === null) header = cells(line)
      else if (!/^\|[\s|:-]+\|$/.test(line.trim())) found.push({ line: index + 1, text: cells(line).map((cell, column) => `${header![column] ?? ''}: ${cell}`).join(' | ') })
      return
    }
    header = null
    if (line.trim() === '') { flush(); return }
    if (paragraph.length === 0) from = index
    paragraph.push(line.trim())
  })
  flush()
  return found
}

describe('figures: each in one place (bench/figures.json), shown through generated blocks', () => {
  it('every figure is complete: a unique id, each {key} with a value, which way is better, a pattern that finds it', () => {
    const ids = figures.map((figure) => figure.id)
    assert.deepEqual(ids, [...new Set(ids)], 'ids are unique')
    for (const figure of figures) {
      for (const template of [figure.hashd, figure.peer, figure.inline, figure.readme?.what, figure.readme?.hashd, figure.readme?.peer]) {
        if (template !== undefined) assert.doesNotThrow(() => fill(figure, template), figure.id)
      }
      assert.match(figure.better, /^(higher|lower)$/, figure.id)
      assert.ok(patterns(figure).length > 0, `${figure.id}: give it mentions (or a range value) so that a page repeating it is found`)
    }
  })

  it('each figure\'s patterns find it as its own table row states it, so the check below cannot pass by finding nothing', () => {
    const rows = passages(benchmarksTable(figures).replace(FIGURES_START, '').replace(FIGURES_END, ''))
    assert.equal(rows.length, figures.length)
    for (const [index, figure] of figures.entries()) {
      assert.ok(patterns(figure).some((pattern) => pattern.test(rows[index]!.text)), `${figure.id}: no pattern matches its row: ${rows[index]!.text}`)
    }
  })

  it('the pages\' blocks and inline quotes are what bench/figures.json renders (run npm run figures)', () => {
    for (const name of docsPages()) {
      const text = read(name)
      assert.equal(text, renderPage(name, text, figures), `${name} differs from bench/figures.json: run npm run figures, and edit the file, not the page`)
    }
    assert.ok(read('docs/benchmarks.md').includes(FIGURES_START), 'docs/benchmarks.md holds the table of figures')
    assert.ok(read('README.md').includes(README_START), 'the README holds its short table')
  })

  it('no page states a figure outside the generated blocks: it links to docs/benchmarks.md#figures instead', () => {
    const repeats: string[] = []
    for (const name of docsPages()) {
      for (const passage of passages(read(name))) {
        const found = figures.flatMap((figure) => patterns(figure).map((pattern) => pattern.exec(passage.text)).filter((match) => match !== null).slice(0, 1).map((match) => ({ figure, match })))
        if (found.length > 0) repeats.push(`${name}:${passage.line}: "${found[0]!.match[0]}" states ${found.map(({ figure }) => figure.id).join(', ')}`)
      }
    }
    assert.deepEqual(repeats, [])
  })

  it('finds a repeat in prose, wrapped over lines, and in a table of a page\'s own', () => {
    const [atRest, peak] = [figures.find((figure) => figure.id === 'memory-at-rest')!, figures.find((figure) => figure.id === 'soak-peak')!]
    const page = 'Memory: about 104 MB resident\nat rest on Node 24.\n\n| config | peak |\n|---|---|\n| Node 24 | 220 MB |\n'
    const texts = passages(page).map((passage) => passage.text)
    assert.ok(patterns(atRest).some((pattern) => texts.some((text) => pattern.test(text))))
    assert.ok(patterns(peak).some((pattern) => texts.some((text) => pattern.test(text))))
    const hashVsBare = figures.find((figure) => figure.id === 'hash-vs-node-http')!
    assert.ok(patterns(hashVsBare).some((pattern) => pattern.test(`hashd reaches ${String(hashVsBare.values.ratio)} of the bare server`)))
  })
})
