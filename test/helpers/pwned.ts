/**
 * Small breached-password corpora and stores for the tests: scripts/pwned-corpus.ts makes a corpus
 * in the downloader's layout (seeded, so the same each run), src/screening/import.ts imports it.
 * A few thousand hashes spread over the 2^20 prefixes leave most prefixes empty, so a folder corpus
 * has only the files of prefixes that drew a hash and is imported with allowMissing.
 */
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeCorpus } from '../../scripts/pwned-corpus.js'
import { importPwned, type ImportSummary } from '../../src/screening/import.js'

export interface Corpus {
  dir: string
  /** The corpus's text as `HASH:COUNT` lines (the prefix joined to each suffix of a folder's files). */
  text(): string
}

export async function corpus(options: { hashes: number, kind?: 'sha1' | 'ntlm', layout?: 'folder' | 'file', seed?: number, known?: string }): Promise<Corpus> {
  const dir = mkdtempSync(join(tmpdir(), 'hashd-pwned-'))
  const kind = options.kind ?? 'sha1'
  const layout = options.layout ?? 'folder'
  if (options.known !== undefined) (await import('node:fs')).writeFileSync(join(dir, 'known.tsv'), options.known)
  await makeCorpus({ dir, hashes: options.hashes, kind, layout, seed: options.seed ?? 7 })
  return {
    dir,
    text: () => {
      if (layout === 'file') return readFileSync(join(dir, kind === 'sha1' ? 'pwnedpasswords.txt' : 'pwnedpasswords_ntlm.txt'), 'utf8')
      return readdirSync(dir).filter((name) => /^[0-9A-F]{5}\.txt$/.test(name)).map((name) =>
        readFileSync(join(dir, name), 'utf8').split('\r\n').map((line) => `${name.slice(0, 5)}${line}\r\n`).join('')).join('')
    },
  }
}

/** The corpus's input for pwned:import: its folder, or its one file. */
export function corpusInput(corpus: Corpus, layout: 'folder' | 'file' = 'folder', kind: 'sha1' | 'ntlm' = 'sha1'): string {
  return layout === 'folder' ? corpus.dir : join(corpus.dir, kind === 'sha1' ? 'pwnedpasswords.txt' : 'pwnedpasswords_ntlm.txt')
}

export function store(input: string, file: string, kind: 'sha1' | 'ntlm' = 'sha1'): ImportSummary {
  return importPwned(input, file, { kind, allowMissing: true })
}

/** `LC_ALL=C sort` of the corpus's HASH:COUNT lines (coreutils), written to a file in `dir` for grep. */
export function sortedText(source: Corpus, dir: string, name: string): string {
  const unsorted = join(dir, `${name}.unsorted`)
  writeFileSync(unsorted, source.text())
  const sorted = join(dir, `${name}.sorted`)
  execFileSync('sort', ['-o', sorted, unsorted], { env: { ...process.env, LC_ALL: 'C' } })
  return sorted
}

/** What grep finds under a prefix, as the range API writes it: suffixes and counts, CRLF between. */
export function grepRange(sorted: string, prefix: string): string {
  const found = spawnSync('grep', [`^${prefix}`, sorted], { encoding: 'utf8' })
  if (found.status === 1) return ''
  assert.equal(found.status, 0, found.stderr)
  return found.stdout.split('\n').filter((line) => line !== '').map((line) => line.replace(/\r$/, '').slice(5)).join('\r\n')
}
