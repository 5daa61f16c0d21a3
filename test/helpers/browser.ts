/**
 * Debian's Chromium driven by playwright-core (no browser download), for the web page's tests.
 * Callers skip with `skipUnless('chromium')`; nothing here runs at module load.
 *
 * Every page opened through `openPage` records what the issue forbids: requests to any origin but
 * the server's, and console errors (CSP violations land there too). `runAxe` injects axe-core's
 * own source through the DevTools protocol, which the page's CSP does not govern, so the page
 * needs no exception for it.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

/**
 * `scrollbars: true` keeps the classic scrollbars, which Playwright hides in headless mode by
 * default (--hide-scrollbars): a test of the page's layout with a scrollbar needs them.
 */
export async function launchBrowser(options: { scrollbars?: boolean } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000,
    ...(options.scrollbars === true ? { ignoreDefaultArgs: ['--hide-scrollbars'] } : {}),
  })
}

export interface Watched {
  page: Page
  context: BrowserContext
  /** URLs of requests that went anywhere but the server's origin. */
  foreign: string[]
  /** Console errors and uncaught exceptions, as text. */
  errors: string[]
  close(): Promise<void>
}

export interface PageOptions {
  colorScheme?: 'light' | 'dark'
  width?: number
  height?: number
  /** Runs on the new page before it navigates (to intercept a request with page.route, say). */
  beforeLoad?: (page: Page) => Promise<unknown>
}

export async function openPage(browser: Browser, origin: string, path = '/', options: PageOptions = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const foreign: string[] = []
  const errors: string[] = []
  page.on('request', (request) => {
    const url = request.url()
    if (!url.startsWith('data:') && new URL(url).origin !== origin) foreign.push(url)
  })
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`))
  await options.beforeLoad?.(page)
  await page.goto(origin + path, { waitUntil: 'load' })
  return { page, context, foreign, errors, close: () => context.close() }
}

/** The console line Chromium writes for every 4xx/5xx fetch, which a test that expects one ignores. */
export const failedLoad = (status: number) => `Failed to load resource: the server responded with a status of ${status}`

let axeSource: string | undefined

export interface AxeViolation { id: string, impact: string | null, help: string, nodes: Array<{ target: unknown[], failureSummary?: string }> }

/** axe-core's WCAG 2.x A/AA rules on the page as it is now; returns the serious and critical violations. */
export async function runAxe(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
  if (!await page.evaluate('typeof window.axe === "object"')) await page.evaluate(axeSource)
  const violations = await page.evaluate(`window.axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    resultTypes: ['violations'],
  }).then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`) as AxeViolation[]
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
}
