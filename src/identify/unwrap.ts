/**
 * What people paste around a hash: the quotes of a JSON or SQL dump, a Markdown backtick, a list
 * bullet, a trailing comma, a `"hash": "…"` or `hash: …` line, a field of an SQL `VALUES (…)`
 * tuple, a tool's log prefix. Each unwrapping peels one such layer and names it; `unwrappings`
 * lists every string reachable by peeling, with the names of the layers removed.
 *
 * Nothing here decides: some formats contain quotes, braces, parentheses or commas (`{SSHA}…`,
 * Lotus Notes' `(G…)`, `{x-issha, 1024}…`). The engine identifies the string as it is first and
 * takes a peeled form only where it identifies strictly better (engine.ts), so a string that is
 * already a format is never changed.
 */

/** The names reported in `normalized`, outermost layer first. */
export type Normalization =
  | 'quotes' | 'brackets' | 'trailing-comma' | 'trailing-semicolon' | 'bullet'
  | 'json-field' | 'yaml-field' | 'sql-values' | 'log-prefix'
  /** Set by batch.ts on potfile lines: the plaintext after the last colon, dropped unread. */
  | 'potfile-plaintext'

export interface Unwrapped {
  text: string
  normalized: Normalization[]
}

/** Peeling is only tried on strings of plausible size, to this depth, and to this many forms. */
const MAX_UNWRAP_LENGTH = 16_384
const MAX_DEPTH = 5
const MAX_FORMS = 32

