/**
 * Every regular expression hashd's own code can run, for the ReDoS gate (test/redos.test.ts):
 *
 * - **literals** (`/…/flags`) in every file under src/, read from the TypeScript source (a literal
 *   never passes through the RegExp constructor, so only the source text shows it);
 * - **`new RegExp(…)` and `RegExp(…)`** with a constant argument, read the same way;
 * - **`new RegExp(…)` built at run time** (the identify table, near misses, the crypt families):
 *   the RegExp constructor is wrapped before src/ is loaded, and every call made from a file under
 *   src/ is recorded with its site (file:line, through the source maps). Each such site found in
 *   the source must be reached while the modules load and the app is built; one that is not (a
 *   pattern built inside a function, per request) is reported, so it can be built at load instead,
 *   where the gate sees every pattern it can make;
 * - **the identify table** as the engine compiled it (each row's `regex` and `typicalRegex`, the
 *   near-miss rules), named by row, the same objects the wrapper saw built;
 * - **the JSON Schema `pattern`s** of the served OpenAPI document: ajv runs them on request bodies,
 *   query strings and headers before any handler (with the `u` flag).
 *
 * Nothing under src/ may be imported by the caller before `inventory()` runs: a module loaded
 * earlier has built its patterns already, unseen.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

export interface RegexUse {
  source: string
  flags: string
  /** Where it comes from: `src/identify/unwrap.ts:39`, `identify table: keepass (hashcat 13400)`, `schema: /paths/…/pattern`. */
  sites: string[]
}

export interface Inventory {
  regexes: RegexUse[]
  /** `new RegExp(…)` sites with a computed argument that nothing reached while loading (file:line). */
  unreached: string[]
  /** How many of each kind were found (for the test's summary line). */
  counts: { literals: number, constructed: number, dynamicSites: number, table: number, schema: number }
}

const here = dirname(fileURLToPath(import.meta.url))
/** dist/test/helpers → the repository (sources) and dist/src (the compiled modules). */
const repoRoot = join(here, '..', '..', '..')
const sourceRoot = join(repoRoot, 'src')
const compiledRoot = join(here, '..', '..', 'src')
/**
 * Entry points that act when loaded (server.ts listens; hash-thread.ts runs only as a worker
 * thread; healthcheck.ts probes the server and exits): the modules they import are loaded through
 * the others, and their own literals are read from the source like every file's.
 */
const NOT_IMPORTED = new Set(['server.js', 'healthcheck.js', join('upload', 'hash-thread.js')])

function filesUnder(directory: string, suffix: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
}

const siteOf = (file: string, line: number): string => `${relative(repoRoot, file).split(sep).join('/')}:${line}`

interface StaticFindings {
  literals: Array<{ source: string, flags: string, site: string }>
  dynamicSites: string[]
}

/** Regex literals and constant `RegExp(…)` arguments in the TypeScript sources; computed ones by site. */
function scanSources(): StaticFindings {
  const found: StaticFindings = { literals: [], dynamicSites: [] }
  for (const file of filesUnder(sourceRoot, '.ts')) {
    const text = readFileSync(file, 'utf8')
    const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
    const lineOf = (node: ts.Node): number => sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1
    const constant = (node: ts.Node | undefined): string | undefined =>
      node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined
    const visit = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
        const literal = node.getText(sourceFile)
        const close = literal.lastIndexOf('/')
        found.literals.push({ source: literal.slice(1, close), flags: literal.slice(close + 1), site: siteOf(file, lineOf(node)) })
      } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
        const [pattern, flags] = node.arguments ?? []
        const source = constant(pattern)
        const flagText = flags === undefined ? '' : constant(flags)
        if (source !== undefined && flagText !== undefined) found.literals.push({ source, flags: flagText, site: siteOf(file, lineOf(node)) })
        else found.dynamicSites.push(siteOf(file, lineOf(node)))
      }
      ts.forEachChild(node, visit)
    }
    visit(sourceFile)
  }
  return found
}

