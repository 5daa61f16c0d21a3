/**
 * hashd's measured figures, in one place: bench/figures.json holds each figure once (what it is,
 * its value, which way is better, its peer or goal, the command that measures it), and the pages
 * show it only through blocks generated from that file:
 *
 * - the table of every figure in docs/benchmarks.md ("Figures"), between FIGURES_START and FIGURES_END;
 * - the README's short table ("In figures"), the rows marked `readme`, between README_START and README_END;
 * - a figure quoted in a sentence, `<!-- figure:ID -->…<!-- /figure -->`, filled with its `inline` text.
 *
 * `npm run figures` rewrites them (scripts/figures.ts; `npm run figures -- set ID key=value …`
 * changes a value first). A bench run with BENCH_RECORD=1 records what it measured
 * (`recordFigure`) and rewrites them too. test/figures.test.ts fails when a block differs from what
 * this renders, and when a page states a figure of the file outside a block (each figure's
 * `mentions`): a figure has one place, and pages link to it.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'

export interface Figure {
  /** A stable name: recordFigure's and the inline markers' key. */
  id: string
  /** What is measured, as the benchmarks table says it. */
  what: string
  /** The value, with `{key}` for each of `values`. */
  hashd: string
  values: Record<string, string | number>
  better: 'higher' | 'lower'
  /** The peer in the same run, or the goal (`{key}` allowed). */
  peer: string
  command: string
  /** A row of the README's table, with its own shorter wording where given. */
  readme?: { what?: string, hashd?: string, peer?: string }
  /** The words a sentence quoting it inline uses (`{key}` allowed). */
  inline?: string
  /**
   * Regular expressions (case-insensitive, over a page's text with its lines joined into
   * paragraphs) that find this figure stated in prose: outside the generated blocks, a match is a
   * page repeating it.
   */
  mentions: string[]
}

export const FIGURES_START = '<!-- figures:start (generated from bench/figures.json by npm run figures; edit that file, not this table) -->'
export const FIGURES_END = '<!-- figures:end -->'
export const README_START = '<!-- readme-figures:start (generated from bench/figures.json by npm run figures) -->'
export const README_END = '<!-- readme-figures:end -->'
/** `<!-- figure:ID -->…<!-- /figure -->`: a figure quoted in a sentence. */
export const INLINE = /<!-- figure:([a-z0-9-]+) -->(.*?)<!-- \/figure -->/g

const root = new URL('../../', import.meta.url)
const dataPath = new URL('bench/figures.json', root)

export function loadFigures(): Figure[] {
  return (JSON.parse(readFileSync(dataPath, 'utf8')) as { figures: Figure[] }).figures
}

/** `template` with each `{key}` replaced by the figure's value; an unknown key is an error. */
export function fill(figure: Figure, template: string): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = figure.values[key]
    if (value === undefined) throw new Error(`figure ${figure.id}: no value for {${key}}`)
    return String(value)
  })
}

const row = (cells: string[]): string => `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`

export function benchmarksTable(figures: Figure[]): string {
  return [
    FIGURES_START,
    '| what | hashd | better | peer or goal | command |',
    '|---|---|---|---|---|',
    ...figures.map((figure) => row([figure.what, fill(figure, figure.hashd), figure.better, fill(figure, figure.peer), `\`${figure.command}\``])),
    FIGURES_END,
  ].join('\n')
}

export function readmeTable(figures: Figure[]): string {
  return [
    README_START,
    '| figure | hashd | better | against |',
    '|---|---|---|---|',
    ...figures.filter((figure) => figure.readme).map((figure) => row([
      figure.readme!.what ?? figure.what, fill(figure, figure.readme!.hashd ?? figure.hashd), figure.better,
      `${fill(figure, figure.readme!.peer ?? figure.peer)} (\`${figure.command}\`)`,
    ])),
    README_END,
  ].join('\n')
}

function replaceBlock(text: string, start: string, end: string, block: string, where: string): string {
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`${where} has no ${start.slice(0, 30)}… block`)
  return text.slice(0, from) + block + text.slice(to + end.length)
}

/** A page as the figures make it: its blocks and inline quotes rendered from `figures`. */
export function renderPage(name: string, text: string, figures: Figure[]): string {
  let rendered = text
  if (name === 'docs/benchmarks.md') rendered = replaceBlock(rendered, FIGURES_START, FIGURES_END, benchmarksTable(figures), name)
  if (name === 'README.md') rendered = replaceBlock(rendered, README_START, README_END, readmeTable(figures), name)
  return rendered.replace(INLINE, (_, id: string) => {
    const figure = figures.find((each) => each.id === id)
    if (!figure?.inline) throw new Error(`${name}: <!-- figure:${id} --> names no figure with an inline text`)
    return `<!-- figure:${id} -->${fill(figure, figure.inline)}<!-- /figure -->`
  })
}

/** Every page that has blocks or inline quotes, rewritten; returns the names of those that changed. */
export function writePages(figures = loadFigures()): string[] {
  const changed: string[] = []
  for (const name of docsPages()) {
    const path = new URL(name, root)
    const text = readFileSync(path, 'utf8')
    const rendered = renderPage(name, text, figures)
    if (rendered !== text) {
      writeFileSync(path, rendered)
      changed.push(name)
    }
  }
  return changed
}

/** README.md and every page under docs/. */
export function docsPages(): string[] {
  return ['README.md', ...readdirSync(new URL('docs/', root)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]
}

/** Sets values of a figure in bench/figures.json (keeping its layout) and rewrites the pages. */
export function setFigure(id: string, values: Record<string, string | number>): void {
  const data = JSON.parse(readFileSync(dataPath, 'utf8')) as { figures: Figure[] }
  const figure = data.figures.find((each) => each.id === id)
  if (!figure) throw new Error(`bench/figures.json has no figure ${id} (it has ${data.figures.map((each) => each.id).join(', ')})`)
  Object.assign(figure.values, values)
  writeFileSync(dataPath, `${JSON.stringify(data, null, 2)}\n`)
  writePages(data.figures)
}

/** The key of a value measured on this Node (`node24`), for figures given per Node major version. */
export const nodeKey = (): string => `node${process.versions.node.split('.')[0]}`

/** A range of measurements as the table writes it: `2.8–6.5`, or one value when they agree. */
export function range(values: number[], digits: number): string {
  const [low, high] = [Math.min(...values).toFixed(digits), Math.max(...values).toFixed(digits)]
  return low === high ? low : `${low}–${high}`
}

/** What a bench calls with what it measured: written only when BENCH_RECORD=1. */
export function recordFigure(id: string, values: Record<string, string | number>): void {
  if (process.env.BENCH_RECORD !== '1') return
  setFigure(id, values)
  console.log(`   recorded in bench/figures.json: ${id} ${JSON.stringify(values)}`)
}
