/**
 * The parsers' fuzz targets (fuzz/targets/, run coverage-guided by `npm run fuzz`) over their
 * checked-in inputs, without the fuzzer: every seed of fuzz/corpus/<target>/, and every input a
 * fuzzing run once failed on, kept in fuzz/findings/<target>/ as a regression test. Each input must
 * pass its target: the parser answers, or refuses it the documented way, and its invariants hold.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'node:test'
import { TARGETS } from '../fuzz/targets.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const inputs = (kind: 'corpus' | 'findings', target: string): string[] => {
  const dir = join(root, 'fuzz', kind, target)
  return existsSync(dir) ? readdirSync(dir).sort().map((name) => join(dir, name)) : []
}

describe('fuzz targets over their corpus and past findings', () => {
  for (const target of TARGETS) {
    it(`${target.name}: every seed and every past finding passes`, async () => {
      const { fuzz } = await import(`../fuzz/targets/${target.name}.js`) as { fuzz: (data: Buffer) => void | Promise<void> }
      const seeds = inputs('corpus', target.name)
      assert.ok(seeds.length > 0, `fuzz/corpus/${target.name}/ has no seeds (npm run fuzz:corpus)`)
      for (const file of [...seeds, ...inputs('findings', target.name)]) {
        try {
          await fuzz(readFileSync(file))
        } catch (error) {
          assert.fail(`${file.slice(root.length + 1)}: ${error instanceof Error ? error.stack : String(error)}`)
        }
      }
    })
  }
})
