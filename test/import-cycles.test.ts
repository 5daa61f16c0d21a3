/**
 * Imports run one way (docs/development.md; routes → domain → algorithms): no module of src/ or of
 * the web page (web/src/) imports itself through others. The imports are read from the TypeScript
 * sources by TypeScript's own scanner (ts.preProcessFile), type-only imports and re-exports
 * included: `import type` ties two modules' designs together as much as a value import does, though
 * the compiler drops it from the JavaScript. A cycle is reported as the chain of files that makes it.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** The file a relative specifier names: `./x.js` is x.ts or x.tsx (NodeNext), `./x` (the page, bundled by Vite) x.ts, x.tsx or x/index.ts. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier)
  const stem = base.replace(/\.js$/, '')
  return [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')].find((path) => /\.tsx?$/.test(path) && existsSync(path))
}

/** Every cycle among the modules under `dir` (one per strongly connected component), each as a chain of paths relative to `dir`. */
function importCycles(dir: string): string[][] {
  const graph = new Map<string, string[]>()
  for (const file of sources(dir)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    graph.set(file, importedFiles.map((imported) => imported.fileName).filter((name) => name.startsWith('.'))
      .map((name) => resolveSpecifier(file, name)).filter((path): path is string => path !== undefined))
  }
  // Tarjan's strongly connected components; a component of two or more modules, or one that imports itself, holds a cycle.
  const order = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (node: string): void => {
    order.set(node, order.size)
    low.set(node, order.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, order.get(next)!))
      }
    }
    if (low.get(node) !== order.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component)
  }
  for (const node of graph.keys()) if (!order.has(node)) visit(node)
  // One chain per component: from its first module along imports inside it, back to the start.
  return components.map((component) => {
    const members = new Set(component)
    const start = [...component].sort()[0]!
    const chain = [start]
    const seen = new Set(chain)
    for (let at = start; ;) {
      const imports = (graph.get(at) ?? []).filter((next) => members.has(next))
      const next = imports.find((candidate) => candidate === start) ?? imports.find((candidate) => !seen.has(candidate)) ?? start
      chain.push(next)
      if (next === start) break
      seen.add(next)
      at = next
    }
    return chain.map((path) => relative(dir, path))
  })
}

describe('no import cycles', () => {
  for (const folder of ['src', 'web/src']) {
    it(`${folder}/: no module imports itself through others`, () => {
      const cycles = importCycles(join(ROOT, folder))
      assert.deepEqual(cycles.map((chain) => chain.join(' → ')), [])
    })
  }

  it('finds a cycle made only of type imports, and one through a re-export', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hashd-cycles-'))
    try {
      writeFileSync(join(dir, 'store.ts'), "import { note } from './status.js'\nexport type Kind = 'a'\nnote()\n")
      writeFileSync(join(dir, 'status.ts'), "import type { Kind } from './store.js'\nexport function note(kind?: Kind): void { void kind }\n")
      writeFileSync(join(dir, 'a.ts'), "export * from './b.js'\n")
      writeFileSync(join(dir, 'b.ts'), "export { x } from './c.js'\n")
      writeFileSync(join(dir, 'c.ts'), "import './a.js'\nexport const x = 1\n")
      writeFileSync(join(dir, 'alone.ts'), "import './store.js'\n")
      assert.deepEqual(importCycles(dir).map((chain) => chain.join(' → ')).sort(), ['a.ts → b.ts → c.ts → a.ts', 'status.ts → store.ts → status.ts'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
