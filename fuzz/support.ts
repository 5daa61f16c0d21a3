/**
 * What every fuzz target shares: splitting one fuzzer input into fields, and the one rule for
 * findings. A target calls a parser and lets through only that parser's documented refusal (the
 * `Problem` or `ConfigError` it throws on bad input by design, narrowed per target to the statuses
 * and problem types it documents); anything else it throws, a TypeError or RangeError, is a
 * finding, and so is a broken invariant (`FuzzInvariantError`). The targets import nothing from
 * Jazzer.js, so the normal test suite runs them too (test/fuzz-corpus.test.ts).
 */
import { ConfigError } from '../src/config.js'
import { Problem } from '../src/problem.js'

/** Separates the fields of a multi-field input (list, signature, key): two bytes no text format here uses together. */
export const FIELD_SEPARATOR = Buffer.from([0x00, 0xff])

/** The first `count - 1` fields up to a separator each, the last field the rest; missing fields are empty. */
export function fields(data: Uint8Array, count: number): Buffer[] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const out: Buffer[] = []
  let at = 0
  for (let index = 0; index < count - 1; index++) {
    const end = bytes.indexOf(FIELD_SEPARATOR, at)
    if (end === -1) {
      out.push(bytes.subarray(at))
      at = bytes.length
    } else {
      out.push(bytes.subarray(at, end))
      at = end + FIELD_SEPARATOR.length
    }
  }
  out.push(bytes.subarray(at))
  return out
}

/** The inverse of `fields`, for seeds; a field before the last must not hold the separator. */
export function joinFields(...parts: Array<string | Uint8Array>): Buffer {
  const buffers = parts.map((part) => typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))
  if (buffers.slice(0, -1).some((part) => part.includes(FIELD_SEPARATOR))) throw new Error('a field holds the field separator')
  return Buffer.concat(buffers.flatMap((part, index) => index > 0 ? [FIELD_SEPARATOR, part] : [part]))
}

/** A broken invariant: the parser answered, but wrongly. Always a finding. */
export class FuzzInvariantError extends Error {
  override name = 'FuzzInvariantError'
}

export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new FuzzInvariantError(message)
}

/** A refusal that is a hashd problem with one of these statuses and, where given, one of these types. */
export function isProblem(error: unknown, statuses: readonly number[], types?: readonly string[]): error is Problem {
  return error instanceof Problem && statuses.includes(error.status) && (types === undefined || types.includes(error.type))
}

export const isConfigError = (error: unknown): error is ConfigError => error instanceof ConfigError

/** Runs `parse`; its result, or undefined when it threw an expected refusal; anything else is rethrown (a finding). */
export function refusing<T>(parse: () => T, expected: (error: unknown) => boolean): T | undefined {
  try {
    return parse()
  } catch (error) {
    if (expected(error)) return undefined
    throw error
  }
}

/** `refusing` for parsers that answer with a promise. */
export async function refusingAsync<T>(parse: () => Promise<T>, expected: (error: unknown) => boolean): Promise<T | undefined> {
  try {
    return await parse()
  } catch (error) {
    if (expected(error)) return undefined
    throw error
  }
}
