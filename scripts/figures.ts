/**
 * `npm run figures`: renders bench/figures.json into the pages (the table in docs/benchmarks.md,
 * the README's short table, inline quotes; bench/figures.ts). `npm run figures -- set ID key=value …`
 * changes a figure's values first, for a figure measured by hand (`npm test`'s duration, the
 * container's) or to correct one.
 */
import { setFigure, writePages } from '../bench/figures.js'

const [command, id, ...pairs] = process.argv.slice(2)
if (command === 'set' && id !== undefined && pairs.length > 0) {
  const values = Object.fromEntries(pairs.map((pair) => {
    const [key, value] = pair.split('=', 2)
    if (!key || value === undefined) throw new Error(`not key=value: ${pair}`)
    return [key, /^\d+(\.\d+)?$/.test(value) ? Number(value) : value]
  }))
  try {
    setFigure(id, values)
  } catch (error) {
    console.error((error as Error).message)
    process.exit(2)
  }
  console.log(`bench/figures.json: ${id} ${JSON.stringify(values)}; pages rewritten`)
} else if (command === undefined) {
  const changed = writePages()
  console.log(changed.length === 0 ? 'figures: every page is up to date' : `figures: rewrote ${changed.join(', ')}`)
} else {
  console.error('usage: npm run figures [-- set ID key=value …]')
  process.exitCode = 2
}
