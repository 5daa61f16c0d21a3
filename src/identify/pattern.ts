/**
 * Format patterns: compiled once, anchored, and checked at load so that none can backtrack
 * catastrophically. Every quantifier must be bounded (`{n}`, `{n,m}` or `?`; `*`, `+` and `{n,}`
 * are refused), so each pattern has a finite length range. The engine uses that range as a
 * pre-filter: a string longer than a pattern's maximum never reaches its regex, which is what
 * keeps a 64 KiB adversarial input to microseconds.
 */

export interface LengthRange {
  min: number
  max: number
}

/** The length range of strings a pattern source can match; throws on unbounded quantifiers. */
export function lengthRange(source: string): LengthRange {
  let position = 0

  const fail = (why: string): never => {
    throw new Error(`pattern /${source}/ at ${position}: ${why}`)
  }

  // alternation := sequence ('|' sequence)*
  const alternation = (): LengthRange => {
    let range = sequence()
    while (source[position] === '|') {
      position += 1
      const next = sequence()
      range = { min: Math.min(range.min, next.min), max: Math.max(range.max, next.max) }
    }
    return range
  }

  const sequence = (): LengthRange => {
    const total = { min: 0, max: 0 }
    while (position < source.length && source[position] !== '|' && source[position] !== ')') {
      const atom = atomRange()
      const { low, high } = quantifier()
      total.min += atom.min * low
      total.max += atom.max * high
    }
    return total
  }

  const atomRange = (): LengthRange => {
    const char = source[position]
    if (char === '(') {
      position += 1
      if (source[position] === '?') {
        position += 1
        if (source[position] === ':') position += 1
        else if (source[position] === '<') {
          const close = source.indexOf('>', position)
          if (close < 0) fail('unterminated group name')
          position = close + 1
        } else fail('lookarounds are not allowed')
      }
      const inner = alternation()
      if (source[position] !== ')') fail('unbalanced group')
      position += 1
      return inner
    }
    if (char === '[') {
      position += 1
      if (source[position] === '^') position += 1
      if (source[position] === ']') position += 1
      while (position < source.length && source[position] !== ']') {
        position += source[position] === '\\' ? 2 : 1
      }
      if (source[position] !== ']') fail('unterminated class')
      position += 1
      return { min: 1, max: 1 }
    }
    if (char === '\\') {
      const escaped = source[position + 1]
      if (escaped !== undefined && /[1-9bBk]/.test(escaped)) fail('backreferences and word boundaries are not allowed')
      position += 2
      return { min: 1, max: 1 }
    }
    if (char === '^' || char === '$') fail('anchors are added by the table, not written in patterns')
    if (char === '*' || char === '+' || char === '?' || char === '{') fail('quantifier without atom')
    position += 1
    return { min: 1, max: 1 }
  }

  const quantifier = (): { low: number, high: number } => {
    const char = source[position]
    if (char === '*' || char === '+') fail('unbounded quantifier')
    if (char === '?') {
      position += 1
      return { low: 0, high: 1 }
    }
    if (char === '{') {
      const close = source.indexOf('}', position)
      const body = close < 0 ? '' : source.slice(position + 1, close)
      const bounds = /^(\d+)(?:(,)(\d*))?$/.exec(body)
      if (!bounds) fail('malformed {n,m}')
      const low = Number(bounds![1])
      if (bounds![2] !== undefined && bounds![3] === '') fail('unbounded quantifier {n,}')
      const high = bounds![3] === undefined ? (bounds![2] ? fail('malformed') : low) : Number(bounds![3])
      position = close + 1
      if (source[position] === '?') fail('lazy quantifiers are not needed')
      return { low, high }
    }
    return { low: 1, high: 1 }
  }

  const range = alternation()
  if (position !== source.length) fail('unbalanced )')
  return range
}

/** The literal text every match starts with (used to index formats by prefix). */
export function literalPrefix(source: string): string {
  let prefix = ''
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!
    if (char === '\\') {
      const escaped = source[index + 1]
      if (escaped === undefined || /[A-Za-z0-9]/.test(escaped)) break
      // An escaped character followed by a quantifier is not a fixed literal.
      if (/[?{*+]/.test(source[index + 2] ?? '')) break
      prefix += escaped
      index += 1
      continue
    }
    if (/[[\]().|?*+{}^$]/.test(char)) break
    if (/[?{*+]/.test(source[index + 1] ?? '')) break
    prefix += char
  }
  return prefix
}
