/**
 * After `vite build`: writes gzip and brotli copies of the page's text files beside them (served
 * by @fastify/static's preCompressed option to clients that accept them), and prints the first
 * load's weight, the JS and CSS index.html pulls in, gzipped, against the 100 KB budget.
 * Exits non-zero over budget, so a heavy dependency cannot slip in unnoticed.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'

const BUDGET_BYTES = 100 * 1024
const root = fileURLToPath(new URL('../web/', import.meta.url))

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : [path]
  })
}

for (const path of files(root).filter((file) => /\.(?:html|js|css|svg|json)$/.test(file))) {
  const content = readFileSync(path)
  writeFileSync(`${path}.gz`, gzipSync(content, { level: 9 }))
  writeFileSync(`${path}.br`, brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
}

const html = readFileSync(join(root, 'index.html'), 'utf8')
const referenced = [...html.matchAll(/(?:src|href)="\/([^"]+\.(?:js|css))"/g)].map((match) => match[1] as string)
let total = 0
const rows = referenced.map((file) => {
  const raw = readFileSync(join(root, file))
  const gzipped = gzipSync(raw, { level: 9 }).length
  total += gzipped
  return `  ${relative(root, join(root, file)).padEnd(32)} ${(raw.length / 1024).toFixed(1).padStart(7)} KB raw ${(gzipped / 1024).toFixed(1).padStart(6)} KB gzip`
})
console.log(`web: first load (JS+CSS) ${(total / 1024).toFixed(1)} KB gzipped of a ${BUDGET_BYTES / 1024} KB budget`)
console.log(rows.join('\n'))
if (total > BUDGET_BYTES) {
  console.error(`web: over budget by ${((total - BUDGET_BYTES) / 1024).toFixed(1)} KB`)
  process.exit(1)
}
