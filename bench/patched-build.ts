/**
 * Copies of hashd's build with a few lines of the compiled JavaScript replaced, made only to be
 * measured (bench:ablate's variants, the bcrypt row's @node-rs/bcrypt side): what they switch off
 * or swap is not a setting of the product. A patch whose text is no longer in the build stops the
 * run with the text it looked for: update the patch where it is declared when the source changes.
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A text in a compiled file (relative to dist/) and what replaces it. */
export interface Patch { file: string, find: string, replace: string }

const dist = fileURLToPath(new URL('..', import.meta.url))
const root = join(dist, '..')

/**
 * A copy of dist/ under `parent`/`name` (with node_modules and package.json beside it, as the
 * server expects) with the patches applied; returns the copy's dist/ folder.
 */
export function patchedBuild(name: string, patches: readonly Patch[], parent: string): string {
  const copy = join(parent, name)
  cpSync(dist, join(copy, 'dist'), { recursive: true })
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir')
  cpSync(join(root, 'package.json'), join(copy, 'package.json'))
  for (const { file, find, replace } of patches) {
    const path = join(copy, 'dist', file)
    const text = readFileSync(path, 'utf8')
    if (!text.includes(find)) throw new Error(`${name}: dist/${file} no longer contains ${JSON.stringify(find)}; update the patch in bench/`)
    writeFileSync(path, text.split(find).join(replace))
  }
  return join(copy, 'dist')
}
