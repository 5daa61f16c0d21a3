/**
 * `npm run bench:web`: how heavy the web page is and how soon it is usable, in Debian's Chromium
 * against a real hashd on loopback.
 *
 * - Weight: the bytes the first load transfers (HTML, JS, CSS, favicon and /api/algorithms) as the
 *   browser received them (brotli where it asked for it), and the JS+CSS alone; the gzipped JS+CSS
 *   figure against the 100 KB budget is printed by `npm run build` (scripts/web-size.ts).
 * - Usable: milliseconds from navigation start until the forms are rendered (the Hash button works,
 *   with SHA-256 preselected) and until the algorithm list from /api/algorithms has filled the
 *   pickers, in a fresh browser context (cold cache) each run; median and worst of RUNS.
 *
 * Figures are noisy on a shared machine; compare runs made at the same time, never single numbers.
 */
import { launchBrowser } from '../test/helpers/browser.js'
import { startServer } from '../test/helpers/server.js'

const RUNS = Number(process.env.RUNS ?? 15)
const BUDGET_MS = 1000

const server = await startServer({ LOG_LEVEL: 'warn' })
const browser = await launchBrowser()
try {
  const usable: number[] = []
  const interactive: number[] = []
  let transferred = 0
  let scriptsAndStyles = 0
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/#/hash`)
    await page.locator('#hash-algorithm:not([disabled])').waitFor({ state: 'attached' })
    const figures = await page.evaluate(`(() => {
      const resources = performance.getEntriesByType('resource')
      const navigation = performance.getEntriesByType('navigation')[0]
      const mark = (name) => performance.getEntriesByName(name)[0].startTime
      return {
        interactive: mark('hashd:interactive'),
        usable: mark('hashd:algorithms'),
        transferred: navigation.transferSize + resources.reduce((sum, entry) => sum + entry.transferSize, 0),
        assets: resources.filter((entry) => /\\.(js|css)$/.test(entry.name)).reduce((sum, entry) => sum + entry.transferSize, 0),
      }
    })()`) as { interactive: number, usable: number, transferred: number, assets: number }
    interactive.push(figures.interactive)
    usable.push(figures.usable)
    transferred = figures.transferred
    scriptsAndStyles = figures.assets
    await context.close()
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number
  const worst = (values: number[]) => Math.max(...values)
  console.log(`web: first load transfers ${(transferred / 1024).toFixed(1)} KB in all, ${(scriptsAndStyles / 1024).toFixed(1)} KB of it JS+CSS (as sent, brotli)`)
  console.log(`web: forms rendered after ${median(interactive).toFixed(0)} ms median, ${worst(interactive).toFixed(0)} ms worst; algorithm list in after ${median(usable).toFixed(0)} ms median, ${worst(usable).toFixed(0)} ms worst (${RUNS} cold loads on loopback; budget ${BUDGET_MS} ms)`)
} finally {
  await browser.close()
  await server.close()
}
