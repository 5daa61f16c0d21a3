/**
 * The identify input reader: a pasted string or file (src/identify/batch.ts: lines, tool
 * chatter, potfiles), each line's readings (input.ts: shadow, pwdump, secretsdump, `user:hash`,
 * fingerprints), the wrappers peeled off it (unwrap.ts: quotes, brackets, JSON and YAML fields,
 * SQL tuples, log prefixes, code fences), and the engine that matches every reading against the
 * format table (engine.ts).
 *
 * Input: a flags byte (potfile, popular) and the text (UTF-8). Up to 64 of its lines are
 * identified as a batch's are.
 *
 * Invariants: the bounds unwrap.ts states (at most 32 forms, none empty or equal to the text);
 * a result's length is at most its line's; confidences are in [0, 1]; a potfile line says
 * its plaintext was dropped; every result serializes to JSON.
 *
 * Expected refusals: none thrown. The reader's refusals (a blank string, a line over 64 KiB, more
 * than 10,000 lines) are results that end the input, and an unknown string is a result with no
 * match, so anything thrown is a finding.
 */
import { identifyEntry, readEntriesNow } from '../../src/identify/batch.js'
import { interpretations } from '../../src/identify/input.js'
import { unwrappings } from '../../src/identify/unwrap.js'
import { fields, invariant } from '../support.js'

const LINES_PER_INPUT = 64

export function fuzz(data: Buffer): void {
  const [flags, body] = fields(data, 2) as [Buffer, Buffer]
  const potfile = ((flags[0] ?? 0) & 1) === 1
  const popular = ((flags[0] ?? 0) & 2) === 2
  const text = body.toString('utf8')
  const trimmed = text.trim()

  const readings = interpretations(trimmed)
  invariant(readings[0]?.text === trimmed, 'the first reading is not the string itself')
  const forms = unwrappings(trimmed)
  invariant(forms.length <= 32, `${forms.length} unwrapped forms, more than MAX_FORMS`)
  for (const form of forms) {
    invariant(form.text.length > 0 && form.text !== trimmed && form.text === form.text.trim(), 'an unwrapped form is empty, untrimmed or the string itself')
    invariant(form.normalized.length >= 1 && form.normalized.length <= 5, 'an unwrapped form without its layers, or deeper than MAX_DEPTH')
  }

  // The route's limit on a line (routes/identify.ts MAX_IDENTIFY_BYTES); refusals end the input.
  const batch = readEntriesNow([text], 64 * 1024)
  if (!('entries' in batch)) return
  for (const entry of batch.entries.slice(0, LINES_PER_INPUT)) {
    // A string without line breaks is one entry as it is; lines of a file are trimmed, blank ones skipped.
    if (entry.line !== undefined) invariant(entry.text.length > 0 && entry.text === entry.text.trim(), 'a line entry is empty or untrimmed')
    const result = identifyEntry(entry, { potfile, popular }, 30)
    invariant(result.length <= entry.text.length, `a result's length ${result.length} exceeds its line's ${entry.text.length}`)
    invariant(result.matches.length <= 30, 'more matches than the cap')
    for (const match of result.matches) invariant(match.confidence >= 0 && match.confidence <= 1, `confidence ${match.confidence} outside [0, 1]`)
    if (potfile) invariant(result.normalized?.[0] === 'potfile-plaintext', 'a potfile line without potfile-plaintext first')
    JSON.stringify(result)
  }
}
