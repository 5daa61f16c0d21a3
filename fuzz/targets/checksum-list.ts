/**
 * The checksum-list parser (src/checksums/list.ts, with the line grammar of
 * src/domain/expected.ts): SHA256SUMS, `--tag` lists, B3SUMS, `*.sha256`.
 *
 * Input: a mode byte (the `algorithm` field: none, sha256 or blake3), the list's file name (the
 * hint for untagged lines), and the list's text (UTF-8, as the route decodes it). The same input
 * also goes through `parseExpected`, which reads one such line as `expected`.
 *
 * Invariants: every entry's digest has its algorithm's length and its line is a real line; lines
 * are in order; `field` is claimed only when the field was given.
 *
 * Expected refusals: parseChecksumList's Problem 413 (more than maxLines lines) and 422
 * no-checksum-lines (no usable line); parseExpected's Problem 400 validation. Anything else is a
 * finding.
 */
import { digestNamed } from '../../src/algorithms/registry.js'
import { parseChecksumList } from '../../src/checksums/list.js'
import { parseExpected } from '../../src/domain/expected.js'
import { fields, invariant, isProblem, refusing } from '../support.js'

const MAX_LINES = 200
const FIELD_ALGORITHMS = [undefined, 'sha256', 'blake3'] as const

export function fuzz(data: Buffer): void {
  const [mode, listName, list] = fields(data, 3) as [Buffer, Buffer, Buffer]
  const fieldName = FIELD_ALGORITHMS[(mode[0] ?? 0) % FIELD_ALGORITHMS.length]
  const algorithm = fieldName === undefined ? undefined : digestNamed(fieldName)
  const text = list.toString('utf8')
  const options = { maxLines: MAX_LINES, ...(algorithm ? { algorithm } : {}), ...(listName.length > 0 ? { listName: listName.toString('utf8') } : {}) }
  const parsed = refusing(() => parseChecksumList(text, options),
    (error) => isProblem(error, [413]) || isProblem(error, [422], ['urn:hashd:problem:no-checksum-lines']))
  if (parsed) {
    invariant(parsed.entries.length > 0, 'a list with no usable line was accepted')
    let previous = 0
    for (const entry of [...parsed.entries, ...parsed.skipped].sort((a, b) => a.line - b.line)) {
      invariant(entry.line > previous && entry.line <= parsed.lines, `line ${entry.line} out of order or past the ${parsed.lines} lines`)
      previous = entry.line
    }
    for (const entry of parsed.entries) {
      invariant(entry.expected.length === entry.algorithm.outputBytes, `a ${entry.algorithm.name} entry holds ${entry.expected.length} bytes`)
      invariant(entry.algorithmFrom !== 'field' || algorithm !== undefined, 'an entry claims the algorithm field, which was not given')
    }
  }
  const expected = refusing(() => parseExpected(text), (error) => isProblem(error, [400], ['urn:hashd:problem:validation']))
  if (expected) invariant(expected.readings.length > 0, 'parseExpected accepted a value with no reading')
}