/** The first stack frame in a file under src/, as `src/…:line` (the source maps give TypeScript lines). */
function callerSite(stack: string | undefined): string | undefined {
  for (const line of (stack ?? '').split('\n').slice(1)) {
    const match = /(?:\(|at )((?:file:\/\/)?\/[^():]+\.ts):(\d+):\d+\)?$/.exec(line.trim())
    if (!match) continue
    const file = match[1]!.startsWith('file://') ? fileURLToPath(match[1]!) : match[1]!
    if (file.startsWith(sourceRoot + sep)) return siteOf(file, Number(match[2]))
  }
  return undefined
}

function collectPatterns(value: unknown, pointer: string, into: Array<{ source: string, site: string }>): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => collectPatterns(item, `${pointer}/${index}`, into))
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const path = `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`
      if (key === 'pattern' && typeof item === 'string') into.push({ source: item, site: `schema: ${path}` })
      else collectPatterns(item, path, into)
    }
  }
}

export async function inventory(): Promise<Inventory> {
  process.setSourceMapsEnabled(true)
  const built: Array<{ source: string, flags: string, site: string }> = []
  const Original = RegExp
  const record = (args: unknown[], stack: string | undefined): void => {
    const site = callerSite(stack)
    if (site === undefined) return
    const [pattern, flags] = args
    const regex = pattern instanceof Original ? pattern : undefined
    built.push({
      source: regex ? regex.source : String(pattern),
      flags: flags === undefined ? (regex?.flags ?? '') : String(flags),
      site,
    })
  }
  globalThis.RegExp = new Proxy(Original, {
    construct(target, args, newTarget) {
      record(args, new Error().stack)
      return Reflect.construct(target, args, newTarget === globalThis.RegExp ? target : newTarget)
    },
    apply(target, self, args) {
      record(args, new Error().stack)
      return Reflect.apply(target, self, args)
    },
  })

  const table: Array<{ source: string, flags: string, site: string }> = []
  const schema: Array<{ source: string, site: string }> = []
  try {
    for (const file of filesUnder(compiledRoot, '.js')) {
      if (NOT_IMPORTED.has(relative(compiledRoot, file))) continue
      await import(pathToFileURL(file).href)
    }
    const { formats } = await import('../../src/identify/table.js')
    const { nearMissRules } = await import('../../src/identify/near-miss.js')
    for (const format of formats) {
      const row = `identify table: ${format.name}${format.hashcat === null ? '' : ` (hashcat ${format.hashcat})`}${format.format ? ` [${format.format}]` : ''}`
      table.push({ source: format.regex.source, flags: format.regex.flags, site: row })
      if (format.typicalRegex) table.push({ source: format.typicalRegex.source, flags: format.typicalRegex.flags, site: `${row}, typical` })
    }
    for (const rule of nearMissRules) table.push({ source: rule.pattern.source, flags: rule.pattern.flags, site: `identify near miss: ${rule.label}` })

    // The app as served, with every optional part on (API keys, pepper keys), so its routes' schemas
    // are compiled (through the wrapper) and the document lists every pattern ajv runs.
    const { buildApp } = await import('../../src/app.js')
    const { loadConfig } = await import('../../src/config.js')
    const logStream = new Writable({ write(_chunk, _encoding, done) { done() } })
    const app = await buildApp(loadConfig({ HOST: '127.0.0.1', PORT: '0' }), { logStream })
    try {
      await app.ready()
      collectPatterns(app.swagger(), '', schema)
    } finally {
      await app.close()
    }
  } finally {
    globalThis.RegExp = Original
  }

  const scanned = scanSources()
  const byKey = new Map<string, RegexUse>()
  const add = (source: string, flags: string, site: string): void => {
    const key = `${flags}/${source}`
    const use = byKey.get(key) ?? byKey.set(key, { source, flags, sites: [] }).get(key)!
    if (!use.sites.includes(site)) use.sites.push(site)
  }
  for (const { source, flags, site } of scanned.literals) add(source, flags, site)
  for (const { source, flags, site } of built) add(source, flags, site)
  for (const { source, flags, site } of table) add(source, flags, site)
  for (const { source, site } of schema) add(source, 'u', site)
  const reached = new Set(built.map((entry) => entry.site))
  return {
    regexes: [...byKey.values()],
    unreached: scanned.dynamicSites.filter((site) => !reached.has(site)),
    counts: { literals: scanned.literals.length, constructed: built.length, dynamicSites: scanned.dynamicSites.length, table: table.length, schema: schema.length },
  }
}
