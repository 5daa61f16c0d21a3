/**
 * Requests to POST /api/identify built from the attack strings recheck gave for the patterns the
 * identify engine used to backtrack on (test/redos.test.ts FORMER), each scaled to the largest
 * input the limits admit: lines of at most 64 KiB (16 KiB where only the unwrapping would read
 * them), as many as fit in the 8 MiB body. Used by test/identify-redos.test.ts (the bounds) and
 * bench/redos.ts (the figures).
 */

/** The route's limits (src/routes/identify.ts), restated: a test must not take them from the code it checks. */
export const BODY_LIMIT = 8 * 1024 * 1024
export const LINE_LIMIT = 64 * 1024
/** unwrap.ts peels only strings up to this long, so its patterns never see longer ones. */
export const UNWRAP_LIMIT = 16_384

export interface Attack {
  name: string
  /** What it aimed at. */
  target: string
  /** The JSON body. */
  body: string
  lines: number
}

const bytes = (text: string): number => Buffer.byteLength(text)

/**
 * As many copies of `line` as fit in the body limit (at most `max`): one `hashes` string, a file
 * of lines, or (`items`) one string each, where a file would skip the line as a tool's chatter
 * (a code fence, a `[…]` label without `Hash :`) before any pattern of the unwrapping saw it.
 */
function fill(name: string, target: string, line: string, { max = Infinity, items = false } = {}): Attack {
  const perLine = bytes(JSON.stringify(line)) - 2 + (items ? 3 : 2) // the line's JSON text, less its quotes, plus "\n" or `","`
  const lines = Math.min(max, Math.floor((BODY_LIMIT - 64) / perLine))
  const copies = Array.from({ length: lines }, () => line)
  return { name, target, body: JSON.stringify({ hashes: items ? copies : [copies.join('\n')] }), lines }
}

/** The line that froze the server: five bracket layers, a quoted field, 16,300 tabs, a stray `x`. */
export const TUPLE_TAIL_LINE = "((((('a')" + '\t'.repeat(16_300) + 'x)))))'

export function attacks(): Attack[] {
  const spaced = "((((('a')" + ' '.repeat(UNWRAP_LIMIT - 15) + 'x)))))'
  return [
    fill('tuple-tail, 10 lines', 'unwrap.ts sqlTupleFields (the reported request, 326 KB)', TUPLE_TAIL_LINE, { max: 10 }),
    fill('tuple-tail', 'unwrap.ts sqlTupleFields', spaced),
    fill('fence', 'unwrap.ts FENCE', '```-\t' + ' '.repeat(UNWRAP_LIMIT - 6) + '`', { items: true }),
    fill('log-prefix', 'unwrap.ts LOG_PREFIX', '[0]\t' + '\t '.repeat((UNWRAP_LIMIT - 5) / 2) + ':', { items: true }),
    fill('sql-insert', 'unwrap.ts SQL_INSERT', 'INSERT\tINTO\t' + ' '.repeat(UNWRAP_LIMIT - 12)),
    fill('keepass', 'formats.ts keepass (13400)', '$keepass$*2*1*1*k' + '*1*$'.repeat((LINE_LIMIT - 20) / 4) + 'é'),
    fill('pkzip', 'formats.ts pkzip (17220)', '$pkzip$2*2*1*0*8*2' + '*2*0**'.repeat((LINE_LIMIT - 22) / 6) + 'é'),
    // Not a regex: a body of line breaks only (JSON \n, two bytes each) and one character.
    { name: 'blank-lines', target: 'batch.ts line reading, JSON parsing', body: JSON.stringify({ hashes: ['\n'.repeat((BODY_LIMIT - 64) / 2) + 'x'] }), lines: (BODY_LIMIT - 64) / 2 + 1 },
  ]
}

/** A legitimate request of the same size: 10,000 NetNTLMv2-shaped captures, about 8 MiB. */
export function honestDump(): Attack {
  const blob = '0101000000000000' + 'c0653150de09d201'.repeat(46)
  const line = (index: number) => `user${index}::DOMAIN:1122334455667788:${(index * 2654435761 >>> 0).toString(16).padStart(8, '0').repeat(4)}:${blob}`
  const text = Array.from({ length: 10_000 }, (_, index) => line(index)).join('\n')
  return { name: 'honest dump', target: '10,000 NetNTLMv2 lines', body: JSON.stringify({ hashes: [text] }), lines: 10_000 }
}