/** Opening → closing quote: ASCII, backtick, and the typographic pairs (“…”, ‘…’, „…“, «…», ‹…›, 「…」). */
const QUOTES: ReadonlyMap<string, readonly string[]> = new Map([
  ['"', ['"']], ["'", ["'"]], ['`', ['`']], ['“', ['”', '“']], ['”', ['”']], ['‘', ['’', '‘']], ['’', ['’']],
  ['„', ['“', '”']], ['‚', ['‘', '’']], ['«', ['»']], ['»', ['«']], ['‹', ['›']], ['「', ['」']],
])
const BRACKETS: ReadonlyMap<string, string> = new Map([['[', ']'], ['(', ')'], ['{', '}'], ['<', '>']])
/** `- `, `* `, `+ `, `• `, `1. `, `2) `, Markdown task boxes `- [ ] `. */
const BULLET = /^(?:[-*+•‣◦▪·–—]|\d{1,6}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/
/** The info string of a one-line Markdown code fence (```text … ```): one word, then white space. */
const FENCE_INFO = /^[A-Za-z0-9_-]{1,16}[ \t]/
/** `"key": "value"` (a JSON object member), optionally inside `{…}`; the value is a JSON string. */
const JSON_MEMBER = /^\{?[ \t]*"(?:[^"\\]|\\.){1,64}"[ \t]*:[ \t]*("(?:[^"\\]|\\.){1,16384}")[ \t]*\}?$/
/** `key: value` (a YAML mapping line); the space after the colon tells it from `user:hash`. */
const YAML_LINE = /^[A-Za-z_][\w.-]{0,63}:[ \t]+(\S.{0,16383})$/
/** A log line's label before the value: Responder's `[SMB] NTLMv2-SSP Hash     : …`. */
const LOG_PREFIX = /^\[[\w .+-]{1,24}\][ \t]+(?:[^:\s][^:]{0,47}?)?\bHash[ \t]*:[ \t]*(\S.{0,16383})$/
/** `INSERT INTO name (columns) VALUES `: the name starts at its first non-blank character. */
const SQL_INSERT = /^INSERT[ \t]+INTO[ \t]+[^(\s][^(]{0,255}?(?:\([^)]{0,2048}\)[ \t]*)?VALUES[ \t]*/i

const isBlank = (char: string | undefined): boolean => char === ' ' || char === '\t'

/**
 * Where the `)` that closes a tuple must be: the last character but for blanks, then at most one
 * `,` or `;` (which separates or ends a VALUES list), then blanks; -1 where that is not a `)`.
 * Known before the fields are read, a `)` anywhere else ends the reading at once (the check after
 * the tuple was a regex, quadratic, and then a scan to the end at every `)` of every peeled form).
 */
function tupleClose(text: string): number {
  let index = text.length - 1
  while (isBlank(text[index])) index -= 1
  if (text[index] === ',' || text[index] === ';') index -= 1
  while (isBlank(text[index])) index -= 1
  return text[index] === ')' ? index : -1
}

/**
 * The content of a one-line Markdown code fence (```text … ``` or ``` … ```), or undefined. Read
 * by hand, so that the info string and the content meet at one place: the first blank after the
 * word. The word is an info string only where something follows that blank.
 */
function fenced(text: string): string | undefined {
  if (text.length < 7 || !text.startsWith('```') || !text.endsWith('```')) return undefined
  const inner = text.slice(3, -3)
  if (inner.includes('`')) return undefined
  const info = FENCE_INFO.exec(inner)
  return info && inner.length > info[0].length ? inner.slice(info[0].length) : inner
}

/** The quoted (and bare) fields of `(a, 'b', "c")`, unescaped as SQL writes them, or null. */
function sqlTupleFields(text: string): string[] | null {
  const body = text.replace(SQL_INSERT, '')
  const close = tupleClose(body)
  if (!body.startsWith('(') || close < 0) return null
  const fields: string[] = []
  let quoted = 0
  let index = 1
  while (index < body.length) {
    while (isBlank(body[index])) index += 1
    const quote = body[index]
    if (quote === "'" || quote === '"') {
      let value = ''
      index += 1
      for (;;) {
        const char = body[index]
        if (char === undefined) return null
        if (char === '\\' && index + 1 < body.length) {
          value += body[index + 1]
          index += 2
        } else if (char === quote && body[index + 1] === quote) {
          value += quote
          index += 2
        } else if (char === quote) {
          index += 1
          break
        } else {
          value += char
          index += 1
        }
      }
      fields.push(value)
      quoted += 1
    } else {
      let end = index
      while (end < close && body[end] !== ',' && body[end] !== ')') end += 1
      fields.push(body.slice(index, end).trim())
      index = end
    }
    while (isBlank(body[index])) index += 1
    if (body[index] === ',') {
      index += 1
      continue
    }
    if (index !== close) return null
    return fields.length >= 2 && quoted >= 1 ? fields.filter((field) => field !== '' && !/^(?:NULL|\d{1,20})$/i.test(field)) : null
  }
  return null
}

/** Every string one layer in from `text`, each with the layer's name. */
function peel(text: string): Unwrapped[] {
  const forms: Unwrapped[] = []
  const add = (inner: string, name: Normalization): void => {
    const trimmed = inner.trim()
    if (trimmed.length > 0 && trimmed !== text) forms.push({ text: trimmed, normalized: [name] })
  }
  const first = text[0] ?? ''
  const last = text[text.length - 1] ?? ''
  if (last === ',') add(text.slice(0, -1), 'trailing-comma')
  if (last === ';') add(text.slice(0, -1), 'trailing-semicolon')
  if (text.length >= 2 && QUOTES.get(first)?.includes(last)) {
    add(text.slice(1, -1), 'quotes')
    // A JSON (or YAML double-quoted) string escapes its quotes and backslashes: `"a\"b"` holds a"b.
    if (first === '"' && text.includes('\\')) {
      try {
        const value: unknown = JSON.parse(text)
        if (typeof value === 'string') add(value, 'quotes')
      } catch { /* not a JSON string */ }
    }
  }
  if (text.length >= 2 && BRACKETS.get(first) === last) add(text.slice(1, -1), 'brackets')
  const fence = fenced(text)
  if (fence !== undefined) add(fence, 'quotes')
  const bullet = BULLET.exec(text)
  if (bullet) add(text.slice(bullet[0].length), 'bullet')
  const member = JSON_MEMBER.exec(text)
  if (member) {
    try {
      const value: unknown = JSON.parse(member[1]!)
      if (typeof value === 'string') add(value, 'json-field')
    } catch { /* not a JSON string after all */ }
  }
  const yaml = YAML_LINE.exec(text)
  if (yaml) add(yaml[1]!, 'yaml-field')
  const log = LOG_PREFIX.exec(text)
  if (log) add(log[1]!, 'log-prefix')
  if (first === '(' || /^INSERT/i.test(text)) {
    for (const field of sqlTupleFields(text) ?? []) add(field, 'sql-values')
  }
  return forms
}

/**
 * Every form reachable by peeling layers off `text` (not `text` itself), breadth first, so the
 * forms with fewer layers removed come first; each lists its layers in the order they were peeled (from the outside in).
 */
/**
 * A cheap test that some peel may apply (every rule of `peel` needs one of these), so that the
 * bare digests and crypt strings most requests carry skip the rules altogether.
 */
const MAY_BE_WRAPPED = /^(?:["'`“”‘’„‚«»‹「[({<*+•‣◦▪·–—-]|\d{1,6}[.)][ \t]|INSERT)|[,;]$|:[ \t]/i

export function unwrappings(text: string): Unwrapped[] {
  if (text.length > MAX_UNWRAP_LENGTH || !MAY_BE_WRAPPED.test(text)) return []
  const found: Unwrapped[] = []
  const seen = new Set<string>([text])
  let frontier: Unwrapped[] = [{ text, normalized: [] }]
  for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0 && found.length < MAX_FORMS; depth += 1) {
    const next: Unwrapped[] = []
    for (const outer of frontier) {
      for (const inner of peel(outer.text)) {
        if (seen.has(inner.text) || found.length >= MAX_FORMS) continue
        seen.add(inner.text)
        const form = { text: inner.text, normalized: [...outer.normalized, ...inner.normalized] }
        found.push(form)
        next.push(form)
      }
    }
    frontier = next
  }
  return found
}
